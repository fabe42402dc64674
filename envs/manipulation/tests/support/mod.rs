//! What the contract tests of both physics share: the registry, seeded
//! rollouts, and the checks written once for either physics.

use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Env, Registry, State, VecEnv, VecOptions};

/// The manipulation envs alone.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    proprio_manipulation::register(&mut r);
    r
}

/// A batch of `n` envs of `id` under `config` on `threads` threads.
pub fn venv(
    config: &Value,
    id: &str,
    n: usize,
    threads: usize,
    autoreset: AutoresetMode,
) -> Box<dyn VecEnv> {
    let options = VecOptions {
        autoreset,
        threads: Some(threads),
        ..VecOptions::default()
    };
    registry().make_vec(id, n, config, options).unwrap()
}

/// Actions for env i at step t, independent of the batch size.
pub fn actions(venv: &dyn VecEnv, t: u64) -> Vec<f32> {
    let space = &venv.spec().action_space;
    let dim = space.flat_dim();
    let mut out = vec![0.0; venv.num_envs() * dim];
    for (i, row) in out.chunks_exact_mut(dim).enumerate() {
        space.sample(&mut proprio_core::episode_rng(5, i as u64, t), row);
    }
    out
}

/// Per step: the first envs' observations, rewards, terminated and truncated flags.
pub type Trace = Vec<(Vec<f32>, Vec<f32>, Vec<bool>, Vec<bool>)>;

/// The first `keep` envs' [`Trace`] over `steps` steps of seeded random actions from seed 3.
pub fn trace(config: &Value, id: &str, n: usize, threads: usize, keep: usize, steps: u64) -> Trace {
    let mut v = venv(config, id, n, threads, AutoresetMode::NextStep);
    v.reset(Some(3), None).unwrap();
    (0..steps)
        .map(|t| {
            v.step(&actions(v.as_ref(), t)).unwrap();
            let b = v.batch();
            (
                b.obs[..keep * b.obs_dim].to_vec(),
                b.reward[..keep].to_vec(),
                b.terminated[..keep].to_vec(),
                b.truncated[..keep].to_vec(),
            )
        })
        .collect()
}

/// Env 0's trace over `steps` steps is the same in every batch of `sizes`
/// (envs, threads), and a batch of `all.0` envs agrees on 1 and 2 threads
/// over `all.1` steps. Returns env 0's trace.
pub fn assert_batch_invariant(
    config: &Value,
    id: &str,
    steps: u64,
    sizes: &[(usize, usize)],
    all: (usize, u64),
) -> Trace {
    let reference = trace(config, id, 1, 1, 1, steps);
    for &(n, threads) in sizes {
        assert!(
            trace(config, id, n, threads, 1, steps) == reference,
            "{id}: env 0 differs with {n} envs on {threads} threads"
        );
    }
    let (n, steps) = all;
    assert!(
        trace(config, id, n, 1, n, steps) == trace(config, id, n, 2, n, steps),
        "{id}: {n} envs differ between 1 and 2 threads"
    );
    reference
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
pub fn assert_yaw_turns_the_hand(physics: &str) {
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
