//! Pre-norm transformer blocks whose attention adds a learned bias per head
//! and relative distance (T5's relative positions, without buckets: the
//! sequences are short), shared by all layers.
//!
//! Why relative positions: the token a step must read usually sits at a fixed
//! distance from where it is read — the piece an answer slot names, the
//! operand digits of an answer column — while its absolute index moves with
//! the step. One bias per distance lets a head learn "look d back" once for
//! every step, where absolute positions must learn it for each step apart.

use burn::module::Param;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::gelu;
use burn::tensor::module::attention;
use burn::tensor::ops::AttentionModuleOptions;

/// Added to the scores of masked keys (finite, so a fully masked row stays finite).
const MASKED: f32 = -1.0e9;

/// One pre-norm block: attention, then a GELU feed-forward, each residual.
#[derive(Module, Debug)]
struct Block {
    attention_norm: LayerNorm,
    query: Linear,
    key: Linear,
    value: Linear,
    output: Linear,
    feed_forward_norm: LayerNorm,
    feed_forward_in: Linear,
    feed_forward_out: Linear,
}

impl Block {
    fn new(d_model: usize, d_ff: usize, device: &Device) -> Self {
        let linear = |i, o| LinearConfig::new(i, o).init(device);
        Self {
            attention_norm: LayerNormConfig::new(d_model).init(device),
            query: linear(d_model, d_model),
            key: linear(d_model, d_model),
            value: linear(d_model, d_model),
            output: linear(d_model, d_model),
            feed_forward_norm: LayerNormConfig::new(d_model).init(device),
            feed_forward_in: linear(d_model, d_ff),
            feed_forward_out: linear(d_ff, d_model),
        }
    }

    /// The new positions `x` `[n, m, d]` read the `past` keys and values
    /// `[n, heads, k, d/heads]` (if any) and their own; `bias` `[n, heads, m, k + m]`
    /// is added to the attention scores. Returns the outputs and the new positions' keys and values.
    fn forward(
        &self,
        x: Tensor<3>,
        past: Option<&KeysValues>,
        bias: Tensor<4>,
    ) -> (Tensor<3>, KeysValues) {
        let [n, m, d] = x.dims();
        let heads = bias.dims()[1];
        let h = self.attention_norm.forward(x.clone());
        let split = |linear: &Linear| {
            linear
                .forward(h.clone())
                .reshape([n, m, heads, d / heads])
                .swap_dims(1, 2)
        };
        let new = (split(&self.key), split(&self.value));
        let (keys, values) = match past {
            Some((k, v)) => (
                Tensor::cat(vec![k.clone(), new.0.clone()], 2),
                Tensor::cat(vec![v.clone(), new.1.clone()], 2),
            ),
            None => new.clone(),
        };
        let context = attention(
            split(&self.query),
            keys,
            values,
            None,
            Some(bias),
            AttentionModuleOptions::default(),
        )
        .swap_dims(1, 2)
        .reshape([n, m, d]);
        let x = x + self.output.forward(context);
        let h = self.feed_forward_norm.forward(x.clone());
        let out = x.clone()
            + self
                .feed_forward_out
                .forward(gelu(self.feed_forward_in.forward(h)));
        (out, new)
    }
}

/// The stack of blocks with its relative-position bias table.
#[derive(Module, Debug)]
pub struct Transformer {
    blocks: Vec<Block>,
    /// Bias `[heads, 2·max_len − 1]`, column `max_len − 1 + (query − key)`.
    relative: Param<Tensor<2>>,
    #[module(skip)]
    max_len: usize,
}

impl Transformer {
    /// `n_layers` blocks of width `d_model` for sequences of up to `max_len` positions.
    pub fn new(
        d_model: usize,
        d_ff: usize,
        n_heads: usize,
        n_layers: usize,
        max_len: usize,
        device: &Device,
    ) -> Self {
        Self {
            blocks: (0..n_layers)
                .map(|_| Block::new(d_model, d_ff, device))
                .collect(),
            relative: Param::from_tensor(Tensor::zeros([n_heads, 2 * max_len - 1], device)),
            max_len,
        }
    }

    /// Runs the blocks over `x` `[n, l, d]`, positions `0..l` in every row;
    /// `masked[i·l² + q·l + k]` hides key `k` from query `q` in row `i`.
    pub fn forward(&self, x: Tensor<3>, masked: &[bool]) -> Tensor<3> {
        let [n, l, _] = x.dims();
        let positions: Vec<usize> = (0..n).flat_map(|_| 0..l).collect();
        let attend = Attend {
            queries: positions.clone(),
            keys: positions,
            masked: masked.to_vec(),
        };
        self.forward_cached(x, &attend, None).0
    }

