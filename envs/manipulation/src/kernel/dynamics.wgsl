// The kernel physics on the GPU, part 1 of 4: quaternions, the arm's
// description (from the parameter block), forward kinematics, the mass
// matrix, the velocity bias and the Cholesky inverse — kernel/arm.rs and
// kernel/physics.rs line for line.

struct Params {
    num_envs: u32,
    obs_dim: u32,
    substeps: u32,
    task: u32,
    control: u32,
    cubes: u32,
    goal_in_state: u32,
    hold: u32,
    h: f32,
    cube_symmetry: u32,
    hold_pick: u32,
    hold_stack: u32,
    binary: u32,
    _p1: u32,
    _p2: u32,
    _p3: u32,
    arm: array<f32, ARM_LEN>,
    tokens: array<f32, TOKEN_TABLE>,
}

// ---- quaternions (x, y, z, w), as glam ----

fn qmul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    );
}

fn qrot(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let b = q.xyz;
    let b2 = dot(b, b);
    return v * (q.w * q.w - b2) + b * (dot(v, b) * 2.0) + cross(b, v) * (q.w * 2.0);
}

fn qconj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

fn qaxis(axis: vec3<f32>, angle: f32) -> vec4<f32> {
    let half = angle * 0.5;
    return vec4<f32>(axis * sin(half), cos(half));
}

fn qnorm(q: vec4<f32>) -> vec4<f32> {
    return q * (1.0 / sqrt(dot(q, q)));
}

fn qmat(q: vec4<f32>) -> mat3x3<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat3x3<f32>(
        vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy),
        vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx),
        vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy)),
    );
}

// ---- the arm's description ----

fn arm1(base: u32, j: u32) -> f32 {
    return P.arm[base + j];
}

fn arm3(at: u32) -> vec3<f32> {
    return vec3<f32>(P.arm[at], P.arm[at + 1u], P.arm[at + 2u]);
}

fn arm4(at: u32) -> vec4<f32> {
    return vec4<f32>(P.arm[at], P.arm[at + 1u], P.arm[at + 2u], P.arm[at + 3u]);
}

fn revolute(j: u32) -> bool {
    return P.arm[A_REVOLUTE + j] != 0.0;
}

fn ancestor(b: u32, j: u32) -> bool {
    return P.arm[A_ANCESTOR + b * DOF + j] != 0.0;
}

fn body_inertia(b: u32) -> mat3x3<f32> {
    let i = A_INERTIA + 9u * b;
    return mat3x3<f32>(arm3(i), arm3(i + 3u), arm3(i + 6u));
}

// ---- kinematics (kernel/arm.rs) ----

var<private> kq: array<f32, DOF>;
var<private> k_rot: array<vec4<f32>, DOF>;
var<private> k_org: array<vec3<f32>, DOF>;
var<private> k_axis: array<vec3<f32>, DOF>;
var<private> k_com: array<vec3<f32>, DOF>;

// World poses of every body at the joint positions `kq`.
fn kinematics() {
    for (var j = 0u; j < DOF; j++) {
        var pr = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        var po = BASE;
        let p = i32(P.arm[A_PARENT + j]);
        if (p >= 0) {
            pr = k_rot[p];
            po = k_org[p];
        }
        let frame = qmul(pr, arm4(A_ORIGIN_ROT + 4u * j));
        let at = po + qrot(pr, arm3(A_ORIGIN_POS + 3u * j));
        let local = arm3(A_AXIS + 3u * j);
        let axis = qrot(frame, local);
        k_axis[j] = axis;
        if (revolute(j)) {
            k_rot[j] = qmul(frame, qaxis(local, kq[j]));
            k_org[j] = at;
        } else {
            k_rot[j] = frame;
            k_org[j] = at + axis * kq[j];
        }
        k_com[j] = k_org[j] + qrot(k_rot[j], arm3(A_COM + 3u * j));
    }
}

fn point_jacobian(b: u32, p: vec3<f32>, j: u32) -> vec3<f32> {
    if (!ancestor(b, j)) {
        return vec3<f32>(0.0);
    }
    if (revolute(j)) {
        return cross(k_axis[j], p - k_org[j]);
    }
    return k_axis[j];
}

// The TCP and the hand's orientation.
fn tcp_pose() -> array<vec4<f32>, 2> {
    let body = u32(P.arm[A_HAND]);
    let hand = qmul(k_rot[body], arm4(A_HAND + 1u));
    let origin = k_org[body] + qrot(k_rot[body], arm3(A_HAND + 5u));
    let tcp = origin + qrot(hand, vec3<f32>(0.0, 0.0, TCP_Z));
    return array<vec4<f32>, 2>(vec4<f32>(tcp, 0.0), hand);
}

// ---- dynamics ----

var<private> M: array<f32, 81>;
var<private> MINV: array<f32, 81>;
var<private> TAU: array<f32, DOF>;

