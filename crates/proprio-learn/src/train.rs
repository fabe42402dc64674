//! `proprio train`: build or resume a run and train it.

use crate::actor::ControlPolicy;
use crate::device::Backend;
use crate::dsac::Dsac;
use crate::envs::EnvSource;
use crate::error::{LearnError, Result};
use crate::grpo::{Grpo, GrpoConfig, registry_envs};
use crate::ppo::{Ppo, PpoConfig};
use crate::run::{Algo, Progress, Run, RunInfo, default_dir, load_run};
use crate::sac::{Sac, SacConfig};
use crate::sequence::SequencePolicy;
use crate::td3::{Td3, Td3Config};
use proprio::Space;
use proprio::serde_json::{self, Map, Value};
use std::path::{Path, PathBuf};

/// What the user asked `proprio train` for.
#[derive(Debug, Clone)]
pub struct TrainRequest {
    /// Learner.
    pub algo: Algo,
    /// Env id and config.
    pub env: EnvSource,
    /// Seed.
    pub seed: u64,
    /// Compute backend.
    pub backend: Backend,
    /// Env worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// Hyper-parameter overrides (`--set key=value`), applied over the defaults and the env's tuned values.
    pub overrides: Map<String, Value>,
    /// Run directory (default `runs/<env>/<algo>-<seed>-<time>`).
    pub out: Option<PathBuf>,
    /// Film the policy into `videos/` every this many env steps (at the next checkpoint).
    pub video_every: Option<u64>,
}

/// The default hyper-parameters of `algo` for `action_space`, as JSON. PPO on
/// token answers is the group learner with `advantage = gae` (token-level PPO).
pub fn default_config(algo: Algo, action_space: &Space) -> Result<Value> {
    let config = match (algo, action_space) {
        (Algo::Grpo, _) => serde_json::to_value(GrpoConfig::default()),
        (Algo::Ppo, Space::Tokens { .. }) => serde_json::to_value(GrpoConfig::ppo()),
        (Algo::Ppo, Space::Box { .. }) => serde_json::to_value(PpoConfig::continuous()),
        (Algo::Ppo, _) => serde_json::to_value(PpoConfig::discrete()),
        (Algo::Sac | Algo::Dsac, Space::Box { .. }) => serde_json::to_value(SacConfig::default()),
        (Algo::Td3, Space::Box { .. }) => serde_json::to_value(Td3Config::default()),
        (Algo::Sac | Algo::Td3 | Algo::Dsac, other) => {
            return Err(LearnError::Config(format!(
                "{} needs a box action space; this env acts in {other}",
                algo.name().to_uppercase()
            )));
        }
    };
    config.map_err(|e| LearnError::Config(e.to_string()))
}

fn merged(mut config: Value, overrides: &Map<String, Value>) -> Result<Value> {
    let Value::Object(map) = &mut config else {
        return Err(LearnError::Config("defaults are not an object".into()));
    };
    for (key, value) in overrides {
        if !map.contains_key(key) {
            let known: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(LearnError::Config(format!(
                "unknown key '{key}' (known: {})",
                known.join(", ")
            )));
        }
        map.insert(key.clone(), value.clone());
    }
    Ok(config)
}

fn parse<T: serde::de::DeserializeOwned>(config: &Value) -> Result<T> {
    serde_json::from_value(config.clone()).map_err(|e| LearnError::Config(e.to_string()))
}

fn ppo_config(config: &Value, total_steps: Option<u64>) -> Result<PpoConfig> {
    let mut cfg: PpoConfig = parse(config)?;
    cfg.total_steps = total_steps.unwrap_or(cfg.total_steps);
    cfg.validate().map_err(LearnError::Config)?;
    Ok(cfg)
}

fn grpo_config(config: &Value, total_steps: Option<u64>) -> Result<GrpoConfig> {
    let mut cfg: GrpoConfig = parse(config)?;
    cfg.total_steps = total_steps.unwrap_or(cfg.total_steps);
    cfg.validate().map_err(LearnError::Config)?;
    Ok(cfg)
}

fn sac_config(config: &Value, total_steps: Option<u64>) -> Result<SacConfig> {
    let mut cfg: SacConfig = parse(config)?;
    cfg.total_steps = total_steps.unwrap_or(cfg.total_steps);
    cfg.validate().map_err(LearnError::Config)?;
    Ok(cfg)
}

fn td3_config(config: &Value, total_steps: Option<u64>) -> Result<Td3Config> {
    let mut cfg: Td3Config = parse(config)?;
    cfg.total_steps = total_steps.unwrap_or(cfg.total_steps);
    cfg.validate().map_err(LearnError::Config)?;
    Ok(cfg)
}

/// A learner of any algorithm.
enum Learner {
    Ppo(Box<Ppo>),
    Sac(Box<Sac>),
    Td3(Box<Td3>),
    Dsac(Box<Dsac>),
    GroupTokens(Box<Grpo<SequencePolicy>>),
    GroupControl(Box<Grpo<ControlPolicy>>),
}

