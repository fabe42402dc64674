//! A small decoder-only transformer over a task's vocabulary, with an
//! optional image-patch encoder: the policy for token-answer tasks.
//!
//! The input is `[patches…, observation tokens…, START, answer tokens…]`.
//! What stays fixed within an episode — image patches and, in a dict
//! observation, a first field of tokens (a puzzle's prompt) — attends both
//! ways; every later token attends to those and the tokens before it
//! (causally), so a transcript that grows turn by turn keeps its keys and
//! values and sampling can cache them ([`KvCache`]). Token `t` of the answer is read at the position before
//! it. Attention adds a learned bias per relative distance (`transformer.rs`)
//! to the learned absolute positions. A value head on the same positions
//! gives token-level values for PPO.

use crate::base::error::{LearnError, Result};
use crate::nets::head::{argmax, sample_index, standard_normal};
use crate::nets::kv_cache::KvCache;
use crate::nets::layout::Layout;
use crate::nets::transformer::{Attend, KeysValues, Transformer};
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
        let (ids, pixels, prompts) = self.layout.split(obs, n);
        let np = self.layout.patches;
        let fed: Vec<Fed> = ids
            .iter()
            .enumerate()
            .map(|(i, row)| Fed {
                first: 0,
                fixed: np + prompts[i],
                ids: self.stream_ids(row, 0, &answer[i * (t - 1)..(i + 1) * (t - 1)]),
            })
            .collect();
        let (h, _) = self.run(&fed, pixels, None);
        let d = h.dims()[2];
        let index: Vec<i64> = ids
            .iter()
            .flat_map(|row| {
                let start = np + row.len();
                (start..start + t).flat_map(|k| std::iter::repeat_n(k as i64, d))
            })
            .collect();
        let index = Tensor::<3, Int>::from_data(TensorData::new(index, [n, t, d]), &device);
        self.norm.forward(h.gather(1, index))
    }

    /// What a row feeds from absolute position `first` on: patch slots
    /// (their embeddings come from the pixels), its tokens, START, `answer`.
    fn stream_ids(&self, tokens: &[i64], first: usize, answer: &[i64]) -> Vec<i64> {
        let np = self.layout.patches;
        let mut ids = vec![0; np.saturating_sub(first)];
        ids.extend_from_slice(&tokens[first.saturating_sub(np)..]);
        ids.push(start_token(self.vocab));
        ids.extend_from_slice(answer);
        ids
    }

    /// Runs the transformer over each row's new positions, which read the
    /// `past` keys and values (`[n, heads, C, d/heads]` per layer, row i's
    /// first `fed[i].first` valid) and each other. The fixed positions (image
    /// patches and a prompt field, below `fed[i].fixed`) read one another
    /// both ways; every other position reads only those before it, so a
    /// position's keys and values never change as a transcript grows, and a
    /// cache of them is exact.
    /// Returns the outputs `[n, M, d]` and every layer's new keys and values.
    fn run(
        &self,
        fed: &[Fed],
        pixels: Vec<f32>,
        past: Option<(&[KeysValues], usize)>,
    ) -> (Tensor<3>, Vec<KeysValues>) {
        let device = self.device();
        let n = fed.len();
        let np = self.layout.patches;
        let m = fed.iter().map(|f| f.ids.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(n * m);
        let mut queries = Vec::with_capacity(n * m);
        let mut is_patch = Vec::with_capacity(n * m);
        for f in fed {
            ids.extend_from_slice(&f.ids);
            ids.resize(ids.len() + m - f.ids.len(), 0);
            queries.extend((0..m).map(|s| if s < f.ids.len() { f.first + s } else { 0 }));
            is_patch
                .extend((0..m).map(|s| f32::from(u8::from(f.first + s < np && s < f.ids.len()))));
        }
        let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [n, m]), &device);
        let mut x = self.tokens.forward(ids);
        let d = x.dims()[2];
        if let Some(patches) = &self.patches
            && fed.iter().any(|f| f.first < np)
        {
            let pd = self.layout.patch_dim;
            let p = Tensor::<3>::from_data(TensorData::new(pixels, [n, np, pd]), &device);
            let p = Tensor::cat(
                vec![patches.forward(p), Tensor::zeros([n, m - np, d], &device)],
                1,
            );
            let mask = Tensor::<3>::from_data(TensorData::new(is_patch, [n, m, 1]), &device);
            x = x * mask.clone().neg().add_scalar(1.0) + p * mask;
        }
        let at = Tensor::<1, Int>::from_data(
            TensorData::new(
                queries.iter().map(|&q| q as i64).collect::<Vec<_>>(),
                [n * m],
            ),
            &device,
        );
        x = x + self.positions.val().select(0, at).reshape([n, m, d]);
        let c = past.map_or(0, |(_, c)| c);
        let k = c + m;
        let mut keys = Vec::with_capacity(n * k);
        let mut masked = Vec::with_capacity(n * m * k);
        for (i, f) in fed.iter().enumerate() {
            let own = &queries[i * m..(i + 1) * m];
            keys.extend(0..c);
            keys.extend_from_slice(own);
            let len = f.ids.len();
            for (s, &q) in own.iter().enumerate() {
                masked.extend((0..c).map(|j| j >= f.first));
                masked.extend(
                    own.iter()
                        .enumerate()
                        .map(|(r, &key)| r >= len || !(r <= s || (q < f.fixed && key < f.fixed))),
                );
            }
        }
        let attend = Attend {
            queries,
            keys,
            masked,
        };
        self.blocks
            .forward_cached(x, &attend, past.map(|(kv, _)| kv))
    }

    /// Logits `[n, vocab]` of the next answer token after `prefix` (`[n × t]`), from a full forward.
    pub fn next_logits(&self, obs: &[f32], n: usize, prefix: &[i64], t: usize) -> Tensor<2> {
        let h = self.hidden(obs, n, prefix, t + 1);
        let d = h.dims()[2];
        self.logits
            .forward(h.slice([0..n, t..t + 1, 0..d]))
            .reshape([n, self.vocab])
    }

    /// [`Self::next_logits`] for the envs `slots`, reading only what `cache`
    /// does not hold for them (and keeping what they read, for their next call).
    pub fn next_logits_cached(
        &self,
        obs: &[f32],
        slots: &[usize],
        cache: &mut KvCache,
        prefix: &[i64],
        t: usize,
    ) -> Result<Tensor<2>> {
        let device = self.device();
        let n = slots.len();
        let (ids, pixels, prompts) = self.layout.split(obs, n);
        let np = self.layout.patches;
        let pd = np * self.layout.patch_dim;
        let fed: Vec<Fed> = ids
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let fixed = np + prompts[i];
                let seen = &pixels[i * pd..(i + 1) * pd];
                let first = cache.reusable(slots[i], seen, row, np, fixed);
                Fed {
                    first,
                    fixed,
                    ids: self.stream_ids(row, first, &prefix[i * t..(i + 1) * t]),
                }
            })
            .collect();
        let d = self.positions.val().dims()[1];
        let past = cache.past(slots, self.blocks.layers(), d, &device);
        let heads = self.blocks.heads();
        let views: Option<Vec<KeysValues>> = past.as_ref().map(|(kv, c)| {
            kv.iter()
                .map(|(k, v)| {
                    let split = |x: &Tensor<3>| {
                        x.clone().reshape([n, *c, heads, d / heads]).swap_dims(1, 2)
                    };
                    (split(k), split(v))
                })
                .collect()
        });
        let c = past.as_ref().map_or(0, |(_, c)| *c);
        let (h, new) = self.run(&fed, pixels.clone(), views.as_deref().map(|kv| (kv, c)));
        let m = h.dims()[1];
        let mut layers = Vec::with_capacity(new.len());
        for (k, v) in new {
            let flat =
                |x: Tensor<4>| crate::base::tensor::host(x.swap_dims(1, 2).reshape([n, m, d]));
            layers.push((flat(k)?, flat(v)?));
        }
        let mut read = Vec::with_capacity(n * d);
        for (i, f) in fed.iter().enumerate() {
            let stream = np + ids[i].len();
            let new_positions = stream - f.first;
            let rows = i * m * d..(i * m + new_positions) * d;
            let kept: Vec<(&[f32], &[f32])> = layers
                .iter()
                .map(|(k, v)| (&k[rows.clone()], &v[rows.clone()]))
                .collect();
            cache.keep(
                slots[i],
                &pixels[i * pd..(i + 1) * pd],
                &ids[i],
                (stream, f.fixed),
                &kept,
            );
            read.extend(std::iter::repeat_n((new_positions + t) as i64, d));
        }
        let index = Tensor::<3, Int>::from_data(TensorData::new(read, [n, 1, d]), &device);
        let h = self.norm.forward(h.gather(1, index));
        Ok(self.logits.forward(h).reshape([n, self.vocab]))
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

    /// ArCHer's turn values, read by the value head: at START it has seen
    /// only the observation (V(s)); after the whole answer, both (Q(s, a)).
    /// A critic is built with one answer slot more than the answers it
    /// scores, so `answers` is `[n × (slots − 1)]`. Returns `(q, v)`, `[n]` each.
    pub fn turn_values(&self, obs: &[f32], answers: &[i64], n: usize) -> (Tensor<1>, Tensor<1>) {
        let t = self.answer_len;
        let values = self
            .value
            .forward(self.hidden(obs, n, answers, t))
            .squeeze_dim::<2>(2);
        let v = values.clone().slice([0..n, 0..1]).reshape([n]);
        let q = values.slice([0..n, t - 1..t]).reshape([n]);
        (q, v)
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
        let slots: Vec<usize> = (0..n).collect();
        self.generate_cached(
            obs,
            &slots,
            &mut KvCache::default(),
            temperature,
            greedy,
            rng,
        )
    }

    /// [`Self::generate`] for the envs `slots`, with the keys and values
    /// `cache` keeps for them between steps (one cache per set of weights).
    pub fn generate_cached(
        &self,
        obs: &[f32],
        slots: &[usize],
        cache: &mut KvCache,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<(Vec<i64>, Vec<f32>)> {
        let (n, a) = (slots.len(), self.answer_len);
        let mut answers = vec![0i64; n * a];
        let mut logps = vec![0.0f32; n * a];
        let mut prefix: Vec<i64> = Vec::with_capacity(n * a);
        for t in 0..a {
            prefix.clear();
            for i in 0..n {
                prefix.extend_from_slice(&answers[i * a..i * a + t]);
            }
            let logits = self.next_logits_cached(obs, slots, cache, &prefix, t)?;
            let log_pi = crate::base::tensor::host(log_softmax(logits.div_scalar(temperature), 1))?;
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

/// What one row feeds the transformer in one call: its positions from `first` on.
struct Fed {
    /// Absolute position of the first fed position (those before it are cached).
    first: usize,
    /// Positions read both ways: the image patches and a prompt field's tokens.
    fixed: usize,
    /// Token id of every fed position (0 at image patches).
    ids: Vec<i64>,
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
