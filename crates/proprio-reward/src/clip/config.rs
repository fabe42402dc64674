//! CLIP's sizes, read from a checkpoint's `config.json` (the Hugging Face
//! `CLIPConfig` layout) and `preprocessor_config.json`; defaults are
//! transformers' (`CLIPTextConfig`, `CLIPVisionConfig`: ViT-B/32).

use crate::{Result, RewardError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The non-linearity of the transformers' MLPs (`hidden_act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Activation {
    /// `x·σ(1.702x)`, OpenAI's CLIP.
    #[serde(rename = "quick_gelu")]
    QuickGelu,
    /// The exact (erf) GELU.
    #[serde(rename = "gelu")]
    Gelu,
    /// GELU's tanh approximation.
    #[serde(alias = "gelu_new", rename = "gelu_pytorch_tanh")]
    GeluTanh,
}

/// The text transformer (`text_config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TextConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    /// The context length: longer texts are truncated to it.
    pub max_position_embeddings: usize,
    pub hidden_act: Activation,
    pub layer_norm_eps: f64,
}

impl Default for TextConfig {
    fn default() -> Self {
        Self {
            vocab_size: 49_408,
            hidden_size: 512,
            intermediate_size: 2048,
            num_hidden_layers: 12,
            num_attention_heads: 8,
            max_position_embeddings: 77,
            hidden_act: Activation::QuickGelu,
            layer_norm_eps: 1e-5,
        }
    }
}

/// The vision transformer (`vision_config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VisionConfig {
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_channels: usize,
    /// Side of the square input, pixels.
    pub image_size: usize,
    pub patch_size: usize,
    pub hidden_act: Activation,
    pub layer_norm_eps: f64,
}

impl Default for VisionConfig {
    fn default() -> Self {
        Self {
            hidden_size: 768,
            intermediate_size: 3072,
            num_hidden_layers: 12,
            num_attention_heads: 12,
            num_channels: 3,
            image_size: 224,
            patch_size: 32,
            hidden_act: Activation::QuickGelu,
            layer_norm_eps: 1e-5,
        }
    }
}

/// A whole CLIP model (`CLIPConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClipConfig {
    /// `clip` (the only architecture implemented here).
    #[serde(default = "clip")]
    pub model_type: String,
    #[serde(default)]
    pub text_config: TextConfig,
    #[serde(default)]
    pub vision_config: VisionConfig,
    /// Width of the shared embedding space.
    #[serde(default = "projection_dim")]
    pub projection_dim: usize,
}

fn clip() -> String {
    "clip".into()
}

fn projection_dim() -> usize {
    512
}

impl Default for ClipConfig {
    /// `openai/clip-vit-base-patch32`.
    fn default() -> Self {
        Self {
            model_type: clip(),
            text_config: TextConfig::default(),
            vision_config: VisionConfig::default(),
            projection_dim: projection_dim(),
        }
    }
}

impl ClipConfig {
    /// Reads `config.json`; an architecture other than CLIP, or sizes that
    /// cannot describe a transformer, are errors naming the file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| RewardError::io(path, e))?;
        let config: Self =
            serde_json::from_str(&text).map_err(|e| RewardError::config(path, e.to_string()))?;
        config
            .validate()
            .map_err(|m| RewardError::config(path, m))?;
        Ok(config)
    }

    /// Rejects sizes no CLIP has.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.model_type != "clip" {
            return Err(format!(
                "unknown architecture '{}': only CLIP (model_type \"clip\") is implemented",
                self.model_type
            ));
        }
        let (t, v) = (&self.text_config, &self.vision_config);
        let widths = [
            (t.hidden_size, t.num_attention_heads, "text"),
            (v.hidden_size, v.num_attention_heads, "vision"),
        ];
        for (width, heads, tower) in widths {
            if heads == 0 || width == 0 || width % heads != 0 {
                return Err(format!(
                    "{tower} hidden_size {width} is not a positive multiple of num_attention_heads {heads}"
                ));
            }
        }
        if v.patch_size == 0 || v.image_size < v.patch_size || v.image_size % v.patch_size != 0 {
            return Err(format!(
                "vision image_size {} is not a multiple of patch_size {}",
                v.image_size, v.patch_size
            ));
        }
        if t.vocab_size < 3 || t.max_position_embeddings < 2 || self.projection_dim == 0 {
            return Err(
                "vocab_size, max_position_embeddings and projection_dim are too small".into(),
            );
        }
        Ok(())
    }
}

/// How images become model inputs (`preprocessor_config.json`, transformers'
/// `CLIPImageProcessor`): resize the shortest side, centre crop, normalise.
#[derive(Debug, Clone, PartialEq)]
pub struct Preprocess {
    /// Shortest side after the (bicubic) resize, pixels.
    pub shortest_edge: usize,
    /// `(height, width)` of the centre crop.
    pub crop: (usize, usize),
    /// Per-channel mean of the [0, 1] pixels.
    pub mean: [f32; 3],
    /// Per-channel standard deviation of the [0, 1] pixels.
    pub std: [f32; 3],
}

/// OpenAI's CLIP normalisation.
const CLIP_MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
const CLIP_STD: [f32; 3] = [0.268_629_5, 0.261_302_6, 0.275_777_1];

impl Preprocess {
    /// CLIP's preprocessing for images of side `image_size`.
    pub fn for_image_size(image_size: usize) -> Self {
        Self {
            shortest_edge: image_size,
            crop: (image_size, image_size),
            mean: CLIP_MEAN,
            std: CLIP_STD,
        }
    }

    /// Reads `preprocessor_config.json` (both the old integer `size`/`crop_size`
    /// and the newer `{"shortest_edge"}` / `{"height", "width"}` forms).
    pub fn read(path: &Path, image_size: usize) -> Result<Self> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Size {
            Side(usize),
            Shortest { shortest_edge: usize },
            Box { height: usize, width: usize },
        }
        #[derive(Deserialize)]
        struct Raw {
            size: Option<Size>,
            crop_size: Option<Size>,
            image_mean: Option<[f32; 3]>,
            image_std: Option<[f32; 3]>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| RewardError::io(path, e))?;
        let raw: Raw =
            serde_json::from_str(&text).map_err(|e| RewardError::config(path, e.to_string()))?;
        let default = Self::for_image_size(image_size);
        let shortest_edge = match raw.size {
            None => default.shortest_edge,
            Some(Size::Side(s) | Size::Shortest { shortest_edge: s }) => s,
            Some(Size::Box { height, width }) => height.min(width),
        };
        let crop = match raw.crop_size {
            None => default.crop,
            Some(Size::Side(s) | Size::Shortest { shortest_edge: s }) => (s, s),
            Some(Size::Box { height, width }) => (height, width),
        };
        if crop != (image_size, image_size) || shortest_edge < image_size {
            return Err(RewardError::config(
                path,
                format!(
                    "crops of {crop:?} after resizing to {shortest_edge} px do not fit the model's {image_size}×{image_size} input"
                ),
            ));
        }
        let std = raw.image_std.unwrap_or(default.std);
        if std.iter().any(|s| s.is_nan() || *s <= 0.0) {
            return Err(RewardError::config(path, "image_std must be positive"));
        }
        Ok(Self {
            shortest_edge,
            crop,
            mean: raw.image_mean.unwrap_or(default.mean),
            std,
        })
    }
}
