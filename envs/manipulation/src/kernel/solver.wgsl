// The kernel physics on the GPU, part 3 of 4: the contacts of a step (in a
// per-env scratch buffer), and one physics step by projected Gauss–Seidel —
// kernel/physics.rs line for line.

// ---- contact rows (kernel/physics.rs), in the scratch buffer ----

@group(0) @binding(6) var<storage, read_write> scratch: array<f32>;

const FIXED: i32 = -1;
const CUBE: i32 = 16;
const NO_SLOT: i32 = -1;
// Floats of one contact row in the scratch buffer, and where its parts start.
const ROW: u32 = 81u;
const R_DIR: u32 = 0u;
const R_SIDE: u32 = 9u;
const R_R: u32 = 11u;
const R_ROBOT: u32 = 17u;
const R_JR: u32 = 18u;
const R_MJR: u32 = 45u;
const R_INV_W: u32 = 72u;
const R_BIAS: u32 = 75u;
const R_MU: u32 = 76u;
const R_LAMBDA: u32 = 77u;
const R_SLOT: u32 = 80u;

var<private> n_rows: u32;

fn sc(c: u32, f: u32) -> u32 {
    return (env_id / CHUNK) * CHUNK * SCRATCH + (c * ROW + f) * CHUNK + env_id % CHUNK;
}

fn rget(c: u32, f: u32) -> f32 {
    return scratch[sc(c, f)];
}

fn rset(c: u32, f: u32, v: f32) {
    scratch[sc(c, f)] = v;
}

fn rget3(c: u32, f: u32) -> vec3<f32> {
    return vec3<f32>(rget(c, f), rget(c, f + 1u), rget(c, f + 2u));
}

fn rset3(c: u32, f: u32, v: vec3<f32>) {
    rset(c, f, v.x);
    rset(c, f + 1u, v.y);
    rset(c, f + 2u, v.z);
}

fn side_of(c: u32, side: u32) -> i32 {
    return i32(rget(c, R_SIDE + side));
}

// Velocities the solver changes.
var<private> vel_qd: array<f32, DOF>;
var<private> vel_v: array<vec3<f32>, CUBES>;
var<private> vel_w: array<vec3<f32>, CUBES>;

fn friction_of(side: i32) -> f32 {
    return select(GRIP_FRICTION, TABLE_FRICTION, side == FIXED);
}

fn push_row(a: i32, b: i32, p: u32, slot: i32, h: f32) {
    if (n_rows >= MAX_CONTACTS) {
        return;
    }
    let c = n_rows;
    let n = pt_normal[p];
    var t1 = cross(n, vec3<f32>(1.0, 0.0, 0.0));
    if (abs(n.z) < 0.9) {
        t1 = cross(n, vec3<f32>(0.0, 0.0, 1.0));
    }
    t1 = t1 * (1.0 / length(t1));
    rset3(c, R_DIR, n);
    rset3(c, R_DIR + 3u, t1);
    rset3(c, R_DIR + 6u, cross(n, t1));
    rset(c, R_SIDE, f32(a));
    rset(c, R_SIDE + 1u, f32(b));
    rset3(c, R_R, pt_at[p]);
    rset3(c, R_R + 3u, pt_at[p]);
    rset(c, R_ROBOT, 0.0);
    for (var k = 0u; k < 54u; k++) {
        rset(c, R_JR + k, 0.0);
    }
    let depth = pt_depth[p];
    if (depth > 0.0) {
        rset(c, R_BIAS, BAUMGARTE * max(depth - SLOP, 0.0) / h);
    } else {
        rset(c, R_BIAS, depth / h);
    }
    rset(c, R_MU, 0.5 * (friction_of(a) + friction_of(b)));
    for (var d = 0u; d < 3u; d++) {
        rset(c, R_INV_W + d, 0.0);
        rset(c, R_LAMBDA + d, 0.0);
    }
    rset(c, R_SLOT, f32(slot));
    n_rows++;
}

