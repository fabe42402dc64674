// The GPU backend of the driving envs, part 1 of 2 (task.wgsl follows): the
// bindings, the state, and the world one env lives in — road.rs, vehicle.rs,
// controller.rs and traffic.rs, mirrored line for line. One invocation per
// env runs a whole control step; tests/parity.rs holds the CPU and GPU sides
// together. Constants (LEN, CHUNK, field offsets F_* and O_*, the car's and
// the traffic's parameters, the `Params` block) are prepended by gpu/mod.rs
// from the Rust values.

const LANE_KEEP: u32 = 0u;
const RACING: u32 = 1u;
const PARKING: u32 = 2u;
const HIGHWAY: u32 = 3u;
const PI: f32 = 3.14159265358979;
const TAU: f32 = 6.28318530717959;

fn seg(g: u32, i: u32) -> f32 {
    return s[F_SEGMENTS + 6u * g + i];
}

fn oth(k: u32, i: u32) -> f32 {
    return s[F_OTHERS + 9u * k + i];
}

fn set_oth(k: u32, i: u32, v: f32) {
    s[F_OTHERS + 9u * k + i] = v;
}

fn num_segments() -> u32 {
    return min(u32(s[F_NUM_SEGMENTS]), MAX_SEGMENTS);
}

fn num_others() -> u32 {
    return min(u32(s[F_NUM_OTHERS]), MAX_OTHERS);
}

fn closed() -> bool {
    return s[F_CLOSED] > 0.5;
}

fn rem_euclid(a: f32, b: f32) -> f32 {
    let r = a - b * trunc(a / b);
    return select(r, r + b, r < 0.0);
}

fn wrap(a: f32) -> f32 {
    let w = rem_euclid(a + PI, TAU) - PI;
    return select(w, w + TAU, w <= -PI);
}

// ---- road.rs ----

fn local_point(k: f32, u: f32) -> vec2<f32> {
    if (abs(k) < STRAIGHT) {
        return vec2<f32>(u, 0.0);
    }
    let half = sin(0.5 * k * u);
    return vec2<f32>(sin(k * u) / k, 2.0 * half * half / k);
}

// The point (x, y) and heading of segment g at u, offset d to its left.
fn point_on(g: u32, u: f32, d: f32) -> vec3<f32> {
    let x = seg(g, 0u);
    let y = seg(g, 1u);
    let h0 = seg(g, 2u);
    let k = seg(g, 3u);
    let h = h0 + k * u;
    let s0 = sin(h0);
    let c0 = cos(h0);
    let s1 = sin(h);
    let c1 = cos(h);
    let l = local_point(k, u);
    return vec3<f32>(x + l.x * c0 - l.y * s0 - d * s1, y + l.x * s0 + l.y * c0 + d * c1, h);
}

// (u, d, squared distance) of the nearest point of segment g to p.
fn project_segment(g: u32, p: vec2<f32>) -> vec3<f32> {
    let x = seg(g, 0u);
    let y = seg(g, 1u);
    let h0 = seg(g, 2u);
    let k = seg(g, 3u);
    let len = seg(g, 4u);
    let s0 = sin(h0);
    let c0 = cos(h0);
    let rx = p.x - x;
    let ry = p.y - y;
    let lx = rx * c0 + ry * s0;
    let ly = -rx * s0 + ry * c0;
    if (abs(k) < STRAIGHT) {
        let u = clamp(lx, 0.0, len);
        return vec3<f32>(u, ly, (lx - u) * (lx - u) + ly * ly);
    }
    let qx = k * lx;
    let qy = 1.0 - k * ly;
    let q = sqrt(qx * qx + qy * qy);
    let mid = 0.5 * k * len;
    let u = clamp((wrap(atan2(qx, qy) - mid) + mid) / k, 0.0, len);
    let d = (2.0 * ly - k * (lx * lx + ly * ly)) / (1.0 + q);
    let f = local_point(k, u);
    return vec3<f32>(u, d, (lx - f.x) * (lx - f.x) + (ly - f.y) * (ly - f.y));
}

struct Frenet {
    s: f32,
    d: f32,
    heading: f32,
    curvature: f32,
    seg: u32,
}

