//! CLIP's pre-LN transformer encoder, named as in transformers' `CLIPEncoder`
//! so checkpoint tensors map onto it by name (`layers.N.self_attn.q_proj`, …).

use super::config::Activation;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{gelu, sigmoid};
use burn::tensor::module::attention;
use burn::tensor::ops::AttentionModuleOptions;

/// Multi-head self-attention (`CLIPAttention`).
#[derive(Module, Debug)]
pub struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    out_proj: Linear,
    #[module(skip)]
    heads: usize,
}

impl Attention {
    fn new(width: usize, heads: usize, device: &Device) -> Self {
        let linear = || LinearConfig::new(width, width).init(device);
        Self {
            q_proj: linear(),
            k_proj: linear(),
            v_proj: linear(),
            out_proj: linear(),
            heads,
        }
    }

    /// `x` `[n·l, d]`: `n` sequences of `l` tokens, rows flattened so each
    /// projection is one large matrix product (a `[n, l, d]` input would run
    /// `n` small ones, packing the weights again for each); `causal`: position
    /// `q` reads keys `≤ q` only (the text tower).
    fn forward(&self, x: Tensor<2>, n: usize, causal: bool) -> Tensor<2> {
        let [rows, d] = x.dims();
        let l = rows / n;
        let split = |linear: &Linear| {
            linear
                .forward(x.clone())
                .reshape([n, l, self.heads, d / self.heads])
                .swap_dims(1, 2)
        };
        let options = AttentionModuleOptions {
            is_causal: causal,
            ..Default::default()
        };
        let context = attention(
            split(&self.q_proj),
            split(&self.k_proj),
            split(&self.v_proj),
            None,
            None,
            options,
        );
        self.out_proj
            .forward(context.swap_dims(1, 2).reshape([rows, d]))
    }
}

/// The feed-forward block (`CLIPMLP`).
#[derive(Module, Debug)]
pub struct FeedForward {
    fc1: Linear,
    fc2: Linear,
    #[module(skip)]
    activation: Activation,
}

/// `activation` applied elementwise.
pub fn activate<const D: usize>(x: Tensor<D>, activation: Activation) -> Tensor<D> {
    match activation {
        Activation::QuickGelu => x.clone() * sigmoid(x.mul_scalar(1.702)),
        Activation::Gelu => gelu(x),
        Activation::GeluTanh => {
            let inner = (x.clone() + x.clone().powi_scalar(3).mul_scalar(0.044_715))
                .mul_scalar((2.0 / std::f64::consts::PI).sqrt());
            x.mul_scalar(0.5) * inner.tanh().add_scalar(1.0)
        }
    }
}

/// One encoder layer: `x + attn(ln1(x))`, then `x + mlp(ln2(x))`.
#[derive(Module, Debug)]
pub struct Layer {
    self_attn: Attention,
    layer_norm1: LayerNorm,
    mlp: FeedForward,
    layer_norm2: LayerNorm,
}

/// The sizes of one transformer tower.
#[derive(Debug, Clone, Copy)]
pub struct TowerShape {
    pub width: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub heads: usize,
    pub activation: Activation,
    pub layer_norm_eps: f64,
}

impl TowerShape {
    /// A layer norm over the tower's width.
    pub fn layer_norm(&self, device: &Device) -> LayerNorm {
        LayerNormConfig::new(self.width)
            .with_epsilon(self.layer_norm_eps)
            .init(device)
    }
}

/// The stack of layers (`CLIPEncoder`).
#[derive(Module, Debug)]
pub struct Encoder {
    layers: Vec<Layer>,
}

impl Encoder {
    /// Randomly initialised layers of `shape` (a checkpoint overwrites them).
    pub fn new(shape: &TowerShape, device: &Device) -> Self {
        let layers = (0..shape.layers)
            .map(|_| Layer {
                self_attn: Attention::new(shape.width, shape.heads, device),
                layer_norm1: shape.layer_norm(device),
                mlp: FeedForward {
                    fc1: LinearConfig::new(shape.width, shape.intermediate).init(device),
                    fc2: LinearConfig::new(shape.intermediate, shape.width).init(device),
                    activation: shape.activation,
                },
                layer_norm2: shape.layer_norm(device),
            })
            .collect();
        Self { layers }
    }

    /// Runs every layer over `x` `[n, l, d]`.
    pub fn forward(&self, x: Tensor<3>, causal: bool) -> Tensor<3> {
        let [n, l, d] = x.dims();
        let x = self.layers.iter().fold(x.reshape([n * l, d]), |x, layer| {
            let x = x.clone()
                + layer
                    .self_attn
                    .forward(layer.layer_norm1.forward(x), n, causal);
            let h = layer.layer_norm2.forward(x.clone());
            let h = activate(layer.mlp.fc1.forward(h), layer.mlp.activation);
            x + layer.mlp.fc2.forward(h)
        });
        x.reshape([n, l, d])
    }
}
