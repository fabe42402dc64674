//! [`Family`]: a batched env family — config, tasks, a [`ChunkedModel`], a
//! scripted agent, an optional GPU twin — written once, registered by one
//! generic function that owns config parsing and defaults, the spec, the
//! CPU / GPU / no-GPU dispatch and the reset-options check.

use crate::agent::Agent;
use crate::chunked::{ChunkedKernel, ChunkedModel};
use crate::entry::{EnvEntry, config_error, entry_spec, parse_config};
use crate::env::{Env, EnvSpec, ResetOptions};
use crate::error::{Error, Result};
use crate::kernel::{KernelEnv, KernelVecEnv};
use crate::registry::{Registry, Teleop};
use crate::space::Space;
use crate::vec_env::{AutoresetMode, Backend, VecEnv, VecOptions};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::sync::Arc;

/// Builds a batch of `n` envs of a model on a GPU (a family's GPU twin).
pub type GpuVecEnv<M> = fn(Arc<EnvSpec>, M, usize, AutoresetMode) -> Result<Box<dyn VecEnv>>;

/// A family of batched envs whose state is a block of floats per env.
pub trait Family: Sized + 'static {
    /// The user's config: every key optional, unknown keys refused.
    type Config: Serialize + DeserializeOwned;
    /// Which of the family's tasks an entry is.
    type Task: Copy + Send + Sync + 'static;
    /// A config checked and resolved for one task.
    type Settings: Send + Sync + 'static;
    /// One env's physics and rules, stepped on CPU threads (and on the GPU by its twin).
    type Model: ChunkedModel;
    /// The crate, named in the no-GPU error.
    const CRATE: &'static str;
    /// The family in the reset-options error ("drone envs take no reset options").
    const NOUN: &'static str;
    /// How to configure starts instead of reset options (may be empty).
    const START_HINT: &'static str = "";
    /// The GPU twin: `None` in a build without one.
    const GPU: Option<GpuVecEnv<Self::Model>> = None;
    /// Registry entries with their tasks.
    fn entries() -> Vec<(EnvEntry, Self::Task)>;
    /// A task's config with every default spelled out.
    fn defaults(task: Self::Task) -> Self::Config;
    /// Checks `config` for `task` under time limit `limit` (the spec records
    /// it with the keys it leaves unset taken from [`Family::defaults`]).
    fn settings(
        task: Self::Task,
        config: &Self::Config,
        limit: Option<u64>,
    ) -> std::result::Result<Self::Settings, String>;
    /// Observation and action spaces.
    fn spaces(task: Self::Task, settings: &Self::Settings) -> (Space, Space);
    /// Physics steps per env step.
    fn substeps(settings: &Self::Settings) -> u32;
    /// The model of envs with `settings`.
    fn model(settings: Self::Settings) -> Result<Self::Model>;
    /// The scripted agent (hand-written baseline).
    fn scripted(settings: Self::Settings) -> Result<Box<dyn Agent + Send>>;
    /// What the viewer's keys are called (none by default).
    fn teleop(_settings: &Self::Settings) -> Teleop {
        Teleop::default()
    }
    /// A batch of `n` envs; override for a physics other than the model (then call [`model_vec_env`]).
    fn make_vec(
        entry: &EnvEntry,
        spec: Arc<EnvSpec>,
        settings: Self::Settings,
        n: usize,
        options: VecOptions,
    ) -> Result<Box<dyn VecEnv>> {
        model_vec_env::<Self>(entry, spec, settings, n, options)
    }
    /// One env; override with [`Family::make_vec`].
    fn make(
        _entry: &EnvEntry,
        spec: Arc<EnvSpec>,
        settings: Self::Settings,
    ) -> Result<Box<dyn Env>> {
        model_env::<Self>(spec, settings)
    }
    /// Refuses reset options: a family's starts are configured, not passed per reset.
    fn no_options(options: ResetOptions) -> Result<()> {
        no_reset_options(Self::NOUN, Self::START_HINT, options)
    }
}

