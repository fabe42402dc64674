//! The kernel physics against physics: fall times, resting contact,
//! sliding friction, the friction cone, joint step responses against rapier,
//! limits, energy, grasps and stacks.

use glam::Vec3;
use proprio_manipulation::kernel::{GRAVITY, KernelModel, SOLVER_STEPS, Sim};
use proprio_manipulation::task::Start;
use proprio_manipulation::{CUBE_HALF, ManipConfig, Physics, READY, Settings, TaskKind};

fn model(task: TaskKind) -> KernelModel {
    let config = ManipConfig {
        physics: Physics::Kernel,
        ..ManipConfig::default()
    };
    KernelModel::new(Settings::new(task, &config).unwrap()).unwrap()
}

fn rest() -> [f32; 9] {
    let mut q = [0.04; 9];
    q[..7].copy_from_slice(&READY);
    q
}

/// A scene with the arm at rest and cube 0 (and 1) placed as given.
fn scene(m: &KernelModel, cubes: [(Vec3, f32); 2]) -> Sim {
    let none = (Vec3::ZERO, 0.0);
    m.start(&Start {
        q: rest(),
        cubes: [cubes[0], cubes[1], none, none],
        goal: Vec3::ZERO,
        instruction: None,
        phrasing: 0,
    })
}

/// The kernel's integration step, s.
fn solver_step(m: &KernelModel) -> f32 {
    m.settings().dt / SOLVER_STEPS as f32
}

fn cube(sim: &Sim, i: usize) -> (Vec3, Vec3) {
    let c = &sim.cubes[i];
    (Vec3::new(c[0], c[1], c[2]), Vec3::new(c[7], c[8], c[9]))
}

#[test]
fn a_dropped_cube_lands_at_the_free_fall_time_and_comes_to_rest() {
    let m = model(TaskKind::PickCube);
    let height = 0.3;
    let mut sim = scene(
        &m,
        [
            (Vec3::new(0.1, 0.1, CUBE_HALF + height), 0.0),
            (Vec3::ZERO, 0.0),
        ],
    );
    let dt = solver_step(&m);
    let mut t = 0.0;
    while cube(&sim, 0).0.z > CUBE_HALF + 1e-4 && t < 1.0 {
        m.simulate(&mut sim, dt);
        t += dt;
    }
    let expected = (2.0 * height / GRAVITY).sqrt();
    assert!(
        (t - expected).abs() <= m.settings().dt,
        "landed after {t} s, free fall takes {expected} s"
    );
    m.simulate(&mut sim, 1.0);
    let (p, v) = cube(&sim, 0);
    assert!(v.length() < 1e-3, "still moving at {v}");
    assert!((p.z - CUBE_HALF).abs() < 1e-3, "rests at {p}");
}

#[test]
fn a_resting_cube_drifts_less_than_half_a_millimetre_in_ten_seconds() {
    let m = model(TaskKind::PickCube);
    let mut sim = scene(
        &m,
        [(Vec3::new(0.05, -0.05, CUBE_HALF), 0.4), (Vec3::ZERO, 0.0)],
    );
    m.simulate(&mut sim, 0.5);
    let start = cube(&sim, 0).0;
    m.simulate(&mut sim, 10.0);
    let drift = (cube(&sim, 0).0 - start).length();
    assert!(drift < 5e-4, "drifted {drift} m");
}

/// Friction coefficient of a cube on the table: the mean of the two (rapier's rule).
const MU: f32 = 0.5 * (proprio_manipulation::GRIP_FRICTION + proprio_manipulation::TABLE_FRICTION);

