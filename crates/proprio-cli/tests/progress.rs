//! The `proprio` binary with a progress reward model: demonstrations with
//! images, a CLIP and a progress model fitted to them, the model judged by
//! `reward-model eval` and paid as a run's reward; one-line errors.

mod common;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use common::{assert_one_line_error, assert_success, proprio};
use scratch::Scratch;
use serde_json::Value;

/// `proprio` with the whitespace-separated `words`, then `rest` (paths, texts with spaces).
fn run(words: &str, rest: &[&str]) -> std::process::Output {
    let mut args: Vec<&str> = words.split_whitespace().collect();
    args.extend_from_slice(rest);
    proprio(&args)
}

/// [`run`], or `None` (skipped) when no wgpu adapter renders here (unless
/// `PROPRIO_REQUIRE_GPU` is set); a success otherwise.
fn rendered(words: &str, rest: &[&str]) -> Option<std::process::Output> {
    let out = run(words, rest);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no GPU adapter") && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() {
        eprintln!("skipped: {stderr}");
        return None;
    }
    assert_success(&out);
    Some(out)
}

/// The last line of a command's stdout, as JSON.
fn json(out: &std::process::Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap_or_default()).unwrap()
}

/// Demonstrations with images → a CLIP → a progress model → `eval` → a
/// run paid by it: each step's output has the figures it promises, and the
/// run's evaluation reports the model's returns.
#[test]
fn a_progress_model_is_fitted_judged_and_paid_as_a_reward() {
    let dir = Scratch::new("cli-progress");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // Pick's PPO recipe's env config, so that its runs act in the demonstrations' envs.
    let demos = "demos --env manipulation/pick-cube-v0 --obs rgb+state --camera front \
                 --config {\"control\":\"pd_ee_delta_pos\",\"control_hz\":10} \
                 --image-size 32 --per-instruction 3";
    let Some(_) = rendered(demos, &["--seed", "1", "--out", &path("train.demos")]) else {
        return;
    };
    rendered(demos, &["--seed", "2", "--out", &path("held.demos")]).unwrap();
    let clip = "reward-model fit-clip --env manipulation/pick-cube-v0 --camera front \
                --image-size 32 --patch-size 8 --frames 64 --steps 3 --scripted 0.5";
    rendered(clip, &["--out", &path("clip")]).unwrap();
    let (train, held) = (path("train.demos"), path("held.demos"));
    let fit = [
        "--demos",
        &train,
        "--clip",
        &path("clip"),
        "--instruction",
        "pick up the red cube",
        "--out",
        &path("progress"),
    ];
    let fit_words = "reward-model fit-progress --failures 3 --decoys 2 --steps 4";
    let summary = json(&rendered(fit_words, &fit).unwrap());
    assert_eq!(summary["episodes"]["demos"], 3);
    assert!(
        summary["episodes"]["failures"].as_u64().unwrap() <= 3 + 2,
        "{summary}"
    );
    assert!(
        summary["holdout_voc"].as_f64().unwrap().abs() <= 1.0,
        "{summary}"
    );
    for file in [
        "progress.json",
        "progress.bpk",
        "clip/config.json",
        "clip/model.safetensors",
    ] {
        assert!(dir.join("progress").join(file).is_file(), "{file}");
    }
    assert_one_line_error(&run(fit_words, &fit), "already exists");
    // A caption per instruction, for demonstrations that carry none.
    let goals = dir.join("goals.toml");
    std::fs::write(&goals, "[goals]\n\"pick up the red cube\" = \"it is up\"\n").unwrap();
    let out = path("captioned");
    let captioned = [
        &fit[..4],
        &["--goals", goals.to_str().unwrap(), "--out", &out],
    ]
    .concat();
    assert_one_line_error(&run(fit_words, &captioned), "carry no instruction");
    assert!(!dir.join("captioned").exists());
    let eval = "reward-model eval --failures 3 --near-misses 3 --decoys 3";
    let report = json(&rendered(eval, &["--model", &path("progress"), "--demos", &held]).unwrap());
    assert_eq!(report["episodes"], 3);
    // A decoy grasps where another episode's cube was: none succeeds.
    assert_eq!(report["decoys"], 3, "{report}");
    for key in ["voc", "voc_in_order"] {
        assert!(report[key].as_f64().unwrap().abs() <= 1.0, "{report}");
    }
    let ordered = report["vs_random"]["ordered"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&ordered), "{report}");
    // Paid as a run's reward (no task reward): the run's evaluation reports what it paid.
    let reward = dir.join("reward.toml");
    let toml = format!(
        "kind = \"progress\"\nmodel = \"{}\"\ncamera = \"front\"\n",
        path("progress")
    );
    std::fs::write(&reward, toml).unwrap();
    let train = "train --env manipulation/pick-cube-v0 --total-steps 64 --set num_envs=2 \
                 --set num_steps=32 --set eval_episodes=2";
    rendered(
        train,
        &["--reward", reward.to_str().unwrap(), "--out", &path("run")],
    )
    .unwrap();
    let eval = "eval --episodes 2 --json --checkpoint";
    let report = json(&rendered(eval, &[&path("run")]).unwrap());
    let returns = report["model_returns"].as_array().unwrap();
    assert_eq!(returns.len(), 2, "{report}");
    for r in returns {
        // Paid as increases, an episode's model return is the progress it ends at.
        let r = r.as_f64().unwrap();
        assert!((0.0..=1.0).contains(&r), "{report}");
    }
    // An ensemble of the model with itself, the second read through its own
    // copy of the CLIP from the rendered frames: the lowest of two equal
    // readings trains and evaluates the same run, bit for bit.
    let ensemble = dir.join("ensemble.toml");
    let toml = format!(
        "kind = \"progress\"\nmodel = \"{0}\"\nensemble = [\"{0}\"]\ncamera = \"front\"\n",
        path("progress")
    );
    std::fs::write(&ensemble, toml).unwrap();
    rendered(
        train,
        &[
            "--reward",
            ensemble.to_str().unwrap(),
            "--out",
            &path("run-ensemble"),
        ],
    )
    .unwrap();
    let paired = json(&rendered(eval, &[&path("run-ensemble")]).unwrap());
    assert_eq!(paired["model_returns"], report["model_returns"], "{paired}");
    let missing = format!(
        "kind = \"progress\"\nmodel = \"{}\"\nensemble = [\"{}\"]\ncamera = \"front\"\n",
        path("progress"),
        path("no-model")
    );
    std::fs::write(&ensemble, missing).unwrap();
    let args = [
        "--reward",
        ensemble.to_str().unwrap(),
        "--out",
        &path("run-missing"),
    ];
    assert_one_line_error(&run(train, &args), "no-model");
    // Filmed paid as it was trained: the model's reward, the task's beside it.
    let gif = path("run.gif");
    let film = "record --image-size 32 --max-steps 3 --checkpoint";
    let said = rendered(film, &[&path("run"), "--out", &gif]).unwrap();
    assert!(String::from_utf8_lossy(&said.stdout).contains("4 frames"));
    // Refitted with that run's policy playing (named twice, as a second
    // round names the first's run too): its failed episodes join the failures.
    let refit = [
        "--demos",
        &path("train.demos"),
        "--clip",
        &path("clip"),
        "--instruction",
        "pick up the red cube",
        "--policy",
        &path("run"),
        "--policy",
        &path("run"),
        "--policy-episodes",
        "2",
        "--out",
        &path("progress2"),
    ];
    let summary = json(&rendered(fit_words, &refit).unwrap());
    let failures = summary["episodes"]["failures"].as_u64().unwrap();
    let policies = summary["policy"].as_array().map_or(0, Vec::len);
    assert!(failures <= 3 + 2 + 2 * 2 && policies == 2, "{summary}");
}

