//! The scripted reference policies solve every task in ≥ 95% of 100 seeded
//! episodes, on both physics: the physics allows reaching, pushing, a grasp that does not slip
//! and a stack that stays for a second.

use proprio_core::ActMode;
use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Registry, VecOptions};

/// Success rate of the scripted policy over the first episode of 100 envs seeded from `seed`.
fn success_rate(id: &str, config: &Value, seed: u64) -> f64 {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let options = VecOptions {
        autoreset: AutoresetMode::SameStep,
        threads: Some(2),
        ..VecOptions::default()
    };
    let n = 100;
    let mut venv = registry.make_vec(id, n, config, options).unwrap();
    let mut policy = registry.scripted(id, venv.spec()).unwrap();
    let dim = venv.spec().action_space.flat_dim();
    let mut actions = vec![0.0; n * dim];
    let mut outcome: Vec<Option<bool>> = vec![None; n];
    venv.reset(Some(seed), None).unwrap();
    while outcome.iter().any(Option::is_none) {
        let obs = venv.batch().obs.clone();
        policy
            .act(&obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        venv.step(&actions).unwrap();
        let b = venv.batch();
        for (i, slot) in outcome.iter_mut().enumerate() {
            if slot.is_none() && b.done(i) {
                *slot = Some(b.final_infos[i].get("success") == Some(1.0));
                assert_eq!(
                    b.final_infos[i].get("blow_up"),
                    Some(0.0),
                    "{id}: env {i} blew up"
                );
            }
        }
    }
    outcome.iter().filter(|o| **o == Some(true)).count() as f64 / n as f64
}

#[test]
fn scripted_policies_solve_every_task() {
    for id in [
        "manipulation/reach-v0",
        "manipulation/push-cube-v0",
        "manipulation/pick-cube-v0",
        "manipulation/stack-cube-v0",
    ] {
        for physics in ["rapier", "kernel"] {
            let rate = success_rate(id, &json!({ "physics": physics }), 2026);
            assert!(rate >= 0.95, "{id} on {physics}: scripted success {rate}");
        }
    }
}
