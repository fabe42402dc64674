//! The PPO actor-critic: separate actor and critic MLPs, plus a state-independent log-std for boxes.

use crate::head::ActionHead;
use crate::mlp::{Activation, Mlp};
use burn::module::Param;
use burn::prelude::*;
use proprio::EnvRng;

/// Actor (distribution parameters) and critic (state value) networks.
#[derive(Module, Debug)]
pub struct ActorCritic {
    /// Observation → distribution parameters (means or logits).
    pub actor: Mlp,
    /// Observation → state value.
    pub critic: Mlp,
    /// Log standard deviation `[1, A]` of a Gaussian head.
    pub log_std: Option<Param<Tensor<2>>>,
}

impl ActorCritic {
    /// CleanRL's `Agent`: tanh MLPs, actor output gain 0.01, critic output gain 1, log-std 0.
    pub fn new(
        obs_dim: usize,
        head: &ActionHead,
        hidden: &[usize],
        device: &Device,
        rng: &mut EnvRng,
    ) -> Self {
        let sizes = |out: usize| [&[obs_dim], hidden, &[out]].concat();
        Self {
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
        }
    }

    /// State values `[B]`.
    pub fn value(&self, obs: Tensor<2>) -> Tensor<1> {
        self.critic.forward(obs).squeeze_dim(1)
    }

    /// The log-std `[1, A]`, if any.
    pub fn log_std(&self) -> Option<Tensor<2>> {
        self.log_std.as_ref().map(Param::val)
    }
}