fn frenet(g: u32, u: f32, d: f32) -> Frenet {
    return Frenet(seg(g, 5u) + u, d, seg(g, 2u) + seg(g, 3u) * u, seg(g, 3u), g);
}

fn project_near(hint_in: u32, p: vec2<f32>) -> Frenet {
    let n = i32(num_segments());
    let hint = min(i32(hint_in), n - 1);
    var best = vec4<f32>(1e30, f32(hint), 0.0, 0.0);
    for (var step = -1; step <= 1; step++) {
        var k = hint + step;
        if (closed()) {
            k = ((k % n) + n) % n;
        } else if (k < 0 || k >= n) {
            continue;
        }
        let r = project_segment(u32(k), p);
        if (r.z < best.x) {
            best = vec4<f32>(r.z, f32(k), r.x, r.y);
        }
    }
    return frenet(u32(best.y), best.z, best.w);
}

// (segment, u along it) holding arc length s_in.
fn segment_at(s_in: f32) -> vec2<f32> {
    let length = s[F_ROAD_LENGTH];
    var at = clamp(s_in, 0.0, length);
    if (closed()) {
        at = rem_euclid(s_in, length);
    }
    var k = 0u;
    let n = num_segments();
    while (k + 1u < n && at >= seg(k + 1u, 5u)) {
        k++;
    }
    return vec2<f32>(f32(k), min(at - seg(k, 5u), seg(k, 4u)));
}

fn pose_at(s_in: f32, d: f32) -> vec3<f32> {
    let ku = segment_at(s_in);
    return point_on(u32(ku.x), ku.y, d);
}

fn curvature_at(s_in: f32) -> f32 {
    return seg(u32(segment_at(s_in).x), 3u);
}

fn sharpest(start: f32, to: f32) -> f32 {
    let ku = segment_at(start);
    var k = u32(ku.x);
    var best = seg(k, 3u);
    var left = to - start - (seg(k, 4u) - ku.y);
    var visited = 1u;
    let n = num_segments();
    while (left > 0.0 && visited < n) {
        k++;
        if (k == n) {
            if (!closed()) {
                break;
            }
            k = 0u;
        }
        if (abs(seg(k, 3u)) > abs(best)) {
            best = seg(k, 3u);
        }
        left -= seg(k, 4u);
        visited++;
    }
    return best;
}

// ---- vehicle.rs ----

fn tyre_force(alpha: f32, load: f32) -> f32 {
    let b = CORNERING / MAGIC_C;
    return MU * load * sin(MAGIC_C * atan(b * alpha));
}

fn resistance(v: f32) -> f32 {
    let drag = 0.5 * AIR_DENSITY * DRAG_AREA / MASS;
    if (v == 0.0) {
        return 0.0;
    }
    return -sign(v) * (ROLLING * GRAVITY + drag * v * v);
}

// (acceleration, opposing as 0/1).
fn pedal_accel(pedal: f32, v: f32) -> vec2<f32> {
    if ((v > 0.0 && pedal < 0.0) || (v < 0.0 && pedal > 0.0)) {
        return vec2<f32>(pedal * MAX_BRAKE, 1.0);
    }
    if (pedal >= 0.0) {
        let limit = min(MAX_DRIVE, POWER / (MASS * max(v, 1.0)));
        var a = pedal * limit;
        if (v >= MAX_SPEED) {
            a = min(a, 0.0);
        }
        return vec2<f32>(a, select(0.0, 1.0, pedal == 0.0));
    }
    var a = pedal * MAX_REVERSE_DRIVE;
    if (v <= -MAX_REVERSE_SPEED) {
        a = max(a, 0.0);
    }
    return vec2<f32>(a, 0.0);
}

