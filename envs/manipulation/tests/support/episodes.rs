//! The scripted experts' first episodes in a seeded batch, step by step.

use proprio_core::serde_json::Value;
use proprio_core::{ActMode, AutoresetMode, Info, Registry, VecOptions};

/// Runs env `id`'s scripted expert on `n` envs reset from `seed` (same-step
/// autoreset) until each has ended its first episode; `visit(i, reward,
/// final_info)` sees every step of env i's first episode, `final_info` on its last.
pub fn first_episodes(
    id: &str,
    config: &Value,
    n: usize,
    seed: u64,
    mut visit: impl FnMut(usize, f32, Option<&Info>),
) {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let options = VecOptions {
        autoreset: AutoresetMode::SameStep,
        threads: Some(2),
        ..VecOptions::default()
    };
    let mut venv = registry.make_vec(id, n, config, options).unwrap();
    let mut policy = registry.scripted(id, venv.spec()).unwrap();
    let mut actions = vec![0.0; n * venv.spec().action_space.flat_dim()];
    let mut ended = vec![false; n];
    venv.reset(Some(seed), None).unwrap();
    while ended.iter().any(|e| !e) {
        let obs = venv.batch().obs.clone();
        policy
            .act(&obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        venv.step(&actions).unwrap();
        let b = venv.batch();
        for (i, end) in ended.iter_mut().enumerate().filter(|(_, e)| !**e) {
            *end = b.done(i);
            visit(i, b.reward[i], end.then(|| &b.final_infos[i]));
        }
    }
}
