//! `proprio view`: the interactive viewer, or a headless render with `--screenshot`.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::{Agent, RandomAgent};
use proprio_learn::Policy;
use proprio_viewer::{Capture, ViewerOptions};
use std::path::PathBuf;

#[derive(Args)]
pub struct ViewArgs {
    /// Environment id (default: the checkpoint's env, else the first registered one).
    #[arg(long)]
    env: Option<String>,
    /// Env config as inline JSON or a JSON file.
    #[arg(long, conflicts_with = "checkpoint")]
    config: Option<String>,
    /// Run directory written by `proprio train`: its policy drives (Tab or any drive key takes over).
    #[arg(long, conflicts_with = "env")]
    checkpoint: Option<PathBuf>,
    /// Let the env's scripted controller drive, or uniform random actions (env i from its own stream).
    #[arg(long, value_parser = ["scripted", "random"], conflicts_with = "checkpoint")]
    policy: Option<String>,
    /// Seed of the first reset.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Envs in the batch (G shows them as a grid).
    #[arg(long, default_value_t = 1)]
    num_envs: usize,
    /// Speed multiplier; headless, env steps per frame.
    #[arg(long, default_value_t = 1.0)]
    speed: f32,
    /// Render headless (no window) and write this PNG after --frames frames, then exit.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Frames to simulate and draw before the screenshot.
    #[arg(long, default_value_t = 30, requires = "screenshot")]
    frames: u32,
    /// Screenshot size, WIDTHxHEIGHT.
    #[arg(long, default_value = "960x540", requires = "screenshot")]
    size: String,
    /// Overwrite the --screenshot file if it exists.
    #[arg(long, requires = "screenshot")]
    force: bool,
    /// Start with the overlay (status, env list, key map) hidden; H toggles it.
    #[arg(long)]
    hide_overlay: bool,
    /// Take the --screenshot in a real window (needs a display, e.g. Xvfb) instead of offscreen.
    #[arg(long, requires = "screenshot")]
    window: bool,
    /// What the env observes (a --checkpoint's envs observe what it was trained on).
    #[command(flatten)]
    obs: input::ObsArgs,
}

fn size(text: &str) -> Result<(u32, u32), Failure> {
    let parse = |s: &str| s.trim().parse::<u32>().ok();
    text.split_once('x')
        .and_then(|(w, h)| Some((parse(w)?, parse(h)?)))
        .ok_or_else(|| Failure(format!("--size must look like 960x540, got '{text}'")))
}

pub fn run(args: &ViewArgs) -> CliResult {
    let mut env = args.env.clone();
    let mut config = input::config(args.config.as_deref())?;
    let mut obs = args.obs.options();
    let mut agent: Option<Box<dyn Agent + Send>> = None;
    if let Some(dir) = &args.checkpoint {
        let policy = Policy::load(dir).map_err(|e| Failure(e.to_string()))?;
        env = Some(policy.env().id.clone());
        config = policy.env().config.clone();
        obs = policy.env().obs.clone();
        agent = Some(Box::new(policy));
    }
    if let Some(kind) = &args.policy {
        let id = env
            .clone()
            .ok_or_else(|| Failure(format!("--policy {kind} needs --env ENV")))?;
        let spec = proprio::registry().spec(&id, &config)?;
        agent = Some(if kind == "random" {
            Box::new(RandomAgent::new(spec.action_space.clone(), args.seed))
        } else {
            proprio::registry().scripted(&id, &spec)?
        });
    }
    let capture = match &args.screenshot {
        Some(path) => Some(Capture {
            path: path.clone(),
            frames: args.frames,
            size: size(&args.size)?,
            overwrite: args.force,
            window: args.window,
        }),
        None => None,
    };
    let headless = capture.is_some();
    let report = proprio_viewer::run(ViewerOptions {
        env,
        config,
        obs,
        seed: args.seed,
        num_envs: args.num_envs,
        agent,
        speed: args.speed,
        capture,
        hide_overlay: args.hide_overlay,
    })
    .map_err(|e| Failure(e.to_string()))?;
    if headless {
        for (k, e) in report.episodes.iter().enumerate() {
            let success = e
                .success
                .map_or(String::new(), |s| format!(", success {}", u8::from(s)));
            println!(
                "episode {} (env {}): return {:.2} in {} steps{success}",
                k + 1,
                e.env,
                e.ret,
                e.steps
            );
        }
        for (i, (ret, steps)) in report.running.iter().enumerate() {
            println!("running (env {i}): return {ret:.2} after {steps} steps");
        }
        if let Some(path) = &report.screenshot {
            println!("wrote {} after {} env steps", path.display(), report.steps);
        }
    }
    Ok(())
}

/// Ends the process at once, without C exit handlers. After a render on
/// Mesa's GL (llvmpipe), its exit-time teardown races with threads the
/// renderer leaves behind: glibc aborted about one run in fifty on a loaded
/// 2-core machine ("corrupted size vs. prev_size"), after all output was
/// written. Nothing is left to flush or close by then.
pub fn exit_now(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `_exit` only ends the process; every Rust buffer was flushed above.
    unsafe {
        libc::_exit(i32::from(code))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    std::process::exit(i32::from(code))
}