fn vehicle_step(steer_cmd: f32, pedal: f32, dt: f32) {
    let wanted = -steer_cmd * MAX_STEER;
    let max_change = MAX_STEER_RATE * dt;
    s[F_STEER] = clamp(s[F_STEER] + clamp(wanted - s[F_STEER], -max_change, max_change), -MAX_STEER, MAX_STEER);
    let delta = s[F_STEER];
    let vx = s[F_VEL];
    let vy = s[F_VEL + 1u];
    let r = s[F_YAW_RATE];
    let pa = pedal_accel(pedal, vx);
    let drive = pa.x;
    let ax = drive + resistance(vx);
    var vx_new = vx + ax * dt;
    var accel = ax;
    if (pa.y > 0.5 || drive == 0.0) {
        if (vx > 0.0) {
            vx_new = max(vx_new, 0.0);
        } else if (vx < 0.0) {
            vx_new = min(vx_new, 0.0);
        } else {
            vx_new = 0.0;
        }
        if (vx_new == 0.0) {
            accel = -vx / dt;
        }
    }
    let tn = tan(delta);
    let kin = vec3<f32>(vx_new, vx_new * LR * tn / WHEELBASE, vx_new * tn / WHEELBASE);
    var w = clamp((vx - BLEND_LOW) / (BLEND_HIGH - BLEND_LOW), 0.0, 1.0);
    if (P.kinematic != 0u) {
        w = 0.0;
    }
    var next = kin;
    if (w > 0.0) {
        let weight = MASS * GRAVITY;
        let load_f = weight * LR / WHEELBASE;
        let load_r = weight * LF / WHEELBASE;
        let alpha_f = delta - atan((vy + LF * r) / vx);
        let alpha_r = -atan((vy - LR * r) / vx);
        let fy_f = tyre_force(alpha_f, load_f);
        let fy_r = tyre_force(alpha_r, load_r);
        let sd = sin(delta);
        let cd = cos(delta);
        let dvx = ax - fy_f * sd / MASS + vy * r;
        let dvy = (fy_f * cd + fy_r) / MASS - vx * r;
        let dr = (LF * fy_f * cd - LR * fy_r) / INERTIA_Z;
        let dynamic = vec3<f32>(vx + dvx * dt, vy + dvy * dt, r + dr * dt);
        next = w * dynamic + (1.0 - w) * kin;
        accel = w * dvx + (1.0 - w) * accel;
    }
    s[F_VEL] = next.x;
    s[F_VEL + 1u] = next.y;
    s[F_YAW_RATE] = next.z;
    let mid = s[F_YAW] + 0.5 * next.z * dt;
    let sy = sin(mid);
    let cy = cos(mid);
    s[F_POS] += (next.x * cy - next.y * sy) * dt;
    s[F_POS + 1u] += (next.x * sy + next.y * cy) * dt;
    s[F_YAW] = wrap(s[F_YAW] + next.z * dt);
    s[F_ACCEL] = accel;
    s[F_LAT_ACCEL] = next.x * next.z;
}

fn speed() -> f32 {
    let vx = s[F_VEL];
    let vy = s[F_VEL + 1u];
    return sign(vx) * sqrt(vx * vx + vy * vy);
}

// ---- controller.rs ----

fn track(v: f32, heading_error: f32, d: f32, target_d: f32, curvature: f32, target_speed: f32) -> vec2<f32> {
    let cross = atan(CROSS_TRACK_GAIN * (target_d - d) / (abs(v) + SOFTENING));
    let feed_forward = atan(WHEELBASE * curvature);
    let delta = wrap(heading_error) + cross + feed_forward;
    let hold = -resistance(v) / MAX_DRIVE;
    let pedal = clamp(SPEED_GAIN * (target_speed - v) + hold, -1.0, 1.0);
    return vec2<f32>(clamp(-delta / MAX_STEER, -1.0, 1.0), pedal);
}

fn next_speed(speed_in: f32, action: u32) -> f32 {
    var level = META_LEVELS - 1u;
    for (var i = 0u; i < META_LEVELS; i++) {
        if (meta_speed(i) >= speed_in - 0.1) {
            level = i;
            break;
        }
    }
    if (action == 3u) {
        level = min(level + 1u, META_LEVELS - 1u);
    } else if (action == 4u && level > 0u) {
        level -= 1u;
    }
    return meta_speed(level);
}

// ---- traffic.rs ----

fn lane_of(d: f32, lanes: f32) -> f32 {
    return clamp(floor(d / LANE_WIDTH + 0.5 * lanes), 0.0, lanes - 1.0);
}

