// The GPU backend of the drone envs: one invocation per env runs a whole
// control step (every physics substep, crash and gate checks, reward,
// autoreset, observation). It mirrors dynamics.rs and task.rs line for line;
// tests/parity.rs holds the two together. Constants (LEN, CHUNK, field
// offsets F_*, Crazyflie parameters), the `Params` block and proprio-gpu's
// prelude (bindings, command flags, the state's loads and stores) are
// prepended by gpu/mod.rs.

fn get3(f: u32) -> vec3<f32> {
    return vec3<f32>(s[f], s[f + 1u], s[f + 2u]);
}

fn set3(f: u32, v: vec3<f32>) {
    s[f] = v.x;
    s[f + 1u] = v.y;
    s[f + 2u] = v.z;
}

fn dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

fn cross3(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

fn norm3(a: vec3<f32>) -> f32 {
    return sqrt(dot3(a, a));
}

struct Rot {
    r0: vec3<f32>,
    r1: vec3<f32>,
    r2: vec3<f32>,
}

fn rotation() -> Rot {
    let w = s[F_QUAT];
    let x = s[F_QUAT + 1u];
    let y = s[F_QUAT + 2u];
    let z = s[F_QUAT + 3u];
    return Rot(
        vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)),
        vec3<f32>(2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)),
        vec3<f32>(2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)),
    );
}

fn rotate(r: Rot, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot3(r.r0, v), dot3(r.r1, v), dot3(r.r2, v));
}

fn rotate_back(r: Rot, v: vec3<f32>) -> vec3<f32> {
    return (r.r0 * v.x + r.r1 * v.y) + r.r2 * v.z;
}

fn motor_rpm(a: vec4<f32>) -> vec4<f32> {
    return MAX_RPM * 0.5 * (clamp(a, vec4<f32>(-1.0), vec4<f32>(1.0)) + 1.0);
}

fn mix(thrust: f32, torque: vec3<f32>) -> vec4<f32> {
    let d = MOTOR_D;
    let c = MIX_C;
    let t = 0.25 * thrust;
    let x = 0.25 * torque.x / d;
    let y = 0.25 * torque.y / d;
    let z = 0.25 * torque.z / c;
    let force = vec4<f32>(t - x - y + z, t - x + y - z, t + x + y + z, t + x - y - z);
    let top = KF * MAX_RPM * MAX_RPM;
    return sqrt(clamp(force, vec4<f32>(0.0), vec4<f32>(top)) / KF);
}

fn rate_control(action: vec4<f32>) -> vec4<f32> {
    let a = clamp(action, vec4<f32>(-1.0), vec4<f32>(1.0));
    let thrust = 0.5 * (a.x + 1.0) * THRUST_TO_WEIGHT * MASS * GRAVITY;
    let want = vec3<f32>(a.y, a.z, a.w) * MAX_RATE;
    let w = get3(F_OMEGA);
    let iw = INERTIA * w;
    let torque = INERTIA * (RATE_GAIN * (want - w)) + cross3(w, iw);
    return mix(thrust, torque);
}

fn angular_acc(w: vec3<f32>, torque: vec3<f32>) -> vec3<f32> {
    let inertia = get3(F_INERTIA);
    let gyro = cross3(w, inertia * w);
    return (torque - gyro) / inertia;
}

