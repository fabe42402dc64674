// The kernel physics on the GPU, part 4 of 4: the controllers
// (kernel/control.rs), what the tasks measure, their progress, reward and
// success (task.rs), the observation and info, and one control step.

// ---- controllers ----

// controller.rs `lerp` (a already clipped).
fn lerp_range(low: f32, high: f32, a: f32) -> f32 {
    return low + (a + 1.0) * 0.5 * (high - low);
}

fn rotation_vector(q0: vec4<f32>) -> vec3<f32> {
    var q = q0;
    if (q.w < 0.0) {
        q = -q;
    }
    let v = q.xyz;
    let sn = length(v);
    if (sn < 1e-7) {
        return 2.0 * v;
    }
    return v * (2.0 * atan2(sn, q.w) / sn);
}

// glam's Quat::from_scaled_axis.
fn from_rotation_vector(v: vec3<f32>) -> vec4<f32> {
    let angle = length(v);
    if (angle == 0.0) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    let half = 0.5 * angle;
    let axis = v / angle;
    let sn = sin(half);
    return vec4<f32>(axis.x * sn, axis.y * sn, axis.z * sn, cos(half));
}

// Solves a x = b for a symmetric positive-definite 6×6 a (row-major).
fn solve6(a: array<f32, 36>, b: array<f32, 6>) -> array<f32, 6> {
    var l: array<f32, 36>;
    for (var i = 0u; i < 6u; i++) {
        for (var j = 0u; j <= i; j++) {
            var sum = a[i * 6u + j];
            for (var k = 0u; k < j; k++) {
                sum -= l[i * 6u + k] * l[j * 6u + k];
            }
            if (i == j) {
                l[i * 6u + i] = sqrt(max(sum, 1e-12));
            } else {
                l[i * 6u + j] = sum / l[j * 6u + j];
            }
        }
    }
    var y: array<f32, 6>;
    for (var i = 0u; i < 6u; i++) {
        var v = b[i];
        for (var k = 0u; k < i; k++) {
            v -= l[i * 6u + k] * y[k];
        }
        y[i] = v / l[i * 6u + i];
    }
    var x: array<f32, 6>;
    for (var ii = 0u; ii < 6u; ii++) {
        let i = 5u - ii;
        var v = y[i];
        for (var k = i + 1u; k < 6u; k++) {
            v -= l[k * 6u + i] * x[k];
        }
        x[i] = v / l[i * 6u + i];
    }
    return x;
}

// One damped-least-squares step of the targets towards the TCP pose.
fn ik_step(position: vec3<f32>, rotation: vec4<f32>) {
    for (var j = 0u; j < DOF; j++) {
        kq[j] = s[F_TARGETS + j];
    }
    kinematics();
    let pose = tcp_pose();
    let tcp = pose[0].xyz;
    let body = u32(P.arm[A_HAND]);
    var jac: array<f32, 42>;
    for (var j = 0u; j < 7u; j++) {
        let linear = point_jacobian(body, tcp, j);
        jac[6u * j] = linear.x;
        jac[6u * j + 1u] = linear.y;
        jac[6u * j + 2u] = linear.z;
        jac[6u * j + 3u] = k_axis[j].x;
        jac[6u * j + 4u] = k_axis[j].y;
        jac[6u * j + 5u] = k_axis[j].z;
    }
    let ep = position - tcp;
    let er = rotation_vector(qmul(rotation, qconj(pose[1])));
    let error = array<f32, 6>(ep.x, ep.y, ep.z, er.x, er.y, er.z);
    var a: array<f32, 36>;
    for (var r = 0u; r < 6u; r++) {
        for (var c = 0u; c < 6u; c++) {
            var sum = select(0.0, IK_DAMPING * IK_DAMPING, r == c);
            for (var j = 0u; j < 7u; j++) {
                sum += jac[6u * j + r] * jac[6u * j + c];
            }
            a[r * 6u + c] = sum;
        }
    }
    let y = solve6(a, error);
    for (var j = 0u; j < 7u; j++) {
        var dq = 0.0;
        for (var r = 0u; r < 6u; r++) {
            dq += jac[6u * j + r] * y[r];
        }
        s[F_TARGETS + j] = clamp(s[F_TARGETS + j] + dq, P.arm[A_LOW + j], P.arm[A_HIGH + j]);
    }
}

fn action_dim() -> u32 {
    if (P.control == CONTROL_EE_POS) {
        return 4u;
    }
    if (P.control == CONTROL_EE_POSE) {
        return 7u;
    }
    if (P.control == CONTROL_EE_POS_YAW) {
        return 5u;
    }
    return 8u;
}

