//! Configs of the classic envs; every key has Gymnasium's default.

use serde::{Deserialize, Serialize};

/// `classic/cartpole-v1` config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CartPoleConfig {
    /// Sutton & Barto's reward: 0 per step, −1 when the pole falls (Gymnasium's `sutton_barto_reward`).
    pub sutton_barto_reward: bool,
}

/// `classic/pendulum-v1` config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PendulumConfig {
    /// Gravitational acceleration in m/s² (Gymnasium's `g`).
    pub g: f64,
}

impl Default for PendulumConfig {
    fn default() -> Self {
        Self { g: 10.0 }
    }
}
