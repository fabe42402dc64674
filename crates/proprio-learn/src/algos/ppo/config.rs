//! PPO hyper-parameters, defaults from CleanRL's `ppo.py` (discrete actions)
//! and `ppo_continuous_action.py` (box actions).

use crate::nets::actor_critic::AgentShape;
use crate::nets::encoder::CnnConfig;
use crate::nets::head::{BinSpacing, GreedyToken};
use crate::nets::instruction::TextConfig;
use serde::{Deserialize, Serialize};

crate::base::hyper::hyperparameters! {
    /// Every PPO hyper-parameter; `--set key=value` overrides any of them.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct PpoConfig {
        /// Envs stepped in parallel (CleanRL: 4 discrete, 1 continuous).
        pub num_envs: usize,
        /// Steps per env per rollout (CleanRL: 128 discrete, 2048 continuous).
        pub num_steps: usize,
        /// Adam learning rate (CleanRL: 2.5e-4 discrete, 3e-4 continuous).
        pub learning_rate: f64,
        /// Anneal the learning rate linearly to 0 over training (CleanRL: true).
        pub anneal_lr: bool,
        /// Discount factor (CleanRL: 0.99).
        pub gamma: f32,
        /// GAE lambda (CleanRL: 0.95).
        pub gae_lambda: f32,
        /// Minibatches per epoch (CleanRL: 4 discrete, 32 continuous).
        pub num_minibatches: usize,
        /// Epochs over each rollout (CleanRL: 4 discrete, 10 continuous).
        pub update_epochs: usize,
        /// Normalise advantages per minibatch (CleanRL: true).
        pub norm_adv: bool,
        /// Surrogate clipping coefficient (CleanRL: 0.2).
        pub clip_coef: f32,
        /// Clip the value loss around the old values (CleanRL: true).
        pub clip_vloss: bool,
        /// Entropy bonus coefficient (CleanRL: 0.01 discrete, 0.0 continuous).
        pub ent_coef: f32,
        /// Value loss coefficient (CleanRL: 0.5).
        pub vf_coef: f32,
        /// Global gradient-norm bound (CleanRL: 0.5).
        pub max_grad_norm: f64,
        /// Stop the epochs early when the approximate KL exceeds this (CleanRL: off).
        pub target_kl: Option<f32>,
        /// Normalise observations and rewards, clipped to ±10 (CleanRL: continuous only).
        pub normalize: bool,
        /// With `normalize`, normalise the observations too (CleanRL: yes; SB3's
        /// `norm_obs`). Off, only rewards are: the running statistics keep moving
        /// as the policy improves and its states narrow, which shifts a
        /// deterministic policy's inputs after its learning rate has annealed away.
        #[serde(default = "yes")]
        pub normalize_obs: bool,
        /// Threads of the update's matrix products (Proprio: 1; on the 2-core
        /// VM, two made pick-cube's update slower, 254 against 219 ms).
        #[serde(default = "one")]
        pub update_threads: usize,
        /// Hidden layer sizes of actor and critic (CleanRL: 64, 64, tanh).
        pub hidden: Vec<usize>,
        /// The CNN image observations go through first (see `encoder::CnnConfig`).
        #[serde(default)]
        pub cnn: CnnConfig,
        /// The encoder of an instruction's token ids (see `instruction::TextConfig`).
        #[serde(default)]
        pub text: TextConfig,
        /// Half-open ranges `[start, end)` of observation values only the critic
        /// reads (asymmetric actor-critic, Pinto et al. 2017: privileged state for
        /// the value, not the policy); empty: both read everything.
        #[serde(default)]
        pub critic_only: Vec<[usize; 2]>,
        /// Weight of an auxiliary loss: a linear head on the actor's features
        /// predicts the `critic_only` values (game-feature prediction, Lample &
        /// Chaplot 2017), so an image encoder learns to see what only the critic
        /// is told; 0: off.
        #[serde(default)]
        pub aux_coef: f32,
        /// Squash the Gaussian's mean into the action box with tanh, so the
        /// deterministic policy cannot saturate the actuators and flicker
        /// between their limits (CleanRL: no; the mean is unbounded and the env clips).
        #[serde(default)]
        pub squash_mean: bool,
        /// Weight of a penalty on Gaussian means beyond the action box widened by
        /// 10% (rl_games' `bounds_loss_coef`, 1e-4 in IsaacGymEnvs; CleanRL: none):
        /// past the box the env clips every sample alike and nothing pulls the
        /// mean back within reach of exploration; 0: off.
        #[serde(default)]
        pub bound_coef: f32,
        /// Initial log standard deviation of a Gaussian policy (CleanRL: 0, σ = 1;
        /// RL Zoo's PyBullet recipes: −2). Actions start this noisy and the
        /// learner narrows them from there.
        #[serde(default)]
        pub log_std_init: f32,
        /// Box actions as this many evenly spaced values per component, one
        /// categorical token each (RT-2's and OpenVLA's action tokens: 256);
        /// 0: a Gaussian.
        #[serde(default)]
        pub action_bins: usize,
        /// Where those values lie: `even` (RT-2), or `square`, crowded toward
        /// the centre for a delta controller's fine moves.
        #[serde(default)]
        pub action_bin_spacing: BinSpacing,
        /// What the deterministic policy acts with those tokens: each one's
        /// `mode` (RT-2) or its `mean` value, between bins (PPO's key).
        #[serde(default)]
        pub action_bin_greedy: GreedyToken,
        /// Standardise the state values with fixed statistics in the weights:
        /// behaviour cloning's (`--init` from a clone trained with it); a
        /// network from scratch keeps the identity.
        #[serde(default)]
        pub standardize_state: bool,
        /// Exploration-noise schedule: log σ is capped at a bound that falls
        /// linearly from `log_std_init` to this over training (Learning to Fly's
        /// decaying exploration noise), so late rollouts are nearly as steady as
        /// the deterministic policy that is evaluated; none: σ is learned freely.
        #[serde(default)]
        pub log_std_final: Option<f32>,
        /// Iterations at the start in which only the critic learns, on the
        /// features the actor reads, held fixed (RL4VLA: PPO from a clone
        /// needs a critic warmed up on the clone's own rollouts before its
        /// advantages move the actor); 0: none.
        #[serde(default)]
        pub critic_warmup: u64,
        /// Adam epsilon (CleanRL: 1e-5).
        pub adam_eps: f32,
    }
}