#[test]
fn a_sliding_cube_stops_after_v_squared_over_two_mu_g() {
    let m = model(TaskKind::PickCube);
    let h = solver_step(&m);
    for speed in [0.5f32, 1.0, 2.5] {
        let mut sim = scene(
            &m,
            [(Vec3::new(-0.3, 0.2, CUBE_HALF), 0.0), (Vec3::ZERO, 0.0)],
        );
        m.simulate(&mut sim, 0.2);
        let start = cube(&sim, 0).0;
        sim.cubes[0][7] = speed;
        m.simulate(&mut sim, 1.0);
        let (end, v) = cube(&sim, 0);
        let slid = end.x - start.x;
        let exact = speed * speed / (2.0 * MU * GRAVITY);
        // Semi-implicit Euler moves with each step's decelerated velocity: v·h/2 short of the exact stop.
        let discrete = exact - speed * h / 2.0;
        assert!(v.length() < 1e-3, "still sliding at {v}");
        assert!(
            (slid - discrete).abs() < 0.02 * exact,
            "slid {slid} m at {speed} m/s, the discrete stop is {discrete} m"
        );
        if speed * h / 2.0 < 0.04 * exact {
            assert!(
                (slid - exact).abs() < 0.05 * exact,
                "slid {slid} m at {speed} m/s, expected {exact} m"
            );
        }
        assert!(
            (end.y - start.y).abs() < 1e-3 && (end.z - CUBE_HALF).abs() < 1e-3,
            "stays on its line: {end}"
        );
    }
}

#[test]
fn under_the_friction_cone_a_pushed_cube_sticks_and_above_it_slips() {
    let m = model(TaskKind::PickCube);
    let (mass, _) = proprio_manipulation::kernel::cube_mass();
    let limit = MU * mass * GRAVITY;
    let mut force = [Vec3::ZERO; 4];
    for (share, sticks) in [(0.9f32, true), (1.5, false)] {
        let mut sim = scene(
            &m,
            [(Vec3::new(0.0, 0.25, CUBE_HALF), 0.3), (Vec3::ZERO, 0.0)],
        );
        m.simulate(&mut sim, 0.2);
        let start = cube(&sim, 0).0;
        force[0] = Vec3::new(0.0, -share * limit, 0.0);
        let t = 0.5;
        m.simulate_pushed(&mut sim, t, &force);
        let moved = start.y - cube(&sim, 0).0.y;
        if sticks {
            assert!(
                moved.abs() < 1e-4,
                "{share} of the limit moved it {moved} m"
            );
        } else {
            let expected = 0.5 * (share - 1.0) * limit / mass * t * t;
            assert!(
                (moved - expected).abs() < 0.05 * expected,
                "slid {moved} m, expected {expected} m"
            );
        }
    }
}

fn rapier_joints(targets: [f32; 9], times: &[f32]) -> Vec<[f32; 9]> {
    use proprio_manipulation::{Template, World};
    let dt = 1.0 / 60.0;
    let scene = Template::new(0, dt).unwrap();
    let parts = scene.parts();
    let mut world = World::from_physics(scene.start(&rest(), &[]));
    world.physics_mut().set_targets(parts, &targets);
    let mut out = Vec::new();
    let mut t = 0.0;
    for &at in times {
        while t < at - 1e-6 {
            world.step();
            t += dt;
        }
        out.push(world.physics().joints(parts).0);
    }
    out
}

