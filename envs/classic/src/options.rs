//! Parsing of Gymnasium-style reset options (`{"low": -0.1, "high": 0.1}`).

use proprio_core::serde_json::Value;
use proprio_core::{Error, ResetOptions, Result};

/// Reads the numeric option `key`, or `default` when it (or the whole object) is absent.
pub fn number(options: ResetOptions, key: &str, default: f64) -> Result<f64> {
    let Some(options) = options else {
        return Ok(default);
    };
    let Value::Object(map) = options else {
        return Err(Error::Options(format!(
            "expected a JSON object, got {options}"
        )));
    };
    match map.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| Error::Options(format!("'{key}' must be a finite number, not {v}"))),
    }
}

/// Rejects keys the env does not know, so a typo is not silently ignored.
pub fn only(options: ResetOptions, known: &[&str]) -> Result<()> {
    if let Some(Value::Object(map)) = options
        && let Some(key) = map.keys().find(|k| !known.contains(&k.as_str()))
    {
        return Err(Error::Options(format!(
            "unknown option '{key}' (this env takes {})",
            known.join(", ")
        )));
    }
    Ok(())
}
