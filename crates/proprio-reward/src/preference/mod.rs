//! Preference rewards: a reward network `r_ψ` over frame features, fitted by
//! Bradley–Terry to labelled pairs of segments (Christiano et al. 2017;
//! PEBBLE, Lee et al. 2021; RL-VLM-F, Wang et al. 2024):
//!
//! `P(σ⁰ ≻ σ¹) = exp Σr(σ⁰) / (exp Σr(σ⁰) + exp Σr(σ¹))`, cross-entropy on the labels.
//!
//! Labellers: the task's true return (an oracle, for ablations), CLIP
//! judging which segment's last frame is closer to the goal text (RL-VLM-F
//! with CLIP as the judge), or a person watching the two segments.

pub mod human;
mod online;

pub use online::{Labeller, PreferenceHead, REWARD_NET_FILE, Schedule};

use crate::{Result, RewardError};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use burn::tensor::activation::{log_sigmoid, relu};
use proprio::rand::RngExt;

/// `r_ψ`: features → a reward. Unbounded, as Christiano et al.'s: PEBBLE's
/// tanh bound saturates at the extremes, where segments must still be ranked
/// (held-out ranking stalled at 90% with it); the learners normalise rewards.
#[derive(Module, Debug)]
pub struct RewardNet {
    hidden: Vec<Linear>,
    out: Linear,
}

impl RewardNet {
    /// `input → width → width → 1`, ReLU between layers.
    pub fn new(input: usize, width: usize, device: &Device) -> Self {
        Self {
            hidden: vec![
                LinearConfig::new(input, width).init(device),
                LinearConfig::new(width, width).init(device),
            ],
            out: LinearConfig::new(width, 1).init(device),
        }
    }

    /// Rewards of the rows of `x` `[n, input]`, `[n]`.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<1> {
        let h = self
            .hidden
            .iter()
            .fold(x, |h, layer| relu(layer.forward(h)));
        let [n, _] = h.dims();
        self.out.forward(h).reshape([n])
    }
}

/// Bradley–Terry cross-entropy of segment returns `returns0`, `returns1`
/// `[p]` under labels `[p]` (1: σ⁰ preferred, 0: σ¹, 0.5: equally good).
pub fn bradley_terry_loss(
    returns0: Tensor<1>,
    returns1: Tensor<1>,
    labels: Tensor<1>,
) -> Tensor<1> {
    let logit = returns0 - returns1;
    let first = labels.clone() * log_sigmoid(logit.clone());
    let second = labels.neg().add_scalar(1.0) * log_sigmoid(logit.neg());
    (first + second).mean().neg()
}

/// Two segments of `len` frames' features each, and which one is preferred.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// σ⁰'s features, `[len × dim]` row-major.
    pub first: Vec<f32>,
    /// σ¹'s features, `[len × dim]`.
    pub second: Vec<f32>,
    /// 1: σ⁰ preferred, 0: σ¹, 0.5: no preference.
    pub label: f32,
}

/// The oracle's label: the segment with the higher true return is preferred.
pub fn oracle_label(return0: f64, return1: f64) -> f32 {
    match return0.partial_cmp(&return1) {
        Some(std::cmp::Ordering::Greater) => 1.0,
        Some(std::cmp::Ordering::Less) => 0.0,
        _ => 0.5,
    }
}

/// CLIP as the judge (RL-VLM-F): the segment whose last frame's unit
/// embedding is more similar to the goal text's is preferred.
pub fn clip_label(goal: &[f32], last0: &[f32], last1: &[f32]) -> f32 {
    let dot = |a: &[f32]| a.iter().zip(goal).map(|(x, g)| x * g).sum::<f32>();
    oracle_label(f64::from(dot(last0)), f64::from(dot(last1)))
}

