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
    /// Box actions as one token per component, each one of `bins` values
    /// from `low` to `high` inclusive (RT-2's and OpenVLA's action tokens,
    /// evenly spaced or crowded toward the centre: [`BinSpacing`]), so a
    /// group learner has a log-probability per token.
    Binned {
        bins: usize,
        low: Vec<f32>,
        high: Vec<f32>,
        #[serde(default)]
        spacing: BinSpacing,
        #[serde(default)]
        greedy: GreedyToken,
    },
}

/// What a binned head's deterministic action is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GreedyToken {
    /// Each component's most likely value (RT-2, OpenVLA).
    #[default]
    Mode,
    /// Each component's mean value under its token distribution: between
    /// bins, and not held on the zero token while the probability leans
    /// one way (a clone that stops short where its expert moves a little).
    Mean,
}

/// Where a binned head's values lie between a component's bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinSpacing {
    /// Evenly spaced (RT-2, OpenVLA).
    #[default]
    Even,
    /// At `centre + half · u·|u|` for `u` evenly spaced in [-1, 1]: steps a
    /// hundredth of the range near the centre with 21 bins, where delta
    /// controllers make their fine, last moves onto a target (an expert's
    /// 3 mm correction is token 0 among even bins of 1 cm).
    Square,
}

impl BinSpacing {
    /// Value of bin `index` of `bins` between `low` and `high`.
    pub fn value(self, index: usize, bins: usize, low: f32, high: f32) -> f32 {
        let t = index as f32 / (bins - 1) as f32;
        match self {
            Self::Even => low + (high - low) * t,
            Self::Square => {
                let u = 2.0 * t - 1.0;
                0.5 * (low + high) + 0.5 * (high - low) * u * u.abs()
            }
        }
    }

    /// The bin whose value lies nearest to `a`.
    pub fn nearest(self, a: f32, bins: usize, low: f32, high: f32) -> usize {
        let last = (bins - 1) as f32;
        let width = (high - low).max(f32::MIN_POSITIVE);
        match self {
            Self::Even => ((a - low) / width * last).round().clamp(0.0, last) as usize,
            Self::Square => {
                let x = ((2.0 * (a - low) / width) - 1.0).clamp(-1.0, 1.0);
                let u = x.signum() * x.abs().sqrt();
                let below = ((u + 1.0) / 2.0 * last).floor().clamp(0.0, last) as usize;
                let above = (below + 1).min(bins - 1);
                let off = |i: usize| (self.value(i, bins, low, high) - a).abs();
                if off(above) < off(below) {
                    above
                } else {
                    below
                }
            }
        }
    }
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

    /// The head for an action space with box actions cut into `bins` tokens
    /// per component, spaced by `spacing`, acting `greedy` when deterministic
    /// (`bins` 0: [`ActionHead::for_space`]'s head).
    pub fn for_space_binned(
        space: &Space,
        bins: usize,
        spacing: BinSpacing,
        greedy: GreedyToken,
    ) -> Result<Self> {
        match (space, bins) {
            (_, 0) => Self::for_space(space),
            (Space::Box { low, high }, 2..) if low.iter().chain(high).all(|v| v.is_finite()) => {
                Ok(Self::Binned {
                    bins,
                    low: low.clone(),
                    high: high.clone(),
                    spacing,
                    greedy,
                })
            }
            (Space::Box { .. }, 2..) => Err(LearnError::Config(
                "action_bins needs finite action bounds to cut into bins".into(),
            )),
            (Space::Box { .. }, _) => Err(LearnError::Config(
                "action_bins must be 0 (a Gaussian) or at least 2".into(),
            )),
            (other, _) => Err(LearnError::Config(format!(
                "action_bins cuts box actions into tokens; this env acts in {other}"
            ))),
        }
    }

    /// Width of the network output that parameterises the distribution.
    pub fn param_dim(&self) -> usize {
        match self {
            Self::Gaussian { dim, .. } => *dim,
            Self::Categorical { nvec, .. } => nvec.iter().sum(),
            Self::Binned { bins, low, .. } => bins * low.len(),
        }
    }

    /// Number of action components.
    pub fn action_dim(&self) -> usize {
        match self {
            Self::Gaussian { dim, .. } => *dim,
            Self::Categorical { nvec, .. } => nvec.len(),
            Self::Binned { low, .. } => low.len(),
        }
    }