// The end-effector orientation target after action a's turn, from the last target `old` (controller.rs `turn`).
fn turn(old: vec4<f32>, a: array<f32, 8>) -> vec4<f32> {
    if (P.control == CONTROL_EE_POSE) {
        return qnorm(qmul(from_rotation_vector(vec3<f32>(a[3], a[4], a[5]) * EE_TURN), old));
    }
    if (P.control == CONTROL_EE_POS_YAW) {
        var from_down = qmul(old, vec4<f32>(-HAND_DOWN.xyz, HAND_DOWN.w));
        if (from_down.w < 0.0) {
            from_down = -from_down;
        }
        let yaw = 2.0 * atan2(from_down.z, from_down.w);
        let step = clamp(yaw + a[3] * EE_TURN, -YAW_LIMIT, YAW_LIMIT) - yaw;
        return qnorm(qmul(vec4<f32>(0.0, 0.0, sin(0.5 * step), cos(0.5 * step)), old));
    }
    return old;
}

// Sets the drive targets (and the controller memory) for env i's action.
fn apply_control(i: u32) {
    let dim = action_dim();
    var a: array<f32, 8>;
    for (var k = 0u; k < dim; k++) {
        a[k] = clamp(actions[i * dim + k], -1.0, 1.0);
    }
    if (P.control == CONTROL_JOINT_POS) {
        for (var k = 0u; k < 7u; k++) {
            s[F_TARGETS + k] = lerp_range(P.arm[A_LOW + k], P.arm[A_HIGH + k], a[k]);
        }
    } else if (P.control == CONTROL_JOINT_DELTA) {
        for (var k = 0u; k < 7u; k++) {
            s[F_TARGETS + k] = clamp(s[F_Q + k] + JOINT_STEP * a[k], P.arm[A_LOW + k], P.arm[A_HIGH + k]);
        }
    } else {
        for (var j = 0u; j < DOF; j++) {
            kq[j] = s[F_Q + j];
        }
        kinematics();
        let tcp = tcp_pose()[0].xyz;
        let shift = vec3<f32>(a[0], a[1], a[2]) * EE_STEP;
        let position = clamp(tcp + shift, EE_LOW, EE_HIGH);
        s[F_EE_POSITION] = position.x;
        s[F_EE_POSITION + 1u] = position.y;
        s[F_EE_POSITION + 2u] = position.z;
        let old = vec4<f32>(s[F_EE_ROTATION], s[F_EE_ROTATION + 1u], s[F_EE_ROTATION + 2u], s[F_EE_ROTATION + 3u]);
        let want = turn(old, a);
        for (var k = 0u; k < 4u; k++) {
            s[F_EE_ROTATION + k] = want[k];
        }
        var before: array<f32, 7>;
        for (var k = 0u; k < 7u; k++) {
            before[k] = s[F_TARGETS + k];
        }
        for (var it = 0u; it < IK_ITERATIONS; it++) {
            ik_step(position, want);
        }
        let period = P.h * f32(SOLVER_STEPS * P.substeps);
        var scale = 1.0;
        for (var k = 0u; k < 7u; k++) {
            let reach = P.arm[A_SPEED + k] * period;
            let step = abs(s[F_TARGETS + k] - before[k]);
            if (step > reach) {
                scale = min(scale, reach / step);
            }
        }
        for (var k = 0u; k < 7u; k++) {
            s[F_TARGETS + k] = before[k] + (s[F_TARGETS + k] - before[k]) * scale;
        }
    }
    let gripper = lerp_range(FINGER_CLOSED, FINGER_OPEN, a[dim - 1u]);
    s[F_TARGETS + 7u] = gripper;
    s[F_TARGETS + 8u] = gripper;
}

// ---- what the tasks measure (kinematics at the state's q) ----

fn measure() {
    for (var j = 0u; j < DOF; j++) {
        kq[j] = s[F_Q + j];
    }
    kinematics();
}

fn cube_at(i: u32) -> vec3<f32> {
    let c = F_CUBES + i * CUBE_FIELDS;
    return vec3<f32>(s[c], s[c + 1u], s[c + 2u]);
}

// Both fingers touch cube i and their drives press on it (reward.rs's grasped).
fn grasped(i: u32) -> bool {
    let squeeze = s[F_Q + 7u] + s[F_Q + 8u] - (s[F_TARGETS + 7u] + s[F_TARGETS + 8u]);
    return s[F_GRASP + i] > 0.5 && squeeze > SQUEEZE;
}

