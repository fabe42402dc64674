//! Reinforcement learning that starts from a clone (`--init`): GRPO keeps
//! the clone's network and statistics, and PPO warms its critic on the
//! clone's rollouts without moving the actor, then moves it.

#[path = "support/clones.rs"]
mod clones;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use clones::{reach_demos, request};
use proprio::serde_json::json;
use proprio_learn::{Algo, Policy, train};
use scratch::Scratch;
use std::path::Path;

/// GRPO continues from a clone: the same network, whatever temperature each samples at.
#[test]
fn grpo_starts_from_a_cloned_policy() {
    let scratch = Scratch::new("bc-grpo");
    let demos = reach_demos(&scratch.join(""), 4);
    // Even tokens; and square tokens acting their mean with the state
    // standardised (the statistics travel in the weights).
    let shapes = [
        json!({"hidden": [16], "action_bins": 11}),
        json!({"hidden": [16], "action_bins": 11, "action_bin_spacing": "square",
            "action_bin_greedy": "mean", "standardize_state": true}),
    ];
    for (k, shape) in shapes.into_iter().enumerate() {
        let mut bc = shape.clone();
        bc["demos"] = json!(demos);
        bc["total_steps"] = json!(2000);
        bc["eval_episodes"] = json!(2);
        let cloned = train(request(Algo::Bc, bc, scratch.join(format!("bc{k}")))).unwrap();
        let mut grpo = shape;
        for (key, value) in [
            ("group_size", json!(2)),
            ("groups", json!(2)),
            ("total_steps", json!(50)),
            ("eval_episodes", json!(2)),
            ("temperature", json!(1.6)),
            ("learning_rate", json!(1e-30)),
        ] {
            grpo[key] = value;
        }
        let mut started = request(Algo::Grpo, grpo, scratch.join(format!("grpo{k}")));
        started.init = Some(cloned.clone());
        let run = train(started).unwrap();
        let weights = |run: &Path| std::fs::read(run.join("checkpoint/model.bpk")).unwrap();
        assert_eq!(weights(&run), weights(&cloned), "not the clone's weights");
        if k > 0 {
            continue;
        }
        // The clone's checkpoint acts as a policy, per token of 11 bins.
        let mut policy = Policy::load(&cloned).unwrap();
        let obs = vec![0.0; policy.env().observation_space().unwrap().flat_dim()];
        let action = policy
            .action(&obs, proprio::ActMode::Deterministic)
            .unwrap();
        assert!(
            action
                .iter()
                .all(|a| ((a + 1.0) * 5.0).fract().abs() < 1e-4),
            "{action:?}"
        );
    }
}

/// PPO from a clone with `critic_warmup`: while it lasts only the critic
/// learns (the clone's actions unchanged to the bit, the weights not);
/// after it the actor moves.
#[test]
fn ppo_warms_its_critic_before_it_moves_the_clone() {
    let scratch = Scratch::new("bc-ppo");
    let demos = reach_demos(&scratch.join(""), 4);
    let shape = json!({"hidden": [16], "action_bins": 11, "action_bin_greedy": "mean"});
    let mut bc = shape.clone();
    bc["demos"] = json!(demos);
    bc["total_steps"] = json!(2000);
    bc["eval_episodes"] = json!(2);
    let cloned = train(request(Algo::Bc, bc, scratch.join("bc"))).unwrap();
    // Two iterations of 2 envs × 16 steps, warming for `warmup` of them.
    let ppo = |warmup: u64| {
        let mut cfg = shape.clone();
        for (key, value) in [
            ("num_envs", json!(2)),
            ("num_steps", json!(16)),
            ("num_minibatches", json!(2)),
            ("total_steps", json!(64)),
            ("eval_episodes", json!(1)),
            ("normalize_obs", json!(false)),
            ("critic_warmup", json!(warmup)),
        ] {
            cfg[key] = value;
        }
        let mut started = request(Algo::Ppo, cfg, scratch.join(format!("ppo{warmup}")));
        started.init = Some(cloned.clone());
        train(started).unwrap()
    };
    let (warmed, moved) = (ppo(2), ppo(1));
    let actions = |run: &Path| {
        let mut policy = Policy::load(run).unwrap();
        let dim = policy.env().observation_space().unwrap().flat_dim();
        (0..8)
            .flat_map(|k| {
                let obs: Vec<f32> = (0..dim)
                    .map(|i| ((i * 7 + k * 3) % 11) as f32 / 11.0 - 0.5)
                    .collect();
                policy
                    .action(&obs, proprio::ActMode::Deterministic)
                    .unwrap()
            })
            .collect::<Vec<f32>>()
    };
    let weights = |run: &Path| std::fs::read(run.join("checkpoint/model.bpk")).unwrap();
    assert_eq!(
        actions(&warmed),
        actions(&cloned),
        "the warm-up moved the actor"
    );
    assert_ne!(
        weights(&warmed),
        weights(&cloned),
        "the critic never learned"
    );
    assert_ne!(
        actions(&moved),
        actions(&cloned),
        "after the warm-up the actor never moved"
    );
}
