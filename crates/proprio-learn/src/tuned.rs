//! Per-env tuned recipes (`tuned.json`), as RL Zoo's hyperparams files: the
//! learner keys go over an algorithm's defaults and under the user's `--set`;
//! the env config a recipe was tuned with goes under the user's `--config`, so
//! `proprio train --env ID` alone reproduces it. A recipe is keyed by env and
//! algorithm, and by observation mode for pixel recipes (`"ppo/rgb+state"`
//! beside `"ppo"`); an observation mode without its own recipe uses the algorithm's.

use crate::base::error::{LearnError, Result};
use crate::run::Algo;
use proprio::render::ObsMode;
use proprio::serde_json::{self, Map, Value};
use serde::Deserialize;

const TUNED: &str = include_str!("../tuned.json");

/// One tuned recipe.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The `tuned.json` key it was found under (`ppo`, `ppo/rgb+state`).
    #[serde(skip)]
    pub key: String,
    /// Where the values come from (measurements, papers).
    pub source: String,
    /// Env config keys it was tuned with.
    #[serde(default)]
    pub env: Map<String, Value>,
    /// Learner hyper-parameters.
    pub values: Map<String, Value>,
}

/// The tuned recipe for `env` under `algo` observing `obs`; `None` if there is none.
pub fn tuned(env: &str, algo: Algo, obs: ObsMode) -> Result<Option<Recipe>> {
    let table: Value = serde_json::from_str(TUNED)
        .map_err(|e| LearnError::Config(format!("tuned.json does not parse: {e}")))?;
    let Some(recipes) = table.get(env) else {
        return Ok(None);
    };
    let pixel_key = format!("{}/{obs}", algo.name());
    let key = if obs != ObsMode::State && recipes.get(&pixel_key).is_some() {
        pixel_key
    } else {
        algo.name().to_string()
    };
    let Some(entry) = recipes.get(&key) else {
        return Ok(None);
    };
    let recipe = serde_json::from_value(entry.clone())
        .map_err(|e| LearnError::Config(format!("tuned.json: {env} / {key}: {e}")))?;
    Ok(Some(Recipe { key, ..recipe }))
}

/// `config` with the recipe's env keys filled in where the user gave none.
pub fn env_config(recipe: &Recipe, config: Value) -> Result<Value> {
    let mut merged = match config {
        Value::Null => Map::new(),
        Value::Object(map) => map,
        other => {
            return Err(LearnError::Config(format!(
                "the env config must be a JSON object, got {other}"
            )));
        }
    };
    for (key, value) in &recipe.env {
        merged.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Ok(Value::Object(merged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proprio::serde_json::json;

    #[test]
    fn every_entry_names_a_registered_env_its_config_and_known_keys() {
        let table: Value = serde_json::from_str(TUNED).unwrap();
        let Value::Object(envs) = table else {
            panic!("tuned.json is not an object");
        };
        let mut checked = 0;
        for (env, recipes) in envs.iter().filter(|(k, _)| !k.starts_with('_')) {
            for key in recipes.as_object().unwrap().keys() {
                let (name, obs) = key.split_once('/').unwrap_or((key, "state"));
                let algo = Algo::from_name(name).unwrap_or_else(|| panic!("{env}: {key}"));
                let obs: ObsMode = obs.parse().unwrap();
                let recipe = tuned(env, algo, obs).unwrap().unwrap();
                assert_eq!(&recipe.key, key);
                assert!(
                    !recipe.source.is_empty(),
                    "{env}/{key}: say where the values come from"
                );
                let config = env_config(&recipe, Value::Null).unwrap();
                let spec = proprio::registry()
                    .spec(env, &config)
                    .unwrap_or_else(|e| panic!("{env}/{key}: {e}"));
                let defaults = crate::default_config(algo, &spec.action_space).unwrap();
                for k in recipe.values.keys() {
                    assert!(defaults.get(k).is_some(), "{env}/{key}: unknown key {k}");
                }
                checked += 1;
            }
        }
        assert!(checked >= 2);
    }

    #[test]
    fn the_user_config_wins_over_the_recipe_and_pixels_fall_back() {
        let recipe = Recipe {
            key: "ppo".into(),
            source: "test".into(),
            env: json!({"control": "pd_ee_delta_pos", "joint_noise": 0.02})
                .as_object()
                .unwrap()
                .clone(),
            values: Map::new(),
        };
        let merged = env_config(&recipe, json!({"control": "pd_joint_pos"})).unwrap();
        assert_eq!(
            merged,
            json!({"control": "pd_joint_pos", "joint_noise": 0.02})
        );
        assert!(env_config(&recipe, json!([1])).is_err());
        // Reach has a state recipe only: pixel runs use it.
        let state = tuned("manipulation/reach-v0", Algo::Ppo, ObsMode::State).unwrap();
        let rgb = tuned("manipulation/reach-v0", Algo::Ppo, ObsMode::Rgb).unwrap();
        assert_eq!(state, rgb);
        assert!(
            tuned("classic/cartpole-v1", Algo::Td3, ObsMode::State)
                .unwrap()
                .is_none()
        );
    }
}
