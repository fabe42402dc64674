//! The scripted experts' first episodes in a seeded batch, step by step.

use proprio_core::serde_json::Value;
use proprio_core::{AutoresetMode, Info, Registry, VecOptions};

/// Runs env `id`'s scripted expert on `n` envs reset from `seed` (same-step
/// autoreset) until each has ended its first episode; `visit(i, reward,
/// final_info)` sees every step of env i's first episode, `final_info` on its last.
pub fn first_episodes(
    id: &str,
    config: &Value,
    n: usize,
    seed: u64,
    visit: impl FnMut(usize, f32, Option<&Info>),
) {
    let registry = Registry::with(proprio_manipulation::register);
    let options = VecOptions {
        autoreset: AutoresetMode::SameStep,
        threads: Some(2),
        ..VecOptions::default()
    };
    let mut venv = registry.make_vec(id, n, config, options).unwrap();
    let mut policy = registry.scripted(id, venv.spec()).unwrap();
    proprio_core::first_episodes(venv.as_mut(), policy.as_mut(), seed, visit).unwrap();
}