// Every contact point of the env now, in the order of kernel/physics.rs
// `detect`; sets the grasp flags. One call site per shape test: lavapipe
// inlines every call, and each copy of box_box costs a minute of compiling.
fn detect(cubes: u32, h: f32) {
    n_rows = 0u;
    let count = cubes + BOXES;
    motions(vel_qd);
    var boxes: array<Obb, 7>;
    var sides: array<i32, 7>;
    var lin: array<vec3<f32>, 7>;
    var ang: array<vec3<f32>, 7>;
    for (var n = 0u; n < count; n++) {
        if (n < cubes) {
            boxes[n] = cube_box(n);
            sides[n] = CUBE + i32(n);
            lin[n] = vel_v[n];
            ang[n] = vel_w[n];
        } else {
            boxes[n] = robot_box(n - cubes);
            let body = u32(P.arm[A_BOX + 11u * (n - cubes)]);
            sides[n] = i32(body);
            lin[n] = m_lin[body] + cross(m_ang[body], boxes[n].centre - k_org[body]);
            ang[n] = m_ang[body];
        }
    }
    for (var n = 0u; n < count; n++) {
        box_plane(boxes[n], lin[n], ang[n], h);
        for (var c = 0u; c < 8u; c++) {
            if (pt_valid[c]) {
                var slot = i32(SLOT_BOX_TABLE + 8u * (n - cubes) + c);
                if (n < cubes) {
                    slot = i32(8u * n + c);
                }
                push_row(sides[n], FIXED, c, slot, h);
            }
        }
    }
    var touch: array<array<bool, CUBES>, 2>;
    for (var a = 0u; a < count; a++) {
        for (var b = 0u; b < min(cubes, a); b++) {
            let margin = margin_of(lin[a], ang[a], radius(boxes[a]), lin[b], ang[b], radius(boxes[b]), h);
            box_box(boxes[a], boxes[b], margin);
            for (var n = 0u; n < 4u; n++) {
                if (pt_valid[n]) {
                    var slot = i32(SLOT_BOX_CUBE + 4u * ((a - cubes) * CUBES + b) + n);
                    if (a < cubes) {
                        let pair = array<u32, 3>(0u, 3u, 5u)[b] + a - b - 1u;
                        slot = i32(SLOT_CUBE_CUBE + 4u * pair + n);
                    }
                    push_row(sides[a], sides[b], n, slot, h);
                    if (a > cubes && pt_depth[n] > -TOUCH) {
                        touch[a - cubes - 1u][b] = true;
                    }
                }
            }
        }
    }
    for (var i = 0u; i < CUBES; i++) {
        s[F_GRASP + i] = select(0.0, 1.0, touch[0][i] && touch[1][i]);
    }
    let spheres = u32(P.arm[A_SPHERE_COUNT]);
    for (var k = 0u; k < spheres; k++) {
        let at = A_SPHERE + 5u * k;
        let body = u32(P.arm[at]);
        let centre = k_org[body] + qrot(k_rot[body], arm3(at + 1u));
        let r = P.arm[at + 4u];
        let moving = m_lin[body] + cross(m_ang[body], centre - k_org[body]);
        let still = vec3<f32>(0.0);
        sphere_plane(centre, r, margin_of(moving, still, 0.0, still, still, 0.0, h));
        if (pt_valid[0]) {
            push_row(i32(body), FIXED, 0u, NO_SLOT, h);
        }
        for (var i = 0u; i < cubes; i++) {
            sphere_box(centre, r, boxes[i], margin_of(moving, still, 0.0, lin[i], ang[i], radius(boxes[i]), h));
            if (pt_valid[0]) {
                push_row(i32(body), CUBE + i32(i), 0u, NO_SLOT, h);
            }
        }
    }
}

