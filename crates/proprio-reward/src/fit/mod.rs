//! An in-domain CLIP trained here: contrastive training (CLIP's symmetric
//! loss) of a small CLIP on an env's rendered frames and the captions of the
//! states they show, saved in the Hugging Face layout so the reward wrappers
//! load it exactly like a public checkpoint.

mod data;
mod save;

pub use data::{Captioned, Collect, collect};
pub use save::save;

use crate::clip::{
    Activation, Clip, ClipConfig, ClipTokenizer, Preprocess, TextConfig, VisionConfig,
    frames_to_images, l2_normalize, pixels,
};
use crate::{Result, RewardError};
use burn::module::Param;
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use proprio::rand::RngExt;
use proprio::rand::seq::SliceRandom;

/// Sizes and optimiser settings of `fit-clip` (defaults: a small CLIP for
/// 64-pixel frames that trains in a minute or two on 2 cores).
#[derive(Debug, Clone, PartialEq)]
pub struct FitConfig {
    /// Side of the square input, pixels.
    pub image_size: usize,
    /// Side of a vision patch, pixels.
    pub patch_size: usize,
    /// Width of both towers.
    pub width: usize,
    /// Layers of each tower.
    pub layers: usize,
    /// Attention heads of each tower.
    pub heads: usize,
    /// Width of the shared embedding space.
    pub projection_dim: usize,
    /// Longest caption, in tokens (start and end included).
    pub context: usize,
    /// Adam steps.
    pub steps: usize,
    /// Frames per step.
    pub batch: usize,
    /// Adam's learning rate (CLIP used 5e-4 for its large batches; small models take more).
    pub learning_rate: f64,
    /// Fraction of frames held out to measure accuracy.
    pub holdout: f64,
    /// Seed of the initial weights and the minibatch order.
    pub seed: u64,
}

impl Default for FitConfig {
    fn default() -> Self {
        Self {
            image_size: 64,
            patch_size: 8,
            width: 64,
            layers: 2,
            heads: 4,
            projection_dim: 64,
            context: 32,
            steps: 600,
            batch: 128,
            learning_rate: 1e-3,
            holdout: 0.1,
            seed: 1,
        }
    }
}

impl FitConfig {
    /// The CLIP these settings describe (OpenAI's vocabulary, QuickGELU).
    pub fn clip_config(&self) -> ClipConfig {
        ClipConfig {
            text_config: TextConfig {
                hidden_size: self.width,
                intermediate_size: 4 * self.width,
                num_hidden_layers: self.layers,
                num_attention_heads: self.heads,
                max_position_embeddings: self.context,
                ..TextConfig::default()
            },
            vision_config: VisionConfig {
                hidden_size: self.width,
                intermediate_size: 4 * self.width,
                num_hidden_layers: self.layers,
                num_attention_heads: self.heads,
                image_size: self.image_size,
                patch_size: self.patch_size,
                hidden_act: Activation::QuickGelu,
                ..VisionConfig::default()
            },
            projection_dim: self.projection_dim,
            ..ClipConfig::default()
        }
    }
}

/// The model and CLIP's learned temperature, trained together.
#[derive(Module, Debug)]
pub struct Trainee {
    /// The CLIP being fit.
    pub clip: Clip,
    /// `log` of the logit scale (CLIP starts at `log(1/0.07)` and caps the scale at 100).
    pub logit_scale: Param<Tensor<1>>,
}

/// What a fit achieved.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// Loss of the last step.
    pub final_loss: f32,
    /// Held-out frames whose best-scoring caption is their own, in [0, 1].
    pub holdout_accuracy: f64,
    /// The accuracy of always guessing the most common caption, for comparison.
    pub majority_accuracy: f64,
    /// Frames held out.
    pub holdout_frames: usize,
}

