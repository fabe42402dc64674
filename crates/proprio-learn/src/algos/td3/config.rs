//! TD3 hyper-parameters, defaults from CleanRL's `td3_continuous_action.py`.

use crate::nets::mlp::Activation;
use serde::{Deserialize, Serialize};

crate::algos::offpolicy::replay_hyperparameters! {
    /// Every TD3 hyper-parameter; `--set key=value` overrides any of them.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Td3Config {
        /// Target-network Polyak coefficient (CleanRL: 0.005).
        pub tau: f64,
        /// Adam learning rate of actor and critics (CleanRL: 3e-4).
        pub learning_rate: f64,
        /// Actor and target networks are updated every this many critic steps (CleanRL: 2).
        pub policy_frequency: u64,
        /// Std of the target policy smoothing noise, in half-widths of the action box (CleanRL: 0.2).
        pub policy_noise: f32,
        /// The smoothing noise is clipped to ± this, in half-widths (CleanRL: 0.5).
        pub noise_clip: f32,
        /// Std of the Gaussian exploration noise, in half-widths of the action box (CleanRL: 0.1).
        pub exploration_noise: f32,
        /// Hidden layer sizes of actor and critics (CleanRL: 256, 256).
        pub hidden: Vec<usize>,
        /// Hidden-layer non-linearity of actor and critics (CleanRL: ReLU; Learning to Fly: tanh).
        #[serde(default)]
        pub activation: Activation,
    }
}

impl Default for Td3Config {
    fn default() -> Self {
        Self {
            total_steps: 1_000_000,
            num_envs: 1,
            buffer_size: 1_000_000,
            gamma: 0.99,
            tau: 0.005,
            batch_size: 256,
            learning_starts: 25_000,
            learning_rate: 3e-4,
            policy_frequency: 2,
            policy_noise: 0.2,
            noise_clip: 0.5,
            exploration_noise: 0.1,
            hidden: vec![256, 256],
            activation: Activation::Relu,
            normalize: false,
            update_threads: 1,
            reward_curriculum: None,
            eval_every: 5_000,
            eval_episodes: 10,
        }
    }
}

impl Td3Config {
    /// Rejects settings the algorithm cannot run with.
    pub fn validate(&self) -> Result<(), String> {
        self.schedule().validate()?;
        if self.policy_frequency == 0 {
            return Err("policy_frequency must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.tau) {
            return Err("tau must lie in [0, 1]".into());
        }
        let noises = [self.policy_noise, self.noise_clip, self.exploration_noise];
        if noises.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err("policy_noise, noise_clip and exploration_noise must be ≥ 0".into());
        }
        if self.hidden.is_empty() || self.hidden.contains(&0) {
            return Err("hidden must list positive layer sizes".into());
        }
        Ok(())
    }
}
