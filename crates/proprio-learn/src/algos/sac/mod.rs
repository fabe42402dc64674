//! Soft actor-critic (Haarnoja et al. 2018), shaped after CleanRL's
//! `sac_continuous_action.py`: twin Q critics with Polyak-averaged targets,
//! a tanh-squashed Gaussian actor with delayed updates, autotuned temperature.

pub use crate::algos::offpolicy::SacConfig;

use crate::algos::offpolicy::{Algorithm, Minibatch, OffPolicy, Shape};
use crate::base::adam::{BURN_EPSILON, adam};
use crate::base::error::{LearnError, Result};
use crate::base::shards::Shards;
use crate::env::EnvSource;
use crate::learner::{self, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::critic::TwinCritic;
use crate::nets::mlp::Activation;
use crate::nets::squashed::{Actor, Sampled, Squash, Temperature, normal};
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
        let shards = Shards::new(self.cfg.update_shards, b);
        let (gamma, squash) = (self.cfg.gamma, (&scale, &bias));

        let eps = normal(b, a, rng, dev);
        let (actor, target) = (self.actor.clone().no_grad(), &self.target);
        // Both critics' mean squared errors, summed (CleanRL's qf1_loss + qf2_loss).
        let (grads, q_loss) = shards.grads(&self.critics, |critics, k| {
            let next_obs = shards.take(&next_obs, k);
            let next = sample(&actor, next_obs.clone(), shards.take(&eps, k), squash);
            let soft_next = target.min(next_obs, next.action) - next.log_prob.mul_scalar(alpha);
            let target_q = (shards.take(&rewards, k)
                + shards.take(&not_done, k) * soft_next.mul_scalar(gamma))
            .detach();
            let q = critics.forward(shards.take(&obs, k), shards.take(&actions, k));
            let loss = (q - target_q.unsqueeze_dim::<3>(0)).square().mean();
            shards.share(loss.mul_scalar(2.0), k)
        });
        self.losses.0 = q_loss;
        if !q_loss.is_finite() {
            return Err(LearnError::Diverged(format!("SAC critic loss is {q_loss}")));
        }
        self.critics = self
            .q_optim
            .step(self.cfg.q_lr, self.critics.clone(), grads);

        if iteration.is_multiple_of(self.cfg.policy_frequency) {
            for _ in 0..self.cfg.policy_frequency {
                let alpha = self.temperature.alpha().into_scalar::<f32>();
                let eps = normal(b, a, rng, dev);
                let critics = self.critics.frozen();
                let (grads, actor_loss) = shards.grads(&self.actor, |actor, k| {
                    let obs = shards.take(&obs, k);
                    let pi = sample(&actor, obs.clone(), shards.take(&eps, k), squash);
                    let q_pi = critics.min(obs, pi.action);
                    shards.share((pi.log_prob.mul_scalar(alpha) - q_pi).mean(), k)
                });
                self.losses.1 = actor_loss;
                self.actor = self
                    .actor_optim
                    .step(self.cfg.policy_lr, self.actor.clone(), grads);
                if self.cfg.autotune {
                    let eps = normal(b, a, rng, dev);
                    let actor = self.actor.clone().no_grad();
                    let log_prob = shards.cat(shards.map(|k| {
                        let (obs, eps) = (shards.take(&obs, k), shards.take(&eps, k));
                        sample(&actor, obs, eps, squash).log_prob
                    }));
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

/// A reparameterised sample of `actor` at `obs` for noise `eps`, squashed into the action box.
fn sample(
    actor: &Actor,
    obs: Tensor<2>,
    eps: Tensor<2>,
    (scale, bias): (&Tensor<2>, &Tensor<2>),
) -> Sampled {
    actor.sample(obs, eps, scale.clone(), bias.clone())
}

/// CleanRL's defaults (the env must act in a box; the table checks that).
pub fn defaults(_: &Space) -> Result<Value> {
    to_json(&SacConfig::default())
}

/// The learner a run describes.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    learner::build(info, Sac::new)
}
