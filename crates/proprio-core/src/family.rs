//! Helpers for env families configured by one serde struct (the drones, the
//! manipulation tasks): register their tasks, parse a user's config, build
//! the spec `proprio info` shows, refuse reset options.

use crate::agent::Agent;
use crate::env::{Env, EnvSpec, ResetOptions};
use crate::error::{Error, Result};
use crate::registry::{EnvEntry, MAX_EPISODE_STEPS, Registry, split_config};
use crate::space::Space;
use crate::vec_env::{VecEnv, VecOptions};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::sync::Arc;

/// `message` as a config error of `entry`.
pub fn config_error(entry: &EnvEntry, message: impl Into<String>) -> Error {
    Error::Config {
        id: entry.id.into(),
        message: message.into(),
    }
}

/// Parses a user's `config` for `entry`: the family's typed config and the time limit.
pub fn parse_config<C: DeserializeOwned>(
    entry: &EnvEntry,
    config: &Value,
) -> Result<(C, Option<u64>)> {
    let (rest, limit) = split_config(entry.id, config, entry.max_episode_steps)?;
    let parsed = serde_json::from_value(rest).map_err(|e| config_error(entry, e.to_string()))?;
    Ok((parsed, limit))
}

/// The spec of an env of `entry` made with `config` (defaults resolved) and
/// time limit `limit`; refuses malformed spaces.
pub fn entry_spec<C: Serialize>(
    entry: &EnvEntry,
    config: &C,
    limit: Option<u64>,
    observation_space: Space,
    action_space: Space,
    physics_steps_per_step: u32,
) -> Result<Arc<EnvSpec>> {
    for (what, space) in [
        ("observation", &observation_space),
        ("action", &action_space),
    ] {
        space
            .validate()
            .map_err(|e| config_error(entry, format!("{what} space: {e}")))?;
    }
    let mut config =
        serde_json::to_value(config).map_err(|e| config_error(entry, e.to_string()))?;
    if let Value::Object(map) = &mut config {
        map.insert(
            MAX_EPISODE_STEPS.into(),
            limit.map_or(Value::Null, Value::from),
        );
    }
    Ok(Arc::new(EnvSpec {
        id: entry.id.into(),
        description: entry.description.into(),
        observation_space,
        action_space,
        reward_range: entry.reward_range,
        max_episode_steps: limit,
        physics_steps_per_step,
        reward: entry.reward.into(),
        termination: entry.termination.into(),
        action_handling: entry.action_handling.into(),
        config,
    }))
}

/// Accepts only empty reset options; `hint` (may be empty) says how to configure starts instead.
pub fn no_reset_options(family: &str, hint: &str, options: ResetOptions) -> Result<()> {
    match options {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(map)) if map.is_empty() => Ok(()),
        Some(other) => Err(Error::Options(format!(
            "{family} envs take no reset options{hint}, got {other}"
        ))),
    }
}

/// Builds a batch of `n` envs of a family's task `T` from a user config.
pub type MakeFamilyVec<T> = fn(&EnvEntry, T, &Value, usize, VecOptions) -> Result<Box<dyn VecEnv>>;

/// How a family builds the envs of one of its tasks `T`.
pub struct FamilyMakers<T> {
    /// One env from a user config.
    pub make: fn(&EnvEntry, T, &Value) -> Result<Box<dyn Env>>,
    /// A batch of envs from a user config.
    pub make_vec: MakeFamilyVec<T>,
    /// The scripted baseline for envs of a spec.
    pub scripted: fn(&EnvEntry, T, &EnvSpec) -> Result<Box<dyn Agent + Send>>,
}

/// Registers every `(entry, task, default config)` of a family with its makers and scripted baseline.
pub fn register_family<T: Copy + Send + Sync + 'static>(
    registry: &mut Registry,
    tasks: impl IntoIterator<Item = (EnvEntry, T, Value)>,
    makers: &FamilyMakers<T>,
) {
    for (entry, task, default_config) in tasks {
        let (make, make_vec, scripted) = (makers.make, makers.make_vec, makers.scripted);
        registry.register(
            entry,
            default_config,
            Box::new(move |config| make(&entry, task, config)),
            Box::new(move |config, n, options| make_vec(&entry, task, config, n, options)),
        );
        // The id was registered just above.
        let _ = registry
            .register_scripted(entry.id, Box::new(move |spec| scripted(&entry, task, spec)));
    }
}