/// Frames come from images: a missing CLIP and a state-only
/// demonstrations file are refused in one line, and nothing is written.
#[test]
fn fit_progress_refuses_demonstrations_without_images() {
    let dir = Scratch::new("cli-progress-state");
    let demos = dir.join("state.demos");
    let demos = demos.to_str().unwrap();
    let args = ["--out", demos];
    assert_success(&run(
        "demos --env manipulation/reach-v0 --per-instruction 2",
        &args,
    ));
    let out = dir.join("model");
    let out = out.to_str().unwrap();
    let fit = "reward-model fit-progress --demos";
    assert_one_line_error(
        &run(fit, &[demos, "--clip", "/no/clip", "--out", out]),
        "/no/clip",
    );
    let clip = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/clip-tiny");
    let refused = run(fit, &[demos, "--clip", clip, "--out", out]);
    assert_one_line_error(&refused, "one image per observation");
    assert!(!dir.join("model").exists());
}

/// instruct-v0, whose episodes each draw an instruction: a progress model
/// fitted under the training instructions, judged on held-out ones (listed
/// as unseen), and paid with each env read under its own instruction.
#[test]
fn an_instruction_following_env_is_read_under_each_episodes_instruction() {
    let dir = Scratch::new("cli-progress-instruct");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let demos = "demos --env manipulation/instruct-v0 --obs rgb+state --camera front \
                 --image-size 32 --per-instruction 1";
    let Some(_) = rendered(demos, &["--seed", "1", "--out", &path("train.demos")]) else {
        return;
    };
    let held = [
        "--config",
        "{\"split\":\"held_out\"}",
        "--out",
        &path("held.demos"),
    ];
    rendered(demos, &held).unwrap();
    let clip = "reward-model fit-clip --env manipulation/instruct-v0 --camera front \
                --image-size 32 --patch-size 8 --frames 64 --steps 3 --scripted 0.5";
    rendered(clip, &["--out", &path("clip")]).unwrap();
    let fit = ["--demos", &path("train.demos"), "--clip", &path("clip")];
    // Each instruction's success caption, read in its place (`--goals`).
    let goals = dir.join("goals.toml");
    let mut table = String::from("[goals]\n");
    for cube in ["red", "green", "blue"] {
        for side in ["front", "back", "left", "right"] {
            table += &format!(
                "\"push the {cube} cube to the {side}\" = \"the {cube} cube is at the {side}\"\n"
            );
        }
        table +=
            &format!("\"pick up the {cube} cube\" = \"the gripper holds the {cube} cube up\"\n");
        for on in ["red", "green", "blue"]
            .into_iter()
            .filter(|on| *on != cube)
        {
            table += &format!(
                "\"put the {cube} cube on the {on} cube\" = \"the {cube} cube rests on the {on} cube\"\n"
            );
        }
    }
    std::fs::write(&goals, &table).unwrap();
    let captions = &["--goals", goals.to_str().unwrap(), "--similarity"][..];
    // The instruction read as the text tower's sentence embedding, word by
    // word, as its words fused into one token that weighs the frames, and
    // as its caption's sentence embedding with each view's cosine to it.
    let fused = &["--words", "--fuse-words", "--weigh"][..];
    for (name, reading) in [
        ("sentence", &[][..]),
        ("words", &["--words"][..]),
        ("fused", fused),
        ("captions", captions),
    ] {
        let fit_words = "reward-model fit-progress --failures 2 --decoys 0 --steps 4";
        let out = ["--out", &path(name)];
        let summary = json(&rendered(fit_words, &[&fit[..], &out, reading].concat()).unwrap());
        // Every training instruction of 3 cubes: 9 pushes, 2 picks, 3 puts.
        assert_eq!(
            summary["instructions"].as_array().unwrap().len(),
            14,
            "{summary}"
        );
        let header = std::fs::read_to_string(dir.join(name).join("progress.json")).unwrap();
        let header: Value = serde_json::from_str(&header).unwrap();
        let config = &header["config"];
        let words = config["words"].as_u64();
        assert_eq!(
            header["goals"]["pick up the green cube"].as_str(),
            (name == "captions").then_some("the gripper holds the green cube up"),
            "{header}"
        );
        assert_eq!(
            config["fuse_words"].as_bool(),
            Some(name == "fused"),
            "{header}"
        );
        assert_eq!(config["weigh"].as_bool(), Some(name == "fused"), "{header}");
        let similarity = config["similarity"].as_bool();
        assert_eq!(similarity, Some(name == "captions"), "{header}");
        // "put the green cube on the red cube" and its start and end tokens.
        assert_eq!(
            words,
            Some(if reading.contains(&"--words") { 10 } else { 0 }),
            "{header}"
        );
        let eval = "reward-model eval --failures 2 --near-misses 0 --decoys 0";
        let report = json(
            &rendered(
                eval,
                &["--model", &path(name), "--demos", &path("held.demos")],
            )
            .unwrap(),
        );
        assert_eq!(
            report["unseen_instructions"].as_array().unwrap().len(),
            7,
            "{report}"
        );
        let reward = dir.join(format!("{name}.toml"));
        let toml = format!(
            "kind = \"progress\"\nmodel = \"{}\"\ncamera = \"front\"\nshaping = \"progress\"\n",
            path(name)
        );
        std::fs::write(&reward, toml).unwrap();
        let train = "train --env manipulation/instruct-v0 --algo ppo --total-steps 64 \
                     --set num_envs=4 --set num_steps=16 --set eval_episodes=2";
        let run = path(&format!("{name}-run"));
        rendered(
            train,
            &["--reward", reward.to_str().unwrap(), "--out", &run],
        )
        .unwrap();
        let report = json(&rendered("eval --episodes 2 --json --checkpoint", &[&run]).unwrap());
        for r in report["model_returns"].as_array().unwrap() {
            // Paid its progress each step, an episode's model return is at most its length.
            let r = r.as_f64().unwrap();
            assert!((0.0..=150.0).contains(&r), "{report}");
        }
    }
    // A goals table without one of the demonstrated instructions' captions.
    let out = path("uncaptioned");
    let partial = table.replace("\"pick up the red cube\"", "\"pick up the pink cube\"");
    std::fs::write(&goals, partial).unwrap();
    let fit_words = "reward-model fit-progress --failures 2 --decoys 0 --steps 4";
    assert_one_line_error(
        &run(fit_words, &[&fit[..], &["--out", &out], captions].concat()),
        "no caption for the instruction \"pick up the red cube\"",
    );
    assert!(!dir.join("uncaptioned").exists());
    // Words the transformer reads one by one cannot weigh the frames.
    let out = path("unfused");
    let unfused = [&fit[..], &["--out", &out, "--words", "--weigh"]].concat();
    let fit_words = "reward-model fit-progress --failures 2 --decoys 0 --steps 4";
    assert_one_line_error(
        &run(fit_words, &unfused),
        "--weigh reads the instruction as one token",
    );
    assert!(!dir.join("unfused").exists());
}