/// Settings of the reward network's fit (PEBBLE's defaults, scaled to small features).
#[derive(Debug, Clone, PartialEq)]
pub struct PreferenceConfig {
    /// Frames per segment.
    pub segment: usize,
    /// Hidden width of `r_ψ`.
    pub width: usize,
    /// Adam's learning rate (PEBBLE: 3e-4).
    pub learning_rate: f64,
    /// Pairs per Adam step.
    pub batch: usize,
    /// Passes over the labelled pairs per fit.
    pub epochs: usize,
    /// Seed of the initial weights and the minibatch order.
    pub seed: u64,
}

impl Default for PreferenceConfig {
    fn default() -> Self {
        Self {
            segment: 25,
            width: 64,
            learning_rate: 3e-4,
            batch: 64,
            epochs: 50,
            seed: 1,
        }
    }
}

/// A reward network and its optimiser, fitted to labelled pairs as they come.
pub struct PreferenceModel {
    net: RewardNet,
    optim: ModuleOptimizer,
    config: PreferenceConfig,
    dim: usize,
    device: Device,
    rng: proprio::EnvRng,
}

impl PreferenceModel {
    /// A fresh `r_ψ` over features of `dim` values.
    pub fn new(dim: usize, config: PreferenceConfig) -> Result<Self> {
        if dim == 0 || config.segment == 0 || config.batch == 0 || config.width == 0 {
            return Err(RewardError::Input(
                "preference model: features, segment, batch and width must be positive".into(),
            ));
        }
        let device = Device::flex().autodiff();
        Ok(Self {
            net: crate::seeded(&device, config.seed, || {
                RewardNet::new(dim, config.width, &device)
            }),
            optim: AdamConfig::new().init(),
            rng: proprio::episode_rng(config.seed, 0, 1),
            config,
            dim,
            device,
        })
    }

    /// Fits `r_ψ` to `pairs` for `epochs` passes; the mean loss of the last pass.
    pub fn fit(&mut self, pairs: &[Pair]) -> Result<f32> {
        let rows = self.config.segment * self.dim;
        if let Some(bad) = pairs
            .iter()
            .find(|p| p.first.len() != rows || p.second.len() != rows)
        {
            return Err(RewardError::Input(format!(
                "a segment has {} and {} values, not {rows} ({} frames × {})",
                bad.first.len(),
                bad.second.len(),
                self.config.segment,
                self.dim
            )));
        }
        let mut last = f32::NAN;
        for _ in 0..self.config.epochs {
            let mut order: Vec<usize> = (0..pairs.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, self.rng.random_range(0..=i));
            }
            let (mut sum, mut batches) = (0.0, 0);
            for chunk in order.chunks(self.config.batch) {
                let loss = self.loss(pairs, chunk);
                sum += scalar(loss.clone())?;
                batches += 1;
                let grads = GradientsParams::from_grads(loss.backward(), &self.net);
                self.net = self
                    .optim
                    .step(self.config.learning_rate, self.net.clone(), grads);
            }
            last = sum / batches.max(1) as f32;
        }
        Ok(last)
    }

    fn loss(&self, pairs: &[Pair], which: &[usize]) -> Tensor<1> {
        let (p, len, dim) = (which.len(), self.config.segment, self.dim);
        let features = |pick: fn(&Pair) -> &Vec<f32>| {
            let values: Vec<f32> = which
                .iter()
                .flat_map(|&i| pick(&pairs[i]).iter().copied())
                .collect();
            Tensor::<2>::from_data(TensorData::new(values, [p * len, dim]), &self.device)
        };
        let returns = |x: Tensor<2>| {
            self.net
                .forward(x)
                .reshape([p, len])
                .sum_dim(1)
                .reshape([p])
        };
        let r0 = returns(features(|pair| &pair.first));
        let r1 = returns(features(|pair| &pair.second));
        let labels: Vec<f32> = which.iter().map(|&i| pairs[i].label).collect();
        let labels = Tensor::from_data(TensorData::new(labels, [p]), &self.device);
        bradley_terry_loss(r0, r1, labels)
    }

    /// Writes `r_ψ`'s weights to `path`.
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        self.net
            .clone()
            .save_file(path)
            .map_err(|e| RewardError::io(path, e))
    }

    /// Reads `r_ψ`'s weights from `path` (written by [`PreferenceModel::save`])
    /// into memory: checkpoint folders are rotated away while the model runs.
    pub fn load(&mut self, path: &std::path::Path) -> Result<()> {
        let checkpoint = |e: burn::store::RecordError| RewardError::Checkpoint {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let bytes = std::fs::read(path).map_err(|e| RewardError::io(path, e))?;
        let record =
            burn::store::ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
                .map_err(checkpoint)?;
        self.net = self
            .net
            .clone()
            .try_load_record(record)
            .map_err(checkpoint)?;
        Ok(())
    }

    /// `r_ψ` of each row of `features` `[n × dim]`.
    pub fn rewards(&self, features: &[f32]) -> Result<Vec<f32>> {
        let n = features.len() / self.dim;
        let device = Device::flex();
        let x = Tensor::<2>::from_data(TensorData::new(features.to_vec(), [n, self.dim]), &device);
        self.net
            .valid()
            .forward(x)
            .into_data()
            .try_into_vec::<f32>()
            .map_err(crate::clip::backend)
    }
}

