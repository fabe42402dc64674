//! SAC hyper-parameters, defaults from CleanRL's `sac_continuous_action.py`.

use crate::algos::offpolicy::Schedule;
use serde::{Deserialize, Serialize};

/// Every SAC hyper-parameter; `--set key=value` overrides any of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SacConfig {
    /// Env steps (summed over envs) to train for (CleanRL: 1e6).
    pub total_steps: u64,
    /// Envs stepped in parallel; each step adds `num_envs` transitions (CleanRL: 1).
    pub num_envs: usize,
    /// Replay buffer capacity in transitions (CleanRL: 1e6).
    pub buffer_size: usize,
    /// Discount factor (CleanRL: 0.99).
    pub gamma: f32,
    /// Target-network Polyak coefficient (CleanRL: 0.005).
    pub tau: f64,
    /// Transitions per gradient step (CleanRL: 256).
    pub batch_size: usize,
    /// Env steps of uniformly random actions before learning (CleanRL: 5e3).
    pub learning_starts: u64,
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
    /// Normalise observations (CleanRL: no).
    pub normalize: bool,
    /// Threads of the update's matrix products (Proprio: 1; on the 2-core VM,
    /// 256-wide layers split over 2 threads made a whole run 25% slower).
    pub update_threads: usize,
    /// Evaluate the deterministic policy every this many env steps (0: only at the end).
    pub eval_every: u64,
    /// Episodes per evaluation.
    pub eval_episodes: usize,
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
            normalize: false,
            update_threads: 1,
            eval_every: 5_000,
            eval_episodes: 10,
        }
    }
}

impl SacConfig {
    /// The off-policy loop's settings.
    pub fn schedule(&self) -> Schedule {
        Schedule {
            total_steps: self.total_steps,
            num_envs: self.num_envs,
            buffer_size: self.buffer_size,
            batch_size: self.batch_size,
            learning_starts: self.learning_starts,
            gamma: self.gamma,
            normalize: self.normalize,
            update_threads: self.update_threads,
            eval_every: self.eval_every,
            eval_episodes: self.eval_episodes,
        }
    }

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
        Ok(())
    }
}
