//! The `proprio` binary as a user runs it: outputs, and one-line errors with a non-zero exit.

mod common;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use common::{assert_one_line_error, assert_success, proprio};
use scratch::Scratch;
use serde_json::Value;
use std::process::{Command, Output};

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn list_json_names_every_env_with_its_spaces() {
    let out = proprio(&["list", "--json"]);
    assert!(out.status.success());
    let rows: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "classic/cartpole-v1",
            "classic/pendulum-v1",
            "driving/highway-v0",
            "driving/lane-keep-v0",
            "driving/parking-v0",
            "driving/racing-v0",
            "drones/gates-v0",
            "drones/hover-v0",
            "drones/waypoints-v0",
            "language/arithmetic-v0",
            "language/guess-number-v0",
            "language/jigsaw-v0",
            "manipulation/pick-cube-v0",
            "manipulation/push-cube-v0",
            "manipulation/reach-v0",
            "manipulation/stack-cube-v0"
        ]
    );
    assert_eq!(rows[0]["action_space"]["type"], "discrete");
    assert_eq!(rows[0]["observation_space"]["high"][1], "inf");
    assert_eq!(rows[1]["max_episode_steps"], 200);
}

#[test]
fn info_shows_reward_termination_and_config_keys() {
    let out = proprio(&["info", "classic/cartpole-v1"]);
    let text = stdout(&out);
    for needle in [
        "Discrete(2)",
        "terminated when |x| > 2.4",
        "sutton_barto_reward = false",
        "max_episode_steps = 500",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let out = proprio(&[
        "info",
        "classic/pendulum-v1",
        "--json",
        "--config",
        r#"{"g": 9.81}"#,
    ]);
    let spec: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(spec["config"]["g"], 9.81);
}

#[test]
fn rollout_from_a_gymnasium_state_reproduces_gymnasium() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../envs/classic/tests/fixtures/cartpole-v1.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let episode = &fixture["episodes"][0];
    let dir = Scratch::new("cli-replay");
    let state = write(
        &dir,
        "state.json",
        &serde_json::json!({ "state": episode["initial_state"] }).to_string(),
    );
    let actions = write(&dir, "actions.json", &episode["actions"].to_string());
    let out = proprio(&[
        "rollout",
        "--env",
        "classic/cartpole-v1",
        "--restore",
        &state,
        "--actions",
        &actions,
    ]);
    assert_success(&out);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steps = episode["steps"].as_array().unwrap();
    assert_eq!(
        lines.len(),
        steps.len() + 1,
        "step 0 plus one line per action"
    );
    for (line, expected) in lines[1..].iter().zip(steps) {
        for (a, b) in line["obs"]
            .as_array()
            .unwrap()
            .iter()
            .zip(expected["obs"].as_array().unwrap())
        {
            assert!((a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-5);
        }
        assert_eq!(line["terminated"], expected["terminated"]);
    }
}

#[test]
fn rollout_writes_one_line_per_env_per_step_and_never_overwrites() {
    let dir = Scratch::new("cli-out");
    let out_path = dir.join("rollout.jsonl");
    let out_arg = out_path.to_str().unwrap();
    let args = [
        "rollout",
        "--env",
        "classic/pendulum-v1",
        "--random",
        "--num-envs",
        "3",
        "--steps",
        "4",
        "--out",
        out_arg,
    ];
    assert!(proprio(&args).status.success());
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert_eq!(text.lines().count(), 3 * 5);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (last["step"].as_u64(), last["env"].as_u64()),
        (Some(4), Some(2))
    );
    assert_one_line_error(&proprio(&args), "already exists; pass --force");
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap(),
        text,
        "the existing file is untouched"
    );
    let mut forced = args.to_vec();
    forced.push("--force");
    assert!(proprio(&forced).status.success());
}

