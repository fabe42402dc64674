//! Whole training runs, kept tiny: determinism, resume, and run directories;
//! checkpoints that act are in `checkpoints.rs`.

mod checkpoints;
mod curriculum;
#[path = "../../../../tests/support/scratch.rs"]
mod scratch;
use proprio::ActMode;
use proprio::serde_json::{self, Map, Value, json};
use proprio_learn::{Algo, ComputeDevice, EnvSource, Policy, TrainRequest, resume, train};
use scratch::Scratch;
use std::path::{Path, PathBuf};

fn request(algo: Algo, env: &str, overrides: Value, out: PathBuf) -> TrainRequest {
    TrainRequest {
        algo,
        env: EnvSource::new(env, Value::Null, Default::default()),
        seed: 7,
        device: ComputeDevice::Cpu,
        threads: Some(2),
        overrides: overrides.as_object().cloned().unwrap_or_default(),
        out: Some(out),
        video_every: None,
        init: None,
    }
}

/// Metrics rows without the wall-clock columns.
fn rows(run: &Path) -> Vec<Map<String, Value>> {
    std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut row: Map<String, Value> = serde_json::from_str(l).unwrap();
            for key in proprio_learn::WALL_CLOCK_COLUMNS {
                row.remove(key);
            }
            row
        })
        .collect()
}

/// No learning-rate anneal (as `tiny_ppo`): an annealed schedule follows `total_steps`,
/// which a resume to a larger total changes; `tuned.json` anneals the language tasks.
fn tiny_grpo() -> Value {
    json!({"group_size": 4, "groups": 4, "total_steps": 160, "eval_every": 80, "eval_episodes": 4, "d_model": 16, "n_heads": 2, "n_layers": 1, "d_ff": 32, "hidden": [16], "anneal_lr": false})
}

/// ArCHer on twenty questions: critic from the second iteration, actor from the fourth.
fn tiny_archer() -> Value {
    json!({"num_envs": 8, "batch_size": 16, "learning_starts": 8, "actor_starts": 24, "total_steps": 96, "log_every": 8, "eval_every": 48, "eval_episodes": 4, "d_model": 16, "n_heads": 2, "n_layers": 1, "d_ff": 32})
}

fn tiny_ppo() -> Value {
    json!({"num_steps": 32, "total_steps": 1024, "eval_every": 512, "eval_episodes": 2, "hidden": [16, 16], "anneal_lr": false})
}

/// SAC, TD3 and DSAC-T share these keys.
fn tiny_off_policy() -> Value {
    json!({"total_steps": 300, "learning_starts": 100, "batch_size": 32, "hidden": [16, 16], "eval_every": 150, "eval_episodes": 2})
}

/// A PPO run on pendulum in `dir/ppo`.
fn ppo_on_pendulum(dir: &Path, overrides: Value) -> PathBuf {
    train(request(
        Algo::Ppo,
        "classic/pendulum-v1",
        overrides,
        dir.join("ppo"),
    ))
    .unwrap()
}

#[test]
fn same_seed_gives_an_identical_metrics_file() {
    let dir = Scratch::new("learn-determinism");
    for (algo, env, overrides) in [
        (Algo::Ppo, "classic/cartpole-v1", tiny_ppo()),
        (
            Algo::Ppo,
            "classic/pendulum-v1",
            json!({"num_steps": 64, "num_minibatches": 4, "update_epochs": 2, "total_steps": 256, "eval_episodes": 2, "hidden": [16]}),
        ),
        (
            Algo::Sac,
            "classic/pendulum-v1",
            json!({"total_steps": 300, "learning_starts": 100, "batch_size": 32, "hidden": [16, 16], "eval_episodes": 2}),
        ),
        (Algo::Td3, "classic/pendulum-v1", tiny_off_policy()),
        (Algo::Dsac, "classic/pendulum-v1", tiny_off_policy()),
        (Algo::Grpo, "language/arithmetic-v0", tiny_grpo()),
        (Algo::Grpo, "language/jigsaw-v0", tiny_grpo()),
        (Algo::Grpo, "language/guess-number-v0", tiny_grpo()),
        (Algo::Ppo, "language/arithmetic-v0", tiny_grpo()),
        (Algo::Archer, "language/twenty-questions-v0", tiny_archer()),
        (
            Algo::Grpo,
            "classic/cartpole-v1",
            json!({"group_size": 2, "groups": 2, "total_steps": 300, "eval_every": 150, "eval_episodes": 2, "hidden": [16]}),
        ),
    ] {
        let a = train(request(
            algo,
            env,
            overrides.clone(),
            dir.join(format!("{env}-{algo:?}-a")),
        ))
        .unwrap();
        let b = train(request(
            algo,
            env,
            overrides,
            dir.join(format!("{env}-{algo:?}-b")),
        ))
        .unwrap();
        let (ra, rb) = (rows(&a), rows(&b));
        assert!(
            !ra.is_empty() && ra.iter().any(|r| r.contains_key("eval_return")),
            "{env} {algo:?}"
        );
        assert_eq!(ra, rb, "{env} {algo:?}: two runs with one seed differ");
    }
}

