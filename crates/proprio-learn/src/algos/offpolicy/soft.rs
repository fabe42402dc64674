//! SAC hyper-parameters, defaults from CleanRL's `sac_continuous_action.py`.

use serde::{Deserialize, Serialize};

crate::algos::offpolicy::replay_hyperparameters! {
    /// Every SAC hyper-parameter; `--set key=value` overrides any of them.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct SacConfig {
        /// Target-network Polyak coefficient (CleanRL: 0.005).
        pub tau: f64,
        /// Actor Adam learning rate (CleanRL: 3e-4).
        pub policy_lr: f64,
        /// Critic (and temperature) Adam learning rate (CleanRL: 1e-3).
        pub q_lr: f64,
        /// Delayed actor updates: every this many steps, this many actor updates (CleanRL: 2).
        pub policy_frequency: u64,
        /// Target networks are updated every this many steps (CleanRL: 1).
        pub target_network_frequency: u64,
        /// Entropy temperature when not autotuned (CleanRL: 0.2).
        pub alpha: f64,
        /// Tune the temperature towards entropy −|A| (CleanRL: true).
        pub autotune: bool,
        /// Hidden layer sizes of actor and critics (CleanRL: 256, 256, ReLU).
        pub hidden: Vec<usize>,
        /// Row shards of each minibatch whose passes run side by side on the
        /// `update_threads` and whose gradients are summed (Proprio: 1, the
        /// plain update; results depend on it, not on the thread count).
        #[serde(default = "one_shard")]
        pub update_shards: usize,
    }
}

impl Default for SacConfig {
    fn default() -> Self {
        Self {
            total_steps: 1_000_000,
            num_envs: 1,
            buffer_size: 1_000_000,
            gamma: 0.99,
            tau: 0.005,
            batch_size: 256,
            learning_starts: 5_000,
            policy_lr: 3e-4,
            q_lr: 1e-3,
            policy_frequency: 2,
            target_network_frequency: 1,
            alpha: 0.2,
            autotune: true,
            hidden: vec![256, 256],
            update_shards: 1,
            normalize: false,
            update_threads: 1,
            reward_curriculum: None,
            eval_every: 5_000,
            eval_episodes: 10,
        }
    }
}

impl SacConfig {
    /// Rejects settings the algorithm cannot run with.
    pub fn validate(&self) -> Result<(), String> {
        self.schedule().validate()?;
        if self.policy_frequency == 0 || self.target_network_frequency == 0 {
            return Err("policy_frequency and target_network_frequency must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.tau) {
            return Err("tau must lie in [0, 1]".into());
        }
        if self.hidden.is_empty() || self.hidden.contains(&0) {
            return Err("hidden must list positive layer sizes".into());
        }
        if self.update_shards == 0 || self.update_shards > self.batch_size {
            return Err("update_shards must lie between 1 and batch_size".into());
        }
        Ok(())
    }
}

/// Runs written before `update_shards` existed ran one shard.
fn one_shard() -> usize {
    1
}
