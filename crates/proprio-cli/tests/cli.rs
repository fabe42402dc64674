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
            "language/twenty-questions-v0",
            "manipulation/instruct-v0",
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
fn bench_suite_measures_every_family_and_the_panda_on_both_engines() {
    let out = proprio(&["bench", "--suite", "--seconds", "0.05", "--json"]);
    assert_success(&out);
    let rows: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (ratio, rows) = rows.split_last().unwrap();
    let families: Vec<&str> = rows
        .iter()
        .map(|r| r["env"].as_str().unwrap().split('/').next().unwrap())
        .collect();
    assert_eq!(
        families,
        [
            "classic",
            "drones",
            "driving",
            "language",
            "manipulation",
            "manipulation"
        ]
    );
    let engines: Vec<&Value> = rows.iter().map(|r| &r["physics"]).collect();
    assert_eq!(
        engines[4..],
        [&Value::from("kernel"), &Value::from("rapier")]
    );
    for row in rows {
        assert!(row["steps"].as_u64().unwrap() >= 1, "{row}");
        assert!(row["seconds"].as_f64().unwrap() >= 0.05, "{row}");
        assert!(row["env_steps_per_s"].as_f64().unwrap() > 0.0, "{row}");
    }
    let speed = |i: usize| rows[i]["env_steps_per_s"].as_f64().unwrap();
    let expected = speed(4) / speed(5);
    assert!((ratio["kernel_over_rapier"].as_f64().unwrap() - expected).abs() < 1e-9 * expected);
    assert_one_line_error(
        &proprio(&["bench", "--suite", "--seconds", "0"]),
        "--seconds",
    );
    // A usage error is clap's: exit status 2, the usage after it.
    let both = proprio(&["bench", "--suite", "--env", "classic/cartpole-v1"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
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