impl PpoConfig {
    /// CleanRL `ppo.py` defaults, for discrete and multi-discrete actions.
    pub fn discrete() -> Self {
        Self {
            total_steps: 500_000,
            num_envs: 4,
            num_steps: 128,
            learning_rate: 2.5e-4,
            anneal_lr: true,
            gamma: 0.99,
            gae_lambda: 0.95,
            num_minibatches: 4,
            update_epochs: 4,
            norm_adv: true,
            clip_coef: 0.2,
            clip_vloss: true,
            ent_coef: 0.01,
            vf_coef: 0.5,
            max_grad_norm: 0.5,
            target_kl: None,
            normalize: false,
            normalize_obs: true,
            update_threads: 1,
            hidden: vec![64, 64],
            cnn: CnnConfig::default(),
            text: TextConfig::default(),
            critic_only: Vec::new(),
            aux_coef: 0.0,
            squash_mean: false,
            bound_coef: 0.0,
            log_std_init: 0.0,
            action_bins: 0,
            action_bin_spacing: BinSpacing::Even,
            action_bin_greedy: GreedyToken::Mode,
            standardize_state: false,
            log_std_final: None,
            critic_warmup: 0,
            adam_eps: 1e-5,
            eval_every: 10_000,
            eval_episodes: 10,
        }
    }

    /// CleanRL `ppo_continuous_action.py` defaults, for box actions.
    pub fn continuous() -> Self {
        Self {
            total_steps: 1_000_000,
            num_envs: 1,
            num_steps: 2048,
            learning_rate: 3e-4,
            num_minibatches: 32,
            update_epochs: 10,
            ent_coef: 0.0,
            normalize: true,
            ..Self::discrete()
        }
    }

    /// The networks' architecture.
    pub fn shape(&self) -> AgentShape {
        AgentShape {
            hidden: self.hidden.clone(),
            cnn: self.cnn.clone(),
            text: self.text.clone(),
            critic_only: self.critic_only.clone(),
            aux: self.aux_coef > 0.0,
            squash_mean: self.squash_mean,
            log_std_init: self.log_std_init,
            action_bins: self.action_bins,
            action_bin_spacing: self.action_bin_spacing,
            action_bin_greedy: self.action_bin_greedy,
            standardize_state: self.standardize_state,
        }
    }

    /// The cap on log σ after `done` of `total` iterations, if the noise is scheduled.
    pub fn log_std_cap(&self, done: u64, total: u64) -> Option<f32> {
        let end = self.log_std_final?;
        let frac = (done as f32 / total.max(1) as f32).min(1.0);
        Some(self.log_std_init + frac * (end - self.log_std_init))
    }

    /// Transitions per rollout.
    pub fn batch_size(&self) -> usize {
        self.num_envs * self.num_steps
    }

    /// Transitions per minibatch.
    pub fn minibatch_size(&self) -> usize {
        self.batch_size() / self.num_minibatches.max(1)
    }

    /// Rejects settings the algorithm cannot run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.num_envs == 0
            || self.num_steps == 0
            || self.num_minibatches == 0
            || self.update_epochs == 0
            || self.update_threads == 0
        {
            return Err(
                "num_envs, num_steps, num_minibatches, update_epochs and update_threads must be positive"
                    .into(),
            );
        }
        if self.minibatch_size() == 0 {
            return Err(format!(
                "num_minibatches ({}) exceeds the rollout size ({})",
                self.num_minibatches,
                self.batch_size()
            ));
        }
        if !(0.0..=1.0).contains(&self.gamma) || !(0.0..=1.0).contains(&self.gae_lambda) {
            return Err("gamma and gae_lambda must lie in [0, 1]".into());
        }
        if self.hidden.is_empty() || self.hidden.contains(&0) {
            return Err("hidden must list at least one positive layer size".into());
        }
        self.cnn.validate()?;
        self.text.validate()?;
        if !self.log_std_init.is_finite() {
            return Err(format!(
                "log_std_init must be a finite number, not {}",
                self.log_std_init
            ));
        }
        if let Some(end) = self.log_std_final
            && !(end.is_finite() && end <= self.log_std_init)
        {
            return Err(format!(
                "log_std_final must be a finite number ≤ log_std_init ({}), not {end}",
                self.log_std_init
            ));
        }
        if !(self.aux_coef >= 0.0 && self.aux_coef.is_finite()) {
            return Err(format!(
                "aux_coef must be a finite number ≥ 0, not {}",
                self.aux_coef
            ));
        }
        if self.learning_rate.is_nan() || self.learning_rate <= 0.0 || self.eval_episodes == 0 {
            return Err("learning_rate and eval_episodes must be positive".into());
        }
        Ok(())
    }
}

/// serde's default for keys that are on unless a run says otherwise.
fn yes() -> bool {
    true
}

fn one() -> usize {
    1
}
