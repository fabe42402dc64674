//! The foundation's contracts hold for the manipulation envs on the rapier
//! physics: seeding and determinism across batch sizes and threads,
//! autoreset, bit-identical snapshots of the whole rapier world, validation,
//! blow-up truncation (`kernel_contracts.rs`: the same for the kernel physics,
//! and the controllers on both).

use glam::Vec3;
use proprio_core::ActMode;
use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Error, VecEnv, VecOptions};
use proprio_manipulation::{ManipState, Template};

mod support;
use support::registry;

/// The rapier physics (the family's default is the kernel).
fn rapier() -> Value {
    json!({"physics": "rapier"})
}

fn venv(id: &str, n: usize, threads: usize, autoreset: AutoresetMode) -> Box<dyn VecEnv> {
    support::venv(&rapier(), id, n, threads, autoreset)
}

#[test]
fn trajectories_do_not_depend_on_batch_size_or_threads() {
    // 120 steps cross the time limits (reach 50, push 100 steps), so autoresets are covered.
    for id in ["manipulation/reach-v0", "manipulation/push-cube-v0"] {
        let reference =
            support::assert_batch_invariant(&rapier(), id, 120, &[(3, 1), (5, 2), (9, 2)], (9, 40));
        assert!(
            reference.iter().filter(|s| s.2[0] || s.3[0]).count() >= 1,
            "{id}: no episode ended"
        );
    }
}

#[test]
fn seeds_repeat_and_envs_differ() {
    let mut v = venv("manipulation/pick-cube-v0", 4, 2, AutoresetMode::NextStep);
    v.reset(Some(11), None).unwrap();
    let first = v.batch().obs.clone();
    v.reset(None, None).unwrap();
    let unseeded = v.batch().obs.clone();
    v.reset(Some(11), None).unwrap();
    assert_eq!(v.batch().obs, first);
    assert_ne!(unseeded, first);
    let dim = v.batch().obs_dim;
    // Cube positions (obs 26..29) differ between envs.
    assert_ne!(first[26..29], first[dim + 26..dim + 29]);
}

