//! `proprio demos`: an env's scripted expert's successful episodes, or a
//! trained policy's episodes labelled by the expert (DAgger), written to a
//! file that `proprio train --algo bc --set demos=FILE` clones.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio_learn::bc::{Demonstrations, collect, dagger};
use proprio_learn::tuned::env_config;
use proprio_learn::{Algo, EnvSource, Policy, tuned};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct DemosArgs {
    /// Environment id, e.g. manipulation/instruct-v0 (with --dagger: the run's).
    #[arg(long, required_unless_present = "dagger", conflicts_with = "dagger")]
    env: Option<String>,
    /// Env config as inline JSON or a JSON file, over the tuned bc recipe's
    /// (the run that clones them must use the same).
    #[arg(long, conflicts_with = "dagger")]
    config: Option<String>,
    #[command(flatten)]
    obs: input::ObsArgs,
    /// Episodes kept of every distinct instruction (of all episodes, for an
    /// env without one): the expert's successful ones, or with --dagger the
    /// policy's, successful or not. Few make a weak warm start.
    #[arg(long, default_value_t = 10)]
    per_instruction: usize,
    /// Gaussian noise (standard deviation, action units) added to the actions
    /// the envs receive while the expert's own are recorded (DART): the
    /// demonstrations show recoveries from drift.
    #[arg(long, default_value_t = 0.0, conflicts_with = "dagger")]
    noise: f32,
    /// DAgger: the run whose policy acts (greedily, on its own env stack);
    /// the scripted expert labels every state it visits.
    #[arg(long, value_name = "RUN")]
    dagger: Option<PathBuf>,
    /// With --dagger: the chance that a step acts the expert's action instead
    /// (DAgger's β; 0 acts the policy alone).
    #[arg(long, default_value_t = 0.0, requires = "dagger")]
    beta: f32,
    /// With --dagger: a demonstrations file of the same env stack whose
    /// episodes the new file holds first (DAgger's aggregated dataset).
    #[arg(long, value_name = "FILE", requires = "dagger")]
    aggregate: Option<PathBuf>,
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

fn fail(e: proprio_learn::LearnError) -> Failure {
    Failure(e.to_string())
}

pub fn run(args: &DemosArgs) -> CliResult {
    if args.out.exists() {
        return Err(Failure(format!(
            "{} already exists; choose a new file",
            args.out.display()
        )));
    }
    let demos = match (&args.dagger, &args.env) {
        (Some(run), _) => labelled(args, run)?,
        (None, Some(env)) => expert(args, env)?,
        (None, None) => return Err(Failure("give --env or --dagger".into())),
    };
    demos.write(&args.out).map_err(fail)?;
    let h = &demos.header;
    let summary = match h.rounds.last() {
        Some(round) if args.dagger.is_some() => format!(
            "the policy (β {}) succeeded in {} of {} new episodes",
            round.beta, round.successes, round.episodes
        ),
        _ => format!(
            "the expert succeeded in {} of {} episodes",
            h.expert_successes, h.expert_episodes
        ),
    };
    println!(
        "{}: {} episodes ({} rows) of {} instructions; {summary}; written to {}",
        h.env.id,
        h.episodes,
        demos.rows(),
        h.instructions,
        args.out.display()
    );
    Ok(())
}

/// The scripted expert's own successful episodes.
fn expert(args: &DemosArgs, env: &str) -> Result<Demonstrations, Failure> {
    let mut config = input::config(args.config.as_deref())?;
    // The env config `train --algo bc` will use: its tuned recipe's, under --config.
    if let Some(recipe) = tuned(env, Algo::Bc, args.obs.obs).map_err(fail)? {
        config = env_config(&recipe, config).map_err(fail)?;
        if !recipe.env.is_empty() {
            eprintln!(
                "env config {} of the tuned bc recipe, as `train --algo bc` uses it; --config overrides it",
                proprio::serde_json::Value::Object(recipe.env.clone())
            );
        }
    }
    // The whole config, every default spelled out, as a run records it.
    let config = proprio::registry().spec(env, &config)?.config;
    let source = EnvSource {
        obs: args.obs.options(),
        ..EnvSource::new(env, config, args.backend)
    };
    collect(&source, args.per_instruction, args.noise, args.seed).map_err(fail)
}

/// The observation options when none of the observation flags is passed.
fn default_obs() -> proprio::render::ObsOptions {
    #[derive(clap::Parser)]
    struct Defaults {
        #[command(flatten)]
        obs: input::ObsArgs,
    }
    <Defaults as clap::Parser>::parse_from(["defaults"])
        .obs
        .options()
}

/// A DAgger round: `run`'s policy acts on its own env stack, the expert labels.
fn labelled(args: &DemosArgs, run: &Path) -> Result<Demonstrations, Failure> {
    let policy = Policy::load(run).map_err(fail)?;
    let trained = policy.env();
    if args.obs.options() != default_obs() {
        return Err(Failure(format!(
            "--dagger acts on {}'s own observations; leave out --obs, --image-size, --camera and --frame-stack",
            run.display()
        )));
    }
    let source = EnvSource {
        obs: trained.obs.clone(),
        ..EnvSource::new(&trained.id, trained.config.clone(), args.backend)
    };
    let earlier = args
        .aggregate
        .as_deref()
        .map(Demonstrations::read)
        .transpose()
        .map_err(fail)?;
    let name = run.display().to_string();
    let round = dagger(
        &source,
        Box::new(policy),
        None,
        &name,
        args.beta,
        args.per_instruction,
        args.seed,
    )
    .map_err(fail)?;
    match earlier {
        Some(mut all) => {
            all.aggregate(round).map_err(fail)?;
            Ok(all)
        }
        None => Ok(round),
    }
}
