//! Group-learner hyper-parameters. Defaults follow DAPO (Yu et al. 2025,
//! arXiv:2503.14476) on top of GRPO (Shao et al. 2024, DeepSeekMath,
//! arXiv:2402.03300); each option names its source.

use crate::nets::actor_critic::AgentShape;
use crate::nets::encoder::CnnConfig;
use crate::nets::head::{BinSpacing, GreedyToken};
use crate::nets::instruction::TextConfig;
use crate::nets::sequence::SequenceShape;
use serde::{Deserialize, Serialize};

/// How rewards become advantages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdvantageMode {
    /// GRPO: `(r − mean) / (std + ε)` within the group (DeepSeekMath eq. 3, sample std as TRL).
    Std,
    /// Dr. GRPO: `r − mean`, no std division (Liu et al. 2025, arXiv:2503.20783).
    None,
    /// RLOO: `r − mean of the other G − 1` (Ahmadian et al. 2024, arXiv:2402.14740).
    LeaveOneOut,
    /// PPO: GAE on a learned value per unit (Schulman et al. 2016); needs no groups.
    Gae,
}

/// Which rewards are compared within a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewardMode {
    /// One reward per rollout, its return; every unit gets the rollout's advantage (outcome supervision).
    Outcome,
    /// Every step's reward is normalised against the group's step rewards and a unit's
    /// advantage is the sum of those from its step on (DeepSeekMath §4.1.3, process supervision).
    PerStep,
    /// As `per_step`, but each step is compared with the same step of the group's other
    /// rollouts (a per-position group baseline: answer token t against answer token t).
    PerPosition,
}

/// How unit losses are averaged into the batch loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossAggregation {
    /// Mean over a rollout's units, then over rollouts (GRPO as published).
    Sequence,
    /// Mean over every unit of the batch (DAPO's token-level loss).
    Token,
    /// Sum over a rollout's units divided by a constant, then mean over rollouts (Dr. GRPO).
    Constant,
}

crate::base::hyper::hyperparameters! {
    /// Every group-learner hyper-parameter; `--set key=value` overrides any of them.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct GrpoConfig {
        /// Rollouts per group, all from one snapshot (G; DeepSeekMath: 64, DAPO: 16).
        pub group_size: usize,
        /// Groups per iteration (distinct starts).
        pub groups: usize,
        /// Sampling temperature of rollouts; log-probabilities are taken at it too (verl).
        pub temperature: f32,
        /// Advantage estimator (`std`, `none`, `leave_one_out`; `gae` is PPO).
        pub advantage: AdvantageMode,
        /// Outcome, per-step or per-position rewards.
        pub reward: RewardMode,
        /// ε_low of the clipped ratio `clip(ρ, 1 − ε_low, 1 + ε_high)` (PPO/GRPO: 0.2).
        pub clip_low: f32,
        /// ε_high, clip-higher (DAPO: 0.28; GRPO: 0.2).
        pub clip_high: f32,
        /// Loss aggregation (DAPO: token).
        pub loss_aggregation: LossAggregation,
        /// Dr. GRPO's constant, in units (default: the most units one rollout can take).
        pub loss_constant: Option<f64>,
        /// β of the k3 KL penalty to the frozen initial policy (DeepSeekMath: 0.04; DAPO, Dr. GRPO: 0).
        pub kl_coef: f32,
        /// Drop groups whose rewards are all equal (DAPO's dynamic sampling).
        pub drop_equal_groups: bool,
        /// With `drop_equal_groups`, collect up to this many more batches of
        /// groups per iteration and keep their unequal groups until `groups` are
        /// kept (DAPO's `max_num_gen_batches`; 0: no refill, a smaller batch).
        #[serde(default)]
        pub max_refills: usize,
        /// Passes over each batch (GRPO's μ).
        pub update_epochs: usize,
        /// Minibatches per pass.
        pub num_minibatches: usize,
        /// Adam learning rate.
        pub learning_rate: f64,
        /// Anneal the learning rate linearly to 0.
        pub anneal_lr: bool,
        /// Adam epsilon.
        pub adam_eps: f32,
        /// Global gradient-norm bound (verl: 1.0).
        pub max_grad_norm: f64,
        /// Entropy bonus coefficient.
        pub ent_coef: f32,
        /// Discount per unit, for `gae` and `per_step` (LLM PPO: 1.0).
        pub gamma: f32,
        /// GAE λ, for `gae`.
        pub gae_lambda: f32,
        /// Value-loss coefficient, for `gae`.
        pub vf_coef: f32,
        /// Hidden layers of the MLP policy for control envs (CleanRL: 64, 64).
        pub hidden: Vec<usize>,
        /// Box actions as this many values per component, one token each
        /// (RT-2's action tokens), so every token has its own log-probability
        /// and clipped ratio; 0: a Gaussian, one term per action.
        #[serde(default)]
        pub action_bins: usize,
        /// Where those values lie: `even` (RT-2), or `square`, crowded toward
        /// the centre for a delta controller's fine moves (PPO's key).
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
        /// The CNN image observations go through first, for control envs (PPO's `cnn`).
        #[serde(default)]
        pub cnn: CnnConfig,
        /// The encoder of an instruction's tokens, for control envs (PPO's `text`).
        #[serde(default)]
        pub text: TextConfig,
        /// Half-open ranges of flat observation components only the critic reads
        /// (PPO's `critic_only`: an actor of pixels, proprioception and instruction).
        #[serde(default)]
        pub critic_only: Vec<[usize; 2]>,
        /// Transformer width, for token envs.
        pub d_model: usize,
        /// Attention heads.
        pub n_heads: usize,
        /// Transformer layers.
        pub n_layers: usize,
        /// Feed-forward width.
        pub d_ff: usize,
        /// Side of image patches.
        pub patch: usize,
        /// Keep each env's keys and values between sampling steps (the sequence
        /// policy's KV cache); `false` reads every transcript in full each step.
        #[serde(default = "enabled")]
        pub kv_cache: bool,
    }
}

