//! A small decoder-only transformer over a task's vocabulary, with an
//! optional image-patch encoder: the policy for token-answer tasks.
//!
//! The input is `[patches…, prompt tokens…, START, answer tokens…]`. The
//! prompt (patches and tokens) attends both ways, the answer causally
//! (a prefix LM); token `t` of the answer is read at the position before
//! it. Attention adds a learned bias per relative distance (`transformer.rs`)
//! to the learned absolute positions. A value head on the same positions
//! gives token-level values for PPO.

use crate::base::error::{LearnError, Result};
use crate::nets::head::{argmax, sample_index, standard_normal};
use crate::nets::layout::Layout;
use crate::nets::transformer::Transformer;
use burn::module::{ModuleMapper, Param};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use proprio::{EnvRng, Space};
use serde::{Deserialize, Serialize};

/// Size of the transformer (defaults: a 2-layer, 64-wide model, ~100k parameters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceShape {
    /// Width of the residual stream.
    pub d_model: usize,
    /// Attention heads per layer.
    pub n_heads: usize,
    /// Transformer layers.
    pub n_layers: usize,
    /// Width of the feed-forward layers.
    pub d_ff: usize,
    /// Side of the square image patches (one token per patch).
    pub patch: usize,
}

/// The transformer policy with its policy and value heads.
#[derive(Module, Debug)]
pub struct SequencePolicy {
    tokens: Embedding,
    patches: Option<Linear>,
    positions: Param<Tensor<2>>,
    blocks: Transformer,
    norm: LayerNorm,
    logits: Linear,
    value: Linear,
    #[module(skip)]
    layout: Layout,
    #[module(skip)]
    vocab: usize,
    #[module(skip)]
    answer_len: usize,
}

/// Token id of the start-of-answer marker (one past the task's vocabulary).
fn start_token(vocab: usize) -> i64 {
    vocab as i64
}

impl SequencePolicy {
    /// A policy answering in `action_space` (tokens) after reading `observation_space`.
    pub fn new(
        observation_space: &Space,
        action_space: &Space,
        shape: &SequenceShape,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        let Space::Tokens { vocab, max_len } = action_space else {
            return Err(LearnError::Config(format!(
                "a sequence policy answers in tokens, not {action_space}"
            )));
        };
        if shape.d_model == 0 || shape.n_heads == 0 || !shape.d_model.is_multiple_of(shape.n_heads)
        {
            return Err(LearnError::Config(format!(
                "d_model ({}) must be a positive multiple of n_heads ({})",
                shape.d_model, shape.n_heads
            )));
        }
        let layout = Layout::new(observation_space, shape.patch)?;
        let vocab = (*vocab).max(layout.vocab) as usize;
        let d = shape.d_model;
        let length = layout.patches + layout.tokens + max_len;
        let policy = Self {
            tokens: EmbeddingConfig::new(vocab + 1, d).init(device),
            patches: (layout.patches > 0)
                .then(|| LinearConfig::new(layout.patch_dim, d).init(device)),
            positions: Param::from_tensor(Tensor::zeros([length, d], device)),
            blocks: Transformer::new(d, shape.d_ff, shape.n_heads, shape.n_layers, length, device),
            norm: LayerNormConfig::new(d).init(device),
            logits: LinearConfig::new(d, vocab).init(device),
            value: LinearConfig::new(d, 1).init(device),
            layout,
            vocab,
            answer_len: *max_len,
        };
        Ok(policy.map(&mut HostInit { rng, name: "" }))
    }

    /// Answer tokens per env step.
    pub fn answer_len(&self) -> usize {
        self.answer_len
    }

    fn device(&self) -> Device {
        self.tokens.weight.val().device()
    }

