//! Per-env tuned hyper-parameters (`tuned.json`), applied over an algorithm's
//! defaults and under the user's `--set` overrides, as RL Zoo does.

use crate::base::error::{LearnError, Result};
use crate::run::Algo;
use proprio::serde_json::{self, Map, Value};

const TUNED: &str = include_str!("../tuned.json");

/// Tuned hyper-parameters for `env` under `algo`, with where they come from; `None` if there are none.
pub fn tuned(env: &str, algo: Algo) -> Result<Option<(String, Map<String, Value>)>> {
    let table: Value = serde_json::from_str(TUNED)
        .map_err(|e| LearnError::Config(format!("tuned.json does not parse: {e}")))?;
    let key = algo.name();
    let Some(entry) = table.get(env).and_then(|e| e.get(key)) else {
        return Ok(None);
    };
    let source = entry
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match entry.get("values") {
        Some(Value::Object(values)) => Ok(Some((source, values.clone()))),
        _ => Err(LearnError::Config(format!(
            "tuned.json: {env} / {key} has no \"values\" object"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_names_a_registered_env_and_known_keys() {
        let table: Value = serde_json::from_str(TUNED).unwrap();
        let Value::Object(envs) = table else {
            panic!("tuned.json is not an object");
        };
        let mut checked = 0;
        for (env, algos) in envs.iter().filter(|(k, _)| !k.starts_with('_')) {
            let spec = proprio::registry().spec(env, &Value::Null).unwrap();
            for algo in [Algo::Ppo, Algo::Sac, Algo::Td3, Algo::Dsac, Algo::Grpo] {
                let name = algo.name();
                if algos.get(name).is_none() {
                    continue;
                }
                let (source, values) = tuned(env, algo).unwrap().unwrap();
                assert!(
                    !source.is_empty(),
                    "{env}/{name}: say where the values come from"
                );
                let defaults = crate::default_config(algo, &spec.action_space).unwrap();
                for key in values.keys() {
                    assert!(
                        defaults.get(key).is_some(),
                        "{env}/{name}: unknown key {key}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked >= 2);
    }
}