impl Learner {
    /// Builds the learner a run describes; returns it with the steps to train for.
    fn build(info: &RunInfo, total_steps: Option<u64>) -> Result<(Self, u64)> {
        let device = info.backend.device()?;
        let (env, seed, threads) = (info.env.clone(), info.seed, info.threads);
        let spec = proprio::registry().spec(&env.id, &env.config)?;
        let tokens = matches!(spec.action_space, Space::Tokens { .. });
        Ok(match (info.algo, tokens) {
            (Algo::Grpo, _) | (Algo::Ppo, true) => {
                let cfg = grpo_config(&info.config, total_steps)?;
                let total = cfg.total_steps;
                let envs = registry_envs(&env);
                let learner = if tokens {
                    Self::GroupTokens(Box::new(Grpo::sequence(envs, cfg, seed, device, threads)?))
                } else {
                    Self::GroupControl(Box::new(Grpo::control(envs, cfg, seed, device, threads)?))
                };
                (learner, total)
            }
            (Algo::Ppo, false) => {
                let cfg = ppo_config(&info.config, total_steps)?;
                let total = cfg.total_steps;
                (
                    Self::Ppo(Box::new(Ppo::new(env, cfg, seed, device, threads)?)),
                    total,
                )
            }
            (Algo::Sac, _) => {
                let cfg = sac_config(&info.config, total_steps)?;
                let total = cfg.total_steps;
                (
                    Self::Sac(Box::new(Sac::new(env, cfg, seed, device, threads)?)),
                    total,
                )
            }
            (Algo::Dsac, _) => {
                let cfg = sac_config(&info.config, total_steps)?;
                let total = cfg.total_steps;
                (
                    Self::Dsac(Box::new(Dsac::new(env, cfg, seed, device, threads)?)),
                    total,
                )
            }
            (Algo::Td3, _) => {
                let cfg = td3_config(&info.config, total_steps)?;
                let total = cfg.total_steps;
                (
                    Self::Td3(Box::new(Td3::new(env, cfg, seed, device, threads)?)),
                    total,
                )
            }
        })
    }

    fn resume(self, progress: Progress, checkpoint: &Path) -> Result<Self> {
        Ok(match self {
            Self::Ppo(l) => Self::Ppo(Box::new(l.resume(progress, checkpoint)?)),
            Self::Sac(l) => Self::Sac(Box::new(l.resume(progress, checkpoint)?)),
            Self::Td3(l) => Self::Td3(Box::new(l.resume(progress, checkpoint)?)),
            Self::Dsac(l) => Self::Dsac(Box::new(l.resume(progress, checkpoint)?)),
            Self::GroupTokens(l) => Self::GroupTokens(Box::new(l.resume(progress, checkpoint)?)),
            Self::GroupControl(l) => Self::GroupControl(Box::new(l.resume(progress, checkpoint)?)),
        })
    }

    fn train(&mut self, run: &mut Run) -> Result<()> {
        match self {
            Self::Ppo(l) => l.train(run),
            Self::Sac(l) => l.train(run),
            Self::Td3(l) => l.train(run),
            Self::Dsac(l) => l.train(run),
            Self::GroupTokens(l) => l.train(run),
            Self::GroupControl(l) => l.train(run),
        }
    }
}

/// Starts a new run (saying on stderr, next to its progress bar, which tuned values it applied); returns its directory.
pub fn train(request: TrainRequest) -> Result<PathBuf> {
    let spec = proprio::registry().spec(&request.env.id, &request.env.config)?;
    let mut config = default_config(request.algo, &spec.action_space)?;
    let tuned = crate::tuned(&request.env.id, request.algo)?;
    if let Some((_, values)) = &tuned {
        config = merged(config, values)?;
    }
    let config = merged(config, &request.overrides)?;
    let info = RunInfo {
        algo: request.algo,
        env: request.env,
        seed: request.seed,
        backend: request.backend,
        threads: request.threads,
        config,
        video_every: request.video_every,
    };
    let dir = request.out.unwrap_or_else(|| default_dir(&info));
    let (mut learner, total) = Learner::build(&info, None)?;
    if let Some((source, values)) = tuned {
        let keys: Vec<&str> = values.keys().map(String::as_str).collect();
        eprintln!(
            "tuned hyper-parameters for {} ({source}): {}; --set overrides them",
            info.env.id,
            keys.join(", ")
        );
    }
    let mut run = Run::create(dir, info, total)?;
    learner.train(&mut run)?;
    run.finish();
    Ok(run.dir)
}

/// Continues a run from its last checkpoint, optionally to a new `total_steps`.
pub fn resume(dir: PathBuf, total_steps: Option<u64>) -> Result<PathBuf> {
    let (info, progress, checkpoint) = load_run(&dir)?;
    let (learner, total) = Learner::build(&info, total_steps)?;
    // The run directory itself, also when `dir` named its `checkpoint/`.
    let dir = checkpoint.parent().map_or(dir, Path::to_path_buf);
    let mut run = Run::resume(dir, info, &progress, total)?;
    let mut learner = learner.resume(progress, &checkpoint)?;
    learner.train(&mut run)?;
    run.finish();
    Ok(run.dir)
}
