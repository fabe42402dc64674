//! The foundation's contracts hold for the kernel physics: determinism across
//! batch sizes and threads, bit-identical snapshots through JSON, clear
//! refusals of bad states, blow-up truncation, and every controller on both
//! physics.

use proprio_core::VecOptions;
use proprio_core::serde_json::{Value, json};
use proprio_manipulation::kernel::Sim;

const TASKS: [&str; 4] = [
    "manipulation/reach-v0",
    "manipulation/push-cube-v0",
    "manipulation/pick-cube-v0",
    "manipulation/stack-cube-v0",
];

mod support;
use support::registry;

fn kernel() -> Value {
    json!({"physics": "kernel"})
}

#[test]
fn trajectories_do_not_depend_on_batch_size_or_threads() {
    for id in TASKS {
        support::assert_batch_invariant(&kernel(), id, 110, &[(5, 2), (130, 2)], (70, 30));
    }
}

#[test]
fn a_snapshot_continues_bit_for_bit_through_json() {
    support::assert_snapshots_continue(&kernel(), &TASKS, 30);
}

/// The snapshot of a fresh pick-cube env, its kernel state and an observation buffer.
fn pick_state() -> (Box<dyn proprio_core::Env>, proprio_core::State, Sim) {
    let (env, snapshot) = support::started(&kernel(), "manipulation/pick-cube-v0", 1);
    let sim: Sim = proprio_core::serde_json::from_value(snapshot.state.clone()).unwrap();
    (env, snapshot, sim)
}

#[test]
fn a_cube_flung_out_of_the_workspace_truncates_with_the_reason() {
    let (mut env, mut snapshot, mut sim) = pick_state();
    sim.cubes[0][9] = 200.0;
    snapshot.state = proprio_core::serde_json::to_value(sim).unwrap();
    support::assert_flung_cube_truncates(env.as_mut(), &snapshot);
}

#[test]
fn bad_states_are_refused_with_one_line_reasons() {
    let (mut env, snapshot, sim) = pick_state();
    let mut obs = vec![0.0; 49];
    let mut bad = sim;
    bad.cubes[0][3] = 2.0;
    let mut broken = snapshot.clone();
    broken.state = proprio_core::serde_json::to_value(bad).unwrap();
    let err = env
        .restore(&broken, &mut obs)
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("unit quaternion") && !err.contains('\n'),
        "{err}"
    );
    let mut short = snapshot.state.clone();
    short["contact_impulse"] = json!([[0.0, 0.0, 0.0]]);
    broken.state = short;
    let err = env
        .restore(&broken, &mut obs)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("contact_impulse"), "{err}");
    let mut nan = snapshot.state.clone();
    nan["q"][2] = json!(null);
    broken.state = nan;
    assert!(
        env.restore(&broken, &mut obs).is_err(),
        "a missing joint angle is refused"
    );
}

#[test]
fn every_controller_drives_the_arm_and_the_gripper_on_both_physics() {
    for physics in ["kernel", "rapier"] {
        assert_every_controller_drives(physics);
    }
}

#[test]
fn the_yaw_controller_turns_the_hand_about_the_vertical_up_to_90_degrees_on_both_physics() {
    for physics in ["kernel", "rapier"] {
        assert_yaw_turns_the_hand(physics);
    }
}

#[test]
fn the_kernel_is_the_default_and_runs_recorded_without_the_key_stay_on_rapier() {
    let r = registry();
    let spec = r.spec("manipulation/pick-cube-v0", &Value::Null).unwrap();
    assert_eq!(spec.config["physics"], "kernel");
    let mut old = json!({"control": "pd_ee_delta_pos"});
    r.complete_legacy("manipulation/pick-cube-v0", &mut old);
    assert_eq!(
        old,
        json!({"control": "pd_ee_delta_pos", "physics": "rapier"})
    );
    let mut recorded = json!({"physics": "kernel"});
    r.complete_legacy("manipulation/pick-cube-v0", &mut recorded);
    assert_eq!(recorded["physics"], "kernel", "an explicit key is kept");
    let mut none = Value::Null;
    r.complete_legacy("manipulation/reach-v0", &mut none);
    assert_eq!(none, json!({"physics": "rapier"}));
}