#[test]
fn joint_step_responses_follow_the_rapier_physics() {
    let m = model(TaskKind::Reach);
    let times = [0.1, 0.2, 0.4, 0.8, 1.5];
    for targets in [
        [0.6, -0.2, 0.3, -1.8, 0.4, 1.9, -0.5, 0.0, 0.0],
        [-0.9, 0.4, -0.3, -2.2, -0.4, 2.4, 1.2, 0.03, 0.03],
    ] {
        let reference = rapier_joints(targets, &times);
        let mut sim = scene(&m, [(Vec3::ZERO, 0.0); 2]);
        sim.targets = targets;
        let mut t = 0.0;
        for (at, want) in times.iter().zip(&reference) {
            m.simulate(&mut sim, at - t);
            t = *at;
            for (k, (have, want)) in sim.q.iter().zip(want).enumerate() {
                // Within 0.08 rad while the arm swings: rapier's joint 1 overshoots
                // when the others move too (its multibody's coupling terms; ours
                // follow the Lagrangian, tested below); alone, the two agree to 0.01 rad.
                let tol = if k < 7 { 0.08 } else { 0.004 };
                // The kernel closes the fingers at the URDF's 0.2 m/s; rapier's
                // finger drives, limited only after each step, close faster.
                if k >= 7 && *at < 0.4 {
                    continue;
                }
                assert!(
                    (have - want).abs() < tol,
                    "joint {k} at {at} s: kernel {have} rapier {want} (targets {targets:?})",
                );
            }
        }
        for (k, (have, want)) in sim.q.iter().zip(targets).enumerate() {
            assert!(
                (have - want).abs() < 5e-3,
                "joint {k} settles at {have} not {want}"
            );
        }
    }
}

#[test]
fn joint_limits_hold_against_targets_beyond_them() {
    let m = model(TaskKind::Reach);
    let mut sim = scene(&m, [(Vec3::ZERO, 0.0); 2]);
    // Joint 4's upper limit is −0.0698 rad, joint 6's lower −0.0175; fingers open at most 4 cm.
    sim.targets = [0.0, -0.785, 0.0, 0.5, 0.0, -0.6, 0.785, 0.06, 0.06];
    m.simulate(&mut sim, 2.0);
    let arm = m.arm();
    for k in [3, 5, 7, 8] {
        let (low, high) = arm.limits[k];
        assert!(
            sim.q[k] <= high + 2e-3 && sim.q[k] >= low - 2e-3,
            "joint {k} at {} outside [{low}, {high}]",
            sim.q[k]
        );
    }
    assert!(
        (sim.q[3] - arm.limits[3].1).abs() < 2e-3,
        "joint 4 rests on its limit: {}",
        sim.q[3]
    );
}

#[test]
fn holding_still_at_rest_gains_no_energy() {
    let m = model(TaskKind::PickCube);
    let mut sim = scene(
        &m,
        [(Vec3::new(0.1, 0.0, CUBE_HALF), 0.2), (Vec3::ZERO, 0.0)],
    );
    let start = sim.q;
    m.simulate(&mut sim, 10.0);
    for (k, (now, then)) in sim.q.iter().zip(start).enumerate() {
        assert!(sim.qd[k].abs() < 1e-4, "joint {k} moves at {}", sim.qd[k]);
        assert!(
            (now - then).abs() < 1e-3,
            "joint {k} drifted from {then} to {now}"
        );
    }
    assert!(cube(&sim, 0).1.length() < 1e-4);
}

/// The lowest point of the hand, the fingers and the link spheres.
fn lowest_point(m: &KernelModel, sim: &Sim) -> f32 {
    let arm = m.arm();
    let k = arm.kinematics(&sim.q);
    let boxes = (0..3).flat_map(|r| {
        let b = proprio_manipulation::kernel::robot_box(arm, &k, r);
        (0..8).map(move |c| b.corner(c).z)
    });
    let spheres = arm.spheres[..arm.sphere_count]
        .iter()
        .map(|s| (k.origin[s.body] + k.rotation[s.body] * s.centre).z - s.radius);
    boxes.chain(spheres).fold(f32::INFINITY, f32::min)
}