fn row_velocity(c: u32, d: u32) -> f32 {
    var v = 0.0;
    if (rget(c, R_ROBOT) != 0.0) {
        for (var j = 0u; j < DOF; j++) {
            v += rget(c, R_JR + 9u * d + j) * vel_qd[j];
        }
    }
    let dir = rget3(c, R_DIR + 3u * d);
    for (var side = 0u; side < 2u; side++) {
        let code = side_of(c, side);
        if (code >= CUBE) {
            let i = u32(code - CUBE);
            let sgn = select(-1.0, 1.0, side == 0u);
            v += sgn * (dot(dir, vel_v[i]) + dot(cross(rget3(c, R_R + 3u * side), dir), vel_w[i]));
        }
    }
    return v;
}

fn row_apply(c: u32, d: u32, impulse: f32) {
    if (rget(c, R_ROBOT) != 0.0) {
        for (var j = 0u; j < DOF; j++) {
            vel_qd[j] += impulse * rget(c, R_MJR + 9u * d + j);
        }
    }
    let dir = rget3(c, R_DIR + 3u * d);
    for (var side = 0u; side < 2u; side++) {
        let code = side_of(c, side);
        if (code >= CUBE) {
            let i = u32(code - CUBE);
            let signed = select(-impulse, impulse, side == 0u);
            vel_v[i] += dir * (signed / CUBE_MASS);
            vel_w[i] += cross(rget3(c, R_R + 3u * side), dir) * (signed / CUBE_INERTIA);
        }
    }
}

