//! Env i's trajectory is the same for any batch size and any thread count.

use crate::{actions_for, vec_env};
use proprio::AutoresetMode;

/// Per step: (obs, reward, terminated, truncated) of the first `keep` envs.
type Trace = Vec<(Vec<f32>, Vec<f32>, Vec<bool>, Vec<bool>)>;

fn trace(id: &str, n: usize, threads: usize, keep: usize, steps: u64) -> Trace {
    let mut venv = vec_env(id, n, AutoresetMode::NextStep, threads);
    venv.reset(Some(7), None).unwrap();
    let mut out = Vec::new();
    for t in 0..steps {
        venv.step(&actions_for(venv.as_ref(), t)).unwrap();
        let b = venv.batch();
        out.push((
            b.obs[..keep * b.obs_dim].to_vec(),
            b.reward[..keep].to_vec(),
            b.terminated[..keep].to_vec(),
            b.truncated[..keep].to_vec(),
        ));
    }
    out
}

#[test]
fn trajectories_do_not_depend_on_batch_size_or_threads() {
    for id in [
        "classic/cartpole-v1",
        "classic/pendulum-v1",
        "drones/hover-v0",
        "drones/gates-v0",
    ] {
        // 450 steps: many CartPole episodes, two Pendulum truncations, drone
        // crashes under random motor commands, all autoreset.
        let reference = trace(id, 1, 1, 1, 450);
        let episodes_ended = reference.iter().filter(|s| s.2[0] || s.3[0]).count();
        assert!(
            episodes_ended >= 2,
            "{id}: only {episodes_ended} episodes ended"
        );
        // 130 envs span three 64-env chunks of the drones' struct-of-arrays state.
        for (n, threads) in [(7, 1), (7, 2), (64, 1), (64, 2), (130, 2)] {
            let t = trace(id, n, threads, 1, 450);
            assert!(
                t == reference,
                "{id}: env 0 differs with {n} envs on {threads} threads"
            );
        }
        let wide_1 = trace(id, 130, 1, 130, 120);
        let wide_2 = trace(id, 130, 2, 130, 120);
        assert!(
            wide_1 == wide_2,
            "{id}: 130 envs differ between 1 and 2 threads"
        );
    }
}

#[test]
fn envs_in_a_batch_get_different_streams() {
    let mut venv = vec_env("classic/cartpole-v1", 8, AutoresetMode::NextStep, 1);
    venv.reset(Some(0), None).unwrap();
    let b = venv.batch();
    for i in 1..8 {
        assert_ne!(b.obs(0), b.obs(i), "env {i} starts where env 0 does");
    }
}

#[test]
fn reset_with_the_same_seed_repeats_and_without_seed_moves_on() {
    let mut env = proprio::make("classic/cartpole-v1", &proprio::serde_json::Value::Null).unwrap();
    let (first, _) = env.reset(Some(11), None).unwrap();
    let (second, _) = env.reset(None, None).unwrap();
    let (again, _) = env.reset(Some(11), None).unwrap();
    assert_eq!(first, again);
    assert_ne!(
        first, second,
        "an unseeded reset must start a new episode, not repeat the cached start"
    );
}
