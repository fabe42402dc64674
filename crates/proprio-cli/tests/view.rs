//! `proprio view`: every env renders (headless, on whatever wgpu adapter the
//! machine has — Mesa's lavapipe in CI), pictures follow the env state, a
//! trained CartPole policy keeps its pole up in the viewer, a real window
//! works under Xvfb, and a missing display or adapter is one clear line.
#![cfg(feature = "viewer")]

#[path = "../../../tests/support/display.rs"]
mod display;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use display::display;
use scratch::Scratch;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `proprio`; Mesa wants a runtime dir, which headless machines lack.
fn proprio(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let runtime = std::env::temp_dir().join("proprio-view-xdg");
    std::fs::create_dir_all(&runtime).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_proprio"));
    cmd.args(args).env("XDG_RUNTIME_DIR", &runtime);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A scratch directory for `test`, or `None` (with a note) on a machine without
/// any wgpu adapter, unless `PROPRIO_REQUIRE_GPU` is set (CI installs lavapipe and sets it).
fn render_dir(test: &str) -> Option<Scratch> {
    let dir = Scratch::new(&format!("view-{test}"));
    let probe = dir.join("probe.png");
    let out = proprio(
        &[
            "view",
            "--env",
            "classic/cartpole-v1",
            "--screenshot",
            probe.to_str().unwrap(),
            "--frames",
            "1",
            "--size",
            "32x32",
        ],
        &[],
    );
    let missing = String::from_utf8_lossy(&out.stderr).contains("no GPU adapter");
    if missing {
        assert!(
            std::env::var_os("PROPRIO_REQUIRE_GPU").is_none(),
            "PROPRIO_REQUIRE_GPU is set but wgpu finds no adapter"
        );
        eprintln!("skipped: no wgpu adapter (apt-get install mesa-vulkan-drivers libvulkan1)");
        return None;
    }
    Some(dir)
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "proprio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Renders `id` with the overlay hidden and returns the RGB pixels.
fn render(id: &str, seed: u64, frames: u32, dir: &Path) -> image::RgbImage {
    let path = dir.join(format!("{}-{seed}-{frames}.png", id.replace('/', "-")));
    let (seed, frames) = (seed.to_string(), frames.to_string());
    ok(&proprio(
        &[
            "view",
            "--env",
            id,
            "--seed",
            &seed,
            "--screenshot",
            path.to_str().unwrap(),
            "--frames",
            &frames,
            "--size",
            "240x180",
            "--hide-overlay",
        ],
        &[],
    ));
    image::open(&path).unwrap().to_rgb8()
}

/// Pixels far (more than 16 levels in some channel) from the top-left pixel
/// (the sky, one flat colour): the ground and everything on it.
fn foreground(img: &image::RgbImage) -> usize {
    let sky = img.get_pixel(0, 0);
    img.pixels()
        .filter(|p| p.0.iter().zip(sky.0).any(|(a, b)| a.abs_diff(b) > 16))
        .count()
}

fn differing(a: &image::RgbImage, b: &image::RgbImage) -> usize {
    a.pixels()
        .zip(b.pixels())
        .filter(|(p, q)| p.0.iter().zip(q.0).any(|(x, y)| x.abs_diff(y) > 8))
        .count()
}

#[test]
fn every_env_renders_a_picture_that_follows_its_state() {
    let Some(dir) = render_dir("every-env") else {
        return;
    };
    for id in proprio::registry().ids() {
        let first = render(id, 0, 2, &dir);
        let pixels = first.width() as usize * first.height() as usize;
        let fg = foreground(&first);
        assert!(
            fg > pixels / 20,
            "{id}: only {fg} of {pixels} pixels are not sky"
        );
        // Lit by the sun, not by ambient light alone (as on GL with shadow maps).
        let mean = first.as_raw().iter().map(|&v| f64::from(v)).sum::<f64>() / (3 * pixels) as f64;
        assert!(
            mean > 120.0,
            "{id}: the picture is dark (mean level {mean:.0})"
        );
        // Another seed draws another start (pose, targets, puzzle): the picture changes.
        let other = render(id, 1, 2, &dir);
        let changed = differing(&first, &other);
        assert!(
            changed > 20,
            "{id}: seed 1 looks like seed 0 ({changed} pixels differ)"
        );
    }
}

#[test]
fn a_trained_cartpole_keeps_its_pole_up_in_the_viewer() {
    let Some(dir) = render_dir("cartpole") else {
        return;
    };
    let run = dir.join("run");
    ok(&proprio(
        &[
            "train",
            "--env",
            "classic/cartpole-v1",
            "--algo",
            "ppo",
            "--total-steps",
            "40000",
            "--seed",
            "2",
            "--threads",
            "1",
            "--out",
            run.to_str().unwrap(),
        ],
        &[],
    ));
    let shot = dir.join("playback.png");
    let out = ok(&proprio(
        &[
            "view",
            "--checkpoint",
            run.to_str().unwrap(),
            "--screenshot",
            shot.to_str().unwrap(),
            "--frames",
            "60",
            "--speed",
            "10",
            "--size",
            "160x120",
        ],
        &[],
    ));
    // 600 steps at 10 a frame: the first episode ends at the 500-step limit.
    let first = out
        .lines()
        .find(|l| l.starts_with("episode 1 (env 0)"))
        .unwrap_or_else(|| panic!("no finished episode reported:\n{out}"));
    let ret: f64 = first
        .split("return ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap();
    assert!(ret >= 475.0, "the policy dropped the pole: {first}");
}

#[test]
fn the_window_opens_and_draws_under_x11() {
    let Some(dir) = render_dir("window") else {
        return;
    };
    let Some(display) = display() else {
        assert!(
            std::env::var_os("PROPRIO_REQUIRE_DISPLAY").is_none(),
            "PROPRIO_REQUIRE_DISPLAY is set but there is no DISPLAY and no Xvfb"
        );
        eprintln!("skipped: no DISPLAY and no Xvfb (install xvfb)");
        return;
    };
    let shot = dir.join("window.png");
    ok(&proprio(
        &[
            "view",
            "--env",
            "manipulation/reach-v0",
            "--screenshot",
            shot.to_str().unwrap(),
            "--window",
            "--frames",
            "5",
            "--size",
            "320x240",
        ],
        &[("DISPLAY", &display.name)],
    ));
    let img = image::open(&shot).unwrap().to_rgb8();
    assert_eq!((img.width(), img.height()), (320, 240));
    assert!(foreground(&img) > 320 * 240 / 20);
}

fn assert_one_line_error(out: &Output, needle: &str) {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(ours[0].contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn no_display_no_adapter_and_existing_files_are_clear_errors() {
    let out = proprio(
        &["view", "--env", "classic/cartpole-v1"],
        &[("DISPLAY", "")],
    );
    assert_one_line_error(&out, "xvfb-run");
    let out = proprio(
        &["view", "--env", "classic/cartpole-v1"],
        &[("DISPLAY", ":4242")],
    );
    assert_one_line_error(&out, "no X server listens");
    let dir = Scratch::new("view-errors");
    let shot = dir.join("kept.png");
    std::fs::write(&shot, b"user data").unwrap();
    let path = shot.to_str().unwrap();
    let out = proprio(&["view", "--screenshot", path], &[]);
    assert_one_line_error(&out, "--force");
    assert_eq!(std::fs::read(&shot).unwrap(), b"user data");
    let fresh = dir.join("fresh.png");
    let out = proprio(
        &["view", "--screenshot", fresh.to_str().unwrap()],
        &[
            ("WGPU_BACKEND", "vulkan"),
            ("VK_ICD_FILENAMES", "/nonexistent.json"),
        ],
    );
    assert_one_line_error(&out, "apt-get install mesa-vulkan-drivers");
    assert!(!fresh.exists());
    let out = proprio(
        &["view", "--env", "classic/nope-v0", "--screenshot", path],
        &[],
    );
    assert_one_line_error(&out, "unknown environment");
}

#[test]
fn rollout_and_bench_observe_pixels() {
    let Some(dir) = render_dir("pixels") else {
        return;
    };
    let out = dir.join("x.jsonl");
    let args = "rollout --env manipulation/pick-cube-v0 --obs rgb --image-size 64 --num-envs 4 --random --steps 3 --out";
    let mut argv: Vec<&str> = args.split(' ').collect();
    argv.push(out.to_str().unwrap());
    ok(&proprio(&argv, &[]));
    let lines: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4 * 4);
    for line in &lines {
        assert_eq!(line["obs_shape"], serde_json::json!([64, 64, 3]));
        let obs = line["obs"].as_array().unwrap();
        assert_eq!(obs.len(), 64 * 64 * 3);
        assert!(
            obs.iter()
                .all(|v| (0.0..=255.0).contains(&v.as_f64().unwrap()))
        );
    }
    assert_ne!(lines[0]["obs"], lines[12]["obs"], "the arm moved");
    let info = ok(&proprio(
        &[
            "info",
            "manipulation/pick-cube-v0",
            "--obs",
            "rgb",
            "--image-size",
            "64",
            "--json",
        ],
        &[],
    ));
    let info: Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["observation_shape"], serde_json::json!([64, 64, 3]));
    let two = dir.join("two.jsonl");
    let args = "rollout --env manipulation/reach-v0 --obs rgb+state --camera front,side --image-size 16 --frame-stack 2 --num-envs 1 --random --steps 1 --out";
    let mut argv: Vec<&str> = args.split(' ').collect();
    argv.push(two.to_str().unwrap());
    ok(&proprio(&argv, &[]));
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&two)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let frame = serde_json::json!({"image": [16, 16, 6], "state": [32]});
    assert_eq!(
        first["obs_shape"],
        serde_json::json!({"stack": 2, "frame": frame})
    );
    assert_eq!(
        first["obs"].as_array().unwrap().len(),
        2 * (16 * 16 * 6 + 32)
    );
    let bench = "bench --env classic/cartpole-v1 --num-envs 8 --steps 3 --warmup 1 --obs depth --image-size 16 --json";
    let report: Value =
        serde_json::from_str(&ok(&proprio(&bench.split(' ').collect::<Vec<_>>(), &[]))).unwrap();
    assert!(
        report["rendered_frames_per_s"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    let bad = proprio(
        &[
            "rollout",
            "--env",
            "classic/cartpole-v1",
            "--obs",
            "rgb",
            "--camera",
            "wrist",
            "--random",
            "--steps",
            "1",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no camera 'wrist'") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn record_writes_an_animated_gif_whose_frames_change() {
    use image::AnimationDecoder;
    let Some(dir) = render_dir("record") else {
        return;
    };
    let gif = dir.join("ep.gif");
    let args = "record --env manipulation/pick-cube-v0 --policy scripted --image-size 48 --grid 2x1 --max-steps 12 --out";
    let mut argv: Vec<&str> = args.split(' ').collect();
    argv.push(gif.to_str().unwrap());
    let said = ok(&proprio(&argv, &[]));
    assert!(said.contains("13 frames, 96×48"), "{said}");
    let file = std::io::BufReader::new(std::fs::File::open(&gif).unwrap());
    let frames = image::codecs::gif::GifDecoder::new(file)
        .unwrap()
        .into_frames()
        .collect_frames()
        .unwrap();
    assert_eq!(frames.len(), 13);
    assert_eq!(frames[0].buffer().dimensions(), (96, 48));
    assert_ne!(frames[0].buffer(), frames[12].buffer(), "the arm moved");
    // A second run does not overwrite the video unless asked to.
    let again = proprio(&argv, &[]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

#[test]
fn a_pixel_policy_trains_films_itself_and_is_evaluated_recorded_and_viewed_on_images() {
    let Some(dir) = render_dir("pixel-policy") else {
        return;
    };
    let run = dir.join("run");
    let run_arg = run.to_str().unwrap();
    let train = "train --env classic/cartpole-v1 --obs rgb --image-size 32 --total-steps 1024 --set num_envs=4 --set eval_every=512 --set eval_episodes=2 --video-every 512 --threads 1 --out";
    let mut argv: Vec<&str> = train.split(' ').collect();
    argv.push(run_arg);
    ok(&proprio(&argv, &[]));
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["env"]["obs"]["mode"], "rgb", "{info}");
    for step in [512, 1024] {
        let video = run.join(format!("videos/step-{step}.gif"));
        assert!(video.is_file(), "{} is missing", video.display());
    }
    let said = ok(&proprio(
        &["eval", "--checkpoint", run_arg, "--episodes", "2", "--json"],
        &[],
    ));
    assert!(said.contains(r#""episodes":2"#), "{said}");
    let gif = dir.join("policy.gif");
    let argv = [
        "record",
        "--checkpoint",
        run_arg,
        "--image-size",
        "32",
        "--max-steps",
        "4",
        "--out",
        gif.to_str().unwrap(),
    ];
    assert!(ok(&proprio(&argv, &[])).contains("32×32"));
    // Env keys in place of the run's, as eval takes them; an unknown one is refused in one line.
    let mut configured = argv.to_vec();
    configured.extend(["--force", "--config", r#"{"max_episode_steps":3}"#]);
    assert!(ok(&proprio(&configured, &[])).contains("32×32"));
    configured.pop();
    configured.push(r#"{"bogus":1}"#);
    let refused = proprio(&configured, &[]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("bogus"),
        "{said}"
    );
    let shot = dir.join("policy.png");
    let argv = [
        "view",
        "--checkpoint",
        run_arg,
        "--screenshot",
        shot.to_str().unwrap(),
        "--frames",
        "2",
        "--size",
        "64x64",
    ];
    ok(&proprio(&argv, &[]));
    assert!(shot.is_file());
}