fn substep(cmd: vec4<f32>, dt: f32) {
    var xs = array<f32, 4>(MOTOR_D, -MOTOR_D, -MOTOR_D, MOTOR_D);
    var ys = array<f32, 4>(-MOTOR_D, -MOTOR_D, MOTOR_D, MOTOR_D);
    var spin = array<f32, 4>(1.0, -1.0, 1.0, -1.0);
    let alpha = s[F_MOTOR_ALPHA];
    let kf = s[F_KF];
    let km = s[F_KM];
    var thrust = 0.0;
    var torque = vec3<f32>(0.0);
    var rotor = 0.0;
    for (var k = 0u; k < 4u; k++) {
        let rpm = s[F_RPM + k] + alpha * (cmd[k] - s[F_RPM + k]);
        s[F_RPM + k] = rpm;
        let w2 = rpm * rpm;
        let f = kf * w2;
        thrust += f;
        torque.x += ys[k] * f;
        torque.y -= xs[k] * f;
        torque.z += spin[k] * km * w2;
        rotor += rpm;
    }
    rotor = rotor * RPM_TO_RAD;
    let r = rotation();
    let wind = get3(F_WIND) + get3(F_GUST) * s[F_GUST_PHASE];
    let air = rotate_back(r, get3(F_VEL) - wind);
    let drag = (DRAG * air) * -rotor;
    let force = rotate(r, vec3<f32>(drag.x, drag.y, drag.z + thrust));
    let acc = force * (1.0 / s[F_MASS]) + vec3<f32>(0.0, 0.0, -GRAVITY);
    let omega = get3(F_OMEGA);
    let a0 = angular_acc(omega, torque);
    let a1 = angular_acc(omega + a0 * dt, torque);
    let vel = get3(F_VEL) + acc * dt;
    set3(F_VEL, vel);
    set3(F_POS, get3(F_POS) + vel * dt);
    let om = omega + (a0 + a1) * (0.5 * dt);
    set3(F_OMEGA, om);
    let w = s[F_QUAT];
    let x = s[F_QUAT + 1u];
    let y = s[F_QUAT + 2u];
    let z = s[F_QUAT + 3u];
    let h = 0.5 * dt;
    let q = vec4<f32>(
        w + h * (-x * om.x - y * om.y - z * om.z),
        x + h * (w * om.x + y * om.z - z * om.y),
        y + h * (w * om.y + z * om.x - x * om.z),
        z + h * (w * om.z + x * om.y - y * om.x),
    );
    let len = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    s[F_QUAT] = q.x / len;
    s[F_QUAT + 1u] = q.y / len;
    s[F_QUAT + 2u] = q.z / len;
    s[F_QUAT + 3u] = q.w / len;
    let sn = s[F_GUST_PHASE];
    let cs = s[F_GUST_PHASE + 1u];
    let ds = s[F_GUST_STEP];
    let dc = s[F_GUST_STEP + 1u];
    s[F_GUST_PHASE] = sn * dc + cs * ds;
    s[F_GUST_PHASE + 1u] = cs * dc - sn * ds;
}

fn point(k: u32) -> vec3<f32> {
    return get3(F_POINTS + 3u * k);
}

fn current_target() -> vec3<f32> {
    return point(min(u32(s[F_GOAL]), P.count - 1u));
}

// Gate checks after a substep from `before`; true on touching a frame.
fn gates(before: vec3<f32>) -> bool {
    let h = 0.5 * P.gate_size;
    var hit = false;
    for (var k = 0u; k < P.count; k++) {
        let c = s[F_GATE_DIR + 2u * k];
        let sn = s[F_GATE_DIR + 2u * k + 1u];
        let rel = get3(F_POS) - point(k);
        let along = rel.x * c + rel.y * sn;
        let side = -rel.x * sn + rel.y * c;
        let reach = max(abs(side), abs(rel.z));
        let near = abs(along) < BODY_RADIUS + 0.5 * FRAME_DEPTH;
        if (near && reach < h + FRAME_WIDTH + BODY_RADIUS && reach > h - BODY_RADIUS) {
            hit = true;
        }
        let prev = before - point(k);
        let was_behind = prev.x * c + prev.y * sn < 0.0;
        if (f32(k) == s[F_GOAL] && was_behind && along >= 0.0 && reach < h) {
            s[F_GOAL] += 1.0;
        }
    }
    return hit;
}

