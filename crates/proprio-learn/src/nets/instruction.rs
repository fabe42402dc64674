//! The instruction encoder of a vision-language-action policy: the token
//! ids of an observation's `Tokens` parts (an instruction in CLIP's BPE)
//! hashed into a small embedding table, each position its own learned
//! offset, and the whole padded sequence read by one ReLU layer, so word
//! order counts ("put the red cube on the blue cube" is not its mirror).
//!
//! Hashing keeps the table small whatever the tokenizer's vocabulary (CLIP's
//! 49,408 ids would make a 49,408-row table Adam updates in full every step);
//! a collision only merges two words' embeddings, which
//! `manipulation/instruct-v0`'s words never do (tested).

use crate::base::error::{LearnError, Result};
use crate::nets::head::standard_normal;
use crate::nets::mlp::orthogonal;
use burn::module::Param;
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::relu;
use proprio::EnvRng;
use serde::{Deserialize, Serialize};

/// Instruction encoder hyper-parameters (PPO's and GRPO's `text` key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TextConfig {
    /// Rows of the hashed embedding table: token id `t` reads row `t mod buckets`.
    pub buckets: usize,
    /// Width of a token's embedding.
    pub width: usize,
    /// Width of the instruction's features.
    pub features: usize,
}

impl Default for TextConfig {
    fn default() -> Self {
        Self {
            buckets: 4096,
            width: 32,
            features: 64,
        }
    }
}

impl TextConfig {
    /// Rejects zero sizes.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.buckets == 0 || self.width == 0 || self.features == 0 {
            return Err("text.buckets, text.width and text.features must be positive".into());
        }
        Ok(())
    }
}

/// Token ids `[B, L]` (0 = padding) → instruction features `[B, features]`.
#[derive(Module, Debug)]
pub struct InstructionEncoder {
    embedding: Embedding,
    /// One learned offset `[L, width]` per position.
    position: Param<Tensor<2>>,
    /// The flattened sequence → features.
    fc: Linear,
    /// `(offset, length)` of each token part of a flat observation.
    #[module(skip)]
    segments: Vec<(usize, usize)>,
    #[module(skip)]
    buckets: usize,
}

impl InstructionEncoder {
    /// An encoder of the token parts at `segments` of a flat observation;
    /// the reading layer orthogonal with gain √2, drawn from `rng`.
    pub fn new(
        segments: Vec<(usize, usize)>,
        cfg: &TextConfig,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        let len: usize = segments.iter().map(|&(_, l)| l).sum();
        if len == 0 {
            return Err(LearnError::Config(
                "an instruction encoder needs a token part in the observation".into(),
            ));
        }
        let inputs = len * cfg.width;
        let weight = orthogonal(inputs, cfg.features, 2f64.sqrt(), rng);
        let mut fc = LinearConfig::new(inputs, cfg.features).init(device);
        fc.weight = Param::from_tensor(Tensor::from_data(
            TensorData::new(weight, [inputs, cfg.features]),
            device,
        ));
        fc.bias = Some(Param::from_tensor(Tensor::zeros([cfg.features], device)));
        // N(0, 1), as PyTorch's `nn.Embedding`, drawn from the run's generator
        // (burn's initializer draws from its own, unseeded one).
        let table: Vec<f32> = (0..cfg.buckets * cfg.width)
            .map(|_| standard_normal(rng))
            .collect();
        let mut embedding = EmbeddingConfig::new(cfg.buckets, cfg.width).init(device);
        embedding.weight = Param::from_tensor(Tensor::from_data(
            TensorData::new(table, [cfg.buckets, cfg.width]),
            device,
        ));
        Ok(Self {
            embedding,
            position: Param::from_tensor(Tensor::zeros([len, cfg.width], device)),
            fc,
            segments,
            buckets: cfg.buckets,
        })
    }

    /// Width of the features.
    pub fn out_dim(&self) -> usize {
        self.fc.weight.dims()[1]
    }

    /// Encodes the token parts of a batch of flat observations `[B, obs]`.
    pub fn forward(&self, obs: Tensor<2>) -> Tensor<2> {
        let [b, _] = obs.dims();
        let parts: Vec<Tensor<2>> = self
            .segments
            .iter()
            .map(|&(at, len)| obs.clone().slice([0..b, at..at + len]))
            .collect();
        let ids = Tensor::cat(parts, 1);
        let [_, len] = ids.dims();
        let present = ids
            .clone()
            .not_equal_elem(0.0)
            .float()
            .unsqueeze_dim::<3>(2);
        let buckets = ids.int().remainder_scalar(self.buckets as i64);
        let tokens = self.embedding.forward(buckets) + self.position.val().unsqueeze_dim(0);
        // Padding reads as zeros, wherever the instruction ends.
        let sequence = (tokens * present).reshape([b, len * self.position.dims()[1]]);
        relu(self.fc.forward(sequence))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::{host, matrix};
    use proprio::rand::SeedableRng;

    fn encoder(segments: Vec<(usize, usize)>) -> InstructionEncoder {
        let mut rng = EnvRng::seed_from_u64(3);
        let cfg = TextConfig::default();
        InstructionEncoder::new(segments, &cfg, &Device::flex(), &mut rng).unwrap()
    }

    #[test]
    fn word_order_and_words_change_the_features_and_the_state_does_not() {
        // [state, state, 4 tokens]: "red on blue" vs "blue on red", then one state value changed.
        let e = encoder(vec![(2, 4)]);
        let rows = [
            [0.5, 0.1, 49406.0, 736.0, 525.0, 1746.0],
            [0.5, 0.1, 49406.0, 1746.0, 525.0, 736.0],
            [9.0, -3.0, 49406.0, 736.0, 525.0, 1746.0],
            [0.5, 0.1, 49406.0, 736.0, 525.0, 0.0],
        ];
        let flat: Vec<f32> = rows.iter().flatten().copied().collect();
        let out = host(e.forward(matrix(&flat, 4, 6, &Device::flex()))).unwrap();
        let row = |i: usize| &out[i * 64..(i + 1) * 64];
        let differ = |a: &[f32], b: &[f32]| a.iter().zip(b).any(|(x, y)| (x - y).abs() > 1e-6);
        assert!(differ(row(0), row(1)), "swapped words read alike");
        assert!(differ(row(0), row(3)), "a dropped word reads alike");
        assert_eq!(
            row(0),
            row(2),
            "the state leaked into the instruction's features"
        );
    }

    #[test]
    fn instruct_words_never_share_a_bucket() {
        // Every id of manipulation/instruct-v0's instructions: its 16 words
        // and the start and end of text (OpenAI's CLIP BPE, from open_clip's tokenizer).
        let ids = [
            518, 525, 531, 705, 736, 893, 1155, 1746, 1823, 1901, 1983, 2184, 3142, 4481, 6831,
            11353, 49406, 49407,
        ];
        let buckets = TextConfig::default().buckets;
        let mut rows: Vec<usize> = ids.iter().map(|t| t % buckets).collect();
        rows.sort_unstable();
        rows.dedup();
        assert_eq!(rows.len(), ids.len(), "ids {ids:?} collide");
    }
}