impl Default for GrpoConfig {
    fn default() -> Self {
        Self {
            total_steps: 200_000,
            group_size: 8,
            groups: 32,
            temperature: 1.0,
            advantage: AdvantageMode::Std,
            reward: RewardMode::Outcome,
            clip_low: 0.2,
            clip_high: 0.28,
            loss_aggregation: LossAggregation::Token,
            loss_constant: None,
            kl_coef: 0.0,
            drop_equal_groups: true,
            max_refills: 0,
            update_epochs: 2,
            num_minibatches: 4,
            learning_rate: 1e-3,
            anneal_lr: false,
            adam_eps: 1e-8,
            max_grad_norm: 1.0,
            ent_coef: 0.0,
            gamma: 1.0,
            gae_lambda: 0.95,
            vf_coef: 0.5,
            hidden: vec![64, 64],
            action_bins: 0,
            action_bin_spacing: BinSpacing::Even,
            action_bin_greedy: GreedyToken::Mode,
            standardize_state: false,
            cnn: CnnConfig::default(),
            text: TextConfig::default(),
            critic_only: Vec::new(),
            d_model: 64,
            n_heads: 4,
            n_layers: 2,
            d_ff: 256,
            patch: 8,
            kv_cache: true,
            eval_every: 20_000,
            eval_episodes: 200,
        }
    }
}

fn enabled() -> bool {
    true
}

impl GrpoConfig {
    /// PPO through the same learner: token-level GAE on a value head, no groups.
    pub fn ppo() -> Self {
        Self {
            advantage: AdvantageMode::Gae,
            group_size: 1,
            groups: 256,
            clip_high: 0.2,
            drop_equal_groups: false,
            max_refills: 0,
            ..Self::default()
        }
    }

    /// Rollouts per iteration.
    pub fn rollouts(&self) -> usize {
        self.group_size * self.groups
    }

    /// The transformer's shape.
    pub fn shape(&self) -> SequenceShape {
        SequenceShape {
            d_model: self.d_model,
            n_heads: self.n_heads,
            n_layers: self.n_layers,
            d_ff: self.d_ff,
            patch: self.patch,
        }
    }

    /// The actor-critic of control envs (the value head serves `advantage = gae`).
    pub fn control_shape(&self) -> AgentShape {
        AgentShape {
            hidden: self.hidden.clone(),
            cnn: self.cnn.clone(),
            text: self.text.clone(),
            critic_only: self.critic_only.clone(),
            action_bins: self.action_bins,
            action_bin_spacing: self.action_bin_spacing,
            action_bin_greedy: self.action_bin_greedy,
            standardize_state: self.standardize_state,
            ..AgentShape::default()
        }
    }

    /// Rejects settings the algorithm cannot run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.advantage != AdvantageMode::Gae && self.group_size < 2 {
            return Err(format!(
                "group_size must be at least 2 for group advantages (got {}): one rollout has nothing to be compared with; use advantage=gae for PPO",
                self.group_size
            ));
        }
        if self.group_size == 0 || self.groups == 0 {
            return Err("group_size and groups must be positive".into());
        }
        if self.update_epochs == 0 || self.num_minibatches == 0 {
            return Err("update_epochs and num_minibatches must be positive".into());
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(format!(
                "temperature must be positive, got {}",
                self.temperature
            ));
        }
        let fraction = 0.0..1.0;
        if !fraction.contains(&self.clip_low) || self.clip_high.is_nan() || self.clip_high < 0.0 {
            return Err("clip_low must lie in [0, 1) and clip_high be non-negative".into());
        }
        if !(self.kl_coef >= 0.0 && self.ent_coef.is_finite() && self.vf_coef >= 0.0) {
            return Err("kl_coef and vf_coef must be non-negative".into());
        }
        if !(0.0..=1.0).contains(&self.gamma) || !(0.0..=1.0).contains(&self.gae_lambda) {
            return Err("gamma and gae_lambda must lie in [0, 1]".into());
        }
        if self.reward != RewardMode::Outcome && self.advantage == AdvantageMode::LeaveOneOut {
            return Err("reward=per_step normalises step rewards by the group's mean (and std); it has no leave-one-out form".into());
        }
        if self.loss_constant.is_some_and(|c| c.is_nan() || c <= 0.0) {
            return Err("loss_constant must be positive".into());
        }
        if self.learning_rate.is_nan() || self.learning_rate <= 0.0 || self.eval_episodes == 0 {
            return Err("learning_rate and eval_episodes must be positive".into());
        }
        if self.hidden.is_empty() || self.hidden.contains(&0) {
            return Err("hidden must list at least one positive layer size".into());
        }
        self.cnn.validate()?;
        self.text.validate()
    }
}
