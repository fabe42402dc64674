// The GPU backend of the driving envs, part 2 of 2 (after world.wgsl): one
// control step of a task (task.rs and the task modules), the observations,
// and the entry point with the autoreset, mirrored line for line.

// ---- task.rs and the task modules ----

fn half_width() -> f32 {
    return 0.5 * s[F_LANES] * LANE_WIDTH;
}

fn place(f: Frenet) {
    s[F_SEG] = f32(f.seg);
    s[F_S] = f.s;
    s[F_D] = f.d;
    s[F_HEADING_ERROR] = wrap(f.heading - s[F_YAW]);
}

fn locate() -> Frenet {
    return project_near(u32(s[F_SEG]), vec2<f32>(s[F_POS], s[F_POS + 1u]));
}

fn apply_meta(action: u32) {
    let lanes = s[F_LANES];
    let lane = lane_of(s[F_TARGET_D], lanes);
    if (action == 0u && lane + 1.0 < lanes) {
        s[F_TARGET_D] = lane_centre(lane + 1.0, lanes);
    } else if (action == 2u && lane > 0.0) {
        s[F_TARGET_D] = lane_centre(lane - 1.0, lanes);
    } else if (action == 3u || action == 4u) {
        s[F_TARGET_SPEED] = next_speed(s[F_TARGET_SPEED], action);
    }
}

fn meta_commands() -> vec2<f32> {
    place(locate());
    let curvature = curvature_at(s[F_S] + 5.0);
    return track(s[F_VEL], s[F_HEADING_ERROR], s[F_D], s[F_TARGET_D], curvature, s[F_TARGET_SPEED]);
}

fn carl_factors(lane_error: f32) -> f32 {
    let v = speed();
    let speeding = max(1.0 - max(v - P.speed_limit, 0.0) / (0.2 * P.speed_limit), 0.0);
    let centre = 1.0 - 0.5 * min(abs(lane_error) / (0.5 * LANE_WIDTH), 1.0);
    let a = s[F_ACCEL];
    let excess = max(max(COMFORT_MIN - a, a - COMFORT_MAX), 0.0) + max(abs(s[F_LAT_ACCEL]) - COMFORT_LATERAL, 0.0);
    return speeding * centre * (1.0 - 0.5 * min(excess, 1.0));
}

fn goal_error() -> f32 {
    let dx = s[F_POS] - s[F_GOAL];
    let dy = s[F_POS + 1u] - s[F_GOAL + 1u];
    return sqrt(dx * dx + dy * dy) + HEADING_WEIGHT * abs(wrap(s[F_YAW] - s[F_GOAL + 2u]));
}

fn off_lot() -> bool {
    let sn = sin(s[F_YAW]);
    let co = cos(s[F_YAW]);
    for (var i = 0u; i < 4u; i++) {
        let a = select(-1.0, 1.0, i < 2u);
        let b = select(-1.0, 1.0, i % 2u == 0u);
        let l = 0.5 * LENGTH * a;
        let w = 0.5 * WIDTH * b;
        let x = s[F_POS] + l * co - w * sn;
        let y = s[F_POS + 1u] + l * sn + w * co;
        if (abs(x) > LOT_HALF_LENGTH || abs(y) > LOT_HALF_WIDTH) {
            return true;
        }
    }
    return false;
}

fn parking_outcome(collided: bool) -> StepResult {
    let error = goal_error();
    let gained = s[F_GOAL_ERROR] - error;
    s[F_GOAL_ERROR] = error;
    let dx = s[F_POS] - s[F_GOAL];
    let dy = s[F_POS + 1u] - s[F_GOAL + 1u];
    let parked = sqrt(dx * dx + dy * dy) < GOAL_DISTANCE
        && abs(wrap(s[F_YAW] - s[F_GOAL + 2u])) < GOAL_HEADING
        && abs(speed()) < GOAL_SPEED;
    var crash = 0u;
    if (collided || ego_collision()) {
        crash = 2u;
    } else if (off_lot()) {
        crash = 1u;
    }
    var reward = PARKING_CRASH_REWARD;
    if (crash == 0u) {
        reward = gained + select(0.0, PARKING_SUCCESS_REWARD, parked);
    }
    return StepResult(reward, parked || crash != 0u, parked && crash == 0u, crash, false);
}

