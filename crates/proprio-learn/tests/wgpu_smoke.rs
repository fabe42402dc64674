//! A few PPO updates on burn's wgpu backend (lavapipe in CI): the loss stays
//! finite and the weights move. Skipped on a machine with no wgpu adapter,
//! unless `PROPRIO_REQUIRE_GPU` is set (CI sets it and installs lavapipe).
#![cfg(feature = "wgpu")]

#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use burn::prelude::*;
use proprio::serde_json::{self, Value, json};
use proprio_learn::ppo::{Ppo, PpoConfig};
use proprio_learn::{Algo, ComputeDevice, EnvSource, Policy, TrainRequest, train};
use scratch::Scratch;

#[test]
fn ppo_updates_on_the_wgpu_backend() {
    let device = match ComputeDevice::Wgpu.device() {
        Ok(device) => device,
        Err(e) if std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("PROPRIO_REQUIRE_GPU is set but: {e}"),
    };
    let dir = Scratch::new("wgpu-smoke");
    let overrides = json!({"num_envs": 2, "num_steps": 16, "num_minibatches": 2, "update_epochs": 2,
                           "total_steps": 64, "hidden": [8], "eval_every": 0, "eval_episodes": 1});
    let source = EnvSource::new("classic/cartpole-v1", Value::Null, Default::default());
    let run = train(TrainRequest {
        algo: Algo::Ppo,
        env: source.clone(),
        seed: 5,
        device: ComputeDevice::Wgpu,
        threads: Some(1),
        overrides: overrides.as_object().cloned().unwrap_or_default(),
        out: Some(dir.join("run")),
        video_every: None,
        init: None,
    })
    .unwrap();
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "two PPO iterations");
    for row in &rows {
        for key in ["policy_loss", "value_loss", "entropy"] {
            assert!(
                row[key].as_f64().is_some_and(f64::is_finite),
                "{key} = {}",
                row[key]
            );
        }
    }
    // The same seed gives the same initial weights (drawn on the host), so an
    // untrained learner shows where training started.
    let cfg: PpoConfig = serde_json::from_value(json!({
        "num_envs": 2, "num_steps": 16, "num_minibatches": 2, "update_epochs": 2, "total_steps": 64,
        "hidden": [8], "eval_every": 0, "eval_episodes": 1, "learning_rate": 2.5e-4, "anneal_lr": true,
        "gamma": 0.99, "gae_lambda": 0.95, "norm_adv": true, "clip_coef": 0.2, "clip_vloss": true,
        "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": null, "normalize": false,
        "adam_eps": 1e-5
    }))
    .unwrap();
    let untrained = Ppo::new(source, cfg, 5, device.clone(), Some(1)).unwrap();
    let obs = Tensor::<2>::from_data(
        TensorData::new(vec![0.01f32, -0.2, 0.03, 0.4], [1, 4]),
        &device.autodiff(),
    );
    let before: Vec<f32> = untrained
        .agent()
        .critic
        .forward(obs.clone())
        .into_data()
        .try_into_vec()
        .unwrap();
    let mut policy = Policy::load(&run).unwrap();
    assert_eq!(
        policy
            .action(&[0.01, -0.2, 0.03, 0.4], proprio::ActMode::Deterministic)
            .unwrap()
            .len(),
        1
    );
    let trained = proprio_learn::base::store::load_module(
        untrained.agent().clone(),
        &run.join("checkpoint/model.bpk"),
    )
    .unwrap();
    let after: Vec<f32> = trained
        .critic
        .forward(obs)
        .into_data()
        .try_into_vec()
        .unwrap();
    assert!(
        after[0].is_finite() && after[0] != before[0],
        "weights did not change: {before:?} -> {after:?}"
    );
}