/// A batch of the family's model on the backend `options` names: CPU threads,
/// the GPU twin, or the one error of a build without it.
pub fn model_vec_env<F: Family>(
    entry: &EnvEntry,
    spec: Arc<EnvSpec>,
    settings: F::Settings,
    n: usize,
    options: VecOptions,
) -> Result<Box<dyn VecEnv>> {
    let model = F::model(settings)?;
    match (options.backend, F::GPU) {
        (Backend::Cpu, _) => {
            let kernel = ChunkedKernel::new(spec, model, n, options.worker_threads())?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        (Backend::Gpu, Some(gpu)) => gpu(spec, model, n, options.autoreset),
        (Backend::Gpu, None) => Err(Error::Backend(format!(
            "this build of {} has no GPU backend for {} (enable its `gpu` feature)",
            F::CRATE,
            entry.id
        ))),
    }
}

/// One env of the family's model on the CPU.
pub fn model_env<F: Family>(spec: Arc<EnvSpec>, settings: F::Settings) -> Result<Box<dyn Env>> {
    let kernel = ChunkedKernel::new(spec, F::model(settings)?, 1, 1)?;
    Ok(Box::new(KernelEnv::new(kernel)?))
}

/// The settings and spec of `entry` (task `task`) under a user config.
pub fn settings<F: Family>(
    entry: &EnvEntry,
    task: F::Task,
    config: &Value,
) -> Result<(F::Settings, Arc<EnvSpec>)> {
    let (parsed, limit): (F::Config, _) = parse_config(entry, config)?;
    let settings =
        F::settings(task, &parsed, limit).map_err(|message| config_error(entry, message))?;
    let (observation_space, action_space) = F::spaces(task, &settings);
    let substeps = F::substeps(&settings);
    let resolved = with_defaults(&parsed, &F::defaults(task))
        .map_err(|e| config_error(entry, e.to_string()))?;
    let spec = entry_spec(
        entry,
        &resolved,
        limit,
        observation_space,
        action_space,
        substeps,
    )?;
    Ok((settings, spec))
}

/// `config` with every top-level key it leaves unset (an absent `Option`) taken from `defaults`.
pub fn with_defaults<C: Serialize + DeserializeOwned>(
    config: &C,
    defaults: &C,
) -> serde_json::Result<C> {
    let mut merged = serde_json::to_value(config)?;
    if let (Value::Object(map), Value::Object(defaults)) =
        (&mut merged, serde_json::to_value(defaults)?)
    {
        for (key, value) in defaults {
            map.entry(key).or_insert(value);
        }
    }
    serde_json::from_value(merged)
}

/// Registers every task of `F` with its makers, scripted agent and key names.
pub fn register<F: Family>(registry: &mut Registry) {
    for (entry, task) in F::entries() {
        let defaults = serde_json::to_value(F::defaults(task)).unwrap_or(Value::Null);
        registry.register(
            entry,
            defaults,
            Box::new(move |config| {
                let (settings, spec) = settings::<F>(&entry, task, config)?;
                F::make(&entry, spec, settings)
            }),
            Box::new(move |config, n, options| {
                let (settings, spec) = settings::<F>(&entry, task, config)?;
                F::make_vec(&entry, spec, settings, n, options)
            }),
        );
        // The id was registered just above.
        let _ = registry.register_scripted(
            entry.id,
            Box::new(move |spec| F::scripted(settings::<F>(&entry, task, &spec.config)?.0)),
        );
        let _ = registry.register_teleop(
            entry.id,
            Box::new(move |spec| Ok(F::teleop(&settings::<F>(&entry, task, &spec.config)?.0))),
        );
    }
}

/// Accepts only empty reset options; `hint` (may be empty) says how to configure starts instead.
pub fn no_reset_options(noun: &str, hint: &str, options: ResetOptions) -> Result<()> {
    match options {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(map)) if map.is_empty() => Ok(()),
        Some(other) => Err(Error::Options(format!(
            "{noun} envs take no reset options{hint}, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Config {
        #[serde(skip_serializing_if = "Option::is_none")]
        rate: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        goal: Option<f32>,
    }

    #[test]
    fn with_defaults_fills_only_the_keys_left_unset() {
        let user = Config {
            rate: Some(7),
            goal: None,
        };
        let defaults = Config {
            rate: Some(10),
            goal: Some(0.5),
        };
        let merged = with_defaults(&user, &defaults).unwrap();
        assert_eq!(
            merged,
            Config {
                rate: Some(7),
                goal: Some(0.5)
            }
        );
    }
}
