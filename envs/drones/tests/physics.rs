//! The dynamics against physics: hover balance, free fall, torque signs, conservation.

use proprio_drones::Drone;
use proprio_drones::dynamics::{mix, motor_rpm, norm, rotation, substep};
use proprio_drones::params::{GRAVITY, INERTIA, KF, KM, MASS, hover_command, hover_rpm, max_rpm};

const DT: f32 = 0.002;

/// The nominal drone at rest, level, 1 m up, motors at `rpm`.
fn drone(rpm: f32) -> Drone {
    let mut d: Drone = bytemuck::Zeroable::zeroed();
    d.pos = [0.0, 0.0, 1.0];
    d.quat = [1.0, 0.0, 0.0, 0.0];
    d.rpm = [rpm; 4];
    d.mass = MASS;
    d.inertia = INERTIA;
    d.kf = KF;
    d.km = KM;
    d.motor_alpha = 1.0 - (-DT / 0.025f32).exp();
    d.gust_step = [0.0, 1.0];
    d.gust_phase = [0.0, 1.0];
    d
}

fn fly(d: &mut Drone, rpm_cmd: [f32; 4], seconds: f32) {
    for _ in 0..(seconds / DT).round() as usize {
        substep(d, rpm_cmd, DT);
    }
}

#[test]
fn hover_thrust_equals_weight_at_the_hover_command() {
    let command = hover_command();
    assert!(
        (command - (2.0 / 2.25f32.sqrt() - 1.0)).abs() < 1e-6,
        "{command}"
    );
    let rpm = motor_rpm([command; 4]);
    let thrust: f32 = rpm.iter().map(|r| KF * r * r).sum();
    assert!(
        (thrust - MASS * GRAVITY).abs() < 1e-6 * MASS * GRAVITY * 10.0,
        "thrust {thrust} N vs weight {} N",
        MASS * GRAVITY
    );
    let mut d = drone(hover_rpm());
    fly(&mut d, rpm, 2.0);
    assert!(norm(d.vel) < 1e-3, "drifted to {:?} m/s", d.vel);
    assert!((d.pos[2] - 1.0).abs() < 1e-3, "height {}", d.pos[2]);
    assert!(norm(d.omega) < 1e-4, "spins at {:?}", d.omega);
}

#[test]
fn free_fall_matches_g() {
    let mut d = drone(0.0);
    let t = 0.4;
    fly(&mut d, [0.0; 4], t);
    assert!(
        (d.vel[2] + GRAVITY * t).abs() < 1e-4,
        "v_z = {} after {t} s",
        d.vel[2]
    );
    // Semi-implicit Euler overshoots ½gt² by ½g·t·dt.
    let drop = 1.0 - d.pos[2];
    let exact = 0.5 * GRAVITY * t * t;
    assert!(
        (drop - exact).abs() <= 0.5 * GRAVITY * t * DT + 1e-4,
        "fell {drop} m, ½gt² = {exact} m"
    );
    assert_eq!(d.vel[0], 0.0);
    assert_eq!(d.vel[1], 0.0);
}

#[test]
fn clockwise_rotors_yaw_the_body_counter_clockwise() {
    // Motors 0 and 2 spin clockwise seen from above; their drag torque on the
    // air turns the body the other way, counter-clockwise: +z, a positive yaw rate.
    let h = hover_rpm();
    let mut d = drone(h);
    fly(&mut d, [h * 1.05, h * 0.95, h * 1.05, h * 0.95], 0.3);
    assert!(d.omega[2] > 0.5, "yaw rate {:?}", d.omega);
    assert!(
        d.omega[0].abs() < 1e-3 && d.omega[1].abs() < 1e-3,
        "{:?}",
        d.omega
    );
    // The mixer agrees: a positive yaw torque demand speeds up motors 0 and 2.
    let rpm = mix(MASS * GRAVITY, [0.0, 0.0, 1e-6]);
    assert!(
        rpm[0] > rpm[1] && rpm[2] > rpm[3] && rpm[0] == rpm[2],
        "{rpm:?}"
    );
    // The quaternion turns the same way: the body x axis rotates towards +y.
    let r = rotation(d.quat);
    assert!(r[1][0] > 0.0, "body x in world: {:?}", [r[0][0], r[1][0]]);
}

#[test]
fn left_motors_roll_right_and_rear_motors_pitch_down() {
    let h = hover_rpm();
    let mut roll = drone(h);
    fly(&mut roll, [h, h, h * 1.02, h * 1.02], 0.1);
    assert!(
        roll.omega[0] > 0.1,
        "left side up is a positive roll rate: {:?}",
        roll.omega
    );
    let mut pitch = drone(h);
    fly(&mut pitch, [h, h * 1.02, h * 1.02, h], 0.1);
    assert!(
        pitch.omega[1] > 0.1,
        "rear up is a positive pitch rate (nose down): {:?}",
        pitch.omega
    );
    let r = rotation(pitch.quat);
    assert!(r[2][0] < 0.0, "nose points below the horizon: {}", r[2][0]);
}

#[test]
fn torque_free_spin_keeps_energy_and_a_unit_quaternion() {
    let mut d = drone(0.0);
    d.omega = [3.0, -2.0, 5.0];
    let spin = |d: &Drone| {
        0.5 * (0..3)
            .map(|k| d.inertia[k] * d.omega[k] * d.omega[k])
            .sum::<f32>()
    };
    let momentum = |d: &Drone| {
        let r = rotation(d.quat);
        let body = [0, 1, 2].map(|k| d.inertia[k] * d.omega[k]);
        [0, 1, 2].map(|i| (0..3).map(|k| r[i][k] * body[k]).sum::<f32>())
    };
    let mechanical = |d: &Drone| {
        0.5 * d.mass * d.vel.iter().map(|v| v * v).sum::<f32>() + d.mass * GRAVITY * d.pos[2]
    };
    let (e0, l0, m0) = (spin(&d), momentum(&d), mechanical(&d));
    // 20 s without motors: a torque-free rigid body in free fall.
    for second in 1..=20 {
        fly(&mut d, [0.0; 4], 1.0);
        let q = d.quat;
        let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        assert!((len - 1.0).abs() < 1e-5, "|q| = {len} after {second} s");
    }
    let de = (spin(&d) - e0).abs() / e0;
    assert!(de < 0.01, "rotational energy drifted by {de}");
    let l = momentum(&d);
    let dl = norm([l[0] - l0[0], l[1] - l0[1], l[2] - l0[2]]) / norm(l0);
    assert!(dl < 0.01, "world angular momentum drifted by {dl}");
    let dm =
        (mechanical(&d) - m0).abs() / (0.5 * d.mass * d.vel.iter().map(|v| v * v).sum::<f32>());
    assert!(
        dm < 0.01,
        "mechanical energy drifted by {dm} of the kinetic energy"
    );
}

#[test]
fn motors_lag_their_command_with_the_documented_time_constant() {
    let mut d = drone(0.0);
    let top = max_rpm();
    // 12 steps of 2 ms: 0.96 τ.
    fly(&mut d, [top; 4], 12.0 * DT);
    let reached = d.rpm[0] / top;
    let expected = 1.0 - (-0.96f32).exp();
    assert!(
        (reached - expected).abs() < 1e-4,
        "{reached} of the step after 0.96 τ, expected {expected}"
    );
}