fn mass_matrix() {
    for (var i = 0u; i < 81u; i++) {
        M[i] = 0.0;
    }
    for (var b = 0u; b < DOF; b++) {
        let r = qmat(k_rot[b]);
        let inertia = r * body_inertia(b) * transpose(r);
        var jv: array<vec3<f32>, DOF>;
        var jw: array<vec3<f32>, DOF>;
        for (var j = 0u; j < DOF; j++) {
            if (ancestor(b, j)) {
                jv[j] = point_jacobian(b, k_com[b], j);
                if (revolute(j)) {
                    jw[j] = k_axis[j];
                }
            }
        }
        let mass = P.arm[A_MASS + b];
        for (var i = 0u; i < DOF; i++) {
            if (!ancestor(b, i)) {
                continue;
            }
            let iw = inertia * jw[i];
            for (var j = 0u; j <= i; j++) {
                if (ancestor(b, j)) {
                    M[i * DOF + j] += mass * dot(jv[i], jv[j]) + dot(iw, jw[j]);
                }
            }
        }
    }
    for (var i = 0u; i < DOF; i++) {
        for (var j = 0u; j < i; j++) {
            M[j * DOF + i] = M[i * DOF + j];
        }
    }
}

// How each body moves at joint velocities qd (kernel/arm.rs `motions`):
// its origin's velocity and its angular velocity.
var<private> m_lin: array<vec3<f32>, DOF>;
var<private> m_ang: array<vec3<f32>, DOF>;

fn motions(qd: array<f32, DOF>) {
    for (var j = 0u; j < DOF; j++) {
        var lin = vec3<f32>(0.0);
        var ang = vec3<f32>(0.0);
        var d = vec3<f32>(0.0);
        let p = i32(P.arm[A_PARENT + j]);
        if (p >= 0) {
            lin = m_lin[p];
            ang = m_ang[p];
            d = k_org[j] - k_org[p];
        }
        let motion = k_axis[j] * qd[j];
        if (revolute(j)) {
            m_lin[j] = lin + cross(ang, d);
            m_ang[j] = ang + motion;
        } else {
            m_lin[j] = lin + cross(ang, d) + motion;
            m_ang[j] = ang;
        }
    }
}

// C(q, q̇) q̇ by recursive Newton–Euler (q̈ = 0, no gravity), into TAU.
fn bias(qd: array<f32, DOF>) {
    var w: array<vec3<f32>, DOF>;
    var alpha: array<vec3<f32>, DOF>;
    var acc: array<vec3<f32>, DOF>;
    var force: array<vec3<f32>, DOF>;
    var torque: array<vec3<f32>, DOF>;
    for (var j = 0u; j < DOF; j++) {
        var wp = vec3<f32>(0.0);
        var ap = vec3<f32>(0.0);
        var cp = vec3<f32>(0.0);
        var op = k_org[j];
        let p = i32(P.arm[A_PARENT + j]);
        if (p >= 0) {
            wp = w[p];
            ap = alpha[p];
            cp = acc[p];
            op = k_org[p];
        }
        let d = k_org[j] - op;
        let motion = k_axis[j] * qd[j];
        if (revolute(j)) {
            w[j] = wp + motion;
            alpha[j] = ap + cross(wp, motion);
            acc[j] = cp + cross(ap, d) + cross(wp, cross(wp, d));
        } else {
            w[j] = wp;
            alpha[j] = ap;
            acc[j] = cp + cross(ap, d) + cross(wp, cross(wp, d)) + 2.0 * cross(wp, motion);
        }
        let r = k_com[j] - k_org[j];
        let acc_com = acc[j] + cross(alpha[j], r) + cross(w[j], cross(w[j], r));
        let rot = qmat(k_rot[j]);
        let inertia = rot * body_inertia(j) * transpose(rot);
        force[j] = P.arm[A_MASS + j] * acc_com;
        torque[j] = inertia * alpha[j] + cross(w[j], inertia * w[j]) + cross(r, force[j]);
    }
    for (var jj = 0u; jj < DOF; jj++) {
        let j = DOF - 1u - jj;
        if (revolute(j)) {
            TAU[j] = dot(k_axis[j], torque[j]);
        } else {
            TAU[j] = dot(k_axis[j], force[j]);
        }
        let p = i32(P.arm[A_PARENT + j]);
        if (p >= 0) {
            let d = k_org[j] - k_org[p];
            force[p] += force[j];
            torque[p] += torque[j] + cross(d, force[j]);
        }
    }
}

// MINV = M⁻¹ by Cholesky.
fn invert() {
    var l: array<f32, 81>;
    for (var i = 0u; i < DOF; i++) {
        for (var j = 0u; j <= i; j++) {
            var sum = M[i * DOF + j];
            for (var k = 0u; k < j; k++) {
                sum -= l[i * DOF + k] * l[j * DOF + k];
            }
            if (i == j) {
                l[i * DOF + i] = sqrt(max(sum, 1e-12));
            } else {
                l[i * DOF + j] = sum / l[j * DOF + j];
            }
        }
    }
    for (var c = 0u; c < DOF; c++) {
        var y: array<f32, DOF>;
        for (var i = 0u; i < DOF; i++) {
            var v = select(0.0, 1.0, i == c);
            for (var k = 0u; k < i; k++) {
                v -= l[i * DOF + k] * y[k];
            }
            y[i] = v / l[i * DOF + i];
        }
        for (var ii = 0u; ii < DOF; ii++) {
            let i = DOF - 1u - ii;
            var v = y[i];
            for (var k = i + 1u; k < DOF; k++) {
                v -= l[k * DOF + i] * MINV[k * DOF + c];
            }
            MINV[i * DOF + c] = v / l[i * DOF + i];
        }
    }
}
