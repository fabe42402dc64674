//! Action heads: how a policy's network output becomes an action.
//!
//! Sampling during rollouts happens on the host with the learner's seeded
//! generator (so runs are reproducible on any backend); log-probabilities and
//! entropies for the loss are computed with tensors so gradients flow.

use crate::base::error::{LearnError, Result};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use proprio::rand::RngExt;
use proprio::{EnvRng, Space};
use serde::{Deserialize, Serialize};

/// ½ ln(2π), the Gaussian log-density's constant.
pub(crate) const HALF_LN_TAU: f32 = 0.918_938_5;

/// The action distribution family, derived from the action space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActionHead {
    /// Diagonal Gaussian with a state-independent log-std (box actions in `low..high`).
    Gaussian {
        dim: usize,
        low: Vec<f32>,
        high: Vec<f32>,
    },
    /// One categorical per component (discrete and multi-discrete actions);
    /// the env receives `index + start[k]`.
    Categorical { nvec: Vec<usize>, start: Vec<i64> },
}

impl ActionHead {
    /// The head for an action space.
    pub fn for_space(space: &Space) -> Result<Self> {
        match space {
            Space::Box { low, high } => Ok(Self::Gaussian {
                dim: low.len(),
                low: low.clone(),
                high: high.clone(),
            }),
            Space::Discrete { n, start } => Ok(Self::Categorical {
                nvec: vec![*n as usize],
                start: vec![i64::from(*start)],
            }),
            Space::MultiDiscrete { nvec } => Ok(Self::Categorical {
                nvec: nvec.iter().map(|&n| n as usize).collect(),
                start: vec![0; nvec.len()],
            }),
            other => Err(LearnError::Config(format!(
                "these learners act in box, discrete or multi-discrete spaces, not {other}"
            ))),
        }
    }

    /// Width of the network output that parameterises the distribution.
    pub fn param_dim(&self) -> usize {
        match self {
            Self::Gaussian { dim, .. } => *dim,
            Self::Categorical { nvec, .. } => nvec.iter().sum(),
        }
    }

    /// Number of action components.
    pub fn action_dim(&self) -> usize {
        match self {
            Self::Gaussian { dim, .. } => *dim,
            Self::Categorical { nvec, .. } => nvec.len(),
        }
    }

    /// Samples (or, if `deterministic`, takes the mode of) one action from
    /// `params` (a row of network output) and `log_std` (may be empty when deterministic). Writes the stored
    /// action (category indices for categorical heads) to `stored`, the env's
    /// action to `env_action`, and returns the log-probability.
    pub fn sample(
        &self,
        params: &[f32],
        log_std: &[f32],
        rng: &mut EnvRng,
        deterministic: bool,
        stored: &mut [f32],
        env_action: &mut [f32],
    ) -> f32 {
        match self {
            Self::Gaussian { .. } => {
                let mut logp = 0.0;
                for (k, &mean) in params.iter().enumerate() {
                    let ls = log_std.get(k).copied().unwrap_or(0.0);
                    let eps = if deterministic {
                        0.0
                    } else {
                        standard_normal(rng)
                    };
                    stored[k] = mean + ls.exp() * eps;
                    env_action[k] = stored[k];
                    logp += -0.5 * eps * eps - ls - HALF_LN_TAU;
                }
                logp
            }
            Self::Categorical { nvec, start } => {
                let mut logp = 0.0;
                let mut offset = 0;
                for (k, (&n, &s)) in nvec.iter().zip(start).enumerate() {
                    let logits = &params[offset..offset + n];
                    offset += n;
                    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let log_z = max + logits.iter().map(|l| (l - max).exp()).sum::<f32>().ln();
                    let index = if deterministic {
                        argmax(logits)
                    } else {
                        sample_index(logits, log_z, rng)
                    };
                    logp += logits[index] - log_z;
                    stored[k] = index as f32;
                    env_action[k] = (index as i64 + s) as f32;
                }
                logp
            }
        }
    }

