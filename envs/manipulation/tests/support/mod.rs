//! What the contract tests of both physics share: the registry, seeded
//! rollouts, and the checks written once for either physics.

use proprio_core::serde_json::{Value, json};
use proprio_core::{Env, Registry, State};

/// The manipulation envs alone.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    proprio_manipulation::register(&mut r);
    r
}

/// Observations, rewards and flags of `steps` steps of seeded random actions.
pub fn rollout(env: &mut dyn Env, steps: u64) -> Vec<(Vec<f32>, f64, bool, bool)> {
    let space = env.spec().action_space.clone();
    let mut a = vec![0.0; space.flat_dim()];
    (0..steps)
        .map(|t| {
            space.sample(&mut proprio_core::episode_rng(9, 0, t), &mut a);
            let s = env.step(&a).unwrap();
            (s.obs, s.reward, s.terminated, s.truncated)
        })
        .collect()
}

/// A snapshot written to JSON text and read back.
pub fn through_json(state: &State) -> State {
    proprio_core::serde_json::from_str(&proprio_core::serde_json::to_string(state).unwrap())
        .unwrap()
}

/// A snapshot taken after 17 steps, passed through JSON and restored into
/// another env, continues for `steps` steps exactly as the original did.
pub fn assert_snapshots_continue(config: &Value, ids: &[&str], steps: u64) {
    let r = registry();
    for id in ids {
        let mut env = r.make(id, config).unwrap();
        env.reset(Some(2), None).unwrap();
        rollout(env.as_mut(), 17);
        let state = through_json(&env.snapshot().unwrap());
        let expected = rollout(env.as_mut(), steps);
        let mut other = r.make(id, config).unwrap();
        other.reset(Some(99), None).unwrap();
        rollout(other.as_mut(), 5);
        let mut obs = vec![0.0; other.spec().observation_space.flat_dim()];
        other.restore(&state, &mut obs).unwrap();
        assert!(
            rollout(other.as_mut(), steps) == expected,
            "{id} on {config}"
        );
    }
}

/// Every controller moves the TCP and closes the gripper on `physics`.
pub fn assert_every_controller_drives(physics: &str) {
    let r = registry();
    for (control, dim) in [
        ("pd_joint_pos", 8),
        ("pd_joint_delta_pos", 8),
        ("pd_ee_delta_pos", 4),
        ("pd_ee_delta_pose", 7),
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