#[test]
fn bad_action_files_fail_with_one_line() {
    let dir = Scratch::new("cli-bad");
    let cases = [
        ("malformed.json", "[1, 0, 1", "not valid JSON"),
        (
            "object.json",
            r#"{"actions": [1]}"#,
            "expected a JSON array",
        ),
        (
            "range.json",
            "[1, 0, 2]",
            "step 2: invalid action for Discrete(2): component 0 is 2",
        ),
        (
            "text.json",
            r#"[1, "left"]"#,
            r#"step 1: "left" is not a number"#,
        ),
        ("fraction.json", "[0.5]", "whole numbers"),
        ("length.json", "[[0, 1]]", "expected 1 component(s), got 2"),
    ];
    for (name, text, needle) in cases {
        let path = write(&dir, name, text);
        let out = proprio(&[
            "rollout",
            "--env",
            "classic/cartpole-v1",
            "--actions",
            &path,
        ]);
        assert_one_line_error(&out, needle);
    }
    let out = proprio(&[
        "rollout",
        "--env",
        "classic/cartpole-v1",
        "--actions",
        "/nonexistent/a.json",
    ]);
    assert_one_line_error(&out, "cannot read /nonexistent/a.json");
    let out = proprio(&["rollout", "--env", "classic/cartpol-v1", "--random"]);
    assert_one_line_error(&out, "did you mean 'classic/cartpole-v1'");
    let out = proprio(&[
        "rollout",
        "--env",
        "classic/pendulum-v1",
        "--random",
        "--config",
        r#"{"gravity": 1}"#,
    ]);
    assert_one_line_error(&out, "unknown field `gravity`");
    let state = write(&dir, "state.json", r#"{"state": [1.0]}"#);
    let out = proprio(&[
        "rollout",
        "--env",
        "classic/cartpole-v1",
        "--random",
        "--restore",
        &state,
    ]);
    assert_one_line_error(&out, "invalid state");
}

#[test]
fn bench_json_reports_the_documented_fields() {
    let out = proprio(&[
        "bench",
        "--env",
        "classic/cartpole-v1",
        "--num-envs",
        "64",
        "--steps",
        "50",
        "--threads",
        "2",
        "--json",
    ]);
    assert!(out.status.success());
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    for key in [
        "env_steps_per_s",
        "env_steps_per_s_per_core",
        "physics_steps_per_s",
        "physics_steps_per_s_per_core",
    ] {
        assert!(report[key].as_f64().unwrap() > 0.0, "{key}");
    }
    assert_eq!(report["num_envs"], 64);
    assert_eq!(report["threads"], 2);
    let per_core = report["env_steps_per_s_per_core"].as_f64().unwrap();
    assert!((report["env_steps_per_s"].as_f64().unwrap() / 2.0 - per_core).abs() < 1e-6 * per_core);
    assert_one_line_error(
        &proprio(&["bench", "--env", "classic/cartpole-v1", "--threads", "0"]),
        "--threads",
    );
}

#[test]
fn eval_runs_the_scripted_drone_controller() {
    let out = proprio(&[
        "eval",
        "--env",
        "drones/hover-v0",
        "--policy",
        "scripted",
        "--episodes",
        "8",
        "--json",
    ]);
    assert_success(&out);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["success_rate"], 1.0, "{report}");
    assert_eq!(report["returns"].as_array().unwrap().len(), 8);
    let out = proprio(&[
        "eval",
        "--env",
        "classic/cartpole-v1",
        "--policy",
        "scripted",
    ]);
    assert_one_line_error(&out, "has no scripted controller");
}

#[test]
fn a_missing_gpu_adapter_is_one_line_naming_the_fix() {
    // Metal does not exist on Linux: wgpu finds no adapter, as on a machine without a driver.
    let out = Command::new(env!("CARGO_BIN_EXE_proprio"))
        .args([
            "bench",
            "--env",
            "drones/hover-v0",
            "--num-envs",
            "8",
            "--backend",
            "gpu",
        ])
        .env("WGPU_BACKEND", "metal")
        .output()
        .unwrap();
    assert_one_line_error(&out, "apt-get install mesa-vulkan-drivers libvulkan1");
    let out = proprio(&["bench", "--env", "classic/cartpole-v1", "--backend", "gpu"]);
    assert_one_line_error(&out, "runs on the cpu backend only");
}

#[test]
fn group_learner_settings_it_cannot_use_are_one_line_errors() {
    let dir = Scratch::new("cli-grpo");
    let out = |name: &str| dir.join(name).to_string_lossy().into_owned();
    for (args, needle) in [
        (
            vec![
                "--env",
                "language/arithmetic-v0",
                "--algo",
                "grpo",
                "--set",
                "group_size=1",
            ],
            "group_size must be at least 2",
        ),
        (
            vec!["--env", "language/jigsaw-v0", "--algo", "sac"],
            "SAC needs a box action space",
        ),
        (
            vec![
                "--env",
                "language/jigsaw-v0",
                "--algo",
                "grpo",
                "--set",
                "advantage=median",
            ],
            "unknown variant",
        ),
        (
            vec![
                "--env",
                "language/jigsaw-v0",
                "--algo",
                "grpo",
                "--set",
                "patch=5",
            ],
            "cannot be cut into 5x5 patches",
        ),
    ] {
        let mut full = vec!["train", "--out"];
        let o = out(needle);
        full.push(&o);
        full.extend(args);
        assert_one_line_error(&proprio(&full), needle);
    }
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

/// `proprio eval --checkpoint RUN --episodes 3 --json`, parsed.
fn eval_json(run: &std::path::Path) -> Value {
    let out = proprio(&[
        "eval",
        "--checkpoint",
        run.to_str().unwrap(),
        "--episodes",
        "3",
        "--json",
    ]);
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
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/clip-tiny");
    let bad = write(&dir, "bad.toml", "kind = \"vlm-rm\"\nalpha = 0.3\n");
    assert_one_line_error(
        &proprio(&["train", "--env", "classic/cartpole-v1", "--reward", &bad]),
        "needs goal",
    );
    let reward = write(
        &dir,
        "reward.toml",
        &format!("kind = \"vlm-rm\"\nmodel = \"{fixture}\"\ngoal = \"a pole upright\"\n"),
    );
    let run = dir.join("run");
    if !train_on_reward(&reward, &run) {
        return;
    }
    let report = eval_json(&run);
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
    let report = eval_json(&run);
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
    let report = eval_json(&run);
    assert!(
        report["mean_model_return"].as_f64().unwrap() != 0.0,
        "the saved r_ψ pays a reward: {report}"
    );
}

/// A schedule under which the learner never updates is refused before any
/// step: TD3 with CleanRL's `learning_starts` of 25,000 and 25,000 steps.
#[test]
fn a_schedule_that_never_learns_is_a_one_line_error() {
    let dir = Scratch::new("cli-schedule");
    let out = proprio(&[
        "train",
        "--env",
        "classic/pendulum-v1",
        "--algo",
        "td3",
        "--total-steps",
        "25000",
        "--out",
        dir.join("run").to_str().unwrap(),
    ]);
    assert_one_line_error(&out, "learning_starts");
    assert!(!dir.join("run").exists(), "no run directory is left behind");
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
