//! Observation encoders for pixel policies: a convolutional trunk for the
//! image parts of an observation (Nature-CNN-like), concatenated with its
//! other parts (the state), as CleanRL's Atari PPO and ManiSkill's `ppo_rgb` do.

use crate::base::error::{LearnError, Result};
use crate::nets::head::standard_normal;
use crate::nets::mlp::orthogonal;
use burn::module::Param;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::relu;
use proprio::{EnvRng, Space};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Convolutional encoder hyper-parameters. The default is a patchify CNN
/// (every kernel as wide as its stride, as ConvNeXt's stem): on burn's CPU
/// backend it trains 3–4× faster than overlapping kernels of the same widths
/// (docs/benchmarks.md). The Nature DQN CNN of CleanRL's `ppo_atari.py` is
/// `channels [32, 64, 64], kernels [8, 4, 3], strides [4, 2, 1], features 512`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CnnConfig {
    /// Output channels of each convolution (default 16, 32).
    pub channels: Vec<usize>,
    /// Square kernel side of each convolution (default 4, 2).
    pub kernels: Vec<usize>,
    /// Stride of each convolution (default 4, 2).
    pub strides: Vec<usize>,
    /// Width of the ReLU linear layer after the convolutions (default 128).
    pub features: usize,
}

impl Default for CnnConfig {
    fn default() -> Self {
        Self {
            channels: vec![16, 32],
            kernels: vec![4, 2],
            strides: vec![4, 2],
            features: 128,
        }
    }
}

impl CnnConfig {
    /// Rejects layer lists of different lengths and zero sizes.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let n = self.channels.len();
        if n == 0 || self.kernels.len() != n || self.strides.len() != n {
            return Err(format!(
                "cnn.channels, cnn.kernels and cnn.strides must list the same positive number of layers (got {}, {}, {})",
                n,
                self.kernels.len(),
                self.strides.len()
            ));
        }
        let sizes = self
            .channels
            .iter()
            .chain(&self.kernels)
            .chain(&self.strides);
        if sizes.chain([&self.features]).any(|&x| x == 0) {
            return Err("cnn sizes, kernels, strides and features must be positive".into());
        }
        Ok(())
    }

    /// True when no two kernel positions overlap (kernel = stride everywhere).
    fn patchify(&self) -> bool {
        self.kernels == self.strides
    }

    /// Side of the feature map each convolution leaves of an image `side` pixels wide.
    fn out_side(&self, mut side: usize) -> std::result::Result<usize, String> {
        for (&k, &s) in self.kernels.iter().zip(&self.strides) {
            if side < k {
                return Err(format!(
                    "a {side}-pixel feature map is smaller than a {k}-pixel kernel: use larger images or smaller kernels (cnn.kernels)"
                ));
            }
            side = (side - k) / s + 1;
        }
        Ok(side)
    }
}

/// Where the images and the other values sit in a flat observation row.
#[derive(Debug, Clone, PartialEq)]
pub struct ObsLayout {
    /// `(offset, channels)` of every image, all `height × width`, row-major `[h, w, c]`.
    images: Vec<(usize, usize)>,
    height: usize,
    width: usize,
    /// Runs of state values (neither pixels nor token ids), in order.
    state: Vec<Range<usize>>,
    /// `(offset, length)` of every token part (an instruction), read by an instruction encoder.
    tokens: Vec<(usize, usize)>,
    /// The vocabulary size of every token part.
    vocabularies: Vec<u32>,
}

impl ObsLayout {
    /// The layout of `space`: images (alone, in a dict or tuple, e.g. stacked
    /// frames) must share one size; every other component is state.
    pub fn new(space: &Space) -> Result<Self> {
        let mut layout = Self {
            images: Vec::new(),
            height: 0,
            width: 0,
            state: Vec::new(),
            tokens: Vec::new(),
            vocabularies: Vec::new(),
        };
        layout.add(space, &mut 0)?;
        Ok(layout)
    }

