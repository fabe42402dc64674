//! ArCHer's hyper-parameters (Zhou et al. 2024, arXiv:2402.19446; their
//! code's Twenty Questions settings where a value is theirs), scaled to a
//! small transformer trained from scratch.

use crate::nets::sequence::SequenceShape;
use serde::{Deserialize, Serialize};

crate::base::hyper::hyperparameters! {
    /// Every ArCHer hyper-parameter; `--set key=value` overrides any of them.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct ArcherConfig {
        /// Envs stepped together; each iteration adds one turn per env to the replay.
        pub num_envs: usize,
        /// Replay capacity in turns.
        pub buffer_size: usize,
        /// Turns per critic and per actor minibatch (ArCHer: 256).
        pub batch_size: usize,
        /// Env steps before the first critic update.
        pub learning_starts: u64,
        /// Env steps before the first actor update: the critic learns first (ArCHer's warm-up).
        pub actor_starts: u64,
        /// Critic minibatch steps per iteration.
        pub critic_updates: usize,
        /// Actor minibatch steps per iteration.
        pub actor_updates: usize,
        /// Discount per turn (ArCHer: 0.95 on Twenty Questions).
        pub gamma: f32,
        /// Polyak rate of the target critics per critic step (ArCHer: 0.1).
        pub tau: f64,
        /// Adam learning rate of the critics.
        pub critic_lr: f64,
        /// Adam learning rate of the actor.
        pub actor_lr: f64,
        /// Global gradient-norm bound of each update.
        pub max_grad_norm: f64,
        /// Divide each actor batch's token advantages by their root mean square.
        pub normalize_advantage: bool,
        /// Entropy bonus per token.
        pub ent_coef: f32,
        /// Weight of the actor's token baseline loss (its value head regressing the turn advantage).
        pub vf_coef: f32,
        /// Sampling temperature of the actor.
        pub temperature: f32,
        /// Transformer width (actor and each critic).
        pub d_model: usize,
        /// Attention heads.
        pub n_heads: usize,
        /// Transformer layers.
        pub n_layers: usize,
        /// Feed-forward width.
        pub d_ff: usize,
        /// Side of image patches.
        pub patch: usize,
        /// A metrics row every this many env steps (its losses and episodes are the means since the last).
        pub log_every: u64,
    }
}

impl Default for ArcherConfig {
    fn default() -> Self {
        Self {
            total_steps: 200_000,
            num_envs: 32,
            buffer_size: 20_000,
            batch_size: 256,
            learning_starts: 2_048,
            actor_starts: 8_192,
            critic_updates: 1,
            actor_updates: 1,
            gamma: 0.95,
            tau: 0.1,
            critic_lr: 3e-4,
            actor_lr: 3e-4,
            max_grad_norm: 1.0,
            normalize_advantage: true,
            ent_coef: 0.01,
            vf_coef: 0.5,
            temperature: 1.0,
            d_model: 64,
            n_heads: 4,
            n_layers: 2,
            d_ff: 256,
            patch: 8,
            log_every: 2_048,
            eval_every: 20_000,
            eval_episodes: 200,
        }
    }
}

impl ArcherConfig {
    /// The transformer's shape, shared by the actor and the critics.
    pub fn shape(&self) -> SequenceShape {
        SequenceShape {
            d_model: self.d_model,
            n_heads: self.n_heads,
            n_layers: self.n_layers,
            d_ff: self.d_ff,
            patch: self.patch,
        }
    }

    /// Rejects settings the algorithm cannot run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.num_envs == 0
            || self.buffer_size == 0
            || self.batch_size == 0
            || self.eval_episodes == 0
        {
            return Err(
                "num_envs, buffer_size, batch_size and eval_episodes must be positive".into(),
            );
        }
        if !((0.0..=1.0).contains(&self.gamma) && self.tau > 0.0 && self.tau <= 1.0) {
            return Err("gamma must lie in [0, 1] and tau in (0, 1]".into());
        }
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !(positive(self.critic_lr) && positive(self.actor_lr) && positive(self.max_grad_norm)) {
            return Err("critic_lr, actor_lr and max_grad_norm must be positive".into());
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(format!(
                "temperature must be positive, got {}",
                self.temperature
            ));
        }
        if !(self.ent_coef.is_finite() && self.vf_coef >= 0.0) {
            return Err("ent_coef must be finite and vf_coef non-negative".into());
        }
        Ok(())
    }
}