fn lane_centre(lane: f32, lanes: f32) -> f32 {
    return (lane + 0.5 - 0.5 * lanes) * LANE_WIDTH;
}

fn idm(v: f32, desired: f32, has_leader: bool, gap: f32, lead_v: f32) -> f32 {
    var a = IDM_ACC * (1.0 - pow(max(v, 0.0) / max(desired, 0.1), IDM_DELTA));
    if (has_leader) {
        let wanted = IDM_MIN_GAP + v * IDM_TIME_GAP + v * (v - lead_v) / (2.0 * sqrt(IDM_ACC * IDM_BRAKE));
        let ratio = max(wanted, 0.0) / max(gap, 0.1);
        a -= IDM_ACC * ratio * ratio;
    }
    return clamp(a, -IDM_ACC_LIMIT, IDM_ACC_LIMIT);
}

var<private> u_s: array<f32, USERS>;
var<private> u_lane: array<f32, USERS>;
var<private> u_target: array<f32, USERS>;
var<private> u_v: array<f32, USERS>;
var<private> u_desired: array<f32, USERS>;
var<private> u_n: u32;

fn users(ego_s: f32, ego_d: f32, ego_v: f32) {
    let lanes = s[F_LANES];
    let n = num_others();
    for (var k = 0u; k < n; k++) {
        u_s[k] = oth(k, O_S);
        u_lane[k] = lane_of(oth(k, O_D), lanes);
        u_target[k] = lane_of(oth(k, O_TARGET_D), lanes);
        u_v[k] = oth(k, O_SPEED);
        u_desired[k] = oth(k, O_DESIRED);
    }
    let lane = lane_of(ego_d, lanes);
    u_s[n] = ego_s;
    u_lane[n] = lane;
    u_target[n] = lane;
    u_v[n] = ego_v;
    u_desired[n] = EGO_DESIRED;
    u_n = n;
}

fn in_lane(k: u32, lane: f32) -> bool {
    return u_lane[k] == lane || u_target[k] == lane;
}

// The nearest user ahead of (behind) s_at in lane, other than skip; -1 if none.
fn nearest_user(s_at: f32, lane: f32, skip: u32, ahead: bool) -> i32 {
    var best = -1;
    var best_gap = 0.0;
    for (var k = 0u; k <= u_n; k++) {
        if (k == skip || !in_lane(k, lane)) {
            continue;
        }
        var gap = s_at - u_s[k];
        if (ahead) {
            gap = u_s[k] - s_at;
        }
        let tie_ok = gap > 0.0 || (gap == 0.0 && (k > skip) == ahead);
        // Ties go to the road order (arc length, then index): the lowest index ahead, the highest behind.
        if (tie_ok && (best < 0 || gap < best_gap || (!ahead && gap == best_gap))) {
            best = i32(k);
            best_gap = gap;
        }
    }
    return best;
}

fn user_accel(k: u32, lead: i32) -> f32 {
    if (lead < 0) {
        return idm(u_v[k], u_desired[k], false, 0.0, 0.0);
    }
    let l = u32(lead);
    return idm(u_v[k], u_desired[k], true, u_s[l] - u_s[k], u_v[l]);
}

fn mobil(k: u32, lane: f32, current: f32) -> bool {
    let new_lead = nearest_user(u_s[k], lane, k, true);
    let new_follower = nearest_user(u_s[k], lane, k, false);
    var gain = user_accel(k, new_lead) - user_accel(k, nearest_user(u_s[k], current, k, true));
    if (new_follower >= 0) {
        let f = u32(new_follower);
        let after = idm(u_v[f], u_desired[f], true, u_s[k] - u_s[f], u_v[k]);
        if (after < -MOBIL_SAFE_BRAKE) {
            return false;
        }
        gain += MOBIL_POLITENESS * (after - user_accel(f, new_lead));
    }
    let old = nearest_user(u_s[k], current, k, false);
    if (old >= 0) {
        let o = u32(old);
        let before = user_accel(o, i32(k));
        let after = user_accel(o, nearest_user(u_s[k], current, k, true));
        gain += MOBIL_POLITENESS * (after - before);
    }
    return gain > MOBIL_THRESHOLD;
}

