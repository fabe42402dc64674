//! Checkpoints that act: a loaded `Policy` answers as the run's last
//! evaluation measured, old checkpoints still load, and `--init` starts
//! from exactly the given weights.

use super::*;

#[test]
fn a_group_checkpoint_answers_like_the_policy_that_was_evaluated() {
    let dir = Scratch::new("learn-policy-grpo");
    let run = train(request(
        Algo::Grpo,
        "language/jigsaw-v0",
        tiny_grpo(),
        dir.join("grpo"),
    ))
    .unwrap();
    let last = rows(&run)
        .into_iter()
        .rev()
        .find(|r| r.contains_key("eval_return"))
        .unwrap();
    let mut policy = Policy::load(&run).unwrap();
    let evaluation = policy.evaluate(4, 7 + 1_000_003, true).unwrap();
    assert!((evaluation.mean_return() - last["eval_return"].as_f64().unwrap()).abs() < 1e-9);
    assert_eq!(evaluation.success_rate, last["eval_success"].as_f64());
    // The keys and values it kept from those episodes do not leak into the next ones.
    let again = policy.evaluate(4, 7 + 1_000_003, true).unwrap();
    assert_eq!(again.returns, evaluation.returns);
    // A grey picture with two pieces placed: the next slot is one token of 0..5.
    let mut obs = vec![128.0; 16 * 16 * 3];
    obs.extend([1.0, 2.0, 0.0, 0.0]);
    let answer = policy.action(&obs, ActMode::Deterministic).unwrap();
    assert_eq!(answer.len(), 1);
    assert!((0.0..5.0).contains(&answer[0]) && answer[0].fract() == 0.0);
}

/// Run directories written before checkpoints described their policy
/// (`policy.json`) still load: recorded with the learners of that time, each
/// acts as its last evaluation measured (same seed stream, same episodes).
#[test]
fn checkpoints_from_before_policy_json_still_load_and_act_as_evaluated() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/old-runs");
    let dir = Scratch::new("learn-old-runs");
    for name in [
        "ppo-cartpole",
        "sac-pendulum",
        "td3-pendulum",
        "grpo-cartpole",
        "grpo-arithmetic",
    ] {
        // A copy: loading may repair a half-swapped checkpoint, and the fixtures stay as recorded.
        let run = dir.join(name);
        std::fs::create_dir_all(run.join("checkpoint")).unwrap();
        for sub in ["", "checkpoint"] {
            for entry in std::fs::read_dir(fixtures.join(name).join(sub)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    std::fs::copy(&path, run.join(sub).join(path.file_name().unwrap())).unwrap();
                }
            }
        }
        assert!(!run.join("checkpoint/policy.json").exists());
        let rows = rows(&run);
        let recorded = rows
            .iter()
            .rev()
            .find_map(|r| r.get("eval_return").and_then(Value::as_f64))
            .unwrap();
        let episodes =
            serde_json::from_str::<Value>(&std::fs::read_to_string(run.join("run.json")).unwrap())
                .unwrap()["config"]["eval_episodes"]
                .as_u64()
                .unwrap() as usize;
        let evaluation = Policy::load(&run)
            .unwrap()
            .evaluate(episodes, 7 + 1_000_003, true)
            .unwrap();
        assert!(
            (evaluation.mean_return() - recorded).abs() < 1e-6,
            "{name}: loaded policy {} vs recorded evaluation {recorded}",
            evaluation.mean_return()
        );
    }
}

/// The bytes of a run's last weights.
fn weights(run: &Path) -> Vec<u8> {
    std::fs::read(run.join("checkpoint").join("model.bpk")).unwrap()
}

#[test]
fn init_starts_from_exactly_the_given_weights() {
    let scratch = Scratch::new("init");
    for (algo, env, tiny) in [
        (Algo::Ppo, "classic/cartpole-v1", tiny_ppo()),
        (Algo::Grpo, "classic/cartpole-v1", tiny_grpo()),
    ] {
        let name = algo.name();
        let source = train(request(algo, env, tiny.clone(), scratch.join(name))).unwrap();
        // Steps of 1e-30 are below a float's resolution at these weights: the run ends where it began.
        let mut frozen = tiny.clone();
        frozen["learning_rate"] = json!(1e-30);
        let mut started = request(
            algo,
            env,
            frozen.clone(),
            scratch.join(format!("{name}-init")),
        );
        started.init = Some(source.clone());
        let run = train(started).unwrap();
        assert_eq!(
            weights(&run),
            weights(&source),
            "{name}: not the given weights"
        );
        let cold = train(request(
            algo,
            env,
            frozen,
            scratch.join(format!("{name}-cold")),
        ))
        .unwrap();
        assert_ne!(
            weights(&cold),
            weights(&source),
            "{name}: the check cannot fail"
        );
        let recorded: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
        assert_eq!(
            recorded["init"],
            json!(source),
            "{name}: run.json names its start"
        );
    }
}

#[test]
fn init_refuses_another_env_or_network() {
    let scratch = Scratch::new("init-refused");
    let source = train(request(
        Algo::Ppo,
        "classic/cartpole-v1",
        tiny_ppo(),
        scratch.join("a"),
    ))
    .unwrap();
    let mut other_env = request(
        Algo::Ppo,
        "classic/pendulum-v1",
        tiny_ppo(),
        scratch.join("b"),
    );
    other_env.init = Some(source.clone());
    let mut wider = tiny_ppo();
    wider["hidden"] = json!([32, 32]);
    let mut other_net = request(Algo::Ppo, "classic/cartpole-v1", wider, scratch.join("c"));
    other_net.init = Some(source);
    for (request, says) in [
        (other_env, "other observations"),
        (other_net, "is not this run's"),
    ] {
        let error = train(request).unwrap_err().to_string();
        assert!(error.contains("--init") && error.contains(says), "{error}");
    }
}
