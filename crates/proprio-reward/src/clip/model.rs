//! CLIP's two towers and projections (transformers' `CLIPModel`), with
//! field names that match the checkpoints' tensor names.

use super::config::ClipConfig;
use super::transformer::{Encoder, TowerShape};
use burn::module::Param;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, Linear, LinearConfig};
use burn::prelude::*;

/// Token and position embeddings of the text tower.
#[derive(Module, Debug)]
pub struct TextEmbeddings {
    token_embedding: Embedding,
    position_embedding: Embedding,
}

/// The text tower: causal transformer, pooled at the end-of-text token.
#[derive(Module, Debug)]
pub struct TextTransformer {
    embeddings: TextEmbeddings,
    encoder: Encoder,
    final_layer_norm: LayerNorm,
}

/// Patch, class and position embeddings of the vision tower.
#[derive(Module, Debug)]
pub struct VisionEmbeddings {
    class_embedding: Param<Tensor<1>>,
    patch_embedding: Conv2d,
    position_embedding: Embedding,
}

/// The vision tower: a ViT read out at its class token.
#[derive(Module, Debug)]
pub struct VisionTransformer {
    embeddings: VisionEmbeddings,
    // transformers' spelling, which the checkpoints carry.
    pre_layrnorm: LayerNorm,
    encoder: Encoder,
    post_layernorm: LayerNorm,
}

/// A CLIP model: texts and images into one embedding space.
#[derive(Module, Debug)]
pub struct Clip {
    text_model: TextTransformer,
    vision_model: VisionTransformer,
    text_projection: Linear,
    visual_projection: Linear,
}

impl Clip {
    /// A randomly initialised model of `config`'s sizes (a checkpoint
    /// overwrites every weight; benchmarks use it as it is).
    pub fn new(config: &ClipConfig, device: &Device) -> Self {
        let (t, v) = (&config.text_config, &config.vision_config);
        let text = TowerShape {
            width: t.hidden_size,
            intermediate: t.intermediate_size,
            layers: t.num_hidden_layers,
            heads: t.num_attention_heads,
            activation: t.hidden_act,
            layer_norm_eps: t.layer_norm_eps,
        };
        let vision = TowerShape {
            width: v.hidden_size,
            intermediate: v.intermediate_size,
            layers: v.num_hidden_layers,
            heads: v.num_attention_heads,
            activation: v.hidden_act,
            layer_norm_eps: v.layer_norm_eps,
        };
        let patches = (v.image_size / v.patch_size).pow(2);
        let projection = |width| {
            LinearConfig::new(width, config.projection_dim)
                .with_bias(false)
                .init(device)
        };
        Self {
            text_model: TextTransformer {
                embeddings: TextEmbeddings {
                    token_embedding: EmbeddingConfig::new(t.vocab_size, t.hidden_size).init(device),
                    position_embedding: EmbeddingConfig::new(
                        t.max_position_embeddings,
                        t.hidden_size,
                    )
                    .init(device),
                },
                encoder: Encoder::new(&text, device),
                final_layer_norm: text.layer_norm(device),
            },
            vision_model: VisionTransformer {
                embeddings: VisionEmbeddings {
                    class_embedding: Param::from_tensor(Tensor::random(
                        [v.hidden_size],
                        burn::tensor::Distribution::Normal(0.0, 0.02),
                        device,
                    )),
                    patch_embedding: Conv2dConfig::new(
                        [v.num_channels, v.hidden_size],
                        [v.patch_size, v.patch_size],
                    )
                    .with_stride([v.patch_size, v.patch_size])
                    .with_bias(false)
                    .init(device),
                    position_embedding: EmbeddingConfig::new(patches + 1, v.hidden_size)
                        .init(device),
                },
                pre_layrnorm: vision.layer_norm(device),
                encoder: Encoder::new(&vision, device),
                post_layernorm: vision.layer_norm(device),
            },
            text_projection: projection(t.hidden_size),
            visual_projection: projection(v.hidden_size),
        }
    }

    /// Projected text features `[n, projection_dim]` (transformers'
    /// `get_text_features`) of token rows `ids` `[n, l]`, each read at
    /// `eot[i]`, the position of its end-of-text token.
    pub fn text_features(&self, ids: Tensor<2, Int>, eot: &[usize]) -> Tensor<2> {
        let [n, l] = ids.dims();
        let device = ids.device();
        let m = &self.text_model;
        let positions = Tensor::<1, Int>::arange(0..l as i64, &device).reshape([1, l]);
        let x = m.embeddings.token_embedding.forward(ids)
            + m.embeddings.position_embedding.forward(positions);
        let x = m.final_layer_norm.forward(m.encoder.forward(x, true));
        let d = x.dims()[2];
        let rows: Vec<i64> = eot
            .iter()
            .enumerate()
            .map(|(i, &p)| (i * l + p) as i64)
            .collect();
        let rows = Tensor::<1, Int>::from_data(TensorData::new(rows, [n]), &device);
        let pooled = x.reshape([n * l, d]).select(0, rows);
        self.text_projection.forward(pooled)
    }

    /// The text tower's token embeddings `[n, l, hidden_size]` of token rows
    /// `ids` `[n, l]`: each word as the tower reads it in, before positions
    /// and attention mix it with the others.
    pub fn token_embeddings(&self, ids: Tensor<2, Int>) -> Tensor<3> {
        self.text_model.embeddings.token_embedding.forward(ids)
    }

    /// Projected image features `[n, projection_dim]` (transformers'
    /// `get_image_features`) of normalised pixels `[n, 3, side, side]`.
    pub fn image_features(&self, pixels: Tensor<4>) -> Tensor<2> {
        let m = &self.vision_model;
        let patches = m.embeddings.patch_embedding.forward(pixels);
        let [n, d, gh, gw] = patches.dims();
        let patches = patches.reshape([n, d, gh * gw]).swap_dims(1, 2);
        let class = m
            .embeddings
            .class_embedding
            .val()
            .reshape([1, 1, d])
            .expand([n, 1, d]);
        let positions = m
            .embeddings
            .position_embedding
            .weight
            .val()
            .unsqueeze_dim::<3>(0);
        let x = Tensor::cat(vec![class, patches], 1) + positions;
        let x = m.encoder.forward(m.pre_layrnorm.forward(x), false);
        let class_token = x.slice(s![.., 0..1, ..]).reshape([n, d]);
        self.visual_projection
            .forward(m.post_layernorm.forward(class_token))
    }
}

/// Rows scaled to unit L2 norm (CLIP compares embeddings by cosine).
pub fn l2_normalize(x: Tensor<2>) -> Tensor<2> {
    let norm = x.clone().square().sum_dim(1).sqrt().clamp_min(1e-12);
    x / norm
}