    /// Runs the blocks over the new positions `x` `[n, m, d]`, which read
    /// every layer's `past` keys and values (if any) and their own, as
    /// `attend` says. Returns the outputs and every layer's keys and values
    /// of the new positions (`[n, heads, m, d/heads]` each).
    pub fn forward_cached(
        &self,
        x: Tensor<3>,
        attend: &Attend,
        past: Option<&[KeysValues]>,
    ) -> (Tensor<3>, Vec<KeysValues>) {
        let [n, m, _] = x.dims();
        let device = x.device();
        let heads = self.relative.dims()[0];
        let k = attend.keys.len() / n.max(1);
        let columns: Vec<i64> = (0..n)
            .flat_map(|i| {
                let queries = &attend.queries[i * m..(i + 1) * m];
                let keys = &attend.keys[i * k..(i + 1) * k];
                queries.iter().flat_map(move |&q| {
                    keys.iter()
                        .map(move |&key| (self.max_len - 1 + q - key) as i64)
                })
            })
            .collect();
        let columns = Tensor::<1, Int>::from_data(TensorData::new(columns, [n * m * k]), &device);
        let relative = self
            .relative
            .val()
            .select(1, columns)
            .reshape([heads, n, m, k])
            .swap_dims(0, 1);
        let mask: Vec<f32> = attend
            .masked
            .iter()
            .map(|&hidden| if hidden { MASKED } else { 0.0 })
            .collect();
        let mask = Tensor::<4>::from_data(TensorData::new(mask, [n, 1, m, k]), &device);
        let bias = relative + mask;
        let mut kv = Vec::with_capacity(self.blocks.len());
        let mut x = x;
        for (layer, block) in self.blocks.iter().enumerate() {
            let (out, new) = block.forward(x, past.map(|p| &p[layer]), bias.clone());
            x = out;
            kv.push(new);
        }
        (x, kv)
    }

    /// Layers of the stack.
    pub fn layers(&self) -> usize {
        self.blocks.len()
    }

    /// Attention heads per layer.
    pub fn heads(&self) -> usize {
        self.relative.dims()[0]
    }
}

/// One layer's keys and values, `[n, heads, positions, d/heads]` each.
pub type KeysValues = (Tensor<4>, Tensor<4>);

/// Where a batch's queries and keys sit and which keys each query reads.
pub struct Attend {
    /// Absolute position of every query, `[n × m]`.
    pub queries: Vec<usize>,
    /// Absolute position of every key, `[n × k]`: the past ones, then the queries' own.
    pub keys: Vec<usize>,
    /// `masked[i·m·k + q·k + j]` hides key `j` from query `q` in row `i`.
    pub masked: Vec<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::host;

    fn random(shape: [usize; 3], seed: u64, device: &Device) -> Tensor<3> {
        let n = shape.iter().product::<usize>();
        let values = (0..n)
            .map(|i| ((i as u64 * 2654435761 + seed) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        Tensor::from_data(TensorData::new(values, shape), device)
    }

    /// Outputs depend on where keys are relative to the query, not on their
    /// index: a sequence read after a hidden first position (shifted by one)
    /// gives the same outputs, and a different bias table gives different ones.
    #[test]
    fn attention_bias_follows_relative_distance() {
        let device = Device::default();
        let mut model = Transformer::new(8, 16, 2, 2, 6, &device);
        let table: Vec<f32> = (0..2 * 11).map(|i| (i as f32 * 0.7).sin() * 3.0).collect();
        model.relative =
            Param::from_tensor(Tensor::from_data(TensorData::new(table, [2, 11]), &device));
        let x = random([1, 4, 8], 7, &device);
        let plain = host(model.forward(x.clone(), &[false; 16])).unwrap();
        let shifted_in = Tensor::cat(vec![random([1, 1, 8], 3, &device), x.clone()], 1);
        // Key 0 (the extra position) is hidden from every query.
        let mask: Vec<bool> = (0..25).map(|i| i % 5 == 0).collect();
        let shifted = host(model.forward(shifted_in, &mask).slice([0..1, 1..5, 0..8])).unwrap();
        for (a, b) in plain.iter().zip(&shifted) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        model.relative = Param::from_tensor(Tensor::zeros([2, 11], &device));
        let unbiased = host(model.forward(x, &[false; 16])).unwrap();
        let moved = plain
            .iter()
            .zip(&unbiased)
            .any(|(a, b)| (a - b).abs() > 1e-3);
        assert!(moved, "the bias table changes the outputs");
    }
}