#[test]
fn resume_continues_where_an_uninterrupted_run_would_be() {
    let dir = Scratch::new("learn-resume");
    let whole = train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        tiny_ppo(),
        dir.join("whole"),
    ))
    .unwrap();
    let mut half = tiny_ppo();
    half["total_steps"] = json!(512);
    let part = train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        half,
        dir.join("part"),
    ))
    .unwrap();
    assert_eq!(rows(&part).len(), 4);
    resume(part.clone(), Some(1024)).unwrap();
    assert_eq!(
        rows(&part),
        rows(&whole),
        "weights, optimizer, envs and generator must all carry over"
    );
}

#[test]
fn an_off_policy_run_resumes_where_an_uninterrupted_run_would_be() {
    let dir = Scratch::new("learn-resume-off-policy");
    for algo in [Algo::Sac, Algo::Td3, Algo::Dsac] {
        let whole = train(request(
            algo,
            "classic/pendulum-v1",
            tiny_off_policy(),
            dir.join(format!("{algo:?}-whole")),
        ))
        .unwrap();
        let mut half = tiny_off_policy();
        half["total_steps"] = json!(150);
        let part = train(request(
            algo,
            "classic/pendulum-v1",
            half,
            dir.join(format!("{algo:?}-part")),
        ))
        .unwrap();
        resume(part.clone(), Some(300)).unwrap();
        // The part logged at its own end too; the rows at step 300 must agree.
        assert_eq!(
            rows(&part).last(),
            rows(&whole).last(),
            "{algo:?}: networks, targets, optimizers, replay, envs and generator carry over"
        );
        // The checkpoint acts as the policy the last evaluation measured.
        let last = rows(&whole)
            .iter()
            .rev()
            .find_map(|r| r["eval_return"].as_f64())
            .unwrap();
        let evaluation = Policy::load(&whole)
            .unwrap()
            .evaluate(2, 7 + 1_000_003, true)
            .unwrap();
        assert!(
            (evaluation.mean_return() - last).abs() < 1e-6,
            "{algo:?}: policy {} vs training evaluation {last}",
            evaluation.mean_return()
        );
    }
}

#[test]
fn a_group_run_resumes_where_an_uninterrupted_run_would_be() {
    let dir = Scratch::new("learn-resume-grpo");
    let mut config = tiny_grpo();
    config["kl_coef"] = json!(0.05);
    let whole = train(request(
        Algo::Grpo,
        "language/arithmetic-v0",
        config.clone(),
        dir.join("whole"),
    ))
    .unwrap();
    config["total_steps"] = json!(80);
    let part = train(request(
        Algo::Grpo,
        "language/arithmetic-v0",
        config,
        dir.join("part"),
    ))
    .unwrap();
    resume(part.clone(), Some(160)).unwrap();
    assert_eq!(
        rows(&part),
        rows(&whole),
        "policy, reference, optimizer, envs and generator carry over"
    );
    assert!(rows(&whole).iter().any(|r| r.contains_key("kl_ref")));
}