fn scalar(t: Tensor<1>) -> Result<f32> {
    let v = t
        .into_data()
        .try_into_vec::<f32>()
        .map_err(crate::clip::backend)?;
    match v.first() {
        Some(x) if x.is_finite() => Ok(*x),
        _ => Err(RewardError::Backend(
            "the preference loss is not finite".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bradley_terry_loss_and_its_gradient_on_a_hand_made_pair() {
        let device = Device::flex().autodiff();
        let r0 = Tensor::<1>::from_data(TensorData::new(vec![1.5f32], [1]), &device).require_grad();
        let r1 = Tensor::<1>::from_data(TensorData::new(vec![0.5f32], [1]), &device).require_grad();
        let label = Tensor::<1>::from_data(TensorData::new(vec![1.0f32], [1]), &device);
        let loss = bradley_terry_loss(r0.clone(), r1.clone(), label);
        // σ⁰ preferred with returns 1.5 and 0.5: loss = log(1 + e^(0.5 − 1.5)).
        let expected = (1.0f32 + (-1.0f32).exp()).ln();
        let value = scalar(loss.clone()).unwrap();
        assert!((value - expected).abs() < 1e-6, "{value} vs {expected}");
        // d/dr⁰ = −σ(r¹ − r⁰) = −0.26894; d/dr¹ = +0.26894.
        let grads = loss.backward();
        let g0 = scalar(r0.grad(&grads).unwrap()).unwrap();
        let g1 = scalar(r1.grad(&grads).unwrap()).unwrap();
        let s = 1.0 / (1.0 + 1.0f32.exp());
        assert!((g0 + s).abs() < 1e-6 && (g1 - s).abs() < 1e-6, "{g0} {g1}");
        // A tie is indifferent to which return is larger: the loss is symmetric.
        let half = Tensor::<1>::from_data(TensorData::new(vec![0.5f32], [1]), &device);
        let a = bradley_terry_loss(r0.clone(), r1.clone(), half.clone());
        let b = bradley_terry_loss(r1, r0, half);
        assert!((scalar(a).unwrap() - scalar(b).unwrap()).abs() < 1e-6);
    }

    #[test]
    fn labellers_prefer_the_better_segment() {
        assert_eq!(oracle_label(3.0, 1.0), 1.0);
        assert_eq!(oracle_label(1.0, 3.0), 0.0);
        assert_eq!(oracle_label(2.0, 2.0), 0.5);
        let goal = [1.0, 0.0];
        assert_eq!(clip_label(&goal, &[0.9, 0.1], &[0.1, 0.9]), 1.0);
        assert_eq!(clip_label(&goal, &[0.0, 1.0], &[0.6, 0.8]), 0.0);
    }
}
