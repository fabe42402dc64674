//! The PPO actor-critic: separate actor and critic MLPs, plus a state-independent
//! log-std for boxes; for image observations, a CNN encoder shared by both.

use crate::encoder::{CnnConfig, Encoder, ObsLayout};
use crate::error::Result;
use crate::head::ActionHead;
use crate::mlp::{Activation, Mlp};
use burn::module::Param;
use burn::prelude::*;
use proprio::{EnvRng, Space};

/// Actor (distribution parameters) and critic (state value) networks.
#[derive(Module, Debug)]
pub struct ActorCritic {
    /// Image observations → features, shared by actor and critic (CleanRL's Atari trunk).
    pub encoder: Option<Encoder>,
    /// Observation (or its features) → distribution parameters (means or logits).
    pub actor: Mlp,
    /// Observation (or its features) → state value.
    pub critic: Mlp,
    /// Log standard deviation `[1, A]` of a Gaussian head.
    pub log_std: Option<Param<Tensor<2>>>,
}

impl ActorCritic {
    /// CleanRL's `Agent`: tanh MLPs, actor output gain 0.01, critic output gain 1,
    /// log-std 0; behind a CNN (`cnn`) when `obs_space` holds images.
    pub fn new(
        obs_space: &Space,
        head: &ActionHead,
        hidden: &[usize],
        cnn: &CnnConfig,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        let layout = ObsLayout::new(obs_space)?;
        let encoder = if layout.has_images() {
            Some(Encoder::new(layout, cnn, device, rng)?)
        } else {
            None
        };
        let in_dim = encoder
            .as_ref()
            .map_or(obs_space.flat_dim(), Encoder::out_dim);
        let sizes = |out: usize| [&[in_dim], hidden, &[out]].concat();
        Ok(Self {
            encoder,
            actor: Mlp::new(
                &sizes(head.param_dim()),
                Activation::Tanh,
                0.01,
                device,
                rng,
            ),
            critic: Mlp::new(&sizes(1), Activation::Tanh, 1.0, device, rng),
            log_std: match head {
                ActionHead::Gaussian { dim } => {
                    Some(Param::from_tensor(Tensor::zeros([1, *dim], device)))
                }
                ActionHead::Categorical { .. } => None,
            },
        })
    }

    /// What the actor and critic read: the observation, or its encoding.
    pub fn features(&self, obs: Tensor<2>) -> Tensor<2> {
        match &self.encoder {
            Some(encoder) => encoder.forward(obs),
            None => obs,
        }
    }

    /// Distribution parameters `[B, P]` and state values `[B]`, encoding the observations once.
    pub fn forward(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<1>) {
        let x = self.features(obs);
        (
            self.actor.forward(x.clone()),
            self.critic.forward(x).squeeze_dim(1),
        )
    }

    /// Distribution parameters `[B, P]`.
    pub fn params(&self, obs: Tensor<2>) -> Tensor<2> {
        self.actor.forward(self.features(obs))
    }

    /// State values `[B]`.
    pub fn value(&self, obs: Tensor<2>) -> Tensor<1> {
        self.critic.forward(self.features(obs)).squeeze_dim(1)
    }

    /// The log-std `[1, A]`, if any.
    pub fn log_std(&self) -> Option<Tensor<2>> {
        self.log_std.as_ref().map(Param::val)
    }
}