/// Joint targets that put the TCP at `tcp` (world) with the rest pose's orientation, ignoring the table.
fn targets_at(tcp: Vec3) -> [f32; 9] {
    use glam::{DQuat, DVec3};
    let chain = proprio_manipulation::Chain::panda().unwrap();
    let mut q: Vec<f64> = READY.iter().map(|&v| f64::from(v)).collect();
    let down = DQuat::from_mat3(&chain.forward(&q).matrix3);
    let base = DVec3::from(proprio_manipulation::BASE.map(f64::from));
    for _ in 0..100 {
        chain.ik_step(&mut q, tcp.as_dvec3() - base, Some(down), 0.05);
    }
    let mut targets = [0.0; 9];
    for (t, v) in targets.iter_mut().zip(&q) {
        *t = *v as f32;
    }
    assert!(
        (chain.forward(&q).translation + base - tcp.as_dvec3()).length() < 1e-3,
        "IK reaches {tcp}"
    );
    targets
}

#[test]
fn the_hand_and_fingers_cannot_be_driven_through_the_table() {
    let m = model(TaskKind::Reach);
    let mut sim = scene(&m, [(Vec3::ZERO, 0.0); 2]);
    // Targets 8 cm below the table top, closed fingers: the drives push with full torque.
    sim.targets = targets_at(Vec3::new(0.0, 0.1, -0.08));
    let mut lowest = f32::INFINITY;
    for _ in 0..120 {
        m.simulate(&mut sim, 1.0 / 60.0);
        lowest = lowest.min(lowest_point(&m, &sim));
    }
    assert!(lowest > -0.005, "the arm went {} m into the table", -lowest);
    let now = lowest_point(&m, &sim);
    assert!(
        now < 0.002,
        "the arm rests on the table: lowest point {now}"
    );
}

#[test]
fn the_velocity_bias_is_the_lagrangian_one() {
    // C(q, q̇) q̇ = Ṁ q̇ − ½ ∂(q̇ᵀ M q̇)/∂q, by central differences of the mass matrix.
    let arm = proprio_manipulation::kernel::Arm::panda().unwrap();
    let q = [0.3f32, -0.5, 0.2, -2.0, 0.4, 1.7, 0.6, 0.02, 0.03];
    let qd = [0.8f32, -0.6, 1.1, 0.7, -1.3, 0.9, 1.5, 0.05, -0.04];
    let mass = |q: &[f32; 9]| {
        let mut m = [[0.0f32; 9]; 9];
        arm.mass_matrix(&arm.kinematics(q), &mut m);
        m
    };
    let eps = 1e-3f32;
    let moved =
        |along: &[f32; 9], s: f32| std::array::from_fn::<f32, 9, _>(|i| q[i] + s * along[i]);
    let (ahead, behind) = (mass(&moved(&qd, eps)), mass(&moved(&qd, -eps)));
    let got = arm.bias(&arm.kinematics(&q), &qd);
    for k in 0..9 {
        let unit: [f32; 9] = std::array::from_fn(|i| f32::from(u8::from(i == k)));
        let (up, down) = (mass(&moved(&unit, eps)), mass(&moved(&unit, -eps)));
        let mut want = 0.0;
        for j in 0..9 {
            want += (ahead[k][j] - behind[k][j]) / (2.0 * eps) * qd[j];
            for i in 0..9 {
                want -= 0.5 * qd[i] * (up[i][j] - down[i][j]) / (2.0 * eps) * qd[j];
            }
        }
        assert!(
            (got[k] - want).abs() < 2e-3 * (1.0 + want.abs()),
            "joint {k}: {} vs {want}",
            got[k]
        );
    }
}

#[test]
fn two_stacked_cubes_stand_for_ten_seconds() {
    let m = model(TaskKind::StackCube);
    let b = Vec3::new(0.05, 0.05, CUBE_HALF);
    let mut sim = scene(
        &m,
        [
            (b + Vec3::new(0.004, -0.003, 2.0 * CUBE_HALF), 0.5),
            (b, 0.1),
        ],
    );
    m.simulate(&mut sim, 0.5);
    let (a0, b0) = (cube(&sim, 0).0, cube(&sim, 1).0);
    m.simulate(&mut sim, 10.0);
    let (a1, b1) = (cube(&sim, 0).0, cube(&sim, 1).0);
    assert!(
        (a1 - a0).length() < 1e-3 && (b1 - b0).length() < 1e-3,
        "moved: A {a0} -> {a1}, B {b0} -> {b1}"
    );
    assert!((a1.z - 3.0 * CUBE_HALF).abs() < 1e-3, "A rests on B: {a1}");
}