fn control_step(i: u32) -> StepResult {
    let before = s[F_S];
    let width = select(2u, 1u, P.meta_actions != 0u);
    let a0 = actions[i * width];
    var commands = vec2<f32>(clamp(a0, -1.0, 1.0), 0.0);
    if (P.meta_actions == 0u) {
        commands.y = clamp(actions[i * 2u + 1u], -1.0, 1.0);
    } else {
        apply_meta(u32(a0));
    }
    let period = max(u32(round(TRAFFIC_PERIOD / P.dt)), 1u);
    var collided = false;
    for (var k = 0u; k < P.substeps; k++) {
        if (P.task == HIGHWAY && k % period == 0u) {
            place(locate());
            traffic_step(s[F_S], s[F_D], s[F_VEL], min(period, P.substeps - k), P.dt);
        }
        if (P.meta_actions != 0u) {
            commands = meta_commands();
        }
        vehicle_step(commands.x, commands.y, P.dt);
        if (s[F_NUM_OTHERS] > 0.0 && ((k + 1u) % period == 0u || k + 1u == P.substeps)) {
            collided = ego_collision();
            if (collided) {
                break;
            }
        }
    }
    s[F_ACTION] = commands.x;
    s[F_ACTION + 1u] = commands.y;
    s[F_STEPS] += 1.0;
    s[F_SPEED_SUM] += speed();
    if (P.task == PARKING) {
        return parking_outcome(collided);
    }
    place(locate());
    var moved = s[F_S] - before;
    let length = s[F_ROAD_LENGTH];
    if (closed()) {
        moved = wrap(moved / length * TAU) / TAU * length;
    }
    s[F_PROGRESS] += moved;
    let off_road = abs(s[F_D]) + 0.5 * WIDTH > half_width() + EDGE_TOLERANCE;
    var out: StepResult;
    let step_seconds = f32(P.substeps) * P.dt;
    if (P.task == LANE_KEEP) {
        let gained = moved / (P.speed_limit * step_seconds);
        let done = s[F_PROGRESS] >= s[F_ROUTE];
        let lane_d = lane_centre(0.0, s[F_LANES]);
        out = StepResult(gained * carl_factors(s[F_D] - lane_d), done, done, 0u, false);
    } else if (P.task == RACING) {
        let done = s[F_PROGRESS] >= s[F_ROUTE];
        out = StepResult(moved / (RACING_SPEED * step_seconds) - RACING_TIME_COST * step_seconds, done, done, 0u, false);
    } else {
        let gained = moved / (P.speed_limit * step_seconds);
        let lanes = s[F_LANES];
        let lane_error = s[F_D] - lane_centre(lane_of(s[F_D], lanes), lanes);
        let at_limit = P.time_limit > 0u && s[F_STEPS] >= f32(P.time_limit);
        let success = at_limit && s[F_SPEED_SUM] / s[F_STEPS] >= SUCCESS_SPEED;
        out = StepResult(gained * carl_factors(lane_error), false, success, 0u, false);
    }
    if (collided) {
        out = StepResult(CRASH_REWARD, true, false, 2u, false);
    } else if (off_road) {
        out = StepResult(CRASH_REWARD, true, false, 1u, false);
    }
    return out;
}

// ---- observations ----

var<private> near_key: array<f32, 5>;
var<private> near_idx: array<u32, 5>;

// The K smallest keys pushed since reset_near(K), smallest first (task::nearest).
fn reset_near(count: u32) {
    for (var i = 0u; i < count; i++) {
        near_key[i] = 1e30;
        near_idx[i] = 0u;
    }
}

fn push_near(count: u32, key: f32, k: u32) {
    if (key >= near_key[count - 1u]) {
        return;
    }
    var i = count - 1u;
    while (i > 0u && near_key[i - 1u] > key) {
        near_key[i] = near_key[i - 1u];
        near_idx[i] = near_idx[i - 1u];
        i--;
    }
    near_key[i] = key;
    near_idx[i] = k;
}

fn road_features(base: u32, d_ref: f32) {
    outputs[base] = s[F_VEL] / 20.0;
    outputs[base + 1u] = s[F_VEL + 1u] / 5.0;
    outputs[base + 2u] = s[F_YAW_RATE];
    outputs[base + 3u] = s[F_STEER] / MAX_STEER;
    outputs[base + 4u] = s[F_ACTION];
    outputs[base + 5u] = s[F_ACTION + 1u];
    outputs[base + 6u] = (s[F_D] - d_ref) / LANE_WIDTH;
    outputs[base + 7u] = s[F_D] / half_width();
    outputs[base + 8u] = sin(s[F_HEADING_ERROR]);
    outputs[base + 9u] = cos(s[F_HEADING_ERROR]);
    var start = 0.0;
    for (var i = 0u; i < 5u; i++) {
        let to = look_ahead(i);
        outputs[base + 10u + i] = 10.0 * sharpest(s[F_S] + start, s[F_S] + to);
        start = to;
    }
}