    fn add(&mut self, space: &Space, at: &mut usize) -> Result<()> {
        match space {
            Space::Image {
                height,
                width,
                channels,
            } => {
                if !self.images.is_empty() && (self.height, self.width) != (*height, *width) {
                    return Err(LearnError::Config(format!(
                        "the observation's images differ in size ({}×{} and {height}×{width}); the CNN needs one size",
                        self.height, self.width
                    )));
                }
                (self.height, self.width) = (*height, *width);
                self.images.push((*at, *channels));
            }
            Space::Tokens { max_len, vocab } => {
                self.tokens.push((*at, *max_len));
                self.vocabularies.push(*vocab);
            }
            Space::Tuple { spaces } => return spaces.iter().try_for_each(|s| self.add(s, at)),
            Space::Dict { spaces } => return spaces.iter().try_for_each(|(_, s)| self.add(s, at)),
            other => {
                let end = *at + other.flat_dim();
                match self.state.last_mut() {
                    Some(run) if run.end == *at => run.end = end,
                    _ => self.state.push(*at..end),
                }
            }
        }
        *at += space.flat_dim();
        Ok(())
    }

    /// True when the observation holds an image.
    pub fn has_images(&self) -> bool {
        !self.images.is_empty()
    }

    /// Columns of the flat row that hold pixels (integers 0–255), in order.
    pub fn pixel_columns(&self) -> Vec<Range<usize>> {
        let side = self.height * self.width;
        self.images
            .iter()
            .map(|&(at, channels)| at..at + side * channels)
            .collect()
    }

    /// `(height, width)` of the images (0 when there are none).
    pub fn image_size(&self) -> (usize, usize) {
        (self.height, self.width)
    }

    /// Values of the state part.
    pub fn state_dim(&self) -> usize {
        self.state.iter().map(ExactSizeIterator::len).sum()
    }

    /// The runs of state values.
    pub fn state_runs(&self) -> &[Range<usize>] {
        &self.state
    }

    /// The token parts, `(offset, length)`.
    pub fn tokens(&self) -> &[(usize, usize)] {
        &self.tokens
    }

    /// The vocabulary size of each token part.
    pub fn vocabularies(&self) -> &[u32] {
        &self.vocabularies
    }

    /// True when the networks read an encoding (images or tokens present)
    /// rather than the raw observation.
    pub fn encodes(&self) -> bool {
        self.has_images() || !self.tokens.is_empty()
    }

    /// Width of what the actor and critic read: a CNN's `features` (with
    /// images), the state, then an instruction's `text` features (with
    /// tokens); without either, the whole `obs_dim`-value observation.
    pub fn feature_dim(&self, obs_dim: usize, features: usize, text: usize) -> usize {
        if !self.encodes() {
            return obs_dim;
        }
        let images = if self.has_images() { features } else { 0 };
        let tokens = if self.tokens.is_empty() { 0 } else { text };
        images + self.state_dim() + tokens
    }

    /// Where observation component `k` lands among the encoded values, after
    /// a CNN's `features` (`None`: an image pixel or a token id).
    pub fn feature_index(&self, k: usize, features: usize) -> Option<usize> {
        if !self.encodes() {
            return Some(k);
        }
        let mut before = if self.has_images() { features } else { 0 };
        for run in &self.state {
            if run.contains(&k) {
                return Some(before + k - run.start);
            }
            before += run.len();
        }
        None
    }

    /// The state values of a batch of flat observations `[B, obs]`, `[B, state]`.
    pub fn state(&self, obs: &Tensor<2>) -> Vec<Tensor<2>> {
        let [b, _] = obs.dims();
        self.state
            .iter()
            .map(|r| obs.clone().slice([0..b, r.clone()]))
            .collect()
    }

    fn channels(&self) -> usize {
        self.images.iter().map(|&(_, c)| c).sum()
    }
}

/// Images through a CNN (pixels scaled to [0, 1]), then the state appended:
/// `[B, obs] → [B, features + state]`.
#[derive(Module, Debug)]
pub struct Encoder {
    /// Overlapping convolutions, on NCHW images (empty when patchifying).
    convs: Vec<Conv2d>,
    /// Non-overlapping convolutions as matrix products over `k × k × c`
    /// patches, on NHWC images (empty with overlapping kernels).
    patches: Vec<Linear>,
    /// The maps → the features (absent when only the cells are read:
    /// `text.entities.cells`).
    fc: Option<Linear>,
    #[module(skip)]
    kernels: Vec<usize>,
    #[module(skip)]
    layout: ObsLayout,
    /// `[height, width, channels]` of the last feature map.
    #[module(skip)]
    map: [usize; 3],
}

