//! DSAC-T: distributional soft actor-critic with three refinements (Duan et
//! al. 2023, "Distributional Soft Actor-Critic with Three Refinements",
//! arXiv:2310.05858). SAC's squashed Gaussian actor and temperature; each
//! critic learns a Gaussian distribution of the soft return, mean and σ,
//! trained with expected-value substitution, twin value distribution learning
//! and variance-based gradient adjustment ([`critic_loss`]). The
//! hyper-parameters are SAC's ([`SacConfig`]); every `policy_frequency` steps
//! one actor and temperature step, then the Polyak updates of the critics and
//! the target policy (as the authors' code).

mod loss;

pub use loss::{SAMPLE_CLIP, TD_BOUND_SIGMAS, critic_loss, gaussian};

use crate::algos::offpolicy::SacConfig;
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

/// A DSAC-T learner bound to its training envs.
pub type Dsac = OffPolicy<DistributionalSac>;

impl Dsac {
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
            |shape, rng| DistributionalSac::new(cfg, &shape, rng),
        )
    }
}

/// DSAC-T's networks, optimizers and update.
pub struct DistributionalSac {
    cfg: SacConfig,
    device: Device,
    actor: Actor,
    target_actor: Actor,
    critics: TwinCritic,
    target_critics: TwinCritic,
    temperature: Temperature,
    actor_optim: ModuleOptimizer,
    q_optim: ModuleOptimizer,
    alpha_optim: ModuleOptimizer,
    squash: Squash,
    /// Last critic loss, actor loss, temperature loss and mean critic σ.
    losses: [f32; 4],
}

impl DistributionalSac {
    fn new(cfg: SacConfig, shape: &Shape, rng: &mut EnvRng) -> Self {
        let (d, a, device) = (shape.obs_dim, shape.low.len(), shape.device);
        let actor = Actor::new(d, a, &cfg.hidden, device, rng);
        // Two outputs per critic: the mean and log σ of its value distribution.
        let critics = TwinCritic::new(d + a, &cfg.hidden, 2, Activation::Relu, device, rng);
        Self {
            temperature: Temperature::new(cfg.alpha, device),
            actor_optim: adam(BURN_EPSILON),
            q_optim: adam(BURN_EPSILON),
            alpha_optim: adam(BURN_EPSILON),
            target_actor: actor.polyak_into(actor.clone(), 1.0),
            target_critics: critics.polyak_into(critics.clone(), 1.0),
            device: device.clone(),
            cfg,
            actor,
            critics,
            squash: Squash::new(shape.low, shape.high),
            losses: [0.0; 4],
        }
    }
}

impl Algorithm for DistributionalSac {
    const NAME: &'static str = "DSAC";

    /// A sample of the squashed Gaussian policy.
    fn explore(&mut self, obs: Tensor<2>, rng: &mut EnvRng) -> Result<Vec<f32>> {
        self.squash.explore(&self.actor, obs, rng)
    }

    /// One critic step; every `policy_frequency` steps one actor and temperature step and the Polyak updates.
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
        let gamma = self.cfg.gamma;

        // Targets from the target policy and the target critics.
        let eps = normal(b, a, rng, dev);
        let next = self
            .target_actor
            .sample(next_obs.clone(), eps, scale.clone(), bias.clone());
        let (next_mean, next_std) = gaussian(self.target_critics.forward(next_obs, next.action));
        let z = normal(b, 1, rng, dev).clamp(-SAMPLE_CLIP, SAMPLE_CLIP);
        let next_sample = next_mean.clone() + next_std * z.unsqueeze_dim::<3>(0);
        let (m1, m2) = crate::nets::critic::split(next_mean);
        let (s1, s2) = crate::nets::critic::split(next_sample);
        // Twin value distribution learning: the sample comes from the critic of the smaller mean.
        let first_smaller = m1.clone().lower(m2.clone());
        let sample = s2.mask_where(first_smaller, s1);
        let entropy = next.log_prob.mul_scalar(alpha);
        let bootstrap = |v: Tensor<2>| {
            (rewards.clone() + not_done.clone() * (v - entropy.clone()).mul_scalar(gamma)).detach()
        };
        let target = bootstrap(m1.min_pair(m2));
        let target_sample = bootstrap(sample);

        let (mean, std) = gaussian(self.critics.forward(obs.clone(), actions));
        self.losses[3] = std.clone().mean().into_scalar::<f32>();
        let q_loss = critic_loss(mean, std, target, target_sample);
        self.losses[0] = q_loss.clone().into_scalar::<f32>();
        if !self.losses[0].is_finite() {
            return Err(LearnError::Diverged(format!(
                "DSAC critic loss is {}",
                self.losses[0]
            )));
        }
        let grads = GradientsParams::from_grads(q_loss.backward(), &self.critics);
        self.critics = self
            .q_optim
            .step(self.cfg.q_lr, self.critics.clone(), grads);

        if iteration.is_multiple_of(self.cfg.policy_frequency) {
            let eps = normal(b, a, rng, dev);
            let pi = self.actor.sample(obs.clone(), eps, scale, bias);
            let (mean, _) = gaussian(self.critics.frozen().forward(obs, pi.action));
            let (q1, q2) = crate::nets::critic::split(mean);
            let actor_loss = (pi.log_prob.clone().mul_scalar(alpha) - q1.min_pair(q2)).mean();
            self.losses[1] = actor_loss.clone().into_scalar::<f32>();
            let grads = GradientsParams::from_grads(actor_loss.backward(), &self.actor);
            self.actor = self
                .actor_optim
                .step(self.cfg.policy_lr, self.actor.clone(), grads);
            if self.cfg.autotune {
                let target_entropy = -(a as f32);
                let log_prob = pi.log_prob.detach();
                let alpha_loss = (self.temperature.alpha().unsqueeze::<2>().neg()
                    * log_prob.add_scalar(target_entropy))
                .mean();
                self.losses[2] = alpha_loss.clone().into_scalar::<f32>();
                let grads = GradientsParams::from_grads(alpha_loss.backward(), &self.temperature);
                self.temperature =
                    self.alpha_optim
                        .step(self.cfg.q_lr, self.temperature.clone(), grads);
            }
            let tau = self.cfg.tau;
            self.target_critics = self.critics.polyak_into(self.target_critics.clone(), tau);
            self.target_actor = self.actor.polyak_into(self.target_actor.clone(), tau);
        }
        Ok(())
    }

    /// `tanh(mean)` of the policy, in the action box.
    fn greedy(&self) -> impl FnMut(&[f32], usize, &mut [f32]) -> Result<()> {
        self.squash.greedy(&self.actor)
    }

    fn metrics(&self, row: &mut Map<String, Value>) {
        row.insert("q_loss".into(), json!(self.losses[0]));
        row.insert("actor_loss".into(), json!(self.losses[1]));
        row.insert("alpha_loss".into(), json!(self.losses[2]));
        row.insert("q_std".into(), json!(self.losses[3]));
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
            target_actor: "target_actor.bpk",
            critics: "critics.bpk",
            target_critics: "target.bpk",
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
    learner::build(info, Dsac::new)
}
