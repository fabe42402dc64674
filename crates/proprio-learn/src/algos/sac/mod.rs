//! Soft actor-critic (Haarnoja et al. 2018), shaped after CleanRL's
//! `sac_continuous_action.py`: twin Q critics with Polyak-averaged targets,
//! a tanh-squashed Gaussian actor with delayed updates, autotuned temperature.

pub use crate::algos::offpolicy::SacConfig;

use crate::algos::offpolicy::{Algorithm, Minibatch, OffPolicy, Shape};
use crate::base::adam::{BURN_EPSILON, adam};
use crate::base::error::{LearnError, Result};
use crate::env::EnvSource;
use crate::learner::{self, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::critic::TwinCritic;
use crate::nets::mlp::Activation;
use crate::nets::squashed::{Actor, Squash, Temperature, normal};
use crate::run::{RunInfo, to_json};
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::EnvRng;
use proprio::Space;
use proprio::serde_json::{Map, Value, json};

/// A SAC learner bound to its training envs.
pub type Sac = OffPolicy<SoftActorCritic>;

impl Sac {
    /// A fresh learner: networks initialised from `seed` on `device`'s backend.
    pub fn new(
        source: EnvSource,
        cfg: SacConfig,
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
            |shape, rng| SoftActorCritic::new(cfg, &shape, rng),
        )
    }
}

/// SAC's networks, optimizers and update.
pub struct SoftActorCritic {
    cfg: SacConfig,
    device: Device,
    actor: Actor,
    critics: TwinCritic,
    target: TwinCritic,
    temperature: Temperature,
    actor_optim: ModuleOptimizer,
    q_optim: ModuleOptimizer,
    alpha_optim: ModuleOptimizer,
    squash: Squash,
    losses: (f32, f32, f32),
}

impl SoftActorCritic {
    fn new(cfg: SacConfig, shape: &Shape, rng: &mut EnvRng) -> Self {
        let (d, a, device) = (shape.obs_dim, shape.low.len(), shape.device);
        let actor = Actor::new(d, a, &cfg.hidden, device, rng);
        let critics = TwinCritic::new(d + a, &cfg.hidden, 1, Activation::Relu, device, rng);
        Self {
            temperature: Temperature::new(cfg.alpha, device),
            actor_optim: adam(BURN_EPSILON),
            q_optim: adam(BURN_EPSILON),
            alpha_optim: adam(BURN_EPSILON),
            target: critics.polyak_into(critics.clone(), 1.0),
            device: device.clone(),
            cfg,
            actor,
            critics,
            squash: Squash::new(shape.low, shape.high),
            losses: (0.0, 0.0, 0.0),
        }
    }
}

impl Algorithm for SoftActorCritic {
    const NAME: &'static str = "SAC";

    /// A sample of the squashed Gaussian policy.
    fn explore(&mut self, obs: Tensor<2>, rng: &mut EnvRng) -> Result<Vec<f32>> {
        self.squash.explore(&self.actor, obs, rng)
    }

