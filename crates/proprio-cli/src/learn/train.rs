//! `proprio train`: PPO, SAC, TD3, DSAC-T, GRPO or behaviour cloning on any registered env.

use crate::{CliResult, Failure, input};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use proprio::serde_json::{self, Map, Value};
use proprio_learn::{Algo, ComputeDevice, EnvSource, TrainRequest};
use proprio_reward::RewardConfig;
use std::path::PathBuf;

#[derive(Args)]
pub struct TrainArgs {
    /// Environment id, e.g. classic/cartpole-v1 (not needed with --resume).
    #[arg(long, required_unless_present = "resume")]
    env: Option<String>,
    /// Learner.
    #[arg(long, default_value = "ppo", value_parser = PossibleValuesParser::new(Algo::NAMES).try_map(|name| Algo::from_name(&name).ok_or("not a learner")))]
    algo: Algo,
    /// Seed of weights, envs, action sampling and minibatch order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Env steps to train for (overrides the algorithm's total_steps).
    #[arg(long)]
    total_steps: Option<u64>,
    /// Hyper-parameter override, KEY=VALUE (VALUE is JSON, or a bare string); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Env config as inline JSON or a JSON file.
    #[arg(long)]
    config: Option<String>,
    /// Env config keys the evaluation envs take instead (inline JSON or a
    /// file), e.g. '{"split":"held_out"}' to evaluate on held-out instructions.
    #[arg(long, value_name = "JSON", conflicts_with = "resume")]
    eval_config: Option<String>,
    /// Run directory (default runs/<env>/<algo>-<seed>-<time>); never overwritten.
    #[arg(long, conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the run in this directory from its last checkpoint.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Where the networks run: cpu (burn flex) or wgpu.
    #[arg(long, default_value = "cpu")]
    device: ComputeDevice,
    /// Env worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Where the env physics runs: cpu threads or gpu (wgpu), for envs that have a GPU backend.
    #[arg(long, default_value = "cpu")]
    backend: proprio::Backend,
    #[command(flatten)]
    obs: input::ObsArgs,
    /// Write a GIF of 4 evaluation episodes into RUN/videos/ at the first
    /// checkpoint after every N env steps (as SB3's VecVideoRecorder).
    #[arg(long, value_name = "N")]
    video_every: Option<u64>,
    /// A vision-language reward model (TOML: kind, model, goal, baseline,
    /// alpha, weight, task_weight, demo, …) that replaces or joins the task's
    /// reward; see docs/reward-models.md.
    #[arg(long, value_name = "REWARD.toml", conflicts_with = "resume")]
    reward: Option<PathBuf>,
    /// Start from the policy weights of this run's last checkpoint (same env,
    /// observations and network; e.g. GRPO after behaviour cloning); the run is only read.
    #[arg(long, value_name = "RUN_DIR", conflicts_with = "resume")]
    init: Option<PathBuf>,
}

fn overrides(set: &[String], total_steps: Option<u64>) -> Result<Map<String, Value>, Failure> {
    let mut map = Map::new();
    for item in set {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| Failure(format!("--set {item}: expected KEY=VALUE")))?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
        map.insert(key.trim().into(), value);
    }
    if let Some(total) = total_steps {
        map.insert("total_steps".into(), total.into());
    }
    Ok(map)
}

pub fn run(args: &TrainArgs) -> CliResult {
    let dir = match (&args.resume, &args.env) {
        (Some(dir), _) => proprio_learn::resume(dir.clone(), args.total_steps),
        (None, Some(env)) => proprio_learn::train(TrainRequest {
            algo: args.algo,
            env: EnvSource {
                obs: args.obs.options(),
                reward: args
                    .reward
                    .as_deref()
                    .map(RewardConfig::read)
                    .transpose()
                    .map_err(|e| Failure(e.to_string()))?,
                eval_config: args
                    .eval_config
                    .as_deref()
                    .map(|c| input::config(Some(c)))
                    .transpose()?,
                ..EnvSource::new(env, input::config(args.config.as_deref())?, args.backend)
            },
            seed: args.seed,
            device: args.device,
            threads: args.threads,
            overrides: overrides(&args.set, args.total_steps)?,
            out: args.out.clone(),
            video_every: args.video_every,
            init: args.init.clone(),
        }),
        (None, None) => return Err(Failure("give --env ENV, or --resume RUN_DIR".into())),
    }
    .map_err(|e| Failure(e.to_string()))?;
    println!("run saved in {}", dir.display());
    Ok(())
}