#[test]
fn both_physics_start_episodes_alike_and_draw_the_same_parts() {
    let r = registry();
    for id in TASKS {
        let mut rapier = r
            .make_vec(id, 3, &Value::Null, VecOptions::default())
            .unwrap();
        let mut ours = r.make_vec(id, 3, &kernel(), VecOptions::default()).unwrap();
        rapier.reset(Some(8), None).unwrap();
        ours.reset(Some(8), None).unwrap();
        let (a, b) = (rapier.batch(), ours.batch());
        for (i, (x, y)) in a.obs.iter().zip(&b.obs).enumerate() {
            assert!(
                (x - y).abs() < 2e-3,
                "{id}: observation {i} (field {}) {x} vs {y}",
                i % a.obs_dim
            );
        }
        let (mut s1, mut s2) = (
            proprio_core::Scene::default(),
            proprio_core::Scene::default(),
        );
        rapier.scene(0, &mut s1).unwrap();
        ours.scene(0, &mut s2).unwrap();
        assert_eq!(
            s1.bodies.len(),
            s2.bodies.len(),
            "{id}: one visual per collider"
        );
        assert_eq!(s1.cameras.len(), s2.cameras.len());
    }
}

/// Every controller moves the TCP and closes the gripper on `physics`.
fn assert_every_controller_drives(physics: &str) {
    let r = registry();
    for (control, dim) in [
        ("pd_joint_pos", 8),
        ("pd_joint_delta_pos", 8),
        ("pd_ee_delta_pos", 4),
        ("pd_ee_delta_pose", 7),
        ("pd_ee_delta_pos_yaw", 5),
    ] {
        let config = json!({ "physics": physics, "control": control });
        let mut env = r.make("manipulation/reach-v0", &config).unwrap();
        assert_eq!(env.spec().action_space.flat_dim(), dim);
        let (start, _) = env.reset(Some(0), None).unwrap();
        let mut action = vec![0.3; dim];
        action[dim - 1] = -1.0;
        let mut last = start.clone();
        for _ in 0..10 {
            last = env.step(&action).unwrap().obs.to_vec();
        }
        let moved = glam::Vec3::from_slice(&last[18..21]) - glam::Vec3::from_slice(&start[18..21]);
        assert!(
            moved.length() > 0.02,
            "{physics} {control}: TCP moved {moved}"
        );
        assert!(
            last[25] < 0.01,
            "{physics} {control}: gripper closed to {}",
            last[25]
        );
    }
}

/// The hand's yaw from pointing straight down (rad) and how far its axis tilts from vertical (rad), from an observation.
fn hand_yaw_and_tilt(obs: &[f32]) -> (f32, f32) {
    let hand = glam::Quat::from_slice(&obs[21..25]);
    let from_down = hand * proprio_manipulation::task::HAND_DOWN.inverse();
    let from_down = if from_down.w < 0.0 {
        -from_down
    } else {
        from_down
    };
    let axis = hand * glam::Vec3::Z;
    (
        2.0 * from_down.z.atan2(from_down.w),
        axis.angle_between(-glam::Vec3::Z),
    )
}

/// `pd_ee_delta_pos_yaw` turns the hand about the vertical by 0.1 rad a step,
/// keeps it pointing down and the TCP in place, and stops at ±90°.
fn assert_yaw_turns_the_hand(physics: &str) {
    let config = json!({ "physics": physics, "control": "pd_ee_delta_pos_yaw" });
    let mut env = registry()
        .make("manipulation/pick-cube-v0", &config)
        .unwrap();
    let (start, _) = env.reset(Some(3), None).unwrap();
    let (yaw0, _) = hand_yaw_and_tilt(&start);
    assert!(yaw0.abs() < 0.1, "{physics}: starts at yaw {yaw0}");
    let mut obs = start.clone();
    let mut turn = |a: f32, steps: usize, obs: &mut Vec<f32>| {
        // `steps` turning, then 10 still for the PD drives to catch up.
        for t in 0..steps + 10 {
            let a = if t < steps { a } else { 0.0 };
            *obs = env.step(&[0.0, 0.0, 0.0, a, 1.0]).unwrap().obs.to_vec();
        }
        let (yaw, tilt) = hand_yaw_and_tilt(obs);
        let drift = glam::Vec3::from_slice(&obs[18..21]) - glam::Vec3::from_slice(&start[18..21]);
        assert!(
            tilt < 0.05,
            "{physics}: the hand tilted {tilt} rad at yaw {yaw}"
        );
        assert!(
            drift.length() < 0.01,
            "{physics}: the TCP drifted {drift} while turning"
        );
        yaw
    };
    let yaw = turn(0.5, 10, &mut obs);
    assert!(
        (yaw - yaw0 - 0.5).abs() < 0.05,
        "{physics}: 10 half steps turned {yaw} from {yaw0}"
    );
    let yaw = turn(1.0, 20, &mut obs);
    assert!(
        (yaw - std::f32::consts::FRAC_PI_2).abs() < 0.05,
        "{physics}: held at {yaw}, not π/2"
    );
    let yaw = turn(-1.0, 40, &mut obs);
    assert!(
        (yaw + std::f32::consts::FRAC_PI_2).abs() < 0.05,
        "{physics}: held at {yaw}, not −π/2"
    );
}
