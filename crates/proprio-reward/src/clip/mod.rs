//! CLIP (Radford et al. 2021) in burn: the model, its tokenizer and image
//! preprocessing, loaded from a Hugging Face checkpoint directory, giving the
//! numbers transformers' `CLIPModel` gives.

mod config;
mod load;
mod model;
mod preprocess;
mod transformer;

pub use config::{Activation, ClipConfig, Preprocess, TextConfig, VisionConfig};
pub use model::{Clip, l2_normalize};
pub use preprocess::{frames_to_images, pixels};
pub use proprio_text::ClipTokenizer;

use crate::{Result, RewardError};
use burn::prelude::*;
use image::RgbImage;
pub(crate) use load::backend;
use load::id_matrix;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
pub(crate) use transformer::{Encoder, TowerShape};

/// Where `proprio embed` and the reward wrappers look for a model when none is given.
pub const MODEL_DIR_VAR: &str = "PROPRIO_CLIP_DIR";

/// How a model reads a text through a CLIP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextReading {
    /// The text tower's embedding of the whole text (`projection_dim` values).
    #[default]
    Sentence,
    /// The token embeddings of the text's first `n` tokens, its start and end
    /// tokens included and end tokens after (`n × hidden_size` values): words
    /// the reading model composes itself, where the tower's sentence
    /// embedding may blur them together ("left" and "right").
    Words(usize),
}

impl TextReading {
    /// Values a text reads as through a CLIP of `config`'s sizes.
    pub fn width(self, config: &ClipConfig) -> usize {
        match self {
            Self::Sentence => config.projection_dim,
            Self::Words(n) => n * config.text_config.hidden_size,
        }
    }
}

/// Embeddings, one row per input, each unit-norm (a word reading: each token's).
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// Width of a row (the model's `projection_dim`, or a word reading's width).
    pub dim: usize,
    /// Rows, concatenated.
    pub values: Vec<f32>,
}

impl Embeddings {
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.values[i * self.dim..(i + 1) * self.dim]
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.values.len() / self.dim.max(1)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A CLIP model with its tokenizer and preprocessing: texts and images in,
/// L2-normalised embeddings out.
pub struct ClipModel {
    model: Clip,
    config: ClipConfig,
    tokenizer: ClipTokenizer,
    preprocess: Preprocess,
    logit_scale: f32,
    device: Device,
}

impl ClipModel {
    /// Loads a checkpoint directory in the hub layout (`config.json`,
    /// `model.safetensors`, optional `preprocessor_config.json` and
    /// `merges.txt`; OpenAI's vocabulary when the latter is absent).
    pub fn load(dir: &Path, device: &Device) -> Result<Self> {
        if !dir.is_dir() {
            return Err(RewardError::io(
                dir,
                "not a model directory (it should hold config.json and model.safetensors)",
            ));
        }
        let config = ClipConfig::read(&dir.join("config.json"))?;
        let (t, v) = (&config.text_config, &config.vision_config);
        let merges = dir.join("merges.txt");
        let tokenizer = if merges.is_file() {
            ClipTokenizer::from_merges(&merges, t.vocab_size, t.max_position_embeddings).map_err(
                |e| RewardError::Config {
                    path: e.path,
                    message: e.message,
                },
            )?
        } else if t.vocab_size == proprio_text::OPENAI_VOCAB as usize {
            ClipTokenizer::openai(t.max_position_embeddings)
        } else {
            return Err(RewardError::io(
                &merges,
                format!(
                    "missing, and vocab_size {} is not OpenAI's 49,408",
                    t.vocab_size
                ),
            ));
        };
        let processor = dir.join("preprocessor_config.json");
        let preprocess = if processor.is_file() {
            Preprocess::read(&processor, v.image_size)?
        } else {
            Preprocess::for_image_size(v.image_size)
        };
        let mut model = Clip::new(&config, device);
        let logit_scale = load::load_weights(&mut model, &dir.join("model.safetensors"))?;
        Ok(Self {
            model,
            config,
            tokenizer,
            preprocess,
            logit_scale,
            device: device.clone(),
        })
    }

    /// A randomly initialised model of `config`'s sizes with OpenAI's
    /// tokenizer: for benchmarks, which need the shapes, not the weights.
    pub fn random(config: ClipConfig, device: &Device) -> Result<Self> {
        config.validate().map_err(RewardError::Input)?;
        let t = &config.text_config;
        Ok(Self {
            model: Clip::new(&config, device),
            tokenizer: ClipTokenizer::openai(t.max_position_embeddings),
            preprocess: Preprocess::for_image_size(config.vision_config.image_size),
            logit_scale: 100f32.ln(),
            config,
            device: device.clone(),
        })
    }

    /// The directory `PROPRIO_CLIP_DIR` names, if set.
    pub fn dir_from_env() -> Option<PathBuf> {
        std::env::var_os(MODEL_DIR_VAR)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    }

    /// The model's sizes.
    pub fn config(&self) -> &ClipConfig {
        &self.config
    }

    /// The device the model runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How images are prepared.
    pub fn preprocess(&self) -> &Preprocess {
        &self.preprocess
    }