    /// Hidden states `[n, t, d]` at the positions that predict answer tokens
    /// `0..t`, given the first `t − 1` answer tokens `answer` (`[n × (t−1)]`).
    ///
    /// Row i reads `[patches, its tokens without padding, START, answer]`, so
    /// START sits right after the last token it was shown (its position tells
    /// how far a transcript has come); rows are padded to the longest, and the
    /// padding is masked out.
    fn hidden(&self, obs: &[f32], n: usize, answer: &[i64], t: usize) -> Tensor<3> {
        let device = self.device();
        let (ids, pixels) = self.layout.split(obs, n);
        let np = self.layout.patches;
        let longest = ids.iter().map(Vec::len).max().unwrap_or(0);
        let width = longest + t;
        let mut seq: Vec<i64> = Vec::with_capacity(n * width);
        let mut starts = Vec::with_capacity(n);
        for (i, row) in ids.iter().enumerate() {
            starts.push(np + row.len());
            seq.extend_from_slice(row);
            seq.push(start_token(self.vocab));
            seq.extend_from_slice(&answer[i * (t - 1)..(i + 1) * (t - 1)]);
            seq.resize((i + 1) * width, 0);
        }
        let ids = Tensor::<2, Int>::from_data(TensorData::new(seq, [n, width]), &device);
        let mut x = self.tokens.forward(ids);
        if let Some(patches) = &self.patches {
            let pd = self.layout.patch_dim;
            let p = Tensor::<3>::from_data(TensorData::new(pixels, [n, np, pd]), &device);
            x = Tensor::cat(vec![patches.forward(p), x], 1);
        }
        let length = np + width;
        let d = self.positions.val().dims()[1];
        x = x + self
            .positions
            .val()
            .slice([0..length, 0..d])
            .unsqueeze::<3>();
        // Masked: padding keys, and answer keys later than the query (a prefix LM).
        let mut mask = Vec::with_capacity(n * length * length);
        for &start in &starts {
            let end = start + t;
            for i in 0..length {
                mask.extend((0..length).map(|j| j >= end || (j > i && j > start)));
            }
        }
        let h = self.blocks.forward(x, &mask);
        let index: Vec<i64> = starts
            .iter()
            .flat_map(|&s| (s..s + t).flat_map(|k| std::iter::repeat_n(k as i64, d)))
            .collect();
        let index = Tensor::<3, Int>::from_data(TensorData::new(index, [n, t, d]), &device);
        self.norm.forward(h.gather(1, index))
    }

    /// Log-probabilities `[n, A]`, entropies `[n, A]` and values `[n, A]` of the answers
    /// `answers` (`[n × A]` token ids) under sampling temperature `temperature`.
    pub fn score_answers(
        &self,
        obs: &[f32],
        answers: &[i64],
        n: usize,
        temperature: f32,
    ) -> (Tensor<2>, Tensor<2>, Tensor<2>) {
        let a = self.answer_len;
        let teacher: Vec<i64> = answers
            .chunks_exact(a)
            .flat_map(|row| row[..a - 1].to_vec())
            .collect();
        let h = self.hidden(obs, n, &teacher, a);
        let log_pi = log_softmax(self.logits.forward(h.clone()).div_scalar(temperature), 2);
        let index =
            Tensor::<2, Int>::from_data(TensorData::new(answers.to_vec(), [n, a]), &self.device());
        let logp = log_pi
            .clone()
            .gather(2, index.unsqueeze_dim(2))
            .squeeze_dim(2);
        let entropy = (log_pi.clone().exp() * log_pi)
            .sum_dim(2)
            .squeeze_dim(2)
            .neg();
        let value = self.value.forward(h).squeeze_dim(2);
        (logp, entropy, value)
    }

    /// Generates one answer per observation, token by token: sampled at
    /// `temperature` from `rng`, or the most likely token when `greedy`.
    /// Returns the tokens `[n × A]` and their log-probabilities `[n × A]`.
    pub fn generate(
        &self,
        obs: &[f32],
        n: usize,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<(Vec<i64>, Vec<f32>)> {
        let a = self.answer_len;
        let mut answers = vec![0i64; n * a];
        let mut logps = vec![0.0f32; n * a];
        let mut prefix: Vec<i64> = Vec::with_capacity(n * a);
        for t in 0..a {
            prefix.clear();
            for i in 0..n {
                prefix.extend_from_slice(&answers[i * a..i * a + t]);
            }
            let h = self.hidden(obs, n, &prefix, t + 1);
            let d = h.dims()[2];
            let last = h.slice([0..n, t..t + 1, 0..d]);
            let logits = self.logits.forward(last).div_scalar(temperature);
            let log_pi = crate::base::tensor::host(log_softmax(logits, 2))?;
            for (i, row) in log_pi.chunks_exact(self.vocab).enumerate() {
                let token = if greedy {
                    argmax(row)
                } else {
                    sample_index(row, 0.0, rng)
                };
                answers[i * a + t] = token as i64;
                logps[i * a + t] = row[token];
            }
        }
        Ok((answers, logps))
    }
}

/// GPT-2's initialisation drawn on the host: weights N(0, 0.02²), biases and
/// relative-position biases 0, layer-norm scales 1 — the same weights on every backend and thread.
struct HostInit<'a> {
    rng: &'a mut EnvRng,
    name: &'static str,
}

impl ModuleMapper for HostInit<'_> {
    fn enter_module(&mut self, name: &str, _container: &str) {
        self.name = match name {
            "gamma" => "gamma",
            "bias" | "beta" | "relative" => "zero",
            _ => "",
        };
    }

    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let t = param.val();
        let shape = t.shape();
        let n = shape.num_elements();
        let values: Vec<f32> = match (D, self.name) {
            (_, "gamma") => vec![1.0; n],
            (1, _) | (_, "zero") => vec![0.0; n],
            _ => (0..n).map(|_| 0.02 * standard_normal(self.rng)).collect(),
        };
        Param::from_tensor(Tensor::from_data(
            TensorData::new(values, shape),
            &t.device(),
        ))
    }
}