fn closeness(d: f32) -> f32 {
    return 1.0 - tanh(5.0 * d);
}

fn planar(v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(v.x, v.y, 0.0);
}

fn on_top(a: vec3<f32>, b: vec3<f32>) -> bool {
    let offset = a - b;
    return length(planar(offset)) <= STACK_OFFSET && abs(offset.z - 2.0 * CUBE_HALF) <= 0.005;
}

// Dense progress in [0, 1], whether the success condition holds now, and the task's distance.
struct Progress {
    score: f32,
    holds: bool,
    distance: f32,
}

// Push-cube's score of cube i towards `goal` and its planar distance (reward.rs `push`).
fn push_score(i: u32, goal: vec3<f32>, tcp: vec3<f32>) -> vec2<f32> {
    let cube = cube_at(i);
    var dir = planar(goal - cube);
    let len = length(dir);
    if (len > 0.0) {
        dir = dir * (1.0 / len);
    } else {
        dir = vec3<f32>(0.0);
    }
    var behind = cube - dir * (CUBE_HALF + 0.02);
    behind.z = CUBE_HALF;
    let d = length(planar(cube - goal));
    return vec2<f32>((closeness(length(tcp - behind)) + 2.0 * closeness(d)) / 3.0, d);
}

// Pick-cube's stages for cube i and `goal` (reward.rs `pick`).
fn pick_progress(i: u32, goal: vec3<f32>, tcp: vec3<f32>, still: bool) -> Progress {
    let cube = cube_at(i);
    let held = select(0.0, 1.0, grasped(i));
    let d = length(cube - goal);
    let placed = held * select(0.0, 1.0, d < PICK_RADIUS);
    var speed = 0.0;
    for (var k = 0u; k < 7u; k++) {
        speed += s[F_QD + k] * s[F_QD + k];
    }
    let arm_static = 1.0 - tanh(5.0 * sqrt(speed));
    let score = (closeness(length(tcp - cube)) + held + held * closeness(d) + placed * arm_static) / PICK_STAGES;
    return Progress(score, placed > 0.0 && still, d);
}

// Stack-cube's stages for cube ia onto cube ib (reward.rs `stack`).
fn stack_progress(ia: u32, ib: u32, tcp: vec3<f32>) -> Progress {
    let a = cube_at(ia);
    let b = cube_at(ib);
    let held = grasped(ia);
    let top = on_top(a, b);
    let d = length(a - (b + vec3<f32>(0.0, 0.0, 2.0 * CUBE_HALF)));
    let c = F_CUBES + ia * CUBE_FIELDS;
    let v = length(vec3<f32>(s[c + 7u], s[c + 8u], s[c + 9u]));
    let w = length(vec3<f32>(s[c + 10u], s[c + 11u], s[c + 12u]));
    var stage = 2.0 * closeness(length(tcp - a));
    if (top) {
        var ungrasp = 1.0;
        if (held) {
            ungrasp = clamp((s[F_TARGETS + 7u] + s[F_TARGETS + 8u]) / (2.0 * FINGER_OPEN), 0.0, 1.0);
        }
        stage = 6.0 + (ungrasp + 1.0 - tanh(10.0 * v + w)) / 2.0;
    } else if (held) {
        stage = 4.0 + closeness(d);
    }
    return Progress(stage / STACK_STAGES, top && !held && v < 0.01, d);
}

// instruct-v0's instruction as (template 1-3, cube, side or other cube); template 0: none.
// Its phrasing (instruct/words.rs) is the state's next value.
fn instruction() -> vec3<u32> {
    return vec3<u32>(u32(s[F_INSTRUCTION]), u32(s[F_INSTRUCTION + 1u]), u32(s[F_INSTRUCTION + 2u]));
}

// The unit vector of side k (instruct.rs `Side::ALL`: left, right, front, back).
fn side_direction(k: u32) -> vec3<f32> {
    var sides = array<vec3<f32>, 4>(
        vec3<f32>(0.0, 1.0, 0.0),
        vec3<f32>(0.0, -1.0, 0.0),
        vec3<f32>(1.0, 0.0, 0.0),
        vec3<f32>(-1.0, 0.0, 0.0),
    );
    return sides[k];
}

