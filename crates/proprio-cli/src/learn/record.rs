//! `proprio record`: an animated GIF of episodes — a trained policy, the env's
//! scripted controller or random actions — with step, reward and success
//! written on each env's picture, several envs side by side with `--grid`.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::{Agent, RandomAgent, VecOptions};
use proprio_learn::Policy;
use proprio_learn::recording::{RecordOptions, record, record_policy};
use std::path::PathBuf;

#[derive(Args)]
pub struct RecordArgs {
    /// Environment id (with --checkpoint, the run's env is recorded).
    #[arg(long, required_unless_present = "checkpoint")]
    env: Option<String>,
    /// Env config as inline JSON or a JSON file; with --checkpoint, keys in
    /// place of the run's that keep its observations and actions, e.g.
    /// '{"instruction":"lift the red block"}'.
    #[arg(long)]
    config: Option<String>,
    /// Run directory written by `proprio train`: its policy acts (deterministically).
    #[arg(long, conflicts_with_all = ["policy", "random", "env"])]
    checkpoint: Option<PathBuf>,
    /// The env's scripted controller acts.
    #[arg(long, value_parser = ["scripted"], conflicts_with = "random")]
    policy: Option<String>,
    /// Uniformly random actions.
    #[arg(long)]
    random: bool,
    /// Episodes per env of the grid, one after another.
    #[arg(long, default_value_t = 1)]
    episodes: usize,
    /// Envs side by side, COLUMNSxROWS (each its own episodes).
    #[arg(long, default_value = "1x1")]
    grid: String,
    /// Side of each env's square picture, pixels.
    #[arg(long, default_value_t = 128)]
    image_size: u32,
    /// Camera: default, top, or one the env offers.
    #[arg(long, default_value = "default")]
    camera: String,
    /// Frames per second of the video.
    #[arg(long, default_value_t = 20.0)]
    fps: f64,
    /// Steps recorded of an episode at most (the rest of a longer one is cut).
    #[arg(long, default_value_t = 500)]
    max_steps: usize,
    /// Seed of the episodes.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the physics runs: cpu threads or gpu (wgpu), for envs that have a GPU backend (default: the run's, or cpu).
    #[arg(long)]
    backend: Option<proprio::Backend>,
    /// GIF to write.
    #[arg(long)]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// Bare frames, without the step/reward/success text (e.g. a RoboCLIP demonstration).
    #[arg(long)]
    no_overlay: bool,
}

pub fn run(args: &RecordArgs) -> CliResult {
    let (columns, rows) = grid(&args.grid)?;
    if args.episodes == 0 || args.max_steps == 0 {
        return Err(Failure(
            "--episodes and --max-steps must be at least 1".into(),
        ));
    }
    if args.checkpoint.is_none() && args.policy.is_none() && !args.random {
        return Err(Failure(
            "give --checkpoint RUN, --policy scripted or --random".into(),
        ));
    }
    let options = RecordOptions {
        episodes: args.episodes,
        columns,
        rows,
        image_size: args.image_size,
        camera: args.camera.clone(),
        fps: args.fps,
        max_steps: args.max_steps,
        seed: args.seed,
        overwrite: args.force,
        overlay: !args.no_overlay,
    };
    let n = options.num_envs();
    let fail = |e: proprio_learn::LearnError| Failure(e.to_string());
    let frames = match &args.checkpoint {
        Some(run) => {
            let mut policy = Policy::load(run).map_err(fail)?;
            if let Some(backend) = args.backend {
                policy.set_backend(backend);
            }
            if args.config.is_some() {
                let keys = input::config(args.config.as_deref())?;
                policy.set_env_config(keys).map_err(fail)?;
            }
            record_policy(&mut policy, &options, &args.out).map_err(fail)?
        }
        None => {
            let id = args.env.clone().unwrap_or_default();
            let config = input::config(args.config.as_deref())?;
            let vec_options = VecOptions {
                backend: args.backend.unwrap_or_default(),
                ..RecordOptions::vec_options()
            };
            let mut venv = proprio::make_vec(&id, n, &config, vec_options)?;
            let space = venv.spec().action_space.clone();
            let mut agent: Box<dyn Agent + Send> = if args.random {
                Box::new(RandomAgent::new(space, args.seed))
            } else {
                proprio::registry().scripted(&id, venv.spec())?
            };
            record(venv.as_mut(), agent.as_mut(), &options, &args.out).map_err(fail)?
        }
    };
    let size = args.image_size;
    println!(
        "wrote {} ({frames} frames, {}×{}, {n} env{} × {} episode{})",
        args.out.display(),
        columns as u32 * size,
        rows as u32 * size,
        if n == 1 { "" } else { "s" },
        args.episodes,
        if args.episodes == 1 { "" } else { "s" },
    );
    Ok(())
}

/// `COLUMNSxROWS` → (columns, rows), each 1 to 8.
fn grid(text: &str) -> Result<(usize, usize), Failure> {
    let bad = || {
        Failure(format!(
            "--grid {text}: expected COLUMNSxROWS, e.g. 2x2, each 1 to 8"
        ))
    };
    let (c, r) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (c, r): (usize, usize) = (c.parse().map_err(|_| bad())?, r.parse().map_err(|_| bad())?);
    if !(1..=8).contains(&c) || !(1..=8).contains(&r) {
        return Err(bad());
    }
    Ok((c, r))
}
