//! What `docs/reliability.md` promises, as a user meets it: an oversized batch
//! is refused before allocating, random actions do not depend on the batch
//! size, a corrupt checkpoint is refused naming the file, a training process
//! killed at any moment resumes from what is on disk, and any JSON the user
//! hands the CLI is an error line or a run, never a panic.

#[path = "../../../tests/support/any_json.rs"]
mod any_json;
mod common;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use any_json::any_json;
use common::{assert_one_line_error, assert_success, proprio};
use proptest::prelude::*;
use scratch::Scratch;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[test]
fn an_oversized_batch_is_refused_naming_its_size() {
    let out = proprio(&[
        "bench",
        "--env",
        "classic/cartpole-v1",
        "--num-envs",
        "100000000000",
    ]);
    assert_one_line_error(
        &out,
        "a batch of 100000000000 classic/cartpole-v1 envs needs",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("TB of memory, but only") && err.contains("available"),
        "{err}"
    );
    let out = proprio(&[
        "train",
        "--env",
        "classic/pendulum-v1",
        "--algo",
        "sac",
        "--set",
        "buffer_size=100000000000",
        "--total-steps",
        "100000000000",
    ]);
    assert_one_line_error(&out, "a replay buffer of");
}

fn rollout_obs(num_envs: &str, scratch: &Path) -> Vec<Vec<f64>> {
    let path = scratch.join(format!("r{num_envs}.jsonl"));
    let out = proprio(&[
        "rollout",
        "--env",
        "classic/pendulum-v1",
        "--random",
        "--num-envs",
        num_envs,
        "--steps",
        "20",
        "--seed",
        "3",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_success(&out);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["env"] == 0)
        .map(|v| serde_json::from_value(v["obs"].clone()).unwrap())
        .collect()
}

#[test]
fn random_rollouts_of_env_0_do_not_depend_on_the_batch_size() {
    let scratch = Scratch::new("random-batch");
    let one = rollout_obs("1", &scratch);
    assert_eq!(one.len(), 21);
    assert_eq!(one, rollout_obs("7", &scratch));
}

fn train_tiny(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "train",
        "--env",
        "classic/cartpole-v1",
        "--total-steps",
        "2048",
        "--threads",
        "1",
        "--set",
        "num_envs=4",
        "--set",
        "num_steps=16",
        "--set",
        "eval_every=64",
        "--set",
        "eval_episodes=1",
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    proprio(&args)
}

#[test]
fn a_checkpoint_with_a_flipped_bit_is_refused_naming_the_file() {
    let scratch = Scratch::new("bitflip");
    let run = scratch.join("run");
    let out = train_tiny(&run, &[]);
    assert_success(&out);
    let model = run.join("checkpoint").join("model.bpk");
    let mut bytes = std::fs::read(&model).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0b0000_0100;
    std::fs::write(&model, bytes).unwrap();
    let run_arg = run.to_str().unwrap();
    for args in [
        vec!["eval", "--checkpoint", run_arg, "--episodes", "1"],
        vec!["train", "--resume", run_arg, "--total-steps", "4096"],
    ] {
        assert_one_line_error(&proprio(&args), "model.bpk");
    }
    let err =
        String::from_utf8_lossy(&proprio(&["eval", "--checkpoint", run_arg]).stderr).to_string();
    assert!(err.contains("corrupt") && err.contains("BLAKE3"), "{err}");
}

/// Kills `proprio train` at pseudo-random moments (many of them inside a
/// checkpoint write), resuming each time from what is on disk.
#[test]
fn training_killed_at_random_moments_resumes_from_disk() {
    let scratch = Scratch::new("kill");
    let run = scratch.join("run");
    let total = "1000000";
    let common = [
        "--total-steps",
        total,
        "--threads",
        "1",
        "--set",
        "num_envs=4",
        "--set",
        "num_steps=8",
        "--set",
        "eval_every=32",
        "--set",
        "eval_episodes=1",
    ];
    let mut delays = proprio::episode_rng(11, 0, 0);
    let mut resumed_steps = Vec::new();
    for attempt in 0..12 {
        let mut args: Vec<&str> = vec!["train"];
        let run_arg = run.to_str().unwrap();
        if attempt == 0 {
            args.extend(["--env", "classic/cartpole-v1", "--out", run_arg]);
        } else {
            args.extend(["--resume", run_arg]);
        }
        args.extend(common);
        let mut child = Command::new(env!("CARGO_BIN_EXE_proprio"))
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Let the first run reach its first checkpoint, then kill at a random moment.
        let start = Instant::now();
        while attempt == 0 && !run.join("checkpoint").exists() {
            assert!(start.elapsed() < Duration::from_secs(120), "no checkpoint");
            std::thread::sleep(Duration::from_millis(5));
        }
        let wait = proprio::rand::RngExt::random_range(&mut delays, 50..600);
        std::thread::sleep(Duration::from_millis(wait));
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("attempt {attempt} exited early with {status}: {err}");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let state = run.join("checkpoint").join("state.json");
        let state = if state.exists() {
            state
        } else {
            run.join("checkpoint.old").join("state.json")
        };
        let progress: Value =
            serde_json::from_str(&std::fs::read_to_string(state).unwrap()).unwrap();
        resumed_steps.push(progress["global_step"].as_u64().unwrap());
    }
    assert!(
        resumed_steps.windows(2).all(|w| w[0] <= w[1])
            && resumed_steps.last() > resumed_steps.first(),
        "progress must survive every kill and grow: {resumed_steps:?}"
    );
    let out = proprio(&[
        "eval",
        "--checkpoint",
        run.to_str().unwrap(),
        "--episodes",
        "2",
    ]);
    assert_success(&out);
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let steps: Vec<u64> = metrics
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["global_step"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "metrics repeat or go back: {steps:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_json_input_is_an_error_line_or_a_run(
        config in any_json(),
        actions in any_json(),
        state in any_json(),
        env_pick in any::<prop::sample::Index>(),
    ) {
        let scratch = Scratch::new("cli-fuzz");
        let ids = ["classic/cartpole-v1", "classic/pendulum-v1", "drones/hover-v0", "language/arithmetic-v0"];
        let env = ids[env_pick.index(ids.len())];
        let write = |name: &str, v: &Value| {
            let path = scratch.join(name);
            std::fs::write(&path, v.to_string()).unwrap();
            path.to_str().unwrap().to_string()
        };
        let (config, actions, state) = (write("c.json", &config), write("a.json", &actions), write("s.json", &state));
        for args in [
            vec!["rollout", "--env", env, "--config", &config, "--random", "--steps", "3"],
            vec!["rollout", "--env", env, "--actions", &actions],
            vec!["rollout", "--env", env, "--restore", &state, "--random", "--steps", "3"],
            vec!["info", env, "--config", &config],
        ] {
            let out = proprio(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            prop_assert!(out.status.code() == Some(0) || out.status.code() == Some(1), "{args:?}: {err}");
            if !out.status.success() {
                prop_assert!(err.lines().count() == 1 && err.starts_with("error: "), "{args:?}: {err}");
            }
            // A NaN in an observation or reward would print as null.
            let text = String::from_utf8_lossy(&out.stdout);
            prop_assert!(args[0] != "rollout" || !text.contains("null"), "{args:?}: {text}");
        }
    }
}

/// The drones' GPU kernel keeps its memory flat. lavapipe compiled a shader
/// variant per dispatch while the kernel's parameters were a uniform buffer:
/// ~0.5 MB a step, which this run turned into ~60% growth.
#[test]
fn the_gpu_kernel_keeps_its_memory_flat() {
    let out = proprio(&[
        "soak",
        "--env",
        "drones/gates-v0",
        "--backend",
        "gpu",
        "--num-envs",
        "1024",
        "--max-env-steps",
        "409600",
        "--max-seconds",
        "120",
        "--max-growth-percent",
        "5",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("no GPU adapter") {
        assert!(
            std::env::var_os("PROPRIO_REQUIRE_GPU").is_none(),
            "PROPRIO_REQUIRE_GPU is set but: {err}"
        );
        eprintln!("skipped: no wgpu adapter (apt-get install mesa-vulkan-drivers libvulkan1)");
        return;
    }
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["env_steps"], 409_600, "{report}");
}

/// `proprio soak` reports the bytes the program holds beside the resident
/// memory, so a leak can be told from fragmentation.
#[test]
fn a_soak_reports_the_live_heap_beside_the_resident_memory() {
    let out = proprio(&[
        "soak",
        "--env",
        "classic/cartpole-v1",
        "--num-envs",
        "64",
        "--max-env-steps",
        "640000",
        "--warmup-seconds",
        "0",
        "--max-growth-percent",
        "50",
    ]);
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let heap = |key: &str| report[key].as_u64().unwrap_or(0);
    let (base, peak, rss) = (
        heap("heap_baseline_bytes"),
        heap("heap_peak_bytes"),
        heap("rss_baseline_bytes"),
    );
    // The batch buffers alone are several kilobytes; all of it lives in the resident set.
    assert!(base > 4096 && base <= peak && peak < rss, "{report}");
}
