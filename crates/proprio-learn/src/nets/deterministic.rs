//! TD3's deterministic actor and its target-policy smoothing (the critics are
//! [`crate::nets::critic::TwinCritic`]).

use crate::base::tensor::matrix;
use crate::nets::head::standard_normal;
use crate::nets::mlp::{Activation, Mlp};
use crate::nets::squashed::box_affine;
use burn::prelude::*;
use proprio::EnvRng;

/// Observation → action `tanh(net(obs))·scale + bias`, inside the action box.
#[derive(Module, Debug)]
pub struct DeterministicActor {
    net: Mlp,
}

impl DeterministicActor {
    /// A `hidden` MLP with `action_dim` outputs.
    pub fn new(
        obs_dim: usize,
        action_dim: usize,
        hidden: &[usize],
        activation: Activation,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Self {
        let sizes = [&[obs_dim], hidden, &[action_dim]].concat();
        Self {
            net: Mlp::new(&sizes, activation, 1.0, device, rng),
        }
    }

    /// Actions `[B, A]` in env units for observations `[B, D]`.
    pub fn forward(&self, obs: Tensor<2>, scale: Tensor<2>, bias: Tensor<2>) -> Tensor<2> {
        let y = self.net.forward(obs).tanh();
        let [batch, a] = y.dims();
        y * scale.expand([batch, a]) + bias.expand([batch, a])
    }

    /// `tau · self + (1 − tau) · target` (Polyak averaging).
    pub fn polyak_into(&self, target: DeterministicActor, tau: f64) -> DeterministicActor {
        DeterministicActor {
            net: self.net.polyak_into(target.net, tau),
        }
    }
}

/// The action box as `[1, A]` rows: half-widths, centres, lower and upper bounds.
#[derive(Debug, Clone)]
pub struct ActionBox {
    /// `(high − low) / 2`.
    pub scale: Tensor<2>,
    /// `(high + low) / 2`.
    pub bias: Tensor<2>,
    /// Lower bounds.
    pub low: Tensor<2>,
    /// Upper bounds.
    pub high: Tensor<2>,
}

impl ActionBox {
    /// The box `[low, high]` as rows on `device`.
    pub fn new(low: &[f32], high: &[f32], device: &Device) -> Self {
        let (scale, bias) = box_affine(low, high);
        let a = low.len();
        Self {
            scale: matrix(&scale, 1, a, device),
            bias: matrix(&bias, 1, a, device),
            low: matrix(low, 1, a, device),
            high: matrix(high, 1, a, device),
        }
    }
}

/// TD3's exploration: Gaussian noise of `sigma` half-widths of the box added
/// to each component of `actions` (`[n × A]`, row-major), then clipped to the box.
pub fn add_exploration_noise(
    actions: &mut [f32],
    low: &[f32],
    high: &[f32],
    sigma: f32,
    rng: &mut EnvRng,
) {
    for row in actions.chunks_exact_mut(low.len()) {
        for ((x, &lo), &hi) in row.iter_mut().zip(low).zip(high) {
            let std = sigma * (hi - lo) / 2.0;
            *x = (*x + std * standard_normal(rng)).clamp(lo, hi);
        }
    }
}

/// Target policy smoothing (Fujimoto et al. 2018, eq. 14): the target actor's
/// action plus `clip(σ·ε, −c, c)` half-widths of noise (`ε` standard normal
/// `[B, A]`), clipped to the action box.
pub fn smoothed(
    target_action: Tensor<2>,
    eps: Tensor<2>,
    sigma: f32,
    clip: f32,
    bounds: &ActionBox,
) -> Tensor<2> {
    let [batch, a] = target_action.dims();
    let noise = eps.mul_scalar(sigma).clamp(-clip, clip) * bounds.scale.clone().expand([batch, a]);
    (target_action + noise)
        .max_pair(bounds.low.clone().expand([batch, a]))
        .min_pair(bounds.high.clone().expand([batch, a]))
}
