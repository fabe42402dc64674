//! A learned progress reward (ReWiND, Zhang et al. 2025): frozen CLIP
//! embeddings of an episode's last frames and of its instruction in, the
//! task's progress in [0, 1] for every frame out, from a small causal
//! transformer fitted to a few demonstrations. Demonstrations climb from 0
//! to 1; "rewound" ones (played forward, then backward) go down again;
//! failed episodes and demonstrations under another instruction stay at 0.
//! Scored on its own by value-order correlation (GVL, Ma et al. 2024).

mod ensemble;
mod fit;
mod head;
mod samples;
mod score;
mod store;

pub use ensemble::{Member, ProgressEnsemble};
pub use fit::{FitReport, fit};
pub use head::ProgressHead;
pub use samples::{Episode, EpisodeKind, ProgressData, Window, WindowKind};
pub use score::{
    Presentation, Ranking, episode_value_orders, mean_value_order, running_progress, spearman,
    value_order_correlation,
};
pub use store::{CLIP_SUBDIR, ProgressModel};

use crate::clip::{Activation, Encoder, TextReading, TowerShape};
use burn::module::Param;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::sigmoid;
use serde::{Deserialize, Serialize};

/// Sizes and optimiser settings of a progress model (defaults: ReWiND's
/// shape scaled to a 64-wide CLIP; a fit takes about a minute on 2 cores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressConfig {
    /// Frames the model reads, the newest last (ReWiND: 16).
    pub window: usize,
    /// Width of the transformer.
    pub width: usize,
    /// Transformer layers.
    pub layers: usize,
    /// Attention heads.
    pub heads: usize,
    /// Adam steps.
    pub steps: usize,
    /// Windows per step.
    pub batch: usize,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Fraction of the demonstrations held out to measure the fit.
    pub holdout: f64,
    /// Share of each batch that is rewound demonstrations.
    pub rewind: f64,
    /// Share of each batch that is demonstrations under another instruction (when there are several).
    pub mismatch: f64,
    /// Share of each batch that is failed episodes (when there are some).
    pub failure: f64,
    /// Share of each batch that is a demonstration's frames in a random
    /// order, each read as its own progress (GVL's shuffled presentation:
    /// progress read from what a frame shows, not from the frames before it).
    #[serde(default)]
    pub scramble: f64,
    /// Tokens of the instruction read one by one (the CLIP's token
    /// embeddings, [`TextReading::Words`]), so the model composes the words
    /// itself; 0 reads the text tower's sentence embedding.
    #[serde(default)]
    pub words: usize,
    /// Seed of the initial weights and the windows drawn.
    pub seed: u64,
}

impl Default for ProgressConfig {
    fn default() -> Self {
        Self {
            window: 16,
            width: 64,
            layers: 2,
            heads: 4,
            steps: 2000,
            batch: 64,
            learning_rate: 3e-4,
            holdout: 0.2,
            rewind: 0.2,
            mismatch: 0.15,
            failure: 0.15,
            scramble: 0.0,
            words: 0,
            seed: 1,
        }
    }
}

impl ProgressConfig {
    /// How the model reads its instruction through its CLIP.
    pub fn reading(&self) -> TextReading {
        match self.words {
            0 => TextReading::Sentence,
            n => TextReading::Words(n),
        }
    }

    /// A one-line reason instructions of `text_dim` values cannot be read word by word, if any.
    pub fn check_text_dim(&self, text_dim: usize) -> Result<(), String> {
        match text_dim.is_multiple_of(self.text_tokens()) {
            true => Ok(()),
            false => Err(format!(
                "instructions of {text_dim} values cannot be read as {} words",
                self.words
            )),
        }
    }

    /// Instruction tokens ahead of the frames: the words, or the one sentence embedding.
    fn text_tokens(&self) -> usize {
        self.words.max(1)
    }

    /// A one-line reason the settings cannot make or fit a model, if any.
    pub fn validate(&self) -> Result<(), String> {
        if self.window == 0 || self.width == 0 || self.layers == 0 || self.heads == 0 {
            return Err("window, width, layers and heads must be positive".into());
        }
        if !self.width.is_multiple_of(self.heads) {
            return Err(format!(
                "width {} is not a multiple of the {} heads",
                self.width, self.heads
            ));
        }
        if self.steps == 0 || self.batch == 0 {
            return Err("steps and batch must be positive".into());
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(format!(
                "learning_rate must be positive, got {}",
                self.learning_rate
            ));
        }
        let drawn = [self.rewind, self.mismatch, self.failure, self.scramble];
        if drawn
            .iter()
            .chain([&self.holdout])
            .any(|s| !(0.0..1.0).contains(s))
            || drawn.iter().sum::<f64>() >= 1.0
        {
            return Err(
                "holdout, rewind, mismatch, failure and scramble lie in [0, 1) and the last four add up to less than 1"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The network: frame and instruction embeddings projected to the
/// transformer's width, the instruction first (one token, or one per word),
/// learned positions, causal attention (a frame reads the instruction and
/// the frames before it), a sigmoid head per frame.
#[derive(Module, Debug)]
pub struct ProgressNet {
    frame_in: Linear,
    text_in: Linear,
    position: Param<Tensor<2>>,
    encoder: Encoder,
    norm: LayerNorm,
    head: Linear,
}

impl ProgressNet {
    /// A randomly initialised network for frames of `dim` values and
    /// instructions of `text_dim` (their embeddings; a multiple of `cfg.words`).
    pub fn new(cfg: &ProgressConfig, dim: usize, text_dim: usize, device: &Device) -> Self {
        let tokens = cfg.text_tokens();
        let shape = TowerShape {
            width: cfg.width,
            intermediate: 4 * cfg.width,
            layers: cfg.layers,
            heads: cfg.heads,
            activation: Activation::Gelu,
            layer_norm_eps: 1e-5,
        };
        Self {
            frame_in: LinearConfig::new(dim, cfg.width).init(device),
            text_in: LinearConfig::new(text_dim / tokens, cfg.width).init(device),
            position: Param::from_tensor(Tensor::random(
                [tokens + cfg.window, cfg.width],
                burn::tensor::Distribution::Normal(0.0, 0.02),
                device,
            )),
            encoder: Encoder::new(&shape, device),
            norm: LayerNormConfig::new(cfg.width).init(device),
            head: LinearConfig::new(cfg.width, 1).init(device),
        }
    }

    /// Progress `[n, l]` of frames `[n, l, dim]` (at most the window, oldest
    /// first) under instructions `[n, text_dim]`. A frame's progress depends on it
    /// and the frames before it only, so rows may be padded at their end.
    pub fn forward(&self, frames: Tensor<3>, text: Tensor<2>) -> Tensor<2> {
        let [n, l, dim] = frames.dims();
        let width = self.norm.gamma.dims()[0];
        let word = self.text_in.weight.dims()[0];
        let tokens = text.dims()[1] / word;
        let frames = self
            .frame_in
            .forward(frames.reshape([n * l, dim]))
            .reshape([n, l, width]);
        let text = self
            .text_in
            .forward(text.reshape([n * tokens, word]))
            .reshape([n, tokens, width]);
        let position = self.position.val().slice([0..tokens + l, 0..width]);
        let x = Tensor::cat(vec![text, frames], 1) + position.unsqueeze::<3>();
        let h = self
            .encoder
            .forward(x, true)
            .slice([0..n, tokens..tokens + l, 0..width]);
        let h = self.norm.forward(h).reshape([n * l, width]);
        sigmoid(self.head.forward(h)).reshape([n, l])
    }
}