fn traffic_step(ego_s: f32, ego_d: f32, ego_v: f32, substeps: u32, dt: f32) {
    users(ego_s, ego_d, ego_v);
    let n = u_n;
    let lanes = s[F_LANES];
    var accel: array<f32, MAX_OTHERS>;
    for (var k = 0u; k < n; k++) {
        let lead = nearest_user(u_s[k], u_lane[k], k, true);
        var a = user_accel(k, lead);
        if (u_target[k] != u_lane[k]) {
            a = min(a, user_accel(k, nearest_user(u_s[k], u_target[k], k, true)));
        }
        accel[k] = a;
        set_oth(k, O_TIMER, oth(k, O_TIMER) - f32(substeps) * dt);
        let settled = abs(oth(k, O_D) - oth(k, O_TARGET_D)) < 0.05;
        if (oth(k, O_TIMER) <= 0.0 && settled) {
            set_oth(k, O_TIMER, oth(k, O_TIMER) + MOBIL_DELAY);
            for (var side_i = 0u; side_i < 2u; side_i++) {
                let side = select(-1.0, 1.0, side_i == 0u);
                let lane = u_lane[k] + side;
                if (lane >= 0.0 && lane < lanes && mobil(k, lane, u_lane[k])) {
                    set_oth(k, O_TARGET_D, lane_centre(lane, lanes));
                    break;
                }
            }
        }
    }
    let length = s[F_ROAD_LENGTH];
    let time = f32(substeps) * dt;
    for (var k = 0u; k < n; k++) {
        let v0 = oth(k, O_SPEED);
        let v1 = max(v0 + accel[k] * time, 0.0);
        set_oth(k, O_SPEED, v1);
        set_oth(k, O_S, min(oth(k, O_S) + 0.5 * (v0 + v1) * time, length));
        let lateral = clamp(oth(k, O_TARGET_D) - oth(k, O_D), -LANE_CHANGE_SPEED * time, LANE_CHANGE_SPEED * time);
        set_oth(k, O_D, oth(k, O_D) + lateral);
        let p = pose_at(oth(k, O_S), oth(k, O_D));
        set_oth(k, O_X, p.x);
        set_oth(k, O_Y, p.y);
        set_oth(k, O_YAW, p.z + atan2(lateral / time, max(v1, 1.0)));
    }
}

fn boxes_overlap(ac: vec2<f32>, ayaw: f32, al: f32, aw: f32, bc: vec2<f32>, byaw: f32, bl: f32, bw: f32) -> bool {
    let dx = bc.x - ac.x;
    let dy = bc.y - ac.y;
    let reach = sqrt(al * al + aw * aw) + sqrt(bl * bl + bw * bw);
    if (dx * dx + dy * dy > reach * reach) {
        return false;
    }
    let sa = sin(ayaw);
    let ca = cos(ayaw);
    let sb = sin(byaw);
    let cb = cos(byaw);
    var axes = array<vec2<f32>, 4>(vec2<f32>(ca, sa), vec2<f32>(-sa, ca), vec2<f32>(cb, sb), vec2<f32>(-sb, cb));
    for (var i = 0u; i < 4u; i++) {
        let ax = axes[i];
        let pa = al * abs(ax.x * ca + ax.y * sa) + aw * abs(-ax.x * sa + ax.y * ca);
        let pb = bl * abs(ax.x * cb + ax.y * sb) + bw * abs(-ax.x * sb + ax.y * cb);
        let dist = abs(dx * ax.x + dy * ax.y);
        if (dist > pa + pb) {
            return false;
        }
    }
    return true;
}

fn ego_collision() -> bool {
    let ego = vec2<f32>(s[F_POS], s[F_POS + 1u]);
    for (var k = 0u; k < num_others(); k++) {
        let c = vec2<f32>(oth(k, O_X), oth(k, O_Y));
        if (boxes_overlap(ego, s[F_YAW], 0.5 * LENGTH, 0.5 * WIDTH, c, oth(k, O_YAW), 0.5 * LENGTH, 0.5 * WIDTH)) {
            return true;
        }
    }
    return false;
}

