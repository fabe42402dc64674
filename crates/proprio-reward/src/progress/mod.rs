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
pub use store::{CLIP_SUBDIR, ProgressModel, instruction_texts};

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
    /// Read those words as one token, each word through weights every place
    /// shares (what it names) plus weights of its own place (the role it
    /// names it in), added up, not as tokens the transformer mixes: an
    /// instruction that recombines known words in known places reads as the
    /// sum of parts the fit has seen.
    #[serde(default)]
    pub fuse_words: bool,
    /// The instruction weighs the frames' features instead of being a token
    /// the transformer reads with them: progress is the sigmoid of the
    /// frames' own read-out plus the dot product of their features with the
    /// instruction's (one) token, so with fused words each word in its
    /// place adds its own term, and a new combination of known words adds
    /// up terms the fit has seen.
    #[serde(default)]
    pub weigh: bool,
    /// Each frame also carries, per camera view, the cosine of the view's
    /// embedding with the instruction's sentence embedding (its caption's,
    /// with goals): how well the frame matches the words, in the CLIP's own
    /// terms, which hold for an instruction the fit never saw.
    #[serde(default)]
    pub similarity: bool,
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
            fuse_words: false,
            weigh: false,
            similarity: false,
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

    /// A one-line reason frames of `dim` values and instructions of
    /// `text_dim` cannot be read as configured, if any: words must divide
    /// the instruction, and the similarity needs views of the instruction's width.
    pub fn check_dims(&self, dim: usize, text_dim: usize) -> Result<(), String> {
        if !text_dim.is_multiple_of(self.words.max(1)) {
            return Err(format!(
                "instructions of {text_dim} values cannot be read as {} words",
                self.words
            ));
        }
        if self.similarity && (text_dim == 0 || !dim.is_multiple_of(text_dim)) {
            return Err(format!(
                "the similarity compares views with the instruction: frames of {dim} values are not views of its {text_dim}"
            ));
        }
        Ok(())
    }

    /// Inputs the similarity adds to a frame of `dim` values: one per view.
    fn similarity_channels(&self, dim: usize, text_dim: usize) -> usize {
        match self.similarity {
            true => dim / text_dim.max(1),
            false => 0,
        }
    }

    /// Instruction tokens ahead of the frames: the words, or one (the fused words or the sentence embedding).
    fn text_tokens(&self) -> usize {
        match self.fuse_words {
            true => 1,
            false => self.words.max(1),
        }
    }

    /// A one-line reason the settings cannot make or fit a model, if any.
    pub fn validate(&self) -> Result<(), String> {
        if self.fuse_words && self.words == 0 {
            return Err("fuse_words reads the instruction word by word: set words".into());
        }
        if self.similarity && self.words > 0 {
            return Err(
                "similarity compares each view with the instruction's sentence embedding: not with words".into(),
            );
        }
        if self.weigh && self.text_tokens() > 1 {
            return Err(
                "weigh reads the instruction as one token: the sentence or fused words".into(),
            );
        }
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
/// the frames before it), a sigmoid head per frame; or, weighed, the frames
/// alone through the transformer and the instruction's token weighing their
/// features at the head.
#[derive(Module, Debug)]
pub struct ProgressNet {
    frame_in: Linear,
    text_in: Linear,
    /// Fused words only: each word's place's own weights, added to the words' shared reading.
    slots_in: Option<Linear>,
    /// Whether the instruction weighs the frames' features ([`ProgressConfig::weigh`]).
    weigh: bool,
    /// Whether each frame carries its views' cosines with the instruction ([`ProgressConfig::similarity`]).
    similarity: bool,
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
            frame_in: LinearConfig::new(dim + cfg.similarity_channels(dim, text_dim), cfg.width)
                .init(device),
            text_in: LinearConfig::new(text_dim / cfg.words.max(1), cfg.width).init(device),
            slots_in: cfg.fuse_words.then(|| {
                LinearConfig::new(text_dim, cfg.width)
                    .with_bias(false)
                    .init(device)
            }),
            weigh: cfg.weigh,
            similarity: cfg.similarity,
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
        let [n, l, _] = frames.dims();
        let width = self.norm.gamma.dims()[0];
        let frames = match self.similarity {
            true => Tensor::cat(vec![frames.clone(), similarity(frames, text.clone())], 2),
            false => frames,
        };
        let dim = frames.dims()[2];
        let frames = self
            .frame_in
            .forward(frames.reshape([n * l, dim]))
            .reshape([n, l, width]);
        let text = self.instruction_tokens(text);
        let logits = match self.weigh {
            true => self.weighed(frames, text),
            false => self.read_with(frames, text),
        };
        sigmoid(logits)
    }

    /// Logits `[n, l]` of frames `[n, l, width]` the transformer reads after the instruction's tokens.
    fn read_with(&self, frames: Tensor<3>, text: Tensor<3>) -> Tensor<2> {
        let [n, l, width] = frames.dims();
        let tokens = text.dims()[1];
        let position = self.position.val().slice([0..tokens + l, 0..width]);
        let x = Tensor::cat(vec![text, frames], 1) + position.unsqueeze::<3>();
        let h = self
            .encoder
            .forward(x, true)
            .slice([0..n, tokens..tokens + l, 0..width]);
        let h = self.norm.forward(h).reshape([n * l, width]);
        self.head.forward(h).reshape([n, l])
    }

    /// Logits `[n, l]` of frames `[n, l, width]` the transformer reads alone,
    /// their features weighed by the instruction's one token `[n, 1, width]`.
    fn weighed(&self, frames: Tensor<3>, text: Tensor<3>) -> Tensor<2> {
        let [n, l, width] = frames.dims();
        let position = self.position.val().slice([0..l, 0..width]);
        let h = self
            .encoder
            .forward(frames + position.unsqueeze::<3>(), true);
        let h = self.norm.forward(h);
        let weighed = (h.clone() * text).sum_dim(2).reshape([n, l]) / (width as f64).sqrt();
        self.head.forward(h.reshape([n * l, width])).reshape([n, l]) + weighed
    }

    /// The tokens `[n, tokens, width]` instructions `[n, text_dim]` put ahead
    /// of the frames: one per word or for the sentence; fused words, one: the
    /// words' mean shared reading (what is named) plus each place's own
    /// weights on its word (which role it names).
    fn instruction_tokens(&self, text: Tensor<2>) -> Tensor<3> {
        let [n, text_dim] = text.dims();
        let [word, width] = self.text_in.weight.dims();
        let words = text_dim / word;
        let each = self
            .text_in
            .forward(text.clone().reshape([n * words, word]))
            .reshape([n, words, width]);
        match &self.slots_in {
            None => each,
            Some(slots) => each.mean_dim(1) + slots.forward(text).reshape([n, 1, width]),
        }
    }
}