#[test]
fn same_step_autoreset_keeps_the_final_observation_of_a_success() {
    let id = "manipulation/reach-v0";
    let mut v = venv(id, 2, 1, AutoresetMode::SameStep);
    let mut policy = registry().scripted(id, v.spec()).unwrap();
    v.reset(Some(4), None).unwrap();
    let start = v.batch().obs[..v.batch().obs_dim].to_vec();
    let mut actions = vec![0.0; 2 * 4];
    for _ in 0..50 {
        let obs = v.batch().obs.clone();
        policy
            .act(&obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        v.step(&actions).unwrap();
        let b = v.batch();
        if b.terminated[0] {
            assert_eq!(b.final_infos[0].get("success"), Some(1.0));
            assert_eq!(b.reward[0], 1.0);
            let last = b.final_obs(0).expect("the final observation is kept");
            let goal_error = Vec3::new(last[29], last[30], last[31]).length();
            assert!(goal_error < 0.025, "final TCP {goal_error} m from the goal");
            assert_ne!(b.obs(0), start.as_slice(), "a new episode started");
            assert!(Vec3::new(b.obs(0)[29], b.obs(0)[30], b.obs(0)[31]).length() > 0.025);
            return;
        }
    }
    panic!("the scripted reach never succeeded");
}

#[test]
fn a_snapshot_continues_bit_for_bit_through_json() {
    support::assert_snapshots_continue(
        &rapier(),
        &["manipulation/pick-cube-v0", "manipulation/stack-cube-v0"],
        70,
    );
}

#[test]
fn nan_actions_are_rejected_and_out_of_range_ones_clipped() {
    let r = registry();
    let mut env = r.make("manipulation/push-cube-v0", &rapier()).unwrap();
    let (obs, _) = env.reset(Some(0), None).unwrap();
    for bad in [[f32::NAN, 0.0, 0.0, 0.0], [0.0, f32::INFINITY, 0.0, 0.0]] {
        let err = env.step(&bad).expect_err("rejected");
        assert!(matches!(err, Error::InvalidAction { .. }), "{err}");
    }
    assert!(env.step(&[0.0; 3]).is_err(), "wrong length");
    assert_eq!(env.snapshot().unwrap().elapsed_steps, 0, "nothing moved");
    let mut same = r.make("manipulation/push-cube-v0", &rapier()).unwrap();
    assert_eq!(same.reset(Some(0), None).unwrap().0, obs);
    let far = env.step(&[0.0, 7.0, -3.0, 1.0]).unwrap();
    let clipped = same.step(&[0.0, 1.0, -1.0, 1.0]).unwrap();
    assert_eq!(
        far.obs, clipped.obs,
        "components beyond [-1, 1] act as the bound"
    );
}

#[test]
fn a_cube_flung_out_of_the_workspace_truncates_with_the_reason() {
    let (mut env, mut snapshot) = support::started(&rapier(), "manipulation/pick-cube-v0", 1);
    let mut state: ManipState =
        proprio_core::serde_json::from_value(snapshot.state.clone()).unwrap();
    let scene = Template::new(1, 1.0 / 60.0).unwrap();
    // The snapshot with cube 0 thrown at `velocity`.
    let mut fling = |velocity: Vec3| {
        state
            .physics
            .set_cube_velocity(scene.parts(), 0, velocity, Vec3::ZERO);
        snapshot.state = proprio_core::serde_json::to_value(&state).unwrap();
        snapshot.clone()
    };
    support::assert_flung_cube_truncates(env.as_mut(), &fling(Vec3::new(0.0, 0.0, 200.0)));

    let nan = fling(Vec3::new(f32::NAN, 0.0, 0.0));
    let mut obs = vec![0.0; 49];
    let err = env
        .restore(&nan, &mut obs)
        .expect_err("a NaN state is refused");
    assert!(err.to_string().contains("NaN"), "{err}");
}

#[test]
fn states_of_another_task_and_bad_configs_are_refused_clearly() {
    let (_, mut foreign) = support::started(&rapier(), "manipulation/stack-cube-v0", 0);
    foreign.env = None;
    let r = registry();
    let mut pick = r.make("manipulation/pick-cube-v0", &rapier()).unwrap();
    let mut obs = vec![0.0; 49];
    let err = pick.restore(&foreign, &mut obs).expect_err("refused");
    assert!(
        err.to_string()
            .contains("not a manipulation/pick-cube-v0 scene"),
        "{err}"
    );

    for (config, words) in [
        (json!({"physics_hz": 70}), "multiple of control_hz"),
        (json!({"control": "pd_teleport"}), "pd_ee_delta_pos"),
        (json!({"joint_noise": -1.0}), "joint_noise"),
        (json!({"gripper": 1}), "unknown field"),
    ] {
        let Err(err) = r.make("manipulation/reach-v0", &config) else {
            panic!("{config} was accepted");
        };
        assert!(err.to_string().contains(words), "{config}: {err}");
    }
    let options = VecOptions {
        backend: proprio_core::Backend::Gpu,
        ..VecOptions::default()
    };
    let err = r
        .make_vec("manipulation/reach-v0", 2, &rapier(), options)
        .err()
        .unwrap();
    assert!(err.to_string().contains("cpu backend only"), "{err}");
}

#[test]
fn without_the_goal_in_the_state_the_rest_of_the_observation_is_unchanged() {
    let registry = registry();
    let options = VecOptions::default();
    for (id, full_dim) in [
        ("manipulation/reach-v0", 32),
        ("manipulation/push-cube-v0", 49),
        ("manipulation/pick-cube-v0", 49),
    ] {
        let mut full = registry.make_vec(id, 2, &rapier(), options).unwrap();
        let hidden = json!({"physics": "rapier", "goal_in_state": false});
        let mut blind = registry.make_vec(id, 2, &hidden, options).unwrap();
        assert_eq!(blind.spec().observation_space.flat_dim(), full_dim - 6);
        full.reset(Some(4), None).unwrap();
        blind.reset(Some(4), None).unwrap();
        let (f, b) = (full.batch().obs(1), blind.batch().obs(1));
        // Reach: the goal fields close the observation; push/pick: they follow the cube (26 + 13).
        let at = if id.ends_with("reach-v0") { 26 } else { 39 };
        assert_eq!(&b[..at], &f[..at], "{id}");
        assert_eq!(&b[at..], &f[at + 6..], "{id}");
        let spec = blind.spec().clone();
        let scripted = registry.scripted(id, &spec).err().map(|e| e.to_string());
        assert!(
            scripted.is_some_and(|e| e.contains("goal_in_state")),
            "{id}"
        );
    }
    let error = registry
        .make_vec(
            "manipulation/stack-cube-v0",
            1,
            &json!({"goal_in_state": false}),
            options,
        )
        .err()
        .map(|e| e.to_string());
    assert!(error.is_some_and(|e| e.contains("goal_in_state must be true")));
}

#[test]
fn the_hand_cameras_follow_the_tool_centre_point() {
    let mut v = venv("manipulation/reach-v0", 2, 1, AutoresetMode::NextStep);
    v.reset(Some(4), None).unwrap();
    let mut scene = proprio_core::Scene::default();
    let (mut eyes, mut tcps) = (Vec::new(), Vec::new());
    for t in 0..3 {
        for env in 0..2 {
            v.scene(env, &mut scene).unwrap();
            let tcp = &v.batch().obs(env)[18..21];
            tcps.push(Vec3::from_slice(tcp));
            for name in ["hand", "hand-side"] {
                let camera = scene.cameras.iter().find(|c| c.name == name).unwrap();
                let target = Vec3::from(camera.target);
                assert!(
                    (target - Vec3::from_slice(tcp)).length() < 1e-5,
                    "{name} looks at {target}, the TCP is at {tcp:?}"
                );
                eyes.push(Vec3::from(camera.eye) - target);
            }
        }
        let a = support::actions(v.as_ref(), t);
        v.step(&a).unwrap();
    }
    assert!(
        (tcps[0] - tcps[4]).length() > 0.01,
        "the TCP moved: {tcps:?}"
    );
    // A fixed world offset per camera: the view does not turn with the hand.
    let same = |a: Vec3, b: Vec3| (a - b).length() < 1e-5;
    assert!(
        eyes.chunks(2)
            .all(|p| same(p[0], eyes[0]) && same(p[1], eyes[1]))
    );
    assert!(!same(eyes[0], eyes[1]), "two different views");
}