#[test]
fn the_scripted_grasp_lifts_a_cube_ten_centimetres_and_holds_it_without_slipping() {
    use proprio_core::ChunkedModel;
    let m = model(TaskKind::PickCube);
    let policy = proprio_manipulation::Scripted::new(*m.settings()).unwrap();
    let start = Vec3::new(0.05, -0.05, CUBE_HALF);
    // The goal 10 cm above the cube: the scripted policy grasps, then carries it there.
    let mut sim = m.start(&Start {
        q: rest(),
        cubes: [
            (start, 0.6),
            (Vec3::ZERO, 0.0),
            (Vec3::ZERO, 0.0),
            (Vec3::ZERO, 0.0),
        ],
        goal: start + Vec3::new(0.0, 0.0, 0.1),
        instruction: None,
        phrasing: 0,
    });
    let dim = proprio_manipulation::task::obs_dim(m.settings());
    let mut obs = vec![0.0; dim];
    let mut action = [0.0; 7];
    let tcp_to_cube = |sim: &Sim| {
        let k = m.arm().kinematics(&sim.q);
        cube(sim, 0).0 - m.arm().tcp(&k).0
    };
    let mut lifted = None;
    for step in 0..300 {
        m.observe(&sim, &mut obs);
        policy.action(&obs, &mut action);
        m.control_step(&mut sim, &action);
        if lifted.is_none() && cube(&sim, 0).0.z > start.z + 0.095 && step > 0 {
            lifted = Some((step, tcp_to_cube(&sim)));
        }
    }
    let (step, grip) = lifted.expect("the cube was lifted 10 cm");
    let held_for = (300 - step) as f32 / m.settings().control_hz as f32;
    assert!(held_for >= 5.0, "held only {held_for} s");
    let slip = (tcp_to_cube(&sim) - grip).length();
    assert!(slip < 0.002, "the cube slipped {slip} m in the hand");
    assert!(
        (cube(&sim, 0).0.z - (start.z + 0.1)).abs() < 0.01,
        "held at {}",
        cube(&sim, 0).0
    );
}

#[test]
fn body_motions_are_the_derivatives_of_the_kinematics() {
    let m = model(TaskKind::Reach);
    let arm = m.arm();
    let q = [0.3, -0.6, 0.2, -2.0, 0.4, 1.8, -0.3, 0.02, 0.03];
    let qd = [0.7, -0.4, 1.1, 0.5, -0.9, 0.6, 1.3, 0.05, -0.04];
    let eps = 1e-3;
    let ahead: [f32; 9] = std::array::from_fn(|j| q[j] + eps * qd[j]);
    let behind: [f32; 9] = std::array::from_fn(|j| q[j] - eps * qd[j]);
    let (k, a, b) = (
        arm.kinematics(&q),
        arm.kinematics(&ahead),
        arm.kinematics(&behind),
    );
    let motions = arm.motions(&k, &qd);
    for (body, motion) in motions.iter().enumerate() {
        let linear = (a.origin[body] - b.origin[body]) / (2.0 * eps);
        let turn = a.rotation[body] * b.rotation[body].inverse();
        let angular = turn.to_scaled_axis() / (2.0 * eps);
        assert!(
            (motion.linear - linear).length() < 2e-3,
            "body {body}: {} vs {linear}",
            motion.linear
        );
        assert!(
            (motion.angular - angular).length() < 2e-3,
            "body {body}: {} vs {angular}",
            motion.angular
        );
    }
    // The speed limits are the URDF's.
    assert_eq!(
        arm.speed,
        [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61, 0.2, 0.2]
    );
}