    /// `exp(logit_scale)`, CLIP's learned inverse temperature.
    pub fn scale(&self) -> f32 {
        self.logit_scale.exp()
    }

    /// Token ids of `text` (start and end tokens included).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }

    /// Embeddings of `texts`, one batch.
    pub fn embed_texts(&self, texts: &[&str]) -> Result<Embeddings> {
        if texts.is_empty() {
            return Err(RewardError::Input("no texts to embed".into()));
        }
        let (flat, width, eot) = self.tokenizer.batch(texts);
        let ids = id_matrix(flat, texts.len(), width, &self.device);
        self.finish(self.model.text_features(ids, &eot))
    }

    /// `texts` read as `reading` says, one row each.
    pub fn read_texts(&self, texts: &[&str], reading: TextReading) -> Result<Embeddings> {
        match reading {
            TextReading::Sentence => self.embed_texts(texts),
            TextReading::Words(count) => self.embed_words(texts, count),
        }
    }

    /// The unit-norm token embeddings of each of `texts`, `count` tokens a
    /// row (padded with the end token); a text of more tokens is refused.
    fn embed_words(&self, texts: &[&str], count: usize) -> Result<Embeddings> {
        if texts.is_empty() || count == 0 {
            return Err(RewardError::Input("no words to embed".into()));
        }
        let end = i64::from(self.tokenizer.end_of_text());
        let mut ids = Vec::with_capacity(texts.len() * count);
        for text in texts {
            let row = self.tokenizer.encode(text);
            if row.len() > count {
                return Err(RewardError::Input(format!(
                    "\"{text}\" is {} tokens; this model reads instructions of at most {count}",
                    row.len()
                )));
            }
            ids.extend(row.iter().map(|&id| i64::from(id)));
            ids.extend(std::iter::repeat_n(end, count - row.len()));
        }
        let ids = id_matrix(ids, texts.len(), count, &self.device);
        let hidden = self.config.text_config.hidden_size;
        let words = self
            .model
            .token_embeddings(ids)
            .reshape([texts.len() * count, hidden]);
        let mut embedded = self.finish(words)?;
        embedded.dim = count * hidden;
        Ok(embedded)
    }

    /// Embeddings of `images`, preprocessed as the checkpoint says, one batch.
    pub fn embed_images(&self, images: &[RgbImage]) -> Result<Embeddings> {
        if images.is_empty() {
            return Err(RewardError::Input("no images to embed".into()));
        }
        if let Some(image) = images.iter().find(|i| i.width() == 0 || i.height() == 0) {
            return Err(RewardError::Input(format!(
                "an image of {}×{} pixels cannot be embedded",
                image.width(),
                image.height()
            )));
        }
        // burn's CPU backend runs element-wise ops, layer norms and attention
        // on one thread; only its matrix products use every core. Chunks of
        // the batch side by side keep all cores busy through the whole
        // forward pass. An image's embedding does not depend on the others
        // in its batch, so the numbers are the same either way.
        let parts = match self.device == Device::flex() {
            true => rayon::current_num_threads().min(images.len()),
            false => 1,
        };
        let chunks: Vec<Embeddings> = images
            .par_chunks(images.len().div_ceil(parts))
            .map(|chunk| self.embed_batch(chunk))
            .collect::<Result<_>>()?;
        Ok(Embeddings {
            dim: chunks[0].dim,
            values: chunks.into_iter().flat_map(|c| c.values).collect(),
        })
    }

    /// Embeddings of `images` in one forward pass.
    fn embed_batch(&self, images: &[RgbImage]) -> Result<Embeddings> {
        let (h, w) = self.preprocess.crop;
        let values = pixels(images, &self.preprocess);
        let pixels = Tensor::from_data(
            TensorData::new(values, [images.len(), 3, h, w]),
            &self.device,
        );
        self.finish(self.model.image_features(pixels))
    }

    /// Embeddings of rendered frames `[n, height, width, channels]` (u8 RGB or RGBA).
    pub fn embed_frames(
        &self,
        frames: &[u8],
        n: usize,
        height: usize,
        width: usize,
        channels: usize,
    ) -> Result<Embeddings> {
        self.embed_images(&frames_to_images(frames, n, height, width, channels)?)
    }

    /// `scale · ⟨image_i, text_j⟩`, `[images × texts]` row-major (transformers' `logits_per_image`).
    pub fn logits_per_image(&self, images: &Embeddings, texts: &Embeddings) -> Vec<f32> {
        let scale = self.scale();
        (0..images.len())
            .flat_map(|i| {
                (0..texts.len()).map(move |j| {
                    let dot: f32 = images
                        .row(i)
                        .iter()
                        .zip(texts.row(j))
                        .map(|(a, b)| a * b)
                        .sum();
                    scale * dot
                })
            })
            .collect()
    }

    fn finish(&self, features: Tensor<2>) -> Result<Embeddings> {
        let dim = features.dims()[1];
        let values = l2_normalize(features)
            .into_data()
            .try_into_vec::<f32>()
            .map_err(backend)?;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(RewardError::Backend(
                "the model produced non-finite embeddings".into(),
            ));
        }
        Ok(Embeddings { dim, values })
    }
}
