//! Twin delayed DDPG (Fujimoto et al. 2018, "Addressing Function Approximation
//! Error in Actor-Critic Methods"), shaped after CleanRL's
//! `td3_continuous_action.py`: clipped double-Q critics, target policy
//! smoothing, and an actor and targets updated every `policy_frequency` steps.

mod config;

pub use config::Td3Config;

use crate::algos::offpolicy::{Algorithm, Minibatch, OffPolicy, Shape};
use crate::base::adam::{BURN_EPSILON, adam};
use crate::base::error::{LearnError, Result};
use crate::base::store::module_device;
use crate::base::tensor::{host, matrix};
use crate::env::EnvSource;
use crate::learner::{self, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::critic::TwinCritic;
use crate::nets::deterministic::{ActionBox, DeterministicActor, add_exploration_noise, smoothed};
use crate::nets::squashed::normal;
use crate::run::{RunInfo, to_json};
use burn::module::Module;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::EnvRng;
use proprio::Space;
use proprio::serde_json::{Map, Value, json};

/// A TD3 learner bound to its training envs.
pub type Td3 = OffPolicy<TwinDelayed>;

impl Td3 {
    /// A fresh learner: networks initialised from `seed` on `device`'s backend.
    pub fn new(
        source: EnvSource,
        cfg: Td3Config,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        OffPolicy::build(
            source,
            cfg.schedule(),
            seed,
            device,
            threads,
            |shape, rng| TwinDelayed::new(cfg, &shape, rng),
        )
    }
}

/// TD3's networks, optimizers and update.
pub struct TwinDelayed {
    cfg: Td3Config,
    device: Device,
    actor: DeterministicActor,
    target_actor: DeterministicActor,
    critics: TwinCritic,
    target_critics: TwinCritic,
    actor_optim: ModuleOptimizer,
    q_optim: ModuleOptimizer,
    low: Vec<f32>,
    high: Vec<f32>,
    /// The action box on the training device.
    bounds: ActionBox,
    losses: (f32, f32),
}

impl TwinDelayed {
    fn new(cfg: Td3Config, shape: &Shape, rng: &mut EnvRng) -> Self {
        let (d, a, device) = (shape.obs_dim, shape.low.len(), shape.device);
        let actor = DeterministicActor::new(d, a, &cfg.hidden, cfg.activation, device, rng);
        let critics = TwinCritic::new(d + a, &cfg.hidden, 1, cfg.activation, device, rng);
        Self {
            target_actor: actor.polyak_into(actor.clone(), 1.0),
            target_critics: critics.polyak_into(critics.clone(), 1.0),
            actor_optim: adam(BURN_EPSILON),
            q_optim: adam(BURN_EPSILON),
            device: device.clone(),
            low: shape.low.to_vec(),
            high: shape.high.to_vec(),
            bounds: ActionBox::new(shape.low, shape.high, device),
            cfg,
            actor,
            critics,
            losses: (0.0, 0.0),
        }
    }

    fn act(&self, actor: &DeterministicActor, obs: Tensor<2>) -> Tensor<2> {
        actor.forward(obs, self.bounds.scale.clone(), self.bounds.bias.clone())
    }
}

impl Algorithm for TwinDelayed {
    const NAME: &'static str = "TD3";

    /// The actor's action plus Gaussian noise of `exploration_noise` half-widths, clipped to the box.
    fn explore(&mut self, obs: Tensor<2>, rng: &mut EnvRng) -> Result<Vec<f32>> {
        let mut actions = host(self.act(&self.actor, obs).detach())?;
        let sigma = self.cfg.exploration_noise;
        add_exploration_noise(&mut actions, &self.low, &self.high, sigma, rng);
        Ok(actions)
    }

    /// One critic step; every `policy_frequency` iterations one actor step and the Polyak updates.
    fn update(&mut self, batch: Minibatch, iteration: u64, rng: &mut EnvRng) -> Result<()> {
        let Minibatch {
            obs,
            actions,
            rewards,
            next_obs,
            not_done,
        } = batch;
        let [b, _] = obs.dims();
        let next_actions = smoothed(
            self.act(&self.target_actor, next_obs.clone()),
            normal(b, self.low.len(), rng, &self.device),
            self.cfg.policy_noise,
            self.cfg.noise_clip,
            &self.bounds,
        );
        let next_q = self.target_critics.min(next_obs, next_actions);
        let target_q = (rewards + not_done * next_q.mul_scalar(self.cfg.gamma)).detach();
        // Both critics' mean squared errors, summed (CleanRL's qf1_loss + qf2_loss).
        let q = self.critics.forward(obs.clone(), actions);
        let q_loss = (q - target_q.unsqueeze_dim::<3>(0))
            .square()
            .mean()
            .mul_scalar(2.0);
        self.losses.0 = q_loss.clone().into_scalar::<f32>();
        if !self.losses.0.is_finite() {
            return Err(LearnError::Diverged(format!(
                "TD3 critic loss is {}",
                self.losses.0
            )));
        }
        let grads = GradientsParams::from_grads(q_loss.backward(), &self.critics);
        self.critics = self
            .q_optim
            .step(self.cfg.learning_rate, self.critics.clone(), grads);

        if iteration.is_multiple_of(self.cfg.policy_frequency) {
            // The actor climbs the first critic only (as in the paper and CleanRL).
            let pi = self.act(&self.actor, obs.clone());
            let actor_loss = self.critics.frozen().first(obs, pi).mean().neg();
            self.losses.1 = actor_loss.clone().into_scalar::<f32>();
            let grads = GradientsParams::from_grads(actor_loss.backward(), &self.actor);
            self.actor = self
                .actor_optim
                .step(self.cfg.learning_rate, self.actor.clone(), grads);
            let tau = self.cfg.tau;
            self.target_actor = self.actor.polyak_into(self.target_actor.clone(), tau);
            self.target_critics = self.critics.polyak_into(self.target_critics.clone(), tau);
        }
        Ok(())
    }

    /// The actor's action, without noise.
    fn greedy(&self) -> impl FnMut(&[f32], usize, &mut [f32]) -> Result<()> {
        let actor = self.actor.valid();
        let bounds = ActionBox::new(&self.low, &self.high, &module_device(&actor));
        move |obs, n, actions| {
            let device = bounds.scale.device();
            let obs = matrix(obs, n, obs.len() / n.max(1), &device);
            let action = actor.forward(obs, bounds.scale.clone(), bounds.bias.clone());
            actions.copy_from_slice(&host(action)?);
            Ok(())
        }
    }

    fn metrics(&self, row: &mut Map<String, Value>) {
        row.insert("q_loss".into(), json!(self.losses.0));
        row.insert("actor_loss".into(), json!(self.losses.1));
    }

    fn policy(&self) -> PolicyFile {
        PolicyFile {
            net: PolicyNet::Deterministic {
                hidden: self.cfg.hidden.clone(),
                noise: self.cfg.exploration_noise,
                activation: self.cfg.activation,
            },
            weights: "actor.bpk".into(),
        }
    }

    crate::base::store::checkpoint_files! {
        modules {
            actor: "actor.bpk",
            target_actor: "target_actor.bpk",
            critics: "critics.bpk",
            target_critics: "target.bpk",
        }
        optimizers {
            actor_optim: "actor_optimizer.bpk",
            q_optim: "q_optimizer.bpk",
        }
    }
}

#[cfg(test)]
mod tests;

/// CleanRL's defaults (the env must act in a box; the table checks that).
pub fn defaults(_: &Space) -> Result<Value> {
    to_json(&Td3Config::default())
}

/// The learner a run describes.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    learner::build(info, Td3::new)
}