impl Encoder {
    /// An encoder for observations laid out as `layout` (which must hold an
    /// image), weights orthogonal with gain √2 (CleanRL's `layer_init`), drawn from `rng`.
    pub fn new(
        layout: ObsLayout,
        cfg: &CnnConfig,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        if !layout.has_images() {
            return Err(LearnError::Config(
                "a CNN encoder needs an image observation (--obs rgb or rgb+state)".into(),
            ));
        }
        let side = |s| cfg.out_side(s).map_err(LearnError::Config);
        let map = [
            side(layout.height)?,
            side(layout.width)?,
            cfg.channels.last().copied().unwrap_or(0),
        ];
        let flat = map.iter().product();
        let gain = 2f64.sqrt();
        let mut inputs = layout.channels();
        let (mut convs, mut patches) = (Vec::new(), Vec::new());
        for ((&out, &k), &s) in cfg.channels.iter().zip(&cfg.kernels).zip(&cfg.strides) {
            let weight = orthogonal(out, inputs * k * k, gain, rng);
            if cfg.patchify() {
                // Rows of the patch matrix are (ky, kx, c), columns the outputs.
                let mut t = vec![0.0; weight.len()];
                for (o, row) in weight.chunks_exact(inputs * k * k).enumerate() {
                    for (j, &w) in row.iter().enumerate() {
                        t[j * out + o] = w;
                    }
                }
                patches.push(linear(inputs * k * k, out, t, device));
            } else {
                let mut conv = Conv2dConfig::new([inputs, out], [k, k])
                    .with_stride([s, s])
                    .init(device);
                conv.weight = Param::from_tensor(Tensor::from_data(
                    TensorData::new(weight, [out, inputs, k, k]),
                    device,
                ));
                conv.bias = Some(Param::from_tensor(Tensor::zeros([out], device)));
                convs.push(conv);
            }
            inputs = out;
        }
        let fc = linear(
            flat,
            cfg.features,
            orthogonal(flat, cfg.features, gain, rng),
            device,
        );
        Ok(Self {
            convs,
            patches,
            fc: Some(fc),
            kernels: cfg.kernels.clone(),
            layout,
            map,
        })
    }

    /// The same encoder without its features' layer, for a reader of its
    /// cells alone (the layer's weights were drawn, so the generator's later
    /// draws are the same either way).
    pub fn cells_only(mut self) -> Self {
        self.fc = None;
        self
    }

    /// Width of an encoded observation.
    pub fn out_dim(&self) -> usize {
        self.fc.as_ref().map_or(0, |fc| fc.weight.dims()[1]) + self.layout.state_dim()
    }

    /// Encodes a batch of flat observations `[B, obs]`.
    pub fn forward(&self, obs: Tensor<2>) -> Tensor<2> {
        let maps = self.maps(self.images(&obs));
        let mut parts: Vec<Tensor<2>> = self
            .fc
            .iter()
            .map(|fc| relu(fc.forward(maps.clone().flatten(1, 3))))
            .collect();
        parts.extend(self.layout.state(&obs));
        Tensor::cat(parts, 1)
    }

    /// The images of a batch `[B, obs]`, NHWC, scaled to [0, 1] (several
    /// images side by side along the channels).
    fn images(&self, obs: &Tensor<2>) -> Tensor<4> {
        let [b, _] = obs.dims();
        let (h, w) = (self.layout.height, self.layout.width);
        let mut images: Vec<Tensor<4>> = self
            .layout
            .images
            .iter()
            .map(|&(at, c)| {
                obs.clone()
                    .slice([0..b, at..at + h * w * c])
                    .reshape([b, h, w, c])
            })
            .collect();
        match images.len() {
            1 => images.remove(0),
            _ => Tensor::cat(images, 3),
        }
        .mul_scalar(1.0 / 255.0)
    }

    /// The last convolution's maps of a batch's images ([`Self::images`]):
    /// NHWC when patchifying, else NCHW (the order the linear layer reads them in).
    fn maps(&self, nhwc: Tensor<4>) -> Tensor<4> {
        if self.patches.is_empty() {
            let mut x = nhwc.permute([0, 3, 1, 2]);
            for conv in &self.convs {
                x = relu(conv.forward(x));
            }
            x
        } else {
            let mut x = nhwc;
            for (layer, &k) in self.patches.iter().zip(&self.kernels) {
                x = patch_conv(x, k, layer);
            }
            x
        }
    }

