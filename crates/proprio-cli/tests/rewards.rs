//! The `proprio` binary with vision-language reward models: embeddings,
//! training on a model's reward (any learner), evaluation of what it paid,
//! and fitting CLIP; one-line errors for what it cannot do.

mod common;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use common::{assert_one_line_error, assert_success, proprio};
use scratch::Scratch;
use serde_json::Value;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `proprio embed` on the tiny checkpoint prints transformers' logit; bad
/// inputs are one line and exit 1.
#[test]
fn embed_prints_clip_embeddings_and_refuses_bad_inputs() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/clip-tiny");
    let image = format!("{fixture}/images/noise.png");
    let out = proprio(&[
        "embed",
        "--model",
        fixture,
        "--text",
        "a diagram",
        "--image",
        &image,
        "--json",
    ]);
    assert_success(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["input_ids"][0],
        serde_json::json!([998, 320, 570, 602, 559, 332, 999])
    );
    assert_eq!(report["text_embeds"][0].as_array().unwrap().len(), 16);
    // transformers: logits_per_image[0][0] = 4.222069 (assets/clip-tiny/expected.json).
    let logit = report["logits_per_image"][0][0].as_f64().unwrap();
    assert!((logit - 4.222_069).abs() < 1e-4, "{logit}");
    assert_one_line_error(
        &proprio(&["embed", "--model", "/no/such/model", "--text", "x"]),
        "not a model directory",
    );
    assert_one_line_error(
        &proprio(&["embed", "--model", fixture]),
        "at least one --text or --image",
    );
    assert_one_line_error(
        &proprio(&["embed", "--model", fixture, "--image", "/no/such.png"]),
        "/no/such.png",
    );
}

/// A VLM-RM reward on the tiny CLIP ("a pole upright"), written into `dir`; returns its path.
fn vlm_rm_reward(dir: &std::path::Path) -> String {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/clip-tiny");
    write(
        dir,
        "reward.toml",
        &format!("kind = \"vlm-rm\"\nmodel = \"{fixture}\"\ngoal = \"a pole upright\"\n"),
    )
}

/// Trains cart-pole briefly on the reward `reward` (a TOML file) into `run`;
/// false when skipped for want of a wgpu adapter (unless `PROPRIO_REQUIRE_GPU`).
fn train_on_reward(reward: &str, run: &std::path::Path) -> bool {
    let ppo = [
        "--total-steps",
        "256",
        "--set",
        "num_envs=4",
        "--set",
        "num_steps=32",
    ];
    train_on_reward_with(reward, run, &ppo)
}

/// Trains on cartpole under the reward model `reward` with the learner
/// arguments `learner`; false (skipped) without a wgpu adapter.
fn train_on_reward_with(reward: &str, run: &std::path::Path, learner: &[&str]) -> bool {
    let mut args = vec!["train", "--env", "classic/cartpole-v1", "--reward", reward];
    args.extend_from_slice(learner);
    args.extend_from_slice(&["--set", "eval_episodes=3", "--out", run.to_str().unwrap()]);
    let out = proprio(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no GPU adapter") && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() {
        eprintln!("skipped: {stderr}");
        return false;
    }
    assert_success(&out);
    true
}

