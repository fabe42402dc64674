//! SAC networks: a tanh-squashed Gaussian actor and the temperature (the
//! twin critics are [`crate::nets::critic::TwinCritic`]).

use crate::base::error::Result;
use crate::base::tensor::{host, matrix};
use crate::nets::head::{HALF_LN_TAU, standard_normal};
use crate::nets::mlp::{Activation, Mlp};
use burn::module::Param;
use burn::prelude::*;
use proprio::EnvRng;

/// CleanRL's log-std range.
const LOG_STD_MIN: f32 = -5.0;
const LOG_STD_MAX: f32 = 2.0;

/// Observation → (mean, log-std) of a Gaussian squashed by tanh into the action box.
#[derive(Module, Debug)]
pub struct Actor {
    net: Mlp,
    #[module(skip)]
    action_dim: usize,
}

/// A batch of squashed actions with their log-probabilities.
pub struct Sampled {
    /// Actions in env units `[B, A]`.
    pub action: Tensor<2>,
    /// `log π(action | obs)` `[B, 1]`, tanh correction included.
    pub log_prob: Tensor<2>,
}

impl Actor {
    /// A `hidden` ReLU MLP with `2·action_dim` outputs.
    pub fn new(
        obs_dim: usize,
        action_dim: usize,
        hidden: &[usize],
        device: &Device,
        rng: &mut EnvRng,
    ) -> Self {
        let sizes = [&[obs_dim], hidden, &[2 * action_dim]].concat();
        Self {
            net: Mlp::new(&sizes, Activation::Relu, 1.0, device, rng),
            action_dim,
        }
    }

    /// Mean `[B, A]` and log-std `[B, A]` (squashed into [−5, 2] as CleanRL does).
    pub fn forward(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        let out = self.net.forward(obs);
        let [batch, _] = out.dims();
        let a = self.action_dim;
        let mean = out.clone().slice([0..batch, 0..a]);
        let raw = out.slice([0..batch, a..2 * a]).tanh();
        let log_std = raw
            .add_scalar(1.0)
            .mul_scalar(0.5 * (LOG_STD_MAX - LOG_STD_MIN))
            .add_scalar(LOG_STD_MIN);
        (mean, log_std)
    }

    /// Reparameterised sample `tanh(mean + std·eps)·scale + bias` for standard-normal `eps`.
    pub fn sample(
        &self,
        obs: Tensor<2>,
        eps: Tensor<2>,
        scale: Tensor<2>,
        bias: Tensor<2>,
    ) -> Sampled {
        let (mean, log_std) = self.forward(obs);
        squash(mean, log_std, eps, scale, bias)
    }

    /// `tau · self + (1 − tau) · target` (Polyak averaging; DSAC-T's target policy).
    pub fn polyak_into(&self, target: Actor, tau: f64) -> Actor {
        Actor {
            net: self.net.polyak_into(target.net, tau),
            action_dim: self.action_dim,
        }
    }

    /// The deterministic action `tanh(mean)·scale + bias`.
    pub fn mode(&self, obs: Tensor<2>, scale: Tensor<2>, bias: Tensor<2>) -> Tensor<2> {
        let (mean, _) = self.forward(obs);
        let [batch, a] = mean.dims();
        mean.tanh() * scale.expand([batch, a]) + bias.expand([batch, a])
    }
}

/// `(scale, bias)` mapping `[-1, 1]` onto the box `[low, high]`, per component.
pub fn box_affine(low: &[f32], high: &[f32]) -> (Vec<f32>, Vec<f32>) {
    low.iter()
        .zip(high)
        .map(|(l, h)| ((h - l) / 2.0, (h + l) / 2.0))
        .unzip()
}

/// The tanh-squashed Gaussian: action and log-density with the change-of-variables
/// correction `− Σ ln(scale·(1 − tanh²x) + 1e-6)` (Haarnoja et al. 2018, appendix C).
pub fn squash(
    mean: Tensor<2>,
    log_std: Tensor<2>,
    eps: Tensor<2>,
    scale: Tensor<2>,
    bias: Tensor<2>,
) -> Sampled {
    let [batch, a] = mean.dims();
    let scale = scale.expand([batch, a]);
    let x = mean + log_std.clone().exp() * eps.clone();
    let y = x.tanh();
    let action = y.clone() * scale.clone() + bias.expand([batch, a]);
    let gaussian = (eps.square().mul_scalar(-0.5) - log_std).sub_scalar(HALF_LN_TAU);
    let correction = (scale * (y.square().neg().add_scalar(1.0)))
        .add_scalar(1e-6)
        .log();
    Sampled {
        action,
        log_prob: (gaussian - correction).sum_dim(1),
    }
}

/// The entropy temperature α, learned as `log α`.
#[derive(Module, Debug)]
pub struct Temperature {
    /// `log α` `[1]`.
    pub log_alpha: Param<Tensor<1>>,
}

impl Temperature {
    /// Starts at `α = alpha`.
    pub fn new(alpha: f64, device: &Device) -> Self {
        Self {
            log_alpha: Param::from_tensor(Tensor::from_data(
                TensorData::new(vec![alpha.ln() as f32], [1]),
                device,
            )),
        }
    }

    /// `α`.
    pub fn alpha(&self) -> Tensor<1> {
        self.log_alpha.val().exp()
    }
}

/// A squashed policy's action box and its noise, shared by SAC and DSAC-T.
#[derive(Debug, Clone)]
pub struct Squash {
    scale: Vec<f32>,
    bias: Vec<f32>,
}

impl Squash {
    /// The affine map from `[-1, 1]` onto the box `[low, high]`.
    pub fn new(low: &[f32], high: &[f32]) -> Self {
        let (scale, bias) = box_affine(low, high);
        Self { scale, bias }
    }

    /// Action components.
    pub fn action_dim(&self) -> usize {
        self.scale.len()
    }

    /// `(scale, bias)` as `[1, A]` rows on `device`.
    pub fn rows(&self, device: &Device) -> (Tensor<2>, Tensor<2>) {
        let a = self.action_dim();
        (
            matrix(&self.scale, 1, a, device),
            matrix(&self.bias, 1, a, device),
        )
    }

    /// A sample of `actor`'s policy at `obs` `[n, D]`, on the host (exploration).
    pub fn explore(&self, actor: &Actor, obs: Tensor<2>, rng: &mut EnvRng) -> Result<Vec<f32>> {
        let [n, _] = obs.dims();
        let device = obs.device();
        let eps = normal(n, self.action_dim(), rng, &device);
        let (scale, bias) = self.rows(&device);
        host(actor.sample(obs, eps, scale, bias).action.detach())
    }

    /// `tanh(mean)` of `actor`'s policy in the box, as an evaluation closure.
    pub fn greedy(&self, actor: &Actor) -> impl FnMut(&[f32], usize, &mut [f32]) -> Result<()> {
        let actor = actor.valid();
        let device = actor.net.device();
        let (scale, bias) = self.rows(&device);
        move |obs, n, actions| {
            let obs = matrix(obs, n, obs.len() / n.max(1), &device);
            let action = actor.mode(obs, scale.clone(), bias.clone());
            actions.copy_from_slice(&host(action)?);
            Ok(())
        }
    }
}

/// Standard-normal draws `[rows, cols]` from `rng`, on `device`.
pub fn normal(rows: usize, cols: usize, rng: &mut EnvRng, device: &Device) -> Tensor<2> {
    let eps: Vec<f32> = (0..rows * cols).map(|_| standard_normal(rng)).collect();
    matrix(&eps, rows, cols, device)
}
