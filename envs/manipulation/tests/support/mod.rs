//! What the contract tests of both physics share: the registry, seeded
//! rollouts, and the checks written once for either physics.

use proprio_core::serde_json::Value;
use proprio_core::{AutoresetMode, Env, Registry, State, VecEnv, VecOptions};

/// The manipulation envs alone.
pub fn registry() -> Registry {
    Registry::with(proprio_manipulation::register)
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

/// An env of `id` under `config`, reset from `seed`, and its snapshot.
pub fn started(config: &Value, id: &str, seed: u64) -> (Box<dyn Env>, State) {
    let mut env = registry().make(id, config).unwrap();
    env.reset(Some(seed), None).unwrap();
    let snapshot = env.snapshot().unwrap();
    (env, snapshot)
}

/// Restores `flung` (a pick-cube state with cube 0 thrown far upwards) and
/// checks that the next step truncates, says why, and stays finite.
pub fn assert_flung_cube_truncates(env: &mut dyn Env, flung: &State) {
    let mut obs = vec![0.0; 49];
    env.restore(flung, &mut obs).unwrap();
    let step = env.step(&[0.0; 7]).unwrap();
    assert!(step.truncated && !step.terminated);
    assert_eq!(step.info.get("blow_up"), Some(2.0), "left the workspace");
    assert!(step.obs.iter().all(|v| v.is_finite()));
}