/// `proprio eval --checkpoint RUN --episodes 3 --json` with `extra` flags, parsed.
fn eval_json(run: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "eval",
        "--checkpoint",
        run.to_str().unwrap(),
        "--episodes",
        "3",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = proprio(&args);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `train --reward` with the tiny CLIP: the run trains on the model's reward,
/// and `eval` reports the task's return and the model's under its own key;
/// a bad reward config is one line. Skipped without a wgpu adapter unless
/// `PROPRIO_REQUIRE_GPU` is set.
#[test]
fn train_on_a_vision_language_reward_and_eval_reports_both_returns() {
    let dir = Scratch::new("cli-reward");
    let bad = write(&dir, "bad.toml", "kind = \"vlm-rm\"\nalpha = 0.3\n");
    assert_one_line_error(
        &proprio(&["train", "--env", "classic/cartpole-v1", "--reward", &bad]),
        "needs goal",
    );
    let reward = vlm_rm_reward(&dir);
    let run = dir.join("run");
    if !train_on_reward(&reward, &run) {
        return;
    }
    let report = eval_json(&run, &[]);
    let returns = report["returns"].as_array().unwrap();
    let model = report["model_returns"].as_array().unwrap();
    assert_eq!((returns.len(), model.len()), (3, 3));
    for (task, model) in returns.iter().zip(model) {
        let (task, model) = (task.as_f64().unwrap(), model.as_f64().unwrap());
        assert!(
            task >= 1.0 && task.fract() == 0.0,
            "cartpole's own return counts steps: {task}"
        );
        assert!(
            model.abs() <= task + 1e-6 && model != task,
            "VLM-RM pays |r| ≤ 1 a step: {model}"
        );
    }
    assert!(report["mean_model_return"].is_number());
}

/// A resumed run's `reward_share` is the reward's share of the resumed
/// session's time: its cost counters start again with the process, so
/// dividing by the run's whole time (here an earlier session made to last
/// 10⁶ s, its checkpoint resealed) would read about 0.
#[test]
fn a_resumed_runs_reward_share_is_over_its_own_session() {
    let dir = Scratch::new("cli-reward-resume");
    let reward = vlm_rm_reward(&dir);
    let run = dir.join("run");
    if !train_on_reward(&reward, &run) {
        return;
    }
    let state = run.join("checkpoint/state.json");
    let mut saved: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    saved["elapsed_s"] = 1e6.into();
    std::fs::write(&state, saved.to_string()).unwrap();
    proprio_learn::run::integrity::seal(&run.join("checkpoint")).unwrap();
    let resumed = proprio(&[
        "train",
        "--resume",
        run.to_str().unwrap(),
        "--total-steps",
        "512",
    ]);
    assert_success(&resumed);
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let last: Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
    assert!(last["time_s"].as_f64().unwrap() > 1e6, "{last}");
    let share = last["reward_share"].as_f64().unwrap();
    assert!(share > 1e-3 && share < 1.0, "{last}");
}

/// `train --device wgpu` runs the reward model's CLIP on wgpu too (lavapipe
/// in CI), and it pays what the CPU's pays: the same checkpoint evaluated
/// with `--device cpu` reads the same model returns.
#[test]
fn a_reward_model_runs_on_the_runs_network_device() {
    let dir = Scratch::new("cli-reward-wgpu");
    let reward = vlm_rm_reward(&dir);
    let run = dir.join("run");
    let ppo = [
        "--device",
        "wgpu",
        "--total-steps",
        "128",
        "--set",
        "num_envs=4",
    ];
    if !train_on_reward_with(&reward, &run, &ppo) {
        return;
    }
    let (wgpu, cpu) = (eval_json(&run, &[]), eval_json(&run, &["--device", "cpu"]));
    assert_eq!(wgpu["returns"], cpu["returns"], "the same episodes");
    let models = |r: &Value| -> Vec<f64> {
        let returns = r["model_returns"].as_array().unwrap();
        returns.iter().map(|v| v.as_f64().unwrap()).collect()
    };
    for (w, c) in models(&wgpu).into_iter().zip(models(&cpu)) {
        assert!(
            (w - c).abs() <= 1e-3 * c.abs().max(1.0),
            "wgpu {w} against cpu {c}"
        );
    }
}

/// A preference reward on the tiny CLIP, labelled by the oracle: 20 pairs
/// of 4-frame segments every 200 steps; returns the config's path.
fn oracle_preference(dir: &std::path::Path) -> String {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/clip-tiny");
    write(
        dir,
        "reward.toml",
        &format!(
            "kind = \"preference\"\nmodel = \"{fixture}\"\nlabeller = \"oracle\"\n\
             segment = 4\nqueries = 20\nquery_every = 200\n"
        ),
    )
}

/// A preference reward's `r_ψ` is saved with the checkpoint: evaluation in
/// training and `proprio eval` pay what it learned. Training labels its first
/// pairs after 200 frames; three short evaluation episodes never reach that,
/// so a head that did not load `r_ψ` would pay 0 throughout. Skipped without
/// a wgpu adapter unless `PROPRIO_REQUIRE_GPU` is set.
#[test]
fn a_preference_rewards_model_is_checkpointed_and_evaluated() {
    let dir = Scratch::new("cli-preference");
    let reward = oracle_preference(&dir);
    let run = dir.join("run");
    if !train_on_reward(&reward, &run) {
        return;
    }
    assert!(run.join("checkpoint/reward_net.bpk").is_file());
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let last: Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
    let in_training = last["eval_model_return"].as_f64().unwrap();
    // What rendering and embedding cost, logged with every row.
    let share = last["reward_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{last}");
    assert!(last["reward_render_ms"].as_f64().unwrap() > 0.0);
    assert!(last["reward_embed_ms"].as_f64().unwrap() > 0.0);
    let report = eval_json(&run, &[]);
    let model = report["mean_model_return"].as_f64().unwrap();
    assert!(model != 0.0, "the saved r_ψ pays a reward: {report}");
    assert!(
        in_training != 0.0,
        "evaluation during training pays it too: {last}"
    );
}

/// The group learner checkpoints and evaluates a learning reward head as the
/// actor-critic learners do: `reward_net.bpk` is in its checkpoint, and both
/// its evaluation in training and `proprio eval` pay the saved `r_ψ` (three
/// evaluation episodes of a fresh head, which labels nothing before 200
/// frames, would pay 0).
#[test]
fn a_group_learner_checkpoints_and_evaluates_a_preference_reward() {
    let dir = Scratch::new("cli-preference-grpo");
    let reward = oracle_preference(&dir);
    let run = dir.join("run");
    let grpo = [
        "--algo",
        "grpo",
        "--total-steps",
        "400",
        "--set",
        "group_size=2",
        "--set",
        "groups=2",
        "--set",
        "hidden=[16]",
    ];
    if !train_on_reward_with(&reward, &run, &grpo) {
        return;
    }
    assert!(run.join("checkpoint/reward_net.bpk").is_file());
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let last: Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
    assert!(last["reward_share"].as_f64().unwrap() > 0.0, "{last}");
    let in_training = last["eval_model_return"].as_f64().unwrap();
    assert!(
        in_training != 0.0,
        "evaluation in training pays r_ψ: {last}"
    );
    let report = eval_json(&run, &[]);
    assert!(
        report["mean_model_return"].as_f64().unwrap() != 0.0,
        "the saved r_ψ pays a reward: {report}"
    );
}

/// `reward-model fit-clip` refuses what it cannot do in one line: an env
/// without captions, an existing output directory, a patch that does not
/// divide the image.
#[test]
fn fit_clip_refuses_bad_requests_in_one_line() {
    let dir = Scratch::new("cli-fit-clip");
    let out = dir.join("model");
    let out = out.to_str().unwrap();
    assert_one_line_error(
        &proprio(&[
            "reward-model",
            "fit-clip",
            "--env",
            "drones/hover-v0",
            "--out",
            out,
        ]),
        "no captions",
    );
    assert_one_line_error(
        &proprio(&[
            "reward-model",
            "fit-clip",
            "--env",
            "classic/cartpole-v1",
            "--out",
            out,
            "--image-size",
            "60",
            "--patch-size",
            "8",
            "--frames",
            "16",
        ]),
        "not a multiple of patch_size",
    );
    std::fs::create_dir_all(out).unwrap();
    assert_one_line_error(
        &proprio(&[
            "reward-model",
            "fit-clip",
            "--env",
            "classic/cartpole-v1",
            "--out",
            out,
        ]),
        "already exists",
    );
}
