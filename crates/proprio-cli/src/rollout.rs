//! `proprio rollout`: step a batch with given or random actions, one JSON line per env per step.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::render::ObsMode;
use proprio::serde_json::{self, json};
use proprio::{AutoresetMode, Backend, RandomActions, VecEnv, VecOptions};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub struct RolloutArgs {
    /// Environment id, e.g. classic/cartpole-v1.
    #[arg(long)]
    env: String,
    /// Seed: env i draws from stream (seed, i).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Number of envs in the batch.
    #[arg(long, default_value_t = 1)]
    num_envs: usize,
    /// Start every env from this snapshot (JSON written by a snapshot, or {"state": [...]}).
    #[arg(long)]
    restore: Option<PathBuf>,
    /// JSON array with one action per step (applied to every env).
    #[arg(long, conflicts_with = "random")]
    actions: Option<PathBuf>,
    /// Sample actions uniformly from the action space (env i from its own stream, so its
    /// trajectory does not depend on --num-envs).
    #[arg(long)]
    random: bool,
    /// Steps to take (default: the length of the action file, or 100 with --random).
    #[arg(long)]
    steps: Option<usize>,
    /// Write the JSON lines here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
    /// Config as inline JSON or a JSON file.
    #[arg(long)]
    config: Option<String>,
    /// Autoreset mode: next-step, same-step or disabled.
    #[arg(long, default_value = "next-step")]
    autoreset: AutoresetMode,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Where the physics runs: cpu threads or gpu (wgpu), for envs that have a GPU backend.
    #[arg(long, default_value = "cpu")]
    backend: Backend,
    #[command(flatten)]
    obs: input::ObsArgs,
}

pub fn run(args: &RolloutArgs) -> CliResult {
    let config = input::config(args.config.as_deref())?;
    let options = VecOptions {
        autoreset: args.autoreset,
        threads: args.threads,
        backend: args.backend,
    };
    let mut venv = proprio::make_vec_observed(
        &args.env,
        args.num_envs,
        &config,
        options,
        &args.obs.options(),
    )?;
    let space = venv.spec().action_space.clone();
    let scripted = match (&args.actions, args.random) {
        (Some(path), _) => Some(input::actions(path, &space)?),
        (None, true) => None,
        (None, false) => return Err(Failure("give --actions FILE.json or --random".into())),
    };
    let steps = match (&scripted, args.steps) {
        (Some(a), Some(t)) if t > a.len() => {
            return Err(Failure(format!(
                "--steps {t} but the action file has {} actions",
                a.len()
            )));
        }
        (Some(a), t) => t.unwrap_or(a.len()),
        (None, t) => t.unwrap_or(100),
    };
    let state = args.restore.as_deref().map(input::state).transpose()?;
    let mut out = input::output(args.out.as_deref(), args.force)?;

    venv.reset(Some(args.seed), None)?;
    if let Some(state) = &state {
        let all: Vec<usize> = (0..venv.num_envs()).collect();
        venv.restore(state, &all)?;
    }
    let state_dim = proprio::registry()
        .spec(&args.env, &config)?
        .observation_space
        .flat_dim();
    let shape = obs_shape(&args.obs, state_dim);
    write_lines(&mut out, venv.as_ref(), 0, &shape)?;
    let (n, dim) = (venv.num_envs(), space.flat_dim());
    let mut actions = vec![0.0; n * dim];
    let mut random = RandomActions::new(args.seed, n);
    for t in 1..=steps {
        match &scripted {
            Some(file) => actions
                .chunks_exact_mut(dim)
                .for_each(|row| row.copy_from_slice(&file[t - 1])),
            None => random.sample(&space, &mut actions),
        }
        venv.step(&actions)
            .map_err(|e| Failure(format!("step {t}: {e}")))?;
        write_lines(&mut out, venv.as_ref(), t, &shape)?;
    }
    out.flush()
        .map_err(|e| Failure(format!("cannot write output: {e}")))
}

/// The `obs_shape` of image or stacked observations of an env with
/// `state_dim` state values (`None` for the plain state, whose shape is its length).
fn obs_shape(obs: &input::ObsArgs, state_dim: usize) -> Option<serde_json::Value> {
    (obs.obs != ObsMode::State || obs.frame_stack > 1).then(|| obs.shape(state_dim))
}

fn write_lines(
    out: &mut dyn Write,
    venv: &dyn VecEnv,
    step: usize,
    shape: &Option<serde_json::Value>,
) -> CliResult {
    let batch = venv.batch();
    for i in 0..venv.num_envs() {
        let mut line = json!({
            "step": step,
            "env": i,
            "obs": batch.obs(i),
            "reward": batch.reward[i],
            "terminated": batch.terminated[i],
            "truncated": batch.truncated[i],
        });
        if let Some(shape) = shape {
            line["obs_shape"] = shape.clone();
        }
        if !batch.infos[i].is_empty() {
            line["info"] =
                serde_json::to_value(&batch.infos[i]).map_err(|e| Failure(e.to_string()))?;
        }
        if let Some(final_obs) = batch.final_obs(i) {
            line["final_obs"] = json!(final_obs);
        }
        writeln!(out, "{line}").map_err(|e| Failure(format!("cannot write output: {e}")))?;
    }
    Ok(())
}