#[test]
fn an_archer_run_resumes_where_an_uninterrupted_run_would_be() {
    let dir = Scratch::new("learn-resume-archer");
    let env = "language/twenty-questions-v0";
    let whole = train(request(Algo::Archer, env, tiny_archer(), dir.join("whole"))).unwrap();
    let mut half = tiny_archer();
    half["total_steps"] = json!(48);
    let part = train(request(Algo::Archer, env, half, dir.join("part"))).unwrap();
    resume(part.clone(), Some(96)).unwrap();
    assert_eq!(
        rows(&part),
        rows(&whole),
        "actor, critics, targets, optimizers, replay, envs and generator carry over"
    );
    let last = rows(&whole).last().cloned().unwrap();
    assert!(last.contains_key("q_loss") && last.contains_key("policy_loss"));
    // The checkpoint answers as the policy the last evaluation measured.
    let evaluation = Policy::load(&whole)
        .unwrap()
        .evaluate(4, 7 + 1_000_003, true)
        .unwrap();
    let eval_return = last["eval_return"].as_f64().unwrap();
    assert!((evaluation.mean_return() - eval_return).abs() < 1e-6);
}

#[test]
fn a_group_run_does_not_depend_on_the_thread_count() {
    let dir = Scratch::new("learn-threads-grpo");
    let runs: Vec<_> = [1, 2]
        .into_iter()
        .map(|threads| {
            let mut r = request(
                Algo::Grpo,
                "language/jigsaw-v0",
                tiny_grpo(),
                dir.join(format!("t{threads}")),
            );
            r.threads = Some(threads);
            rows(&train(r).unwrap())
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn a_checkpoint_acts_like_the_policy_that_was_evaluated() {
    let dir = Scratch::new("learn-policy");
    let overrides = json!({"num_steps": 64, "num_minibatches": 4, "update_epochs": 2, "total_steps": 256, "eval_episodes": 3, "hidden": [16]});
    let run = ppo_on_pendulum(&dir, overrides);
    let last_eval = rows(&run)
        .iter()
        .rev()
        .find_map(|r| r["eval_return"].as_f64())
        .unwrap();
    let mut policy = Policy::load(&run).unwrap();
    let evaluation = policy.evaluate(3, 7 + 1_000_003, true).unwrap();
    assert_eq!(evaluation.success_rate, None, "pendulum reports no success");
    let mean = evaluation.mean_return();
    assert!(
        (mean - last_eval).abs() < 1e-6,
        "policy {mean} vs training evaluation {last_eval}: normalisation or weights differ"
    );
    let action = policy
        .action(&[1.0, 0.0, 0.0], ActMode::Deterministic)
        .unwrap();
    assert_eq!(action.len(), 1);
    assert!(
        Policy::load(&dir).is_err(),
        "a directory without run.json is refused"
    );
}

#[test]
fn a_run_directory_is_never_overwritten() {
    let dir = Scratch::new("learn-overwrite");
    let out = dir.join("run");
    train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        json!({"num_steps": 16, "total_steps": 64, "eval_episodes": 1, "hidden": [8]}),
        out.clone(),
    ))
    .unwrap();
    let before = std::fs::read_to_string(out.join("metrics.jsonl")).unwrap();
    let err = train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        json!({"total_steps": 64}),
        out.clone(),
    ))
    .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("metrics.jsonl")).unwrap(),
        before
    );
    let err = train(request(
        Algo::Sac,
        "classic/cartpole-v1",
        json!({}),
        dir.join("sac"),
    ))
    .unwrap_err();
    assert!(
        err.to_string().contains("SAC needs a box action space"),
        "{err}"
    );
    let mut pixels = request(
        Algo::Sac,
        "classic/pendulum-v1",
        json!({}),
        dir.join("sac-pixels"),
    );
    pixels.env.obs.mode = proprio::render::ObsMode::Rgb;
    let err = train(pixels).unwrap_err();
    assert!(
        err.to_string().contains("SAC has no image encoder"),
        "{err}"
    );
    let err = train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        json!({"learning_rat": 0.1}),
        dir.join("typo"),
    ))
    .unwrap_err();
    assert!(
        err.to_string().contains("unknown key 'learning_rat'"),
        "{err}"
    );
}

