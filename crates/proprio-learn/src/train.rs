//! `proprio train`: build or resume a run and train it.

use crate::device::Backend;
use crate::envs::EnvSource;
use crate::error::{LearnError, Result};
use crate::ppo::{Ppo, PpoConfig};
use crate::run::{Algo, Run, RunInfo, default_dir, load_run};
use crate::sac::{Sac, SacConfig};
use proprio::Space;
use proprio::serde_json::{self, Map, Value};
use std::path::PathBuf;

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
    /// Hyper-parameter overrides (`--set key=value`), applied over the defaults.
    pub overrides: Map<String, Value>,
    /// Run directory (default `runs/<env>/<algo>-<seed>-<time>`).
    pub out: Option<PathBuf>,
}

/// The default hyper-parameters of `algo` for `action_space`, as JSON.
pub fn default_config(algo: Algo, action_space: &Space) -> Result<Value> {
    let config = match (algo, action_space) {
        (Algo::Ppo, Space::Box { .. }) => serde_json::to_value(PpoConfig::continuous()),
        (Algo::Ppo, _) => serde_json::to_value(PpoConfig::discrete()),
        (Algo::Sac, Space::Box { .. }) => serde_json::to_value(SacConfig::default()),
        (Algo::Sac, other) => {
            return Err(LearnError::Config(format!(
                "SAC needs a box action space; this env acts in {other}"
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

fn sac_config(config: &Value, total_steps: Option<u64>) -> Result<SacConfig> {
    let mut cfg: SacConfig = parse(config)?;
    cfg.total_steps = total_steps.unwrap_or(cfg.total_steps);
    cfg.validate().map_err(LearnError::Config)?;
    Ok(cfg)
}

/// Starts a new run; returns its directory.
pub fn train(request: TrainRequest) -> Result<PathBuf> {
    let spec = proprio::registry().spec(&request.env.id, &request.env.config)?;
    let config = merged(
        default_config(request.algo, &spec.action_space)?,
        &request.overrides,
    )?;
    let info = RunInfo {
        algo: request.algo,
        env: request.env,
        seed: request.seed,
        backend: request.backend,
        threads: request.threads,
        config,
    };
    let dir = request.out.unwrap_or_else(|| default_dir(&info));
    let device = info.backend.device()?;
    match info.algo {
        Algo::Ppo => {
            let cfg = ppo_config(&info.config, None)?;
            let mut learner = Ppo::new(
                info.env.clone(),
                cfg.clone(),
                info.seed,
                device,
                info.threads,
            )?;
            let mut run = Run::create(dir, info, cfg.total_steps)?;
            learner.train(&mut run)?;
            run.finish();
            Ok(run.dir)
        }
        Algo::Sac => {
            let cfg = sac_config(&info.config, None)?;
            let mut learner = Sac::new(
                info.env.clone(),
                cfg.clone(),
                info.seed,
                device,
                info.threads,
            )?;
            let mut run = Run::create(dir, info, cfg.total_steps)?;
            learner.train(&mut run)?;
            run.finish();
            Ok(run.dir)
        }
    }
}

/// Continues a run from its last checkpoint, optionally to a new `total_steps`.
pub fn resume(dir: PathBuf, total_steps: Option<u64>) -> Result<PathBuf> {
    let (info, _, _) = load_run(&dir)?;
    let device = info.backend.device()?;
    match info.algo {
        Algo::Ppo => {
            let cfg = ppo_config(&info.config, total_steps)?;
            let learner = Ppo::new(
                info.env.clone(),
                cfg.clone(),
                info.seed,
                device,
                info.threads,
            )?;
            let (mut run, progress) = Run::resume(dir, cfg.total_steps)?;
            let mut learner = learner.resume(progress, &run.checkpoint_dir())?;
            learner.train(&mut run)?;
            run.finish();
            Ok(run.dir)
        }
        Algo::Sac => {
            let cfg = sac_config(&info.config, total_steps)?;
            let learner = Sac::new(
                info.env.clone(),
                cfg.clone(),
                info.seed,
                device,
                info.threads,
            )?;
            let (mut run, progress) = Run::resume(dir, cfg.total_steps)?;
            let mut learner = learner.resume(progress, &run.checkpoint_dir())?;
            learner.train(&mut run)?;
            run.finish();
            Ok(run.dir)
        }
    }
}