    /// One critic step, and every `policy_frequency` steps that many actor (and temperature) steps.
    fn update(&mut self, batch: Minibatch, iteration: u64, rng: &mut EnvRng) -> Result<()> {
        let Minibatch {
            obs,
            actions,
            rewards,
            next_obs,
            not_done,
        } = batch;
        let [b, _] = obs.dims();
        let (a, dev) = (self.squash.action_dim(), &self.device);
        let (scale, bias) = self.squash.rows(dev);
        let alpha = self.temperature.alpha().into_scalar::<f32>();
        let target_entropy = -(a as f32);

        let eps = normal(b, a, rng, dev);
        let next = self
            .actor
            .sample(next_obs.clone(), eps, scale.clone(), bias.clone());
        let soft_next = self.target.min(next_obs, next.action) - next.log_prob.mul_scalar(alpha);
        let target_q = (rewards + not_done * soft_next.mul_scalar(self.cfg.gamma)).detach();
        // Both critics' mean squared errors, summed (CleanRL's qf1_loss + qf2_loss).
        let q = self.critics.forward(obs.clone(), actions);
        let q_loss = (q - target_q.unsqueeze_dim::<3>(0))
            .square()
            .mean()
            .mul_scalar(2.0);
        self.losses.0 = q_loss.clone().into_scalar::<f32>();
        if !self.losses.0.is_finite() {
            return Err(LearnError::Diverged(format!(
                "SAC critic loss is {}",
                self.losses.0
            )));
        }
        let grads = GradientsParams::from_grads(q_loss.backward(), &self.critics);
        self.critics = self
            .q_optim
            .step(self.cfg.q_lr, self.critics.clone(), grads);

        if iteration.is_multiple_of(self.cfg.policy_frequency) {
            for _ in 0..self.cfg.policy_frequency {
                let alpha = self.temperature.alpha().into_scalar::<f32>();
                let eps = normal(b, a, rng, dev);
                let pi = self
                    .actor
                    .sample(obs.clone(), eps, scale.clone(), bias.clone());
                let q_pi = self.critics.frozen().min(obs.clone(), pi.action);
                let actor_loss = (pi.log_prob.mul_scalar(alpha) - q_pi).mean();
                self.losses.1 = actor_loss.clone().into_scalar::<f32>();
                let grads = GradientsParams::from_grads(actor_loss.backward(), &self.actor);
                self.actor = self
                    .actor_optim
                    .step(self.cfg.policy_lr, self.actor.clone(), grads);
                if self.cfg.autotune {
                    let eps = normal(b, a, rng, dev);
                    let log_prob = self
                        .actor
                        .sample(obs.clone(), eps, scale.clone(), bias.clone())
                        .log_prob
                        .detach();
                    let alpha_loss = (self.temperature.alpha().unsqueeze::<2>().neg()
                        * log_prob.add_scalar(target_entropy))
                    .mean();
                    self.losses.2 = alpha_loss.clone().into_scalar::<f32>();
                    let grads =
                        GradientsParams::from_grads(alpha_loss.backward(), &self.temperature);
                    self.temperature =
                        self.alpha_optim
                            .step(self.cfg.q_lr, self.temperature.clone(), grads);
                }
            }
        }
        if iteration.is_multiple_of(self.cfg.target_network_frequency) {
            self.target = self.critics.polyak_into(self.target.clone(), self.cfg.tau);
        }
        Ok(())
    }

    /// `tanh(mean)` of the policy, in the action box.
    fn greedy(&self) -> impl FnMut(&[f32], usize, &mut [f32]) -> Result<()> {
        self.squash.greedy(&self.actor)
    }

    fn metrics(&self, row: &mut Map<String, Value>) {
        row.insert("q_loss".into(), json!(self.losses.0));
        row.insert("actor_loss".into(), json!(self.losses.1));
        row.insert("alpha_loss".into(), json!(self.losses.2));
        row.insert(
            "alpha".into(),
            json!(self.temperature.alpha().into_scalar::<f32>()),
        );
    }

    fn policy(&self) -> PolicyFile {
        PolicyFile {
            net: PolicyNet::Squashed {
                hidden: self.cfg.hidden.clone(),
            },
            weights: "actor.bpk".into(),
        }
    }

    crate::base::store::checkpoint_files! {
        modules {
            actor: "actor.bpk",
            critics: "critics.bpk",
            target: "target.bpk",
            temperature: "temperature.bpk",
        }
        optimizers {
            actor_optim: "actor_optimizer.bpk",
            q_optim: "q_optimizer.bpk",
            alpha_optim: "alpha_optimizer.bpk",
        }
    }
}

/// CleanRL's defaults (the env must act in a box; the table checks that).
pub fn defaults(_: &Space) -> Result<Value> {
    to_json(&SacConfig::default())
}

/// The learner a run describes.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    learner::build(info, Sac::new)
}