    /// Log-probability `[B]` of stored `actions` `[B, action_dim]` and entropy `[B]`
    /// under `params` `[B, param_dim]` (and `log_std` `[1, dim]` for Gaussians).
    pub fn log_prob_entropy(
        &self,
        params: Tensor<2>,
        log_std: Option<Tensor<2>>,
        actions: Tensor<2>,
    ) -> (Tensor<1>, Tensor<1>) {
        let [batch, _] = params.dims();
        match self {
            Self::Gaussian { dim, .. } => {
                let log_std = log_std
                    .unwrap_or_else(|| Tensor::zeros([1, *dim], &params.device()))
                    .expand([batch, *dim]);
                let z = (actions - params).div(log_std.clone().exp());
                let logp = (z.square().mul_scalar(-0.5) - log_std.clone())
                    .sub_scalar(HALF_LN_TAU)
                    .sum_dim(1);
                let entropy = log_std.add_scalar(0.5 + HALF_LN_TAU).sum_dim(1);
                (logp.squeeze_dim(1), entropy.squeeze_dim(1))
            }
            Self::Categorical { nvec, .. } => {
                let device = params.device();
                let mut logp = Tensor::<1>::zeros([batch], &device);
                let mut entropy = Tensor::<1>::zeros([batch], &device);
                let mut offset = 0;
                for (k, &n) in nvec.iter().enumerate() {
                    let log_pi =
                        log_softmax(params.clone().slice([0..batch, offset..offset + n]), 1);
                    offset += n;
                    let index = actions.clone().slice([0..batch, k..k + 1]).int();
                    logp = logp + log_pi.clone().gather(1, index).squeeze_dim(1);
                    entropy = entropy - (log_pi.clone().exp() * log_pi).sum_dim(1).squeeze_dim(1);
                }
                (logp, entropy)
            }
        }
    }

    /// How far Gaussian means `[B, dim]` stray past their box widened by
    /// `margin` half-widths each side: the mean over the batch of the summed
    /// squared excess, in half-widths (rl_games' bounds loss; unbounded
    /// components pay nothing). `None` for categorical heads.
    ///
    /// The env clips actions to the box, so past it every sample acts alike,
    /// the surrogate has no gradient and the mean drifts where exploration
    /// can no longer reach back inside (a gripper command pinned shut).
    pub fn bound_excess(&self, params: Tensor<2>, margin: f32) -> Option<Tensor<1>> {
        let Self::Gaussian { dim, low, high } = self else {
            return None;
        };
        let device = params.device();
        let row = |values: Vec<f32>| {
            Tensor::<1>::from_floats(values.as_slice(), &device).reshape([1, *dim])
        };
        let (mut centre, mut scale, mut reach) =
            (vec![0.0; *dim], vec![0.0; *dim], vec![f32::MAX; *dim]);
        for k in 0..*dim {
            let half = 0.5 * (high[k] - low[k]);
            if half.is_finite() && half > 0.0 {
                centre[k] = 0.5 * (high[k] + low[k]);
                scale[k] = 1.0 / half;
                reach[k] = 1.0 + margin;
            }
        }
        let [batch, _] = params.dims();
        let offset =
            (params - row(centre).expand([batch, *dim])) * row(scale).expand([batch, *dim]);
        let excess = (offset.abs() - row(reach).expand([batch, *dim])).clamp_min(0.0);
        Some(excess.square().sum_dim(1).mean())
    }
}

/// Index of the largest value (the first of equals).
pub(crate) fn argmax(values: &[f32]) -> usize {
    let mut best = 0;
    for (i, v) in values.iter().enumerate() {
        if *v > values[best] {
            best = i;
        }
    }
    best
}

/// Draws an index with probability `exp(logits[i] − log_z)` (inverse CDF; the last index on rounding).
pub(crate) fn sample_index(logits: &[f32], log_z: f32, rng: &mut EnvRng) -> usize {
    let u: f32 = rng.random();
    let mut cumulative = 0.0;
    logits
        .iter()
        .position(|l| {
            cumulative += (l - log_z).exp();
            u < cumulative
        })
        .unwrap_or(logits.len() - 1)
}

/// One standard normal draw (Box–Muller).
pub fn standard_normal(rng: &mut EnvRng) -> f32 {
    let u1: f32 = 1.0 - rng.random::<f32>();
    let u2: f32 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
}