// The instructed task's stages and the instruction's own test (reward.rs `instructed`).
fn instructed_progress(goal: vec3<f32>, tcp: vec3<f32>, still: bool) -> Progress {
    let ins = instruction();
    if (ins.x == 1u) {
        let p = push_score(ins.y, goal, tcp);
        let cube = cube_at(ins.y);
        let pushed = dot(cube, side_direction(ins.z)) >= SIDE_LINE && cube.z < CUBE_HALF + 0.01;
        return Progress(p.x, pushed, p.y);
    }
    if (ins.x == 2u) {
        let p = pick_progress(ins.y, goal, tcp, still);
        let lifted = grasped(ins.y) && cube_at(ins.y).z - CUBE_HALF >= LIFT;
        return Progress(p.score, lifted, p.distance);
    }
    if (ins.x == 3u) {
        return stack_progress(ins.y, ins.z, tcp);
    }
    return Progress(0.0, false, 0.0);
}

// Control steps the success condition must hold (reward.rs `hold_steps`).
fn hold_steps() -> u32 {
    if (P.task != TASK_INSTRUCT) {
        return P.hold;
    }
    let t = instruction().x;
    if (t == 2u) {
        return P.hold_pick;
    }
    if (t == 3u) {
        return P.hold_stack;
    }
    return 1u;
}

fn progress() -> Progress {
    measure();
    let tcp = tcp_pose()[0].xyz;
    let goal = vec3<f32>(s[F_GOAL], s[F_GOAL + 1u], s[F_GOAL + 2u]);
    var still = true;
    for (var k = 0u; k < 7u; k++) {
        still = still && abs(s[F_QD + k]) < STILL;
    }
    var p = Progress(0.0, false, 0.0);
    if (P.task == TASK_REACH) {
        let d = length(tcp - goal);
        p = Progress(closeness(d), d < REACH_RADIUS, d);
    } else if (P.task == TASK_PUSH) {
        let q = push_score(0u, goal, tcp);
        p = Progress(q.x, q.y < PUSH_RADIUS && cube_at(0u).z < CUBE_HALF + 0.005, q.y);
    } else if (P.task == TASK_PICK) {
        p = pick_progress(0u, goal, tcp, still);
    } else if (P.task == TASK_STACK) {
        p = stack_progress(0u, 1u, tcp);
    } else {
        p = instructed_progress(goal, tcp, still);
    }
    return Progress(select(p.score, 1.0, p.holds), p.holds, p.distance);
}

// ---- one control step, the observation and the info ----

fn finite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

// 0: fine, 1: a non-finite value, 2: a cube left the workspace.
fn blow_up() -> u32 {
    for (var f = 0u; f < LEN; f++) {
        if (!finite(s[f])) {
            return 1u;
        }
    }
    let low = WORK_LOW;
    let high = WORK_HIGH;
    for (var i = 0u; i < P.cubes; i++) {
        let c = cube_at(i);
        if (any(c < low) || any(c > high)) {
            return 2u;
        }
    }
    return 0u;
}

fn control_step(i: u32) -> StepResult {
    apply_control(i);
    var failure = 0u;
    for (var sub = 0u; sub < P.substeps; sub++) {
        for (var k = 0u; k < SOLVER_STEPS; k++) {
            physics_step(P.cubes, P.h);
        }
        failure = blow_up();
        if (failure != 0u) {
            break;
        }
    }
    let p = progress();
    // Without `dense_reward` (instruct-v0's default) 1 on success, else 0.
    let binary = P.binary != 0u;
    var out = StepResult(select(-1.0, 0.0, binary), false, false, failure, failure != 0u);
    if (failure == 0u) {
        var held = 0.0;
        if (p.holds) {
            held = s[F_HELD] + 1.0;
        }
        s[F_HELD] = held;
        let success = held >= f32(hold_steps());
        let miss = select(p.score - 1.0, 0.0, binary);
        out = StepResult(select(miss, 1.0, success), success, success, 0u, false);
    }
    if (failure == 1u) {
        for (var f = 0u; f < LEN; f++) {
            if (!finite(s[f])) {
                s[f] = 0.0;
            }
        }
    }
    return out;
}

var<private> obs_at: u32;

fn put(v: f32) {
    outputs[obs_at] = select(0.0, v, finite(v));
    obs_at++;
}

fn put3(v: vec3<f32>) {
    put(v.x);
    put(v.y);
    put(v.z);
}

// A quaternion in the hemisphere of `reference` (task.rs `canonical`).
fn put_canonical(q: vec4<f32>, reference: vec4<f32>) {
    var c = q;
    if (dot(q, reference) < 0.0) {
        c = -q;
    }
    put(c.x);
    put(c.y);
    put(c.z);
    put(c.w);
}

