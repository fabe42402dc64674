//! A person labels a preference run's pairs in the label window: the run
//! waits for its round, keys (sent through XTest by `xdotool`, under Xvfb)
//! answer it in `proprio reward-model label`, and the run goes on to finish
//! with an `r_ψ` fitted on those answers.
#![cfg(feature = "viewer")]

#[path = "../../../tests/support/display.rs"]
mod display;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use scratch::Scratch;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn proprio(args: &[&str], dir: &Path, display: Option<&str>) -> Child {
    let runtime = std::env::temp_dir().join("proprio-label-xdg");
    std::fs::create_dir_all(&runtime).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_proprio"));
    cmd.args(args)
        .current_dir(dir)
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(name) = display {
        cmd.env("DISPLAY", name);
    }
    cmd.spawn().unwrap()
}

/// Waits for `what` up to `seconds`, or fails naming it.
fn wait_for(what: &str, seconds: u64, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed().as_secs() < seconds, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits for `child` to exit (killing it after `seconds`) and returns its output.
fn finish(mut child: Child, what: &str, seconds: u64) -> Output {
    let exited = (0..seconds * 10).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        child.try_wait().unwrap().is_some()
    });
    if !exited {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        exited && out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn xdotool(args: &[&str], display: &str) -> Option<String> {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", display)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_person_labels_a_preference_run_in_the_window() {
    let required = std::env::var_os("PROPRIO_REQUIRE_DISPLAY").is_some();
    let Some(display) = display::display() else {
        assert!(
            !required,
            "PROPRIO_REQUIRE_DISPLAY is set but there is no DISPLAY and no Xvfb"
        );
        eprintln!("skipped: no DISPLAY and no Xvfb (install xvfb)");
        return;
    };
    let installed = Command::new("xdotool")
        .arg("--help")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        assert!(
            !required,
            "PROPRIO_REQUIRE_DISPLAY is set but xdotool is missing"
        );
        eprintln!("skipped: no xdotool to press the keys (install xdotool)");
        return;
    }
    // A fresh Xvfb takes a moment to accept clients.
    wait_for("the X server", 20, || {
        xdotool(&["getdisplaygeometry"], &display.name).is_some()
    });
    let dir = Scratch::new("cli-label");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/clip-tiny");
    std::fs::write(
        dir.join("reward.toml"),
        format!(
            "kind = \"preference\"\nmodel = \"{fixture}\"\nlabeller = \"human\"\n\
             label_dir = \"labels\"\ngoal = \"a pole upright\"\n\
             segment = 4\nqueries = 2\nquery_every = 200\n"
        ),
    )
    .unwrap();
    let args = "train --env classic/cartpole-v1 --reward reward.toml --total-steps 256 \
                --set num_envs=4 --set num_steps=32 --set eval_episodes=2 --out run";
    let mut train = proprio(&args.split_whitespace().collect::<Vec<_>>(), &dir, None);
    let round = dir.join("labels/round-0000");
    wait_for("the run's first round", 120, || {
        round.join("pairs.json").exists() || train.try_wait().unwrap().is_some()
    });
    if !round.join("pairs.json").exists() {
        // The run ended first: it renders its frames, so no adapter is a skip, like the viewer's.
        let err = String::from_utf8_lossy(&train.wait_with_output().unwrap().stderr).into_owned();
        if err.contains("no GPU adapter") && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() {
            eprintln!("skipped: no wgpu adapter (apt-get install mesa-vulkan-drivers libvulkan1)");
            return;
        }
        panic!("the run ended before its first round: {err}");
    }
    let mut window = proprio(
        &["reward-model", "label", "labels", "--rounds", "1"],
        &dir,
        Some(&display.name),
    );
    // The window says when it has opened the round; keys before that are not answers.
    let (said, heard) = std::sync::mpsc::channel();
    let stderr = window.stderr.take().unwrap();
    let echo = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("pairs to label") {
                let _ = said.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    heard
        .recv_timeout(Duration::from_secs(120))
        .expect("the label window opens the round");
    let mut id = String::new();
    wait_for("the label window", 60, || {
        id = xdotool(&["search", "--name", "which clip"], &display.name)
            .and_then(|ids| ids.lines().next().map(str::to_owned))
            .unwrap_or_default();
        !id.is_empty()
    });
    xdotool(&["windowfocus", "--sync", &id], &display.name);
    xdotool(&["key", "--delay", "400", "Left", "space"], &display.name).unwrap();
    let out = finish(window, "the label window", 60);
    assert!(echo.join().unwrap().contains("2 pairs to label"));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report, serde_json::json!({"rounds": 1, "labels": 2}));
    let answers: Value =
        serde_json::from_str(&std::fs::read_to_string(round.join("labels.json")).unwrap()).unwrap();
    assert_eq!(answers["labels"], serde_json::json!([1.0, 0.5]));
    finish(train, "the run", 120);
    assert!(dir.join("run/checkpoint/reward_net.bpk").is_file());
}

#[test]
fn a_missing_label_folder_is_one_line() {
    let dir = Scratch::new("cli-label-missing");
    let out = Command::new(env!("CARGO_BIN_EXE_proprio"))
        .args(["reward-model", "label"])
        .arg(dir.join("labels"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("is not a folder") && err.contains("label_dir"),
        "{err}"
    );
}
