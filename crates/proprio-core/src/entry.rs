//! What a registered env declares about itself, and the config handling
//! every family shares: the time-limit key, typed parsing, the spec.

use crate::env::EnvSpec;
use crate::error::{Error, Result};
use crate::space::Space;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The config key every env accepts: overrides (or, with `null`, removes) the time limit.
pub const MAX_EPISODE_STEPS: &str = "max_episode_steps";

/// What a registered env declares about itself, independent of config.
#[derive(Debug, Clone, Copy)]
pub struct EnvEntry {
    /// Registry id, `family/name-vN`.
    pub id: &'static str,
    /// One line saying what the task is.
    pub description: &'static str,
    /// Smallest and largest reward of one step.
    pub reward_range: (f64, f64),
    /// Default time limit.
    pub max_episode_steps: Option<u64>,
    /// Physics integration steps per env step.
    pub physics_steps_per_step: u32,
    /// How the reward is computed.
    pub reward: &'static str,
    /// When an episode terminates or truncates.
    pub termination: &'static str,
    /// How out-of-bounds continuous actions are treated.
    pub action_handling: &'static str,
}

/// Splits the generic `max_episode_steps` key off a user config: (the rest, the time limit).
pub fn split_config(
    id: &str,
    config: &Value,
    default_limit: Option<u64>,
) -> Result<(Value, Option<u64>)> {
    let mut map = match config {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        other => {
            return Err(Error::Config {
                id: id.into(),
                message: format!("the config must be a JSON object, not {other}"),
            });
        }
    };
    let limit = match map.remove(MAX_EPISODE_STEPS) {
        None => default_limit,
        Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => Some(n),
            _ => {
                return Err(Error::Config {
                    id: id.into(),
                    message: format!(
                        "{MAX_EPISODE_STEPS} must be a positive integer or null, not {v}"
                    ),
                });
            }
        },
    };
    Ok((Value::Object(map), limit))
}

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
