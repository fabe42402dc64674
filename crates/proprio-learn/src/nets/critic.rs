//! Twin Q critics fused into one network: each layer holds both critics'
//! weights as `[2, in, out]`, so a forward or backward pass is one batched
//! product per layer instead of two (clipped double-Q of TD3, SAC, DSAC).

use crate::base::polyak::polyak;
use crate::nets::linear::{linear, linear_group};
use crate::nets::mlp::{Activation, orthogonal};
use burn::module::Param;
use burn::prelude::*;
use proprio::EnvRng;

/// Two independent MLPs `(obs, action) → [outputs]`, evaluated together.
#[derive(Module, Debug)]
pub struct TwinCritic {
    weights: Vec<Param<Tensor<3>>>,
    biases: Vec<Param<Tensor<3>>>,
    #[module(skip)]
    activation: Activation,
}

impl TwinCritic {
    /// Two `[obs_dim + action_dim] → hidden… → [outputs]` networks. Each
    /// is initialised as [`crate::Mlp`] initialises one (orthogonal, gain √2,
    /// output gain 1, zero biases): the first critic's layers, then the second's.
    pub fn new(
        inputs: usize,
        hidden: &[usize],
        outputs: usize,
        activation: Activation,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Self {
        let sizes = [&[inputs], hidden, &[outputs]].concat();
        let last = sizes.len() - 2;
        let draw = |rng: &mut EnvRng| -> Vec<Vec<f32>> {
            sizes
                .windows(2)
                .enumerate()
                .map(|(k, w)| {
                    let gain = if k == last { 1.0 } else { 2f64.sqrt() };
                    orthogonal(w[0], w[1], gain, rng)
                })
                .collect()
        };
        let (first, second) = (draw(rng), draw(rng));
        let weights = sizes
            .windows(2)
            .zip(first.into_iter().zip(second))
            .map(|(w, (a, b))| {
                let data = TensorData::new([a, b].concat(), [2, w[0], w[1]]);
                Param::from_tensor(Tensor::from_data(data, device))
            })
            .collect();
        let biases = sizes[1..]
            .iter()
            .map(|&out| Param::from_tensor(Tensor::zeros([2, 1, out], device)))
            .collect();
        Self {
            weights,
            biases,
            activation,
        }
    }

    /// Both critics' outputs `[2, B, outputs]` for `obs` `[B, D]` and `action` `[B, A]`.
    pub fn forward(&self, obs: Tensor<2>, action: Tensor<2>) -> Tensor<3> {
        let input = Tensor::cat(vec![obs, action], 1);
        let [batch, width] = input.dims();
        let mut x = input.unsqueeze_dim::<3>(0).expand([2, batch, width]);
        let last = self.weights.len() - 1;
        for (k, (w, b)) in self.weights.iter().zip(&self.biases).enumerate() {
            x = linear_group(x, w.val(), b.val());
            if k < last {
                x = self.activation.apply(x);
            }
        }
        x
    }

    /// The first critic's outputs alone `[B, outputs]` (TD3's actor climbs only
    /// it): the second critic's half of every layer is left out, not computed.
    pub fn first(&self, obs: Tensor<2>, action: Tensor<2>) -> Tensor<2> {
        let mut x = Tensor::cat(vec![obs, action], 1);
        let last = self.weights.len() - 1;
        for (k, (w, b)) in self.weights.iter().zip(&self.biases).enumerate() {
            let [_, inputs, outputs] = w.dims();
            let w = w
                .val()
                .slice([0..1, 0..inputs, 0..outputs])
                .reshape([inputs, outputs]);
            let b = b.val().slice([0..1, 0..1, 0..outputs]).reshape([outputs]);
            x = linear(x, w, b);
            if k < last {
                x = self.activation.apply(x);
            }
        }
        x
    }

    /// The smaller of the two critics' outputs, element by element: `[B, outputs]`.
    pub fn min(&self, obs: Tensor<2>, action: Tensor<2>) -> Tensor<2> {
        let (q1, q2) = split(self.forward(obs, action));
        q1.min_pair(q2)
    }

    /// A copy whose weights take no gradient, for the actor's loss: it
    /// backpropagates through the critics to the action only, and the weight
    /// gradients it would compute and throw away (a third of its critic work) are skipped.
    pub fn frozen(&self) -> TwinCritic {
        self.clone().no_grad()
    }

    /// `tau · self + (1 − tau) · target`, parameter by parameter (Polyak averaging).
    pub fn polyak_into(&self, target: TwinCritic, tau: f64) -> TwinCritic {
        polyak(self, target, tau)
    }
}

/// The first and the second critic's rows of a `[2, B, n]` output, as `[B, n]` each.
pub fn split(both: Tensor<3>) -> (Tensor<2>, Tensor<2>) {
    let [_, batch, n] = both.dims();
    let q1 = both
        .clone()
        .slice([0..1, 0..batch, 0..n])
        .reshape([batch, n]);
    let q2 = both.slice([1..2, 0..batch, 0..n]).reshape([batch, n]);
    (q1, q2)
}
