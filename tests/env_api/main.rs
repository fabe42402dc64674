//! End-to-end contracts of the environment API, across the registry, the
//! thread-pooled vector env and the classic envs.

mod autoreset;
mod determinism;
mod errors;
mod frame_stack;
mod fuzz;
mod noisy;
mod pixels;
mod scenes;
mod snapshot;
mod wrappers;

use proprio::serde_json::Value;
use proprio::{AutoresetMode, VecEnv, VecOptions};

/// A batch of `n` envs of `id` with the given autoreset mode and threads.
pub fn vec_env(id: &str, n: usize, autoreset: AutoresetMode, threads: usize) -> Box<dyn VecEnv> {
    let options = VecOptions {
        autoreset,
        threads: Some(threads),
        ..VecOptions::default()
    };
    proprio::make_vec(id, n, &Value::Null, options).unwrap()
}

/// Actions for every env at `step`, drawn per env from stream (step, env) so
/// env i's actions do not depend on the batch size.
pub fn actions_for(venv: &dyn VecEnv, step: u64) -> Vec<f32> {
    let space = &venv.spec().action_space;
    let dim = space.flat_dim();
    let mut actions = vec![0.0; venv.num_envs() * dim];
    for (i, row) in actions.chunks_exact_mut(dim).enumerate() {
        space.sample(&mut proprio::episode_rng(99, i as u64, step), row);
    }
    actions
}