/// The cosine `[n, l, views]` of each view of frames `[n, l, views × d]`
/// with its row's instruction `[n, d]`.
fn similarity(frames: Tensor<3>, text: Tensor<2>) -> Tensor<3> {
    let [n, l, dim] = frames.dims();
    let d = text.dims()[1];
    let views = frames.reshape([n, l, dim / d, d]);
    let text = text.reshape([n, 1, 1, d]);
    let dot = (views.clone() * text.clone()).sum_dim(3);
    let norms = views.square().sum_dim(3).sqrt() * text.square().sum_dim(3).sqrt();
    (dot / norms.clamp_min(1e-6)).reshape([n, l, dim / d])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fused, an instruction's token is the sum of what each word in its
    /// place adds: swapping the second words of two instructions leaves
    /// their tokens' sum alone. Unfused, each word is a token of its own.
    /// Weighed, the same holds for the progress's logits.
    #[test]
    fn the_similarity_is_each_views_cosine_with_the_instruction_and_needs_its_width() {
        let device = Device::flex();
        // Two rows of one frame, each two views of two values.
        let frames = vec![1.0, 0.0, 3.0, 4.0, 0.0, 2.0, -1.0, 0.0];
        let frames = Tensor::<3>::from_data(TensorData::new(frames, [2, 1, 4]), &device);
        let text =
            Tensor::<2>::from_data(TensorData::new(vec![2.0, 0.0, 0.0, 1.0], [2, 2]), &device);
        let cosines = similarity(frames, text)
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        for (got, want) in cosines.iter().zip([1.0, 0.6, 1.0, 0.0]) {
            assert!((got - want).abs() < 1e-6, "{cosines:?}");
        }
        let cfg = ProgressConfig {
            similarity: true,
            ..ProgressConfig::default()
        };
        assert_eq!(cfg.check_dims(4, 2), Ok(()));
        let uneven = cfg.check_dims(5, 2).unwrap_err();
        assert!(uneven.contains("not views"), "{uneven}");
        let words = ProgressConfig { words: 6, ..cfg }.validate().unwrap_err();
        assert!(words.contains("not with words"), "{words}");
    }

    #[test]
    fn fused_words_add_up_in_one_token_and_weighed_frames_add_their_terms() {
        let device = Device::flex();
        let (words, word) = (3, 4);
        let cfg = |fuse_words| ProgressConfig {
            words,
            fuse_words,
            width: 8,
            heads: 2,
            window: 4,
            ..ProgressConfig::default()
        };
        let values = |seed: u64| -> Vec<f32> {
            (0..word)
                .map(|i| ((seed * 7 + i as u64 * 13) % 11) as f32 / 11.0 - 0.4)
                .collect()
        };
        let (a, b, c, d, e) = (values(1), values(2), values(3), values(4), values(5));
        let instruction = |w: [&Vec<f32>; 3]| w.map(Vec::as_slice).concat();
        let rows = [
            instruction([&a, &b, &e]),
            instruction([&c, &d, &e]),
            instruction([&a, &d, &e]),
            instruction([&c, &b, &e]),
        ]
        .concat();
        let text = Tensor::<2>::from_data(TensorData::new(rows, [4, words * word]), &device);
        let fused = ProgressNet::new(&cfg(true), 5, words * word, &device);
        let tokens = fused.instruction_tokens(text.clone());
        assert_eq!(tokens.dims(), [4, 1, 8]);
        let t: Vec<f32> = tokens.into_data().try_into_vec::<f32>().unwrap();
        let (seen, recombined) = (&t[..16], &t[16..]);
        for i in 0..8 {
            let (seen, recombined) = (seen[i] + seen[8 + i], recombined[i] + recombined[8 + i]);
            assert!((seen - recombined).abs() < 1e-5, "{seen} {recombined}");
        }
        assert_ne!(
            t[..8],
            t[16..24],
            "a word in another place changes the token"
        );
        let apart = ProgressNet::new(&cfg(false), 5, words * word, &device);
        assert_eq!(apart.instruction_tokens(text.clone()).dims(), [4, words, 8]);
        // Weighing the same frames, each word in its place adds its own term
        // to the progress's logit: the swap leaves the logits' sum alone too,
        // which a token the transformer mixes with the frames would not.
        let frames: Vec<f32> = (0..3 * 5).map(|i| ((i * 5) % 7) as f32 / 7.0).collect();
        let frames = Tensor::<3>::from_data(TensorData::new(frames, [1, 3, 5]), &device);
        let frames = frames.repeat_dim(0, 4);
        let logits = |net: &ProgressNet| -> Vec<f32> {
            let p: Vec<f32> = net
                .forward(frames.clone(), text.clone())
                .into_data()
                .try_into_vec::<f32>()
                .unwrap();
            p.iter().map(|p| (p / (1.0 - p)).ln()).collect()
        };
        let swap_gap = |l: &[f32]| -> f32 {
            (0..3)
                .map(|t| (l[t] + l[3 + t] - l[6 + t] - l[9 + t]).abs())
                .fold(0.0, f32::max)
        };
        let weighed = ProgressNet::new(
            &ProgressConfig {
                weigh: true,
                ..cfg(true)
            },
            5,
            words * word,
            &device,
        );
        assert!(swap_gap(&logits(&weighed)) < 1e-4, "{:?}", logits(&weighed));
        assert!(swap_gap(&logits(&fused)) > 1e-4, "{:?}", logits(&fused));
    }
}
