//! A reward curriculum (Learning to Fly's): numbers of the env's config that
//! grow by a factor every so many env steps, up to a limit. The learner
//! rebuilds its envs with the grown config and carries their episodes over
//! through snapshots; evaluation keeps the run's own config.

use crate::base::error::{LearnError, Result};
use proprio::serde_json::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `grow`'s config numbers, multiplied by their factor every `every` env steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Curriculum {
    /// Env steps (summed over envs) between growths (Learning to Fly: 100,000).
    pub every: u64,
    /// Dotted config paths, e.g. `squared_reward.position`, and how each grows.
    pub grow: BTreeMap<String, Growth>,
}

/// How one config number grows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Growth {
    /// The factor per stage (Learning to Fly: position 1.2, velocity and action 1.4).
    pub factor: f64,
    /// The value it stops at (Learning to Fly: position 40, velocity and action 1).
    pub limit: f64,
}

impl Curriculum {
    /// Rejects a curriculum that cannot run.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.every == 0 || self.grow.is_empty() {
            return Err("reward_curriculum needs every > 0 and at least one key to grow".into());
        }
        for (path, g) in &self.grow {
            if !(g.factor.is_finite() && g.factor > 0.0 && g.limit.is_finite()) {
                return Err(format!(
                    "reward_curriculum key {path}: factor must be finite and positive, limit finite"
                ));
            }
        }
        Ok(())
    }

    /// How many growths have happened by env step `step`.
    pub fn stage(&self, step: u64) -> u64 {
        step / self.every
    }

    /// `config` (complete, with its defaults) with every grown number at `stage`:
    /// `value · factor^stage`, stopped at `limit` (a value already past it stays).
    pub fn config_at(&self, config: &Value, stage: u64) -> Result<Value> {
        let mut config = config.clone();
        for (path, g) in &self.grow {
            let slot = path
                .split('.')
                .try_fold(&mut config, |v, key| v.get_mut(key))
                .filter(|v| v.is_number())
                .ok_or_else(|| {
                    LearnError::Config(format!(
                        "reward_curriculum key {path} is not a number in the env's config"
                    ))
                })?;
            let start = slot.as_f64().unwrap_or_default();
            let grown = start * g.factor.powf(stage as f64);
            let value = if g.factor >= 1.0 {
                grown.min(g.limit.max(start))
            } else {
                grown.max(g.limit.min(start))
            };
            *slot = Value::from(value);
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proprio::serde_json::json;

    /// Learning to Fly's schedule: ×1.2 per 100k steps up to 40, ×1.4 up to 1.
    fn l2f() -> Curriculum {
        let growth = |factor, limit| Growth { factor, limit };
        Curriculum {
            every: 100_000,
            grow: BTreeMap::from([
                ("squared_reward.position".into(), growth(1.2, 40.0)),
                ("squared_reward.action".into(), growth(1.4, 1.0)),
            ]),
        }
    }

    #[test]
    fn numbers_grow_by_their_factor_each_stage_and_stop_at_the_limit() {
        let c = l2f();
        let config = json!({"squared_reward": {"position": 5.0, "action": 0.01, "constant": 2.0}});
        assert_eq!(
            (c.stage(99_999), c.stage(100_000), c.stage(250_000)),
            (0, 1, 2)
        );
        assert_eq!(c.config_at(&config, 0).unwrap(), config);
        let two = c.config_at(&config, 2).unwrap();
        let r = &two["squared_reward"];
        assert!((r["position"].as_f64().unwrap() - 5.0 * 1.44).abs() < 1e-9);
        assert!((r["action"].as_f64().unwrap() - 0.01 * 1.96).abs() < 1e-12);
        assert_eq!(r["constant"], 2.0, "keys outside the curriculum stay");
        let late = c.config_at(&config, 60).unwrap();
        assert_eq!(late["squared_reward"]["position"], 40.0);
        assert_eq!(late["squared_reward"]["action"], 1.0);
        // A shrinking number stops at its floor; one already past its limit stays.
        let mut shrink = l2f();
        shrink.grow.insert(
            "squared_reward.constant".into(),
            Growth {
                factor: 0.5,
                limit: 0.5,
            },
        );
        let past = json!({"squared_reward": {"position": 50.0, "action": 0.01, "constant": 2.0}});
        let late = shrink.config_at(&past, 10).unwrap();
        assert_eq!(late["squared_reward"]["constant"], 0.5);
        assert_eq!(late["squared_reward"]["position"], 50.0);
    }

    #[test]
    fn a_missing_key_or_a_bad_growth_is_a_config_error() {
        let c = l2f();
        let error = c.config_at(&json!({"squared_reward": {"position": 5.0}}), 1);
        assert!(
            error
                .unwrap_err()
                .to_string()
                .contains("squared_reward.action")
        );
        let error = c.config_at(
            &json!({"squared_reward": {"position": "5", "action": 1.0}}),
            1,
        );
        assert!(
            error
                .unwrap_err()
                .to_string()
                .contains("squared_reward.position")
        );
        let mut bad = l2f();
        bad.every = 0;
        assert!(bad.validate().is_err());
        let mut bad = l2f();
        bad.grow.insert(
            "x".into(),
            Growth {
                factor: f64::NAN,
                limit: 1.0,
            },
        );
        assert!(bad.validate().unwrap_err().contains("x"));
        assert!(l2f().validate().is_ok());
    }
}