fn control_step(env: u32) -> StepResult {
    let raw = vec4<f32>(actions[4u * env], actions[4u * env + 1u], actions[4u * env + 2u], actions[4u * env + 3u]);
    let action = clamp(raw, vec4<f32>(-1.0), vec4<f32>(1.0));
    let goal0 = s[F_GOAL];
    var crash = 0u;
    for (var i = 0u; i < P.substeps; i++) {
        var cmd: vec4<f32>;
        if (P.action_mode == 0u) {
            cmd = motor_rpm(action);
        } else {
            cmd = rate_control(action);
        }
        let before = get3(F_POS);
        substep(cmd, P.dt);
        if (P.task == 2u && gates(before)) {
            crash = 2u;
        }
        if (s[F_POS + 2u] <= 0.0) {
            s[F_POS + 2u] = 0.0;
            set3(F_VEL, vec3<f32>(0.0));
            set3(F_OMEGA, vec3<f32>(0.0));
            crash = 1u;
        }
        if (crash != 0u) {
            break;
        }
    }
    let p = get3(F_POS);
    if (crash == 0u && (abs(p.x) > ARENA || abs(p.y) > ARENA || p.z > ARENA)) {
        crash = 3u;
    }
    s[F_ACTION] = action.x;
    s[F_ACTION + 1u] = action.y;
    s[F_ACTION + 2u] = action.z;
    s[F_ACTION + 3u] = action.w;
    if (P.task == 1u && s[F_GOAL] < f32(P.count)) {
        if (norm3(p - point(u32(s[F_GOAL]))) < P.waypoint_radius) {
            s[F_GOAL] += 1.0;
        }
    }
    let offset = p - current_target();
    let error = norm3(offset);
    let rate = norm3(get3(F_OMEGA));
    let reached = s[F_GOAL] - goal0;
    if (P.squared == 1u && crash == 0u && any(abs(offset) > vec3<f32>(P.sq_exit))) {
        crash = 3u;
    }
    var reward: f32;
    var success: bool;
    if (P.task == 0u) {
        let up = rotation().r2.z;
        let inside = error < HOVER_RADIUS && rate < HOVER_RATE;
        if (inside) {
            s[F_HOLD] = s[F_HOLD] + 1.0;
        } else {
            s[F_HOLD] = 0.0;
        }
        if (P.squared == 1u) {
            let speed = norm3(get3(F_VEL));
            let e = action - vec4<f32>(P.hover_command);
            let cost = P.sq_position * error * error + P.sq_distance * error
                + P.sq_orientation * (1.0 - s[F_QUAT] * s[F_QUAT]) + P.sq_velocity * speed * speed
                + P.sq_rate * rate * rate + P.sq_action * dot(e, e);
            reward = P.sq_constant - P.sq_scale * cost;
            if (inside) {
                reward += P.sq_bonus;
            }
        } else {
            let cost = error + 0.2 * (1.0 - up) + 0.05 * norm3(get3(F_VEL)) + 0.02 * rate;
            reward = max(1.0 - cost, -1.0);
            if (inside) {
                reward += HOVER_BONUS;
            }
        }
        success = s[F_HOLD] >= f32(P.control_hz);
    } else {
        var progress = 0.0;
        if (reached <= 0.0) {
            progress = s[F_DIST] - error;
        }
        reward = PROGRESS_REWARD * progress + POINT_BONUS * reached - 0.01 * rate;
        success = s[F_GOAL] >= f32(P.count);
    }
    s[F_DIST] = error;
    if (crash != 0u) {
        if (P.squared == 1u) {
            reward = P.sq_termination;
        } else {
            reward = CRASH_REWARD;
        }
    }
    let finishes = P.task != 0u && success;
    return StepResult(reward, crash != 0u || finishes, success, crash, false);
}

fn observe(base: u32) {
    let t = current_target();
    let e = get3(F_POS) - t;
    let r = rotation();
    outputs[base] = e.x;
    outputs[base + 1u] = e.y;
    outputs[base + 2u] = e.z;
    outputs[base + 3u] = r.r0.x;
    outputs[base + 4u] = r.r0.y;
    outputs[base + 5u] = r.r0.z;
    outputs[base + 6u] = r.r1.x;
    outputs[base + 7u] = r.r1.y;
    outputs[base + 8u] = r.r1.z;
    outputs[base + 9u] = r.r2.x;
    outputs[base + 10u] = r.r2.y;
    outputs[base + 11u] = r.r2.z;
    for (var k = 0u; k < 3u; k++) {
        outputs[base + 12u + k] = s[F_VEL + k];
        outputs[base + 15u + k] = s[F_OMEGA + k];
    }
    for (var k = 0u; k < 4u; k++) {
        outputs[base + 18u + k] = s[F_ACTION + k];
    }
    let g = min(u32(s[F_GOAL]), P.count - 1u);
    var next = vec3<f32>(0.0);
    if (g + 1u < P.count) {
        next = point(g + 1u) - t;
    }
    if (P.task == 1u) {
        outputs[base + 22u] = next.x;
        outputs[base + 23u] = next.y;
        outputs[base + 24u] = next.z;
    } else if (P.task == 2u) {
        outputs[base + 22u] = s[F_GATE_DIR + 2u * g];
        outputs[base + 23u] = s[F_GATE_DIR + 2u * g + 1u];
        outputs[base + 24u] = 0.0;
        outputs[base + 25u] = next.x;
        outputs[base + 26u] = next.y;
        outputs[base + 27u] = next.z;
    }
    if (P.motors_at > 0u) {
        for (var k = 0u; k < 4u; k++) {
            outputs[base + P.motors_at + k] = 2.0 * s[F_RPM + k] / MAX_RPM - 1.0;
        }
    }
}

fn write_info(at: u32) {
    outputs[at] = s[F_DIST];
    outputs[at + 1u] = s[F_GOAL];
}
