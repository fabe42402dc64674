//! `proprio demos`: an env's scripted expert's successful episodes, written
//! to a file that `proprio train --algo bc --set demos=FILE` clones.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio_learn::bc::collect;
use proprio_learn::tuned::env_config;
use proprio_learn::{Algo, EnvSource, tuned};
use std::path::PathBuf;

#[derive(Args)]
pub struct DemosArgs {
    /// Environment id, e.g. manipulation/instruct-v0.
    #[arg(long)]
    env: String,
    /// Env config as inline JSON or a JSON file, over the tuned bc recipe's
    /// (the run that clones them must use the same).
    #[arg(long)]
    config: Option<String>,
    #[command(flatten)]
    obs: input::ObsArgs,
    /// Successful episodes kept of every distinct instruction (of all
    /// episodes, for an env without one): few make a weak warm start.
    #[arg(long, default_value_t = 10)]
    per_instruction: usize,
    /// Gaussian noise (standard deviation, action units) added to the actions
    /// the envs receive while the expert's own are recorded (DART): the
    /// demonstrations show recoveries from drift.
    #[arg(long, default_value_t = 0.0)]
    noise: f32,
    /// Seed of the env streams and the noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the physics runs: cpu threads or gpu (wgpu), for envs that have a GPU backend.
    #[arg(long, default_value = "cpu")]
    backend: proprio::Backend,
    /// File to write (safetensors); never overwritten.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: &DemosArgs) -> CliResult {
    if args.out.exists() {
        return Err(Failure(format!(
            "{} already exists; choose a new file",
            args.out.display()
        )));
    }
    let fail = |e: proprio_learn::LearnError| Failure(e.to_string());
    let mut config = input::config(args.config.as_deref())?;
    // The env config `train --algo bc` will use: its tuned recipe's, under --config.
    if let Some(recipe) = tuned(&args.env, Algo::Bc, args.obs.obs).map_err(fail)? {
        config = env_config(&recipe, config).map_err(fail)?;
        if !recipe.env.is_empty() {
            eprintln!(
                "env config {} of the tuned bc recipe, as `train --algo bc` uses it; --config overrides it",
                proprio::serde_json::Value::Object(recipe.env.clone())
            );
        }
    }
    // The whole config, every default spelled out, as a run records it.
    let config = proprio::registry().spec(&args.env, &config)?.config;
    let source = EnvSource {
        obs: args.obs.options(),
        ..EnvSource::new(&args.env, config, args.backend)
    };
    let demos = collect(&source, args.per_instruction, args.noise, args.seed).map_err(fail)?;
    demos.write(&args.out).map_err(fail)?;
    let h = &demos.header;
    println!(
        "{}: {} episodes ({} rows) of {} instructions, {} each; the expert succeeded in {} of {} episodes; written to {}",
        args.env,
        h.episodes,
        demos.rows(),
        h.instructions,
        h.per_instruction,
        h.expert_successes,
        h.expert_episodes,
        args.out.display()
    );
    Ok(())
}
