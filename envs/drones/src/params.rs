//! Crazyflie 2.x physical constants (sources in `docs/envs.md`) and the numbers derived from them.

/// Gravity, m/s².
pub const GRAVITY: f32 = 9.81;
/// Take-off mass, kg (Bitcraze; gym-pybullet-drones `cf2x.urdf`).
pub const MASS: f32 = 0.027;
/// Motor distance from the centre, m (`cf2x.urdf` `arm`).
pub const ARM: f32 = 0.0397;
/// Principal moments of inertia, kg·m² (Förster 2015 system identification; `cf2x.urdf`).
pub const INERTIA: [f32; 3] = [1.4e-5, 1.4e-5, 2.17e-5];
/// Thrust per motor = `KF` · rpm², N/rpm² (`cf2x.urdf` `kf`).
pub const KF: f32 = 3.16e-10;
/// Reaction torque per motor = `KM` · rpm², N·m/rpm² (`cf2x.urdf` `km`).
pub const KM: f32 = 7.94e-12;
/// Full thrust over weight (`cf2x.urdf` `thrust2weight`).
pub const THRUST_TO_WEIGHT: f32 = 2.25;
/// Rotor-speed-proportional body drag, kg/rad, x/y and z (Förster 2015).
pub const DRAG: [f32; 3] = [9.1785e-7, 9.1785e-7, 10.311e-7];
/// First-order motor time constant, s (a 40 rad/s motor pole, as in Crazyflie 2 system-identification models).
pub const MOTOR_TAU: f32 = 0.025;
/// Largest body rate of the `thrust_rates` action, rad/s.
pub const MAX_RATE: f32 = 2.0 * std::f32::consts::PI;
/// Proportional gains of the on-board rate controller (`thrust_rates` action), 1/s.
pub const RATE_GAIN: [f32; 3] = [20.0, 20.0, 10.0];
/// rpm to rad/s.
pub const RPM_TO_RAD: f32 = std::f32::consts::PI / 30.0;
/// Radius of the sphere that holds the airframe and propellers, m (collisions with gates).
pub const BODY_RADIUS: f32 = 0.06;

/// Highest motor speed, rpm: full thrust is `THRUST_TO_WEIGHT` times the nominal weight.
pub fn max_rpm() -> f32 {
    (THRUST_TO_WEIGHT * MASS * GRAVITY / (4.0 * KF)).sqrt()
}

/// Rotor speed that carries the nominal weight, rpm.
pub fn hover_rpm() -> f32 {
    (MASS * GRAVITY / (4.0 * KF)).sqrt()
}

/// The normalised motor command that holds the nominal drone in hover: 2/√(thrust-to-weight) − 1.
pub fn hover_command() -> f32 {
    2.0 * hover_rpm() / max_rpm() - 1.0
}

/// Motor positions in the body frame (x forward, y left), m: front-right, back-right, back-left, front-left.
pub fn motor_xy() -> [[f32; 2]; 4] {
    let d = ARM * std::f32::consts::FRAC_1_SQRT_2;
    [[d, -d], [-d, -d], [-d, d], [d, d]]
}

/// Spin of each motor seen from above: +1 clockwise, −1 counter-clockwise (reaction torque on the body is +z for a clockwise rotor).
pub const SPIN: [f32; 4] = [1.0, -1.0, 1.0, -1.0];