fn observe(base: u32) {
    if (P.task == LANE_KEEP) {
        road_features(base, lane_centre(0.0, s[F_LANES]));
    } else if (P.task == RACING) {
        road_features(base, 0.0);
    } else if (P.task == HIGHWAY) {
        let lanes = s[F_LANES];
        var d_ref = lane_centre(lane_of(s[F_D], lanes), lanes);
        if (P.meta_actions != 0u) {
            d_ref = s[F_TARGET_D];
        }
        road_features(base, d_ref);
        outputs[base + ROAD_FEATURES] = s[F_TARGET_SPEED] / 30.0;
        reset_near(HIGHWAY_OBSERVED);
        for (var k = 0u; k < num_others(); k++) {
            let gap = abs(oth(k, O_S) - s[F_S]);
            push_near(HIGHWAY_OBSERVED, select(gap, 1e30, gap > HIGHWAY_RANGE), k);
        }
        let width = lanes * LANE_WIDTH;
        for (var r = 0u; r < HIGHWAY_OBSERVED; r++) {
            let at = base + ROAD_FEATURES + 1u + 5u * r;
            let k = near_idx[r];
            let present = near_key[r] < 1e29;
            outputs[at] = select(0.0, 1.0, present);
            outputs[at + 1u] = select(0.0, (oth(k, O_S) - s[F_S]) / 100.0, present);
            outputs[at + 2u] = select(0.0, (oth(k, O_D) - s[F_D]) / width, present);
            outputs[at + 3u] = select(0.0, (oth(k, O_SPEED) - s[F_VEL]) / 20.0, present);
            outputs[at + 4u] = select(0.0, (oth(k, O_TARGET_D) - oth(k, O_D)) / LANE_WIDTH, present);
        }
    } else {
        let sn = sin(s[F_YAW]);
        let co = cos(s[F_YAW]);
        let wx = s[F_VEL] * co - s[F_VEL + 1u] * sn;
        let wy = s[F_VEL] * sn + s[F_VEL + 1u] * co;
        outputs[base] = s[F_POS] / 10.0;
        outputs[base + 1u] = s[F_POS + 1u] / 10.0;
        outputs[base + 2u] = wx / 5.0;
        outputs[base + 3u] = wy / 5.0;
        outputs[base + 4u] = co;
        outputs[base + 5u] = sn;
        outputs[base + 6u] = s[F_GOAL] / 10.0;
        outputs[base + 7u] = s[F_GOAL + 1u] / 10.0;
        outputs[base + 8u] = 0.0;
        outputs[base + 9u] = 0.0;
        outputs[base + 10u] = cos(s[F_GOAL + 2u]);
        outputs[base + 11u] = sin(s[F_GOAL + 2u]);
        outputs[base + 12u] = s[F_STEER] / MAX_STEER;
        outputs[base + 13u] = s[F_ACTION];
        outputs[base + 14u] = s[F_ACTION + 1u];
        reset_near(PARKING_OBSERVED);
        for (var k = 0u; k < num_others(); k++) {
            let dx = oth(k, O_X) - s[F_POS];
            let dy = oth(k, O_Y) - s[F_POS + 1u];
            push_near(PARKING_OBSERVED, sqrt(dx * dx + dy * dy), k);
        }
        for (var r = 0u; r < PARKING_OBSERVED; r++) {
            let at = base + 15u + 5u * r;
            let k = near_idx[r];
            let present = near_key[r] < 1e29;
            let dx = oth(k, O_X) - s[F_POS];
            let dy = oth(k, O_Y) - s[F_POS + 1u];
            let rel = oth(k, O_YAW) - s[F_YAW];
            outputs[at] = select(0.0, 1.0, present);
            outputs[at + 1u] = select(0.0, (dx * co + dy * sn) / 10.0, present);
            outputs[at + 2u] = select(0.0, (-dx * sn + dy * co) / 10.0, present);
            outputs[at + 3u] = select(0.0, cos(rel), present);
            outputs[at + 4u] = select(0.0, sin(rel), present);
        }
    }
}

fn write_info(at: u32) {
    outputs[at] = speed();
    outputs[at + 1u] = s[F_PROGRESS];
}