/// Trains a CLIP of `cfg`'s sizes on `data` from scratch; `progress(step, loss)`
/// is told every step.
pub fn fit(
    data: &Captioned,
    cfg: &FitConfig,
    mut progress: impl FnMut(usize, f32),
) -> Result<(Trainee, FitReport)> {
    if data.side != cfg.image_size {
        return Err(RewardError::Input(format!(
            "frames of {} px for a model of {} px",
            data.side, cfg.image_size
        )));
    }
    let config = cfg.clip_config();
    config.validate().map_err(RewardError::Input)?;
    if data.len() < 2 || cfg.batch == 0 || cfg.steps == 0 {
        return Err(RewardError::Input(
            "fit-clip needs at least 2 frames, a batch and a step".into(),
        ));
    }
    let device = Device::flex().autodiff();
    let mut rng = proprio::episode_rng(cfg.seed, 0, 0);
    let mut order: Vec<usize> = (0..data.len()).collect();
    order.shuffle(&mut rng);
    let held = ((data.len() as f64 * cfg.holdout) as usize).min(data.len() - 1);
    let (test, train) = order.split_at(held);
    let preprocess = Preprocess::for_image_size(cfg.image_size);
    let tokenizer = ClipTokenizer::openai(cfg.context);
    let texts: Vec<&str> = data.captions.iter().map(String::as_str).collect();
    let (ids, width, eot) = tokenizer.batch(&texts);
    let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [texts.len(), width]), &device);
    let mut model = Trainee {
        clip: crate::seeded(&device, cfg.seed, || Clip::new(&config, &device)),
        logit_scale: Param::from_tensor(Tensor::from_data(
            TensorData::new(vec![(1.0f32 / 0.07).ln()], [1]),
            &device,
        )),
    };
    let mut optim = AdamConfig::new().init();
    let k = texts.len();
    let mut final_loss = f32::NAN;
    for step in 0..cfg.steps {
        let batch: Vec<usize> = (0..cfg.batch.min(train.len()))
            .map(|_| train[rng.random_range(0..train.len())])
            .collect();
        let images = image_tensor(data, &batch, &preprocess, &device)?;
        let labels: Vec<usize> = batch.iter().map(|&i| data.labels[i]).collect();
        let loss = contrastive_loss(&model, images, ids.clone(), &eot, &labels, k, &device);
        final_loss = loss
            .clone()
            .into_data()
            .try_into_vec::<f32>()
            .map_err(crate::clip::backend)?[0];
        if !final_loss.is_finite() {
            return Err(RewardError::Backend(format!(
                "fit-clip diverged at step {step}"
            )));
        }
        progress(step, final_loss);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(cfg.learning_rate, model, grads);
    }
    let holdout_accuracy = accuracy(&model, data, test, &preprocess, ids, &eot)?;
    let mut counts = vec![0usize; k];
    test.iter().for_each(|&i| counts[data.labels[i]] += 1);
    let report = FitReport {
        final_loss,
        holdout_accuracy,
        majority_accuracy: counts.iter().max().copied().unwrap_or(0) as f64
            / test.len().max(1) as f64,
        holdout_frames: test.len(),
    };
    Ok((model, report))
}

/// Normalised pixels of the frames `which`, `[n, 3, side, side]`.
fn image_tensor(
    data: &Captioned,
    which: &[usize],
    preprocess: &Preprocess,
    device: &Device,
) -> Result<Tensor<4>> {
    let side = data.side;
    let bytes: Vec<u8> = which
        .iter()
        .flat_map(|&i| data.image(i).iter().copied())
        .collect();
    let images = frames_to_images(&bytes, which.len(), side, side, 3)?;
    let values = pixels(&images, preprocess);
    Ok(Tensor::from_data(
        TensorData::new(values, [which.len(), 3, side, side]),
        device,
    ))
}

/// CLIP's symmetric loss with repeated captions: image → caption is a
/// cross-entropy over the distinct captions; caption → image averages the
/// log-probability of every frame that carries the caption.
fn contrastive_loss(
    model: &Trainee,
    images: Tensor<4>,
    ids: Tensor<2, Int>,
    eot: &[usize],
    labels: &[usize],
    k: usize,
    device: &Device,
) -> Tensor<1> {
    let b = labels.len();
    let image = l2_normalize(model.clip.image_features(images));
    let text = l2_normalize(model.clip.text_features(ids, eot));
    let scale = model
        .logit_scale
        .val()
        .clamp_max(100f32.ln())
        .exp()
        .reshape([1, 1]);
    let logits = image.matmul(text.transpose()) * scale;
    let mut onehot = vec![0.0f32; b * k];
    let mut counts = vec![0.0f32; k];
    for (row, &label) in labels.iter().enumerate() {
        onehot[row * k + label] = 1.0;
        counts[label] += 1.0;
    }
    let present = counts.iter().filter(|c| **c > 0.0).count() as f32;
    let weights: Vec<f32> = counts
        .iter()
        .map(|&c| if c > 0.0 { 1.0 / (c * present) } else { 0.0 })
        .collect();
    let onehot = Tensor::<2>::from_data(TensorData::new(onehot, [b, k]), device);
    let weights = Tensor::<2>::from_data(TensorData::new(weights, [1, k]), device);
    let image_to_text = (onehot.clone() * log_softmax(logits.clone(), 1))
        .sum()
        .div_scalar(b as f32);
    let text_to_image = (onehot * log_softmax(logits, 0))
        .sum_dim(0)
        .mul(weights)
        .sum();
    (image_to_text + text_to_image).mul_scalar(-0.5)
}

/// Fraction of the frames `which` whose best caption is their own.
fn accuracy(
    model: &Trainee,
    data: &Captioned,
    which: &[usize],
    preprocess: &Preprocess,
    ids: Tensor<2, Int>,
    eot: &[usize],
) -> Result<f64> {
    if which.is_empty() {
        return Ok(0.0);
    }
    let device = Device::flex();
    let clip = model.clip.valid();
    let text = l2_normalize(clip.text_features(ids.to_device(&device), eot));
    let mut correct = 0;
    for chunk in which.chunks(256) {
        let images = image_tensor(data, chunk, preprocess, &device)?;
        let scores = l2_normalize(clip.image_features(images)).matmul(text.clone().transpose());
        let best = scores
            .argmax(1)
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .map_err(crate::clip::backend)?;
        correct += chunk
            .iter()
            .zip(best)
            .filter(|(i, b)| data.labels[**i] as i64 == *b)
            .count();
    }
    Ok(correct as f64 / which.len() as f64)
}