    /// Log-probability terms of one action: one per token of a binned
    /// action, one for a whole Gaussian or categorical action.
    pub fn units(&self) -> usize {
        match self {
            Self::Binned { low, .. } => low.len(),
            _ => 1,
        }
    }

    /// The categories of each component (categorical and binned heads).
    fn categories(&self) -> Option<Vec<usize>> {
        match self {
            Self::Gaussian { .. } => None,
            Self::Categorical { nvec, .. } => Some(nvec.clone()),
            Self::Binned { bins, low, .. } => Some(vec![*bins; low.len()]),
        }
    }

    /// What the env receives for category `index` of component `k`.
    fn category_value(&self, k: usize, index: usize) -> f32 {
        match self {
            Self::Categorical { start, .. } => (index as i64 + start[k]) as f32,
            Self::Binned {
                bins,
                low,
                high,
                spacing,
                ..
            } => spacing.value(index, *bins, low[k], high[k]),
            Self::Gaussian { .. } => index as f32,
        }
    }

    /// The stored form of an env action, as [`ActionHead::sample`] writes
    /// it: the nearest bin of each component for a binned head, the
    /// category index for a categorical one, the action itself for a
    /// Gaussian (how a demonstration becomes a target to clone).
    pub fn stored_from_action(&self, env_action: &[f32], stored: &mut [f32]) {
        for (k, (slot, &a)) in stored.iter_mut().zip(env_action).enumerate() {
            *slot = match self {
                Self::Gaussian { .. } => a,
                Self::Categorical { nvec, start } => {
                    (a as i64 - start[k]).clamp(0, nvec[k] as i64 - 1) as f32
                }
                Self::Binned {
                    bins,
                    low,
                    high,
                    spacing,
                    ..
                } => spacing.nearest(a, *bins, low[k], high[k]) as f32,
            };
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
            Self::Categorical { .. } | Self::Binned { .. } => {
                let mut logp = 0.0;
                let mut offset = 0;
                for (k, n) in self
                    .categories()
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                {
                    let logits = &params[offset..offset + n];
                    offset += n;
                    let log_z = log_sum_exp(logits);
                    let index = if deterministic {
                        argmax(logits)
                    } else {
                        sample_index(logits, log_z, rng)
                    };
                    logp += logits[index] - log_z;
                    stored[k] = index as f32;
                    env_action[k] = match self {
                        Self::Binned {
                            greedy: GreedyToken::Mean,
                            ..
                        } if deterministic => (0..n)
                            .map(|i| (logits[i] - log_z).exp() * self.category_value(k, i))
                            .sum(),
                        _ => self.category_value(k, index),
                    };
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
        let (logp, entropy) = self.unit_log_prob_entropy(params, log_std, actions);
        match self.units() {
            1 => (logp.squeeze_dim(1), entropy.squeeze_dim(1)),
            _ => (
                logp.sum_dim(1).squeeze_dim(1),
                entropy.sum_dim(1).squeeze_dim(1),
            ),
        }
    }

    /// Log-probability and entropy `[B, units]` of each unit of stored
    /// `actions` (each token of a binned action; the whole action otherwise).
    pub fn unit_log_prob_entropy(
        &self,
        params: Tensor<2>,
        log_std: Option<Tensor<2>>,
        actions: Tensor<2>,
    ) -> (Tensor<2>, Tensor<2>) {
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
                (logp, entropy)
            }
            Self::Categorical { .. } | Self::Binned { .. } => {
                let (mut logps, mut entropies) = (Vec::new(), Vec::new());
                let mut offset = 0;
                for (k, n) in self
                    .categories()
                    .unwrap_or_default()
                    .into_iter()
                    .enumerate()
                {
                    let log_pi =
                        log_softmax(params.clone().slice([0..batch, offset..offset + n]), 1);
                    offset += n;
                    let index = actions.clone().slice([0..batch, k..k + 1]).int();
                    logps.push(log_pi.clone().gather(1, index));
                    entropies.push(-(log_pi.clone().exp() * log_pi).sum_dim(1));
                }
                let (logp, entropy) = (Tensor::cat(logps, 1), Tensor::cat(entropies, 1));
                match self {
                    // A categorical action is one unit, whatever its components.
                    Self::Categorical { .. } => (logp.sum_dim(1), entropy.sum_dim(1)),
                    _ => (logp, entropy),
                }
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

/// `ln Σ exp(logits)`, computed stably: a categorical's log normaliser.
pub(crate) fn log_sum_exp(logits: &[f32]) -> f32 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    max + logits.iter().map(|l| (l - max).exp()).sum::<f32>().ln()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::{host, matrix};
    use proprio::rand::SeedableRng;

    #[test]
    fn binned_actions_span_the_box_and_score_each_token() {
        let space = Space::Box {
            low: vec![-1.0, 0.0],
            high: vec![1.0, 2.0],
        };
        let head =
            ActionHead::for_space_binned(&space, 5, BinSpacing::Even, GreedyToken::Mode).unwrap();
        assert_eq!(
            (head.param_dim(), head.action_dim(), head.units()),
            (10, 2, 2)
        );
        // Component 0 prefers bin 4 (+1), component 1 bin 1 (0.5).
        let params = [0.0, 0.0, 0.0, 1.0, 3.0, 0.0, 2.0, 0.0, 0.0, 0.0];
        let (mut stored, mut action) = ([0.0; 2], [0.0; 2]);
        let mut rng = EnvRng::seed_from_u64(1);
        let logp = head.sample(&params, &[], &mut rng, true, &mut stored, &mut action);
        assert_eq!(stored, [4.0, 1.0]);
        assert_eq!(action, [1.0, 0.5]);
        let ln_z = |row: &[f32]| row.iter().map(|l| l.exp()).sum::<f32>().ln();
        let expected = [3.0 - ln_z(&params[..5]), 2.0 - ln_z(&params[5..])];
        assert!((logp - expected.iter().sum::<f32>()).abs() < 1e-5);
        let device = Device::flex();
        let (unit_logp, entropy) = head.unit_log_prob_entropy(
            matrix(&params, 1, 10, &device),
            None,
            matrix(&stored, 1, 2, &device),
        );
        let unit_logp = host(unit_logp).unwrap();
        assert!(
            (unit_logp[0] - expected[0]).abs() < 1e-5 && (unit_logp[1] - expected[1]).abs() < 1e-5
        );
        assert_eq!(host(entropy).unwrap().len(), 2, "one entropy per token");
        // Bin 0 is the low bound exactly.
        let low = [5.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 0.0];
        head.sample(&low, &[], &mut rng, true, &mut stored, &mut action);
        assert_eq!(action, [-1.0, 0.0]);
    }

    #[test]
    fn bins_need_a_bounded_box_and_at_least_two_values() {
        let unbounded = Space::uniform_box(2, f32::NEG_INFINITY, f32::INFINITY);
        let bounded = Space::uniform_box(2, -1.0, 1.0);
        let discrete = Space::Discrete { n: 3, start: 0 };
        for (space, bins, says) in [
            (&unbounded, 5, "finite action bounds"),
            (&bounded, 1, "at least 2"),
            (&discrete, 5, "box actions"),
        ] {
            let error =
                ActionHead::for_space_binned(space, bins, BinSpacing::Even, GreedyToken::Mode)
                    .unwrap_err()
                    .to_string();
            assert!(error.contains(says), "{error}");
        }
        assert!(matches!(
            ActionHead::for_space_binned(&bounded, 0, BinSpacing::Even, GreedyToken::Mode).unwrap(),
            ActionHead::Gaussian { .. }
        ));
    }

    #[test]
    fn demonstrated_actions_become_the_tokens_that_would_act_them() {
        let space = Space::Box {
            low: vec![-1.0, 0.0],
            high: vec![1.0, 2.0],
        };
        let head =
            ActionHead::for_space_binned(&space, 5, BinSpacing::Even, GreedyToken::Mode).unwrap();
        let mut stored = [0.0; 2];
        // Bins of component 0 sit at -1, -0.5, 0, 0.5, 1; of component 1 at 0, 0.5, …, 2.
        head.stored_from_action(&[0.3, 1.9], &mut stored);
        assert_eq!(stored, [3.0, 4.0]);
        head.stored_from_action(&[-7.0, 0.2], &mut stored);
        assert_eq!(stored, [0.0, 0.0], "outside the box: the nearest end");
        // Acting the stored tokens gives back the bin values.
        let mut params = [0.0; 10];
        params[3] = 9.0;
        params[5 + 4] = 9.0;
        let (mut sampled, mut action) = ([0.0; 2], [0.0; 2]);
        let mut rng = EnvRng::seed_from_u64(0);
        head.sample(&params, &[], &mut rng, true, &mut sampled, &mut action);
        head.stored_from_action(&action, &mut stored);
        assert_eq!(stored, sampled);
        let discrete = ActionHead::for_space(&Space::Discrete { n: 3, start: -1 }).unwrap();
        let mut index = [0.0];
        discrete.stored_from_action(&[1.0], &mut index);
        assert_eq!(index, [2.0], "the env's value minus the start");
    }

    #[test]
    fn square_bins_crowd_toward_the_centre_and_read_back_to_the_nearest() {
        let space = Space::Box {
            low: vec![-1.0, 0.0],
            high: vec![1.0, 4.0],
        };
        let head = ActionHead::for_space_binned(&space, 21, BinSpacing::Square, GreedyToken::Mode)
            .unwrap();
        // u = -1, -0.9, …, 1: values u·|u| of the half range around the centre.
        let value = |k, i| head.category_value(k, i);
        assert_eq!((value(0, 0), value(0, 10), value(0, 20)), (-1.0, 0.0, 1.0));
        assert!((value(0, 11) - 0.01).abs() < 1e-6, "{}", value(0, 11));
        assert!((value(0, 19) - 0.81).abs() < 1e-6, "{}", value(0, 19));
        assert!((value(1, 12) - (2.0 + 2.0 * 0.04)).abs() < 1e-6);
        // Every value reads back as its own bin; between two, the nearer wins.
        let mut stored = [0.0; 2];
        for i in 0..21 {
            head.stored_from_action(&[value(0, i), value(1, i)], &mut stored);
            assert_eq!(stored, [i as f32; 2]);
        }
        // 0.03 lies between 0.01 (bin 11) and 0.04 (bin 12), nearer 0.04;
        // an even 21-bin head would read it as 0 (bin 10).
        head.stored_from_action(&[0.03, 2.0 - 0.012], &mut stored);
        assert_eq!(stored, [12.0, 9.0]);
        let even =
            ActionHead::for_space_binned(&space, 21, BinSpacing::Even, GreedyToken::Mode).unwrap();
        even.stored_from_action(&[0.03, 2.0], &mut stored);
        assert_eq!(stored, [10.0, 10.0]);
    }

    #[test]
    fn a_mean_greedy_head_acts_the_tokens_mean_value() {
        let space = Space::uniform_box(1, -1.0, 1.0);
        let head = |greedy| ActionHead::for_space_binned(&space, 3, BinSpacing::Even, greedy);
        // Bins at -1, 0, 1 with probabilities 0.1, 0.5, 0.4: mode 0, mean 0.3.
        let params = [0.1f32.ln(), 0.5f32.ln(), 0.4f32.ln()];
        let mut rng = EnvRng::seed_from_u64(0);
        let (mut stored, mut action) = ([0.0], [0.0]);
        let mode = head(GreedyToken::Mode).unwrap();
        mode.sample(&params, &[], &mut rng, true, &mut stored, &mut action);
        assert_eq!((stored, action), ([1.0], [0.0]));
        let mean = head(GreedyToken::Mean).unwrap();
        let logp = mean.sample(&params, &[], &mut rng, true, &mut stored, &mut action);
        assert!((action[0] - 0.3).abs() < 1e-5, "{action:?}");
        assert_eq!(stored, [1.0], "the stored token stays the mode");
        assert!((logp - 0.5f32.ln()).abs() < 1e-5);
        // Sampling is the same distribution either way.
        let mut draws = (EnvRng::seed_from_u64(3), EnvRng::seed_from_u64(3));
        let (mut a, mut b) = ([0.0], [0.0]);
        for _ in 0..20 {
            mode.sample(&params, &[], &mut draws.0, false, &mut stored, &mut a);
            mean.sample(&params, &[], &mut draws.1, false, &mut stored, &mut b);
            assert_eq!(a, b);
        }
    }
}