// Advances the state by h seconds (kernel/physics.rs `step`, no external force).
fn physics_step(cubes: u32, h: f32) {
    for (var j = 0u; j < DOF; j++) {
        kq[j] = s[F_Q + j];
    }
    kinematics();
    mass_matrix();
    invert();
    var qd: array<f32, DOF>;
    for (var j = 0u; j < DOF; j++) {
        qd[j] = s[F_QD + j];
    }
    bias(qd);
    for (var j = 0u; j < DOF; j++) {
        vel_qd[j] = qd[j];
        for (var c = 0u; c < DOF; c++) {
            vel_qd[j] -= h * MINV[j * DOF + c] * TAU[c];
        }
    }
    for (var i = 0u; i < CUBES; i++) {
        vel_v[i] = vec3<f32>(0.0);
        vel_w[i] = vec3<f32>(0.0);
    }
    for (var i = 0u; i < cubes; i++) {
        let c = F_CUBES + i * CUBE_FIELDS;
        vel_v[i] = vec3<f32>(s[c + 7u], s[c + 8u], s[c + 9u] - h * GRAVITY);
        vel_w[i] = vec3<f32>(s[c + 10u], s[c + 11u], s[c + 12u]);
    }
    detect(cubes, h);
    for (var c = 0u; c < n_rows; c++) {
        for (var side = 0u; side < 2u; side++) {
            let code = side_of(c, side);
            let sgn = select(-1.0, 1.0, side == 0u);
            if (code >= 0 && code < CUBE) {
                let at = rget3(c, R_R + 3u * side);
                rset(c, R_ROBOT, 1.0);
                for (var d = 0u; d < 3u; d++) {
                    let dir = rget3(c, R_DIR + 3u * d);
                    for (var j = 0u; j < DOF; j++) {
                        let f = R_JR + 9u * d + j;
                        rset(c, f, rget(c, f) + sgn * dot(point_jacobian(u32(code), at, j), dir));
                    }
                }
            } else if (code >= CUBE) {
                let k = F_CUBES + u32(code - CUBE) * CUBE_FIELDS;
                rset3(c, R_R + 3u * side, rget3(c, R_R + 3u * side) - vec3<f32>(s[k], s[k + 1u], s[k + 2u]));
            }
        }
        for (var d = 0u; d < 3u; d++) {
            var w = 0.0;
            if (rget(c, R_ROBOT) != 0.0) {
                var jr: array<f32, DOF>;
                for (var j = 0u; j < DOF; j++) {
                    jr[j] = rget(c, R_JR + 9u * d + j);
                }
                for (var j = 0u; j < DOF; j++) {
                    var v = 0.0;
                    for (var k = 0u; k < DOF; k++) {
                        v += MINV[j * DOF + k] * jr[k];
                    }
                    rset(c, R_MJR + 9u * d + j, v);
                    w += jr[j] * v;
                }
            }
            let dir = rget3(c, R_DIR + 3u * d);
            for (var side = 0u; side < 2u; side++) {
                if (side_of(c, side) >= CUBE) {
                    let rd = cross(rget3(c, R_R + 3u * side), dir);
                    w += 1.0 / CUBE_MASS + dot(rd, rd) / CUBE_INERTIA;
                }
            }
            rset(c, R_INV_W + d, select(0.0, 1.0 / w, w > 0.0));
        }
        let slot = i32(rget(c, R_SLOT));
        if (slot != NO_SLOT) {
            let at = F_CONTACT_IMPULSE + 3u * u32(slot);
            for (var d = 0u; d < 3u; d++) {
                let warm = cold(at + d);
                rset(c, R_LAMBDA + d, warm);
                row_apply(c, d, warm);
            }
        }
    }
    var soft: array<f32, DOF>;
    var goal_speed: array<f32, DOF>;
    var cap: array<f32, DOF>;
    var gain: array<f32, DOF>;
    for (var j = 0u; j < DOF; j++) {
        let kp = P.arm[A_KP + j];
        let kd = P.arm[A_KD + j];
        soft[j] = h * (kd + h * kp);
        let heading = max(P.arm[A_SPEED + j], P.arm[A_EFFORT + j] / (kd + h * kp));
        goal_speed[j] = clamp(kp * (s[F_TARGETS + j] - s[F_Q + j]) / (kd + h * kp), -heading, heading);
        cap[j] = P.arm[A_EFFORT + j] * h;
        gain[j] = 1.0 / (1.0 + soft[j] * MINV[j * DOF + j]);
        let warm = clamp(s[F_DRIVE_IMPULSE + j], -cap[j], cap[j]);
        s[F_DRIVE_IMPULSE + j] = warm;
        for (var c = 0u; c < DOF; c++) {
            vel_qd[c] += warm * MINV[c * DOF + j];
        }
    }
    var lim_active: array<bool, DOF>;
    var lim_sign: array<f32, DOF>;
    var lim_floor: array<f32, DOF>;
    var lim_mass: array<f32, DOF>;
    var lim_impulse: array<f32, DOF>;
    for (var j = 0u; j < DOF; j++) {
        let low = P.arm[A_LOW + j];
        let high = P.arm[A_HIGH + j];
        let q = s[F_Q + j];
        var sgn = -1.0;
        var gap = high - q;
        if (q - low < high - q) {
            sgn = 1.0;
            gap = q - low;
        }
        lim_active[j] = gap <= 0.2;
        lim_sign[j] = sgn;
        lim_floor[j] = select(-BAUMGARTE * gap / h, -gap / h, gap >= 0.0);
        lim_mass[j] = 1.0 / MINV[j * DOF + j];
        lim_impulse[j] = 0.0;
    }
    var speed_impulse: array<vec2<f32>, DOF>;
    for (var it = 0u; it < ITERATIONS; it++) {
        for (var j = 0u; j < DOF; j++) {
            let acc = s[F_DRIVE_IMPULSE + j];
            let delta = (soft[j] * (goal_speed[j] - vel_qd[j]) - acc) * gain[j];
            let fresh = clamp(acc + delta, -cap[j], cap[j]);
            let applied = fresh - acc;
            s[F_DRIVE_IMPULSE + j] = fresh;
            for (var c = 0u; c < DOF; c++) {
                vel_qd[c] += applied * MINV[c * DOF + j];
            }
        }
        for (var j = 0u; j < DOF; j++) {
            if (!lim_active[j]) {
                continue;
            }
            let acc = lim_impulse[j];
            let fresh = max(acc + (lim_floor[j] - lim_sign[j] * vel_qd[j]) * lim_mass[j], 0.0);
            lim_impulse[j] = fresh;
            for (var c = 0u; c < DOF; c++) {
                vel_qd[c] += lim_sign[j] * (fresh - acc) * MINV[c * DOF + j];
            }
        }
        for (var c = 0u; c < n_rows; c++) {
            let vn = row_velocity(c, 0u);
            let before = rget(c, R_LAMBDA);
            let fresh = max(before + (rget(c, R_BIAS) - vn) * rget(c, R_INV_W), 0.0);
            row_apply(c, 0u, fresh - before);
            rset(c, R_LAMBDA, fresh);
            let limit = rget(c, R_MU) * fresh;
            let old = vec2<f32>(rget(c, R_LAMBDA + 1u), rget(c, R_LAMBDA + 2u));
            var t = vec2<f32>(0.0);
            for (var d = 1u; d < 3u; d++) {
                t[d - 1u] = rget(c, R_LAMBDA + d) - row_velocity(c, d) * rget(c, R_INV_W + d);
            }
            let len = sqrt(t.x * t.x + t.y * t.y);
            if (len > limit) {
                var scale = 0.0;
                if (len > 0.0) {
                    scale = limit / len;
                }
                t = vec2<f32>(t.x * scale, t.y * scale);
            }
            row_apply(c, 1u, t.x - old.x);
            row_apply(c, 2u, t.y - old.y);
            rset(c, R_LAMBDA + 1u, t.x);
            rset(c, R_LAMBDA + 2u, t.y);
        }
        for (var j = 0u; j < DOF; j++) {
            for (var side = 0u; side < 2u; side++) {
                let sgn = select(-1.0, 1.0, side == 0u);
                let acc = speed_impulse[j][side];
                let fresh = max(acc - (P.arm[A_SPEED + j] + sgn * vel_qd[j]) / MINV[j * DOF + j], 0.0);
                if (fresh != acc) {
                    for (var c = 0u; c < DOF; c++) {
                        vel_qd[c] += sgn * (fresh - acc) * MINV[c * DOF + j];
                    }
                    speed_impulse[j][side] = fresh;
                }
            }
        }
    }
    for (var k = 0u; k < 3u * SLOTS; k++) {
        set_cold(F_CONTACT_IMPULSE + k, 0.0);
    }
    for (var c = 0u; c < n_rows; c++) {
        let slot = i32(rget(c, R_SLOT));
        if (slot != NO_SLOT) {
            let at = F_CONTACT_IMPULSE + 3u * u32(slot);
            for (var d = 0u; d < 3u; d++) {
                set_cold(at + d, rget(c, R_LAMBDA + d));
            }
        }
    }
    for (var j = 0u; j < DOF; j++) {
        let speed = P.arm[A_SPEED + j];
        s[F_QD + j] = clamp(vel_qd[j], -speed, speed);
        s[F_Q + j] += h * s[F_QD + j];
    }
    for (var i = 0u; i < cubes; i++) {
        let c = F_CUBES + i * CUBE_FIELDS;
        let v = vel_v[i];
        let w = vel_w[i];
        let rot = vec4<f32>(s[c + 3u], s[c + 4u], s[c + 5u], s[c + 6u]);
        let spin = qmul(vec4<f32>(w, 0.0), rot);
        let turned = qnorm(vec4<f32>(
            rot.x + 0.5 * h * spin.x,
            rot.y + 0.5 * h * spin.y,
            rot.z + 0.5 * h * spin.z,
            rot.w + 0.5 * h * spin.w,
        ));
        s[c] += h * v.x;
        s[c + 1u] += h * v.y;
        s[c + 2u] += h * v.z;
        s[c + 3u] = turned.x;
        s[c + 4u] = turned.y;
        s[c + 5u] = turned.z;
        s[c + 6u] = turned.w;
        s[c + 7u] = v.x;
        s[c + 8u] = v.y;
        s[c + 9u] = v.z;
        s[c + 10u] = w.x;
        s[c + 11u] = w.y;
        s[c + 12u] = w.z;
    }
}