#[test]
fn the_exploration_noise_schedule_caps_the_policy_std() {
    let dir = Scratch::new("learn-noise-schedule");
    // Four rollouts; log σ is capped at −1, −2, −3, −4 after each, from 0.
    let overrides = json!({"num_steps": 64, "num_minibatches": 2, "update_epochs": 1, "total_steps": 256, "eval_every": 0, "eval_episodes": 1, "hidden": [8], "log_std_final": -4.0});
    let run = ppo_on_pendulum(&dir, overrides);
    // A 1-D Gaussian's entropy is log σ + ½ + ½ ln 2π; each update sees the previous cap.
    let half_ln_two_pi_e = 0.5 + 0.5 * (2.0 * std::f64::consts::PI).ln();
    let rows = rows(&run);
    assert_eq!(rows.len(), 4);
    for (k, row) in rows.iter().enumerate() {
        let log_std = row["entropy"].as_f64().unwrap() - half_ln_two_pi_e;
        assert!(
            (log_std + k as f64).abs() < 0.05,
            "rollout {k}: log σ {log_std}, cap {}",
            -(k as f64)
        );
    }
    let widening = json!({"total_steps": 256, "log_std_final": 1.0});
    let refused = train(request(
        Algo::Ppo,
        "classic/pendulum-v1",
        widening,
        dir.join("bad"),
    ));
    assert!(refused.is_err_and(|e| e.to_string().contains("log_std_final")));
}

/// Evaluation averages every key of the episodes' last `info`: on CartPole
/// (reward 1 per step) the mean `episode.length` is the mean return, and an
/// agent that always pushes left ends every episode within a few dozen steps.
#[test]
fn evaluation_averages_every_info_key_of_the_last_step() {
    let source = EnvSource::new("classic/cartpole-v1", Value::Null, Default::default());
    let mut left = |_: &[f32], actions: &mut [f32], _: ActMode| {
        actions.fill(0.0);
        Ok(())
    };
    let evaluation = proprio_learn::evaluate(&source, 6, 11, None, &mut left).unwrap();
    let length = evaluation.infos["episode.length"];
    assert_eq!(evaluation.returns.len(), 6);
    assert!(
        (length - evaluation.mean_return()).abs() < 1e-9,
        "{evaluation:?}"
    );
    assert!((8.0..40.0).contains(&length), "{evaluation:?}");
    assert!(
        (evaluation.infos["episode.return"] - evaluation.mean_return()).abs() < 1e-9,
        "{evaluation:?}"
    );
}

/// A run records its whole env config (a later change of a default cannot move
/// it); a run recorded before that is completed with its family's old
/// defaults: a manipulation run without `physics` stays on rapier.
#[test]
fn runs_record_every_env_default_and_old_manipulation_runs_stay_on_rapier() {
    let dir = Scratch::new("learn-env-config");
    let run = train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        tiny_ppo(),
        dir.join("new"),
    ))
    .unwrap();
    let (info, _, _) = proprio_learn::run::load_run(&run).unwrap();
    assert_eq!(info.format, proprio_learn::run::RUN_FORMAT);
    assert_eq!(
        info.env.config["max_episode_steps"], 500,
        "{:?}",
        info.env.config
    );

    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/old-runs/ppo-cartpole");
    let old = dir.join("old");
    std::fs::create_dir_all(old.join("checkpoint")).unwrap();
    // No manifest: its hashes would (rightly) call the edited run.json corrupt.
    let state = "checkpoint/state.json";
    std::fs::copy(fixture.join(state), old.join(state)).unwrap();
    let mut recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("run.json")).unwrap()).unwrap();
    assert!(
        recorded.get("format").is_none(),
        "the fixture predates the format"
    );
    recorded["env"]["id"] = json!("manipulation/reach-v0");
    recorded["env"]["config"] = json!({"control": "pd_ee_delta_pos"});
    std::fs::write(old.join("run.json"), recorded.to_string()).unwrap();
    let (info, _, _) = proprio_learn::run::load_run(&old).unwrap();
    assert_eq!(
        info.env.config,
        json!({"control": "pd_ee_delta_pos", "physics": "rapier"})
    );
}
