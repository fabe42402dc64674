//! Quadrotor rigid-body dynamics: motors with first-order lag, thrust and
//! reaction torques, rotor drag, wind, gravity; semi-implicit Euler for the
//! translation, Heun for the body rates, and a renormalised quaternion. `shader.wgsl` is the same code for the GPU, line for line.

use crate::params::{
    DRAG, GRAVITY, INERTIA, KF, KM, MASS, MAX_RATE, RATE_GAIN, RPM_TO_RAD, SPIN, THRUST_TO_WEIGHT,
    max_rpm, motor_xy,
};
use crate::state::Drone;

/// A 3-vector.
pub type V3 = [f32; 3];

/// `a + b`.
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a − b`.
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · s`.
pub fn scale(a: V3, s: f32) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// `a ⊙ b`.
pub fn mul(a: V3, b: V3) -> V3 {
    [a[0] * b[0], a[1] * b[1], a[2] * b[2]]
}

/// `a · b`.
pub fn dot(a: V3, b: V3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a × b`.
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Euclidean length.
pub fn norm(a: V3) -> f32 {
    dot(a, a).sqrt()
}

/// Rotation matrix (rows) of the unit quaternion `[w, x, y, z]`, body to world.
pub fn rotation(q: [f32; 4]) -> [V3; 3] {
    let [w, x, y, z] = q;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// `R v` for the rows `r` of `R`.
pub fn rotate(r: &[V3; 3], v: V3) -> V3 {
    [dot(r[0], v), dot(r[1], v), dot(r[2], v)]
}

/// `Rᵀ v`.
pub fn rotate_back(r: &[V3; 3], v: V3) -> V3 {
    add(add(scale(r[0], v[0]), scale(r[1], v[1])), scale(r[2], v[2]))
}

/// Motor speed commands (rpm) of normalised commands in [−1, 1].
pub fn motor_rpm(action: [f32; 4]) -> [f32; 4] {
    action.map(|a| max_rpm() * 0.5 * (a.clamp(-1.0, 1.0) + 1.0))
}

/// Motor speeds (rpm) that produce collective thrust `thrust` (N) and body
/// torque `torque` (N·m) on the nominal drone; infeasible demands are clipped per motor.
pub fn mix(thrust: f32, torque: V3) -> [f32; 4] {
    let d = motor_xy()[0][0];
    let c = KM / KF;
    let t = 0.25 * thrust;
    let x = 0.25 * torque[0] / d;
    let y = 0.25 * torque[1] / d;
    let z = 0.25 * torque[2] / c;
    let force = [t - x - y + z, t - x + y - z, t + x + y + z, t + x - y - z];
    let top = KF * max_rpm() * max_rpm();
    force.map(|f| (f.clamp(0.0, top) / KF).sqrt())
}

/// The on-board rate controller of the `thrust_rates` action: collective
/// thrust and body-rate setpoints in [−1, 1] to motor speed commands.
pub fn rate_control(d: &Drone, action: [f32; 4]) -> [f32; 4] {
    let a = action.map(|v| v.clamp(-1.0, 1.0));
    let thrust = 0.5 * (a[0] + 1.0) * THRUST_TO_WEIGHT * MASS * GRAVITY;
    let want = scale([a[1], a[2], a[3]], MAX_RATE);
    let iw = mul(INERTIA, d.omega);
    let torque = add(
        mul(INERTIA, mul(RATE_GAIN, sub(want, d.omega))),
        cross(d.omega, iw),
    );
    mix(thrust, torque)
}

/// Advances one physics step of `dt` seconds towards motor speed commands `rpm_cmd`.
pub fn substep(d: &mut Drone, rpm_cmd: [f32; 4], dt: f32) {
    let xy = motor_xy();
    let mut thrust = 0.0;
    let mut torque = [0.0; 3];
    let mut rotor = 0.0;
    for k in 0..4 {
        d.rpm[k] += d.motor_alpha * (rpm_cmd[k] - d.rpm[k]);
        let w2 = d.rpm[k] * d.rpm[k];
        let f = d.kf * w2;
        thrust += f;
        torque[0] += xy[k][1] * f;
        torque[1] -= xy[k][0] * f;
        torque[2] += SPIN[k] * d.km * w2;
        rotor += d.rpm[k];
    }
    let rotor = rotor * RPM_TO_RAD;
    let r = rotation(d.quat);
    let wind = add(d.wind, scale(d.gust, d.gust_phase[0]));
    let air = rotate_back(&r, sub(d.vel, wind));
    let drag = scale(mul(DRAG, air), -rotor);
    let force = rotate(&r, [drag[0], drag[1], drag[2] + thrust]);
    let acc = add(scale(force, 1.0 / d.mass), [0.0, 0.0, -GRAVITY]);
    // Euler's equations, integrated with Heun's method: the gyroscopic term
    // makes explicit Euler gain rotational energy on fast spins.
    let alpha = |w: V3| {
        let gyro = cross(w, mul(d.inertia, w));
        [
            (torque[0] - gyro[0]) / d.inertia[0],
            (torque[1] - gyro[1]) / d.inertia[1],
            (torque[2] - gyro[2]) / d.inertia[2],
        ]
    };
    let a0 = alpha(d.omega);
    let a1 = alpha(add(d.omega, scale(a0, dt)));
    d.vel = add(d.vel, scale(acc, dt));
    d.pos = add(d.pos, scale(d.vel, dt));
    d.omega = add(d.omega, scale(add(a0, a1), 0.5 * dt));
    let [w, x, y, z] = d.quat;
    let [p, q, rr] = d.omega;
    let h = 0.5 * dt;
    let quat = [
        w + h * (-x * p - y * q - z * rr),
        x + h * (w * p + y * rr - z * q),
        y + h * (w * q + z * p - x * rr),
        z + h * (w * rr + x * q - y * p),
    ];
    let len =
        (quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]).sqrt();
    d.quat = quat.map(|v| v / len);
    let [s, c] = d.gust_phase;
    let [ds, dc] = d.gust_step;
    d.gust_phase = [s * dc + c * ds, c * dc - s * ds];
}