    /// The cells of the last feature maps of a batch `[B, obs]`, `[B, h·w,
    /// channels + 2 + image channels]`, row by row: each cell's channels,
    /// where it lies (x and y in [−1, 1]), and the mean colour of the pixels
    /// it covers (so a colour word's key can match a cube's colour from the
    /// first step).
    pub fn cells(&self, obs: &Tensor<2>) -> Tensor<3> {
        let images = self.images(obs);
        let maps = self.maps(images.clone());
        let maps = if self.patches.is_empty() {
            maps.permute([0, 2, 3, 1])
        } else {
            maps
        };
        let [b, h, w, c] = maps.dims();
        let place = |k: usize, n: usize| (2 * k + 1) as f32 / n as f32 - 1.0;
        let places: Vec<f32> = (0..h)
            .flat_map(|y| (0..w).flat_map(move |x| [place(x, w), place(y, h)]))
            .collect();
        let places = Tensor::<2>::from_data(TensorData::new(places, [h * w, 2]), &maps.device());
        let [_, height, width, colours] = images.dims();
        let (ky, kx) = (height / h, width / w);
        let colour = images
            .slice([0..b, 0..h * ky, 0..w * kx, 0..colours])
            .reshape([b * h, ky, w, kx * colours])
            .mean_dim(1)
            .reshape([b * h * w, kx, colours])
            .mean_dim(1)
            .reshape([b, h * w, colours]);
        Tensor::cat(
            vec![
                maps.reshape([b, h * w, c]),
                places.unsqueeze_dim::<3>(0).expand([b, h * w, 2]),
                colour,
            ],
            2,
        )
    }

    /// `(count, values)` of the cells [`Self::cells`] returns.
    pub fn cell_shape(&self) -> (usize, usize) {
        let [h, w, channels] = self.map;
        (h * w, channels + 2 + self.layout.channels())
    }
}

/// A ReLU convolution whose kernel is as wide as its stride, on NHWC maps:
/// the `k × k` patches (a remainder is cropped) times the layer's matrix.
fn patch_conv(x: Tensor<4>, k: usize, layer: &Linear) -> Tensor<4> {
    let [b, h, w, c] = x.dims();
    let (oh, ow) = (h / k, w / k);
    let x = x.slice([0..b, 0..oh * k, 0..ow * k, 0..c]);
    let rows: Tensor<5> = x.reshape([b * oh, k, ow, k, c]);
    let rows: Tensor<2> = rows
        .permute([0, 2, 1, 3, 4])
        .reshape([b * oh * ow, k * k * c]);
    let out = layer.weight.dims()[1];
    relu(layer.forward(rows)).reshape([b, oh, ow, out])
}

/// A linear layer `inputs → outputs` with row-major `[inputs, outputs]` weights and zero bias.
pub(crate) fn linear(inputs: usize, outputs: usize, weight: Vec<f32>, device: &Device) -> Linear {
    let mut layer = LinearConfig::new(inputs, outputs).init(device);
    layer.weight = Param::from_tensor(Tensor::from_data(
        TensorData::new(weight, [inputs, outputs]),
        device,
    ));
    layer.bias = Some(Param::from_tensor(Tensor::zeros([outputs], device)));
    layer
}

/// A hashed table of `buckets` word embeddings `width` wide, N(0, 1) as
/// PyTorch's `nn.Embedding`, drawn from the run's generator (burn's
/// initializer draws from its own, unseeded one).
pub(crate) fn word_table(
    buckets: usize,
    width: usize,
    device: &Device,
    rng: &mut EnvRng,
) -> Embedding {
    let table: Vec<f32> = (0..buckets * width).map(|_| standard_normal(rng)).collect();
    let mut embedding = EmbeddingConfig::new(buckets, width).init(device);
    embedding.weight = Param::from_tensor(Tensor::from_data(
        TensorData::new(table, [buckets, width]),
        device,
    ));
    embedding
}

/// The token parts at `segments` (`(offset, length)`) of a batch of flat
/// observations `[B, obs]`, side by side `[B, Σ length]`.
pub(crate) fn token_ids(obs: &Tensor<2>, segments: &[(usize, usize)]) -> Tensor<2> {
    let [b, _] = obs.dims();
    let parts: Vec<Tensor<2>> = segments
        .iter()
        .map(|&(at, len)| obs.clone().slice([0..b, at..at + len]))
        .collect();
    Tensor::cat(parts, 1)
}

#[cfg(test)]
mod tests;