// Of the rotations equivalent to a cube's `q`, the one closest to the world axes (task.rs `cube_symmetric`).
fn cube_symmetric(q: vec4<f32>) -> vec4<f32> {
    var table = CUBE_SYMMETRIES;
    var best = q;
    for (var k = 0u; k < 24u; k++) {
        let r = qmul(q, table[k]);
        if (abs(r.w) > abs(best.w)) {
            best = r;
        }
    }
    return best;
}

fn put_cube(i: u32) {
    let c = F_CUBES + i * CUBE_FIELDS;
    put3(cube_at(i));
    var rotation = vec4<f32>(s[c + 3u], s[c + 4u], s[c + 5u], s[c + 6u]);
    if (P.cube_symmetry != 0u) {
        rotation = cube_symmetric(rotation);
    }
    put_canonical(rotation, vec4<f32>(0.0, 0.0, 0.0, 1.0));
    for (var k = 7u; k < 13u; k++) {
        put(s[c + k]);
    }
}

fn observe(base: u32) {
    measure();
    let pose = tcp_pose();
    let tcp = pose[0].xyz;
    let goal = vec3<f32>(s[F_GOAL], s[F_GOAL + 1u], s[F_GOAL + 2u]);
    obs_at = base;
    for (var j = 0u; j < DOF; j++) {
        put(s[F_Q + j]);
    }
    for (var j = 0u; j < DOF; j++) {
        put(s[F_QD + j]);
    }
    put3(tcp);
    put_canonical(pose[1], HAND_DOWN);
    put(s[F_Q + 7u] + s[F_Q + 8u]);
    if (P.task == TASK_REACH) {
        if (P.goal_in_state != 0u) {
            put3(goal);
            put3(goal - tcp);
        }
    } else if (P.task == TASK_STACK) {
        let a = cube_at(0u);
        let b = cube_at(1u);
        put_cube(0u);
        put_cube(1u);
        put3(a - tcp);
        put3(b + vec3<f32>(0.0, 0.0, 2.0 * CUBE_HALF) - a);
        put(select(0.0, 1.0, grasped(0u)));
    } else if (P.task == TASK_INSTRUCT) {
        // task.rs `observe_instruct`: cubes, goal, grasp flags, cubes from the TCP, tokens.
        for (var i = 0u; i < P.cubes; i++) {
            put_cube(i);
        }
        if (P.goal_in_state != 0u) {
            put3(goal);
        }
        for (var i = 0u; i < P.cubes; i++) {
            put(select(0.0, 1.0, grasped(i)));
        }
        for (var i = 0u; i < P.cubes; i++) {
            put3(cube_at(i) - tcp);
        }
        // The ids of instruction (t, cube, arg) in phrasing p are row
        // ((p · 3 + t − 1) · CUBES + cube) · CUBES + arg of P.tokens.
        let ins = instruction();
        let p = u32(s[F_INSTRUCTION + 3u]);
        let row = select(0u, ((p * 3u + ins.x - 1u) * CUBES + ins.y) * CUBES + ins.z, ins.x > 0u);
        for (var k = 0u; k < INSTRUCTION_TOKENS; k++) {
            put(select(0.0, P.tokens[row * INSTRUCTION_TOKENS + k], ins.x > 0u));
        }
    } else {
        let cube = cube_at(0u);
        put_cube(0u);
        if (P.goal_in_state != 0u) {
            put3(goal);
            put3(goal - cube);
        }
        put3(cube - tcp);
        put(select(0.0, 1.0, grasped(0u)));
    }
}

// distance, grasped (−1: not reported), and instruct's instruction and cube count (gpu.rs).
fn write_info(at: u32) {
    let p = progress();
    outputs[at] = p.distance;
    let ins = instruction();
    if (P.task == TASK_REACH) {
        outputs[at + 1u] = -1.0;
    } else if (P.task == TASK_INSTRUCT) {
        outputs[at + 1u] = select(0.0, 1.0, grasped(ins.y));
    } else {
        outputs[at + 1u] = select(0.0, 1.0, grasped(0u));
    }
    outputs[at + 2u] = s[F_INSTRUCTION];
    outputs[at + 3u] = s[F_INSTRUCTION + 1u];
    outputs[at + 4u] = s[F_INSTRUCTION + 2u];
    outputs[at + 5u] = f32(P.cubes);
}
