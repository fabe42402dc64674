//! The instruction encoder of a vision-language-action policy: the token
//! ids of an observation's `Tokens` parts (an instruction in CLIP's BPE)
//! hashed into a small embedding table, each position its own learned
//! offset, and the whole padded sequence read by one ReLU layer, so word
//! order counts ("put the red cube on the blue cube" is not its mirror).
//! Or (`text.window` k) every k-token window read by the same ReLU layer
//! and the features max-pooled over windows: a word then means the same
//! wherever it stands, which a held-out combination of trained words needs
//! (order still counts within a window: "on the blue" is not "put the blue").
//! Or (`text.clip`) a CLIP checkpoint's text tower, frozen, its embedding
//! of each distinct instruction computed once and cached, read by one
//! learned ReLU layer.
//!
//! Hashing keeps the table small whatever the tokenizer's vocabulary (CLIP's
//! 49,408 ids would make a 49,408-row table Adam updates in full every step);
//! a collision only merges two words' embeddings, which
//! `manipulation/instruct-v0`'s words never do (tested).

use crate::base::error::{LearnError, Result};
use crate::nets::encoder::{token_ids, word_table};
use crate::nets::entities::EntityConfig;
use crate::nets::mlp::orthogonal;
use burn::module::Param;
use burn::nn::{Embedding, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::relu;
use proprio::EnvRng;
use proprio_reward::clip::{ClipModel, ClipTokenizer};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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
    /// 0: the padded sequence read at once, each position with its own
    /// weights; an odd k: each k-token window read by shared weights, max-pooled.
    pub window: usize,
    /// A CLIP checkpoint directory (Hugging Face layout) whose text tower,
    /// frozen, reads the instruction instead of the hashed table; the policy
    /// file names it, so the directory must stay where it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<PathBuf>,
    /// Read the instruction as references to the state's objects
    /// ([`EntityReader`](crate::nets::entities::EntityReader)) instead of one feature vector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entities: Option<EntityConfig>,
}

impl Default for TextConfig {
    fn default() -> Self {
        Self {
            buckets: 4096,
            width: 32,
            features: 64,
            window: 0,
            clip: None,
            entities: None,
        }
    }
}

impl TextConfig {
    /// Rejects zero sizes.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.buckets == 0 || self.width == 0 || self.features == 0 {
            return Err("text.buckets, text.width and text.features must be positive".into());
        }
        if self.window.is_multiple_of(2) && self.window != 0 {
            return Err(format!(
                "text.window must be 0 (one reading of the whole sequence) or odd (a window centred on each token), got {}",
                self.window
            ));
        }
        if self.window != 0 && self.clip.is_some() {
            return Err("text.window reads the hashed table's tokens; a frozen text.clip tower reads the whole text".into());
        }
        if self.entities.is_some() && (self.window != 0 || self.clip.is_some()) {
            return Err(
                "text.entities reads the words itself; it takes neither text.window nor text.clip"
                    .into(),
            );
        }
        Ok(())
    }
}

/// A frozen CLIP text tower and its embeddings of the instructions seen so far.
#[derive(Clone)]
struct FrozenText {
    model: Arc<ClipModel>,
    /// The env's vocabulary (OpenAI's), to turn its ids back into text.
    env_vocabulary: Arc<ClipTokenizer>,
    cache: Arc<Mutex<HashMap<Vec<u32>, Vec<f32>>>>,
}

impl std::fmt::Debug for FrozenText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrozenText({} dims)", self.model.config().projection_dim)
    }
}

impl FrozenText {
    /// Embeddings `[B, projection_dim]` of token rows `ids`, computed once per distinct row.
    fn embed(&self, ids: &[f32], len: usize) -> Vec<f32> {
        let rows: Vec<Vec<u32>> = ids
            .chunks_exact(len)
            .map(|row| row.iter().map(|&t| t as u32).collect())
            .collect();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let mut missing: Vec<&Vec<u32>> = rows.iter().filter(|r| !cache.contains_key(*r)).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            // An id outside OpenAI's vocabulary reads as the empty text.
            let texts: Vec<String> = missing
                .iter()
                .map(|r| self.env_vocabulary.decode(r).unwrap_or_default())
                .collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let dim = self.model.config().projection_dim;
            // `embed_texts` refuses only an empty batch, which `missing` is not.
            let embedded = self
                .model
                .embed_texts(&texts)
                .map(|e| e.values)
                .unwrap_or_else(|_| vec![0.0; texts.len() * dim]);
            for (row, embedding) in missing.into_iter().zip(embedded.chunks_exact(dim)) {
                cache.insert(row.clone(), embedding.to_vec());
            }
        }
        rows.iter()
            .flat_map(|r| cache.get(r).into_iter().flatten().copied())
            .collect()
    }
}

/// Token ids `[B, L]` (0 = padding) → instruction features `[B, features]`.
#[derive(Module, Debug)]
pub struct InstructionEncoder {
    /// The hashed table (absent when a frozen CLIP text tower reads the tokens).
    embedding: Option<Embedding>,
    /// One learned offset `[L, width]` per position (hashed table only).
    position: Option<Param<Tensor<2>>>,
    /// The flattened sequence (or the CLIP embedding) → features.
    fc: Linear,
    /// `(offset, length)` of each token part of a flat observation.
    #[module(skip)]
    segments: Vec<(usize, usize)>,
    #[module(skip)]
    buckets: usize,
    /// Tokens per shared reading (0: the whole sequence, position by position).
    #[module(skip)]
    window: usize,
    #[module(skip)]
    frozen: Option<FrozenText>,
}

impl InstructionEncoder {
    /// An encoder of the token parts at `segments` of a flat observation
    /// (of vocabularies `vocabularies`); the reading layer orthogonal with
    /// gain √2, drawn from `rng`.
    pub fn new(
        segments: Vec<(usize, usize)>,
        vocabularies: &[u32],
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
        let frozen = match &cfg.clip {
            Some(dir) => Some(frozen_text(dir, vocabularies, device)?),
            None => None,
        };
        let inputs = match (&frozen, cfg.window) {
            (Some(f), _) => f.model.config().projection_dim,
            (None, 0) => len * cfg.width,
            (None, k) => k * cfg.width,
        };
        let weight = orthogonal(inputs, cfg.features, 2f64.sqrt(), rng);
        let mut fc = LinearConfig::new(inputs, cfg.features).init(device);
        fc.weight = Param::from_tensor(Tensor::from_data(
            TensorData::new(weight, [inputs, cfg.features]),
            device,
        ));
        fc.bias = Some(Param::from_tensor(Tensor::zeros([cfg.features], device)));
        let (embedding, position) = if frozen.is_some() {
            (None, None)
        } else {
            let embedding = word_table(cfg.buckets, cfg.width, device, rng);
            let position = (cfg.window == 0)
                .then(|| Param::from_tensor(Tensor::zeros([len, cfg.width], device)));
            (Some(embedding), position)
        };
        Ok(Self {
            embedding,
            position,
            fc,
            segments,
            buckets: cfg.buckets,
            window: cfg.window,
            frozen,
        })
    }

    /// Width of the features.
    pub fn out_dim(&self) -> usize {
        self.fc.weight.dims()[1]
    }

    /// Encodes the token parts of a batch of flat observations `[B, obs]`.
    pub fn forward(&self, obs: Tensor<2>) -> Tensor<2> {
        let [b, _] = obs.dims();
        let ids = token_ids(&obs, &self.segments);
        let [_, len] = ids.dims();
        if let Some(frozen) = &self.frozen {
            let device = ids.device();
            let host: Vec<f32> = ids.into_data().convert::<f32>().iter::<f32>().collect();
            let embedded = frozen.embed(&host, len);
            let width = self.fc.weight.dims()[0];
            let features = Tensor::from_data(TensorData::new(embedded, [b, width]), &device);
            return relu(self.fc.forward(features));
        }
        let Some(embedding) = &self.embedding else {
            unreachable!("an encoder without a frozen tower has a table")
        };
        let present = ids
            .clone()
            .not_equal_elem(0.0)
            .float()
            .unsqueeze_dim::<3>(2);
        let buckets = ids.int().remainder_scalar(self.buckets as i64);
        let tokens = embedding.forward(buckets);
        let width = tokens.dims()[2];
        let Some(position) = &self.position else {
            return self.read_windows(tokens * present.clone(), present);
        };
        // Padding reads as zeros, wherever the instruction ends.
        let tokens = tokens + position.val().unsqueeze_dim(0);
        let sequence = (tokens * present).reshape([b, len * width]);
        relu(self.fc.forward(sequence))
    }

    /// Each window of `self.window` tokens `[B, L, width]` (zeros past
    /// either end) read by the one layer; the maximum of each feature over
    /// the windows centred on a token that is `present`.
    fn read_windows(&self, tokens: Tensor<3>, present: Tensor<3>) -> Tensor<2> {
        let [b, len, width] = tokens.dims();
        let half = self.window / 2;
        let edge = Tensor::zeros([b, half, width], &tokens.device());
        let padded = Tensor::cat(vec![edge.clone(), tokens, edge], 1);
        let windows: Vec<Tensor<3>> = (0..self.window)
            .map(|j| padded.clone().slice([0..b, j..j + len, 0..width]))
            .collect();
        let windows = Tensor::cat(windows, 2).reshape([b * len, self.window * width]);
        let features = self.out_dim();
        // Features are ≥ 0 after the ReLU, so a masked window (0) never wins the max.
        let read = relu(self.fc.forward(windows)).reshape([b, len, features]) * present;
        read.max_dim(1).reshape([b, features])
    }
}

/// Loads the CLIP checkpoint at `dir` (outside autodiff: it stays frozen)
/// for an observation whose token parts are OpenAI's CLIP BPE.
fn frozen_text(dir: &std::path::Path, vocabularies: &[u32], device: &Device) -> Result<FrozenText> {
    let vocabulary = ClipTokenizer::openai(77);
    let openai = vocabulary.end_of_text() + 1;
    if let Some(other) = vocabularies.iter().find(|&&v| v != openai) {
        return Err(LearnError::Config(format!(
            "text.clip reads instructions in OpenAI's CLIP BPE ({openai} tokens); this observation's tokens come from a vocabulary of {other}"
        )));
    }
    let model = ClipModel::load(dir, &device.clone().inner())?;
    Ok(FrozenText {
        model: Arc::new(model),
        env_vocabulary: Arc::new(vocabulary),
        cache: Arc::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::{host, matrix};
    use burn::module::Module;
    use proprio::rand::SeedableRng;

    fn encoder(segments: Vec<(usize, usize)>) -> InstructionEncoder {
        let mut rng = EnvRng::seed_from_u64(3);
        let cfg = TextConfig::default();
        InstructionEncoder::new(segments, &[49_408], &cfg, &Device::flex(), &mut rng).unwrap()
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
    fn a_window_reader_reads_a_word_alike_wherever_it_stands_but_keeps_local_order() {
        let mut rng = EnvRng::seed_from_u64(3);
        let cfg = TextConfig {
            window: 3,
            ..TextConfig::default()
        };
        let e = InstructionEncoder::new(vec![(1, 6)], &[49_408], &cfg, &Device::flex(), &mut rng)
            .unwrap();
        // One layer of 3 tokens × 32 wide → 64 features, and the table; no position offsets.
        assert_eq!(e.num_params(), 4096 * 32 + 3 * 32 * 64 + 64);
        let rows = [
            [0.5, 736.0, 525.0, 1746.0, 0.0, 0.0, 0.0],
            [0.5, 0.0, 0.0, 736.0, 525.0, 1746.0, 0.0],
            [0.5, 1746.0, 525.0, 736.0, 0.0, 0.0, 0.0],
            [7.0, 736.0, 525.0, 1746.0, 0.0, 0.0, 0.0],
        ];
        let flat: Vec<f32> = rows.iter().flatten().copied().collect();
        let out = host(e.forward(matrix(&flat, 4, 7, &Device::flex()))).unwrap();
        let row = |i: usize| &out[i * 64..(i + 1) * 64];
        assert_eq!(
            row(0),
            row(1),
            "the same words two places later read differently"
        );
        assert_ne!(row(0), row(2), "swapped words read alike");
        assert_eq!(
            row(0),
            row(3),
            "the state leaked into the instruction's features"
        );
        assert!(row(0).iter().any(|&v| v > 0.0));
        // The positions reader tells the shifted words apart.
        let positions = encoder(vec![(1, 6)]);
        let out = host(positions.forward(matrix(&flat, 4, 7, &Device::flex()))).unwrap();
        assert_ne!(out[..64], out[64..128]);
        let even = TextConfig {
            window: 2,
            ..TextConfig::default()
        };
        assert!(even.validate().unwrap_err().contains("odd"));
    }

    /// The tiny CLIP checkpoint of `assets/clip-tiny` (its own 1,000-token vocabulary).
    fn tiny_clip() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../assets/clip-tiny"
        ))
    }

    fn openai_row(text: &str) -> Vec<f32> {
        let mut ids: Vec<f32> = ClipTokenizer::openai(77)
            .encode(text)
            .into_iter()
            .map(|t| t as f32)
            .collect();
        ids.resize(16, 0.0);
        ids
    }

    #[test]
    fn a_frozen_clip_tower_reads_the_instruction_text_once_per_instruction() {
        let mut rng = EnvRng::seed_from_u64(3);
        let cfg = TextConfig {
            clip: Some(tiny_clip()),
            ..TextConfig::default()
        };
        let device = Device::flex().autodiff();
        let e = InstructionEncoder::new(vec![(1, 16)], &[49_408], &cfg, &device, &mut rng).unwrap();
        // Only the reading layer learns: the tower's 16-wide embedding → 64 features.
        assert_eq!(e.num_params(), 16 * 64 + 64);
        let texts = [
            "put the red cube on the blue cube",
            "put the blue cube on the red cube",
        ];
        let rows: Vec<f32> = [texts[0], texts[1], texts[0]]
            .iter()
            .flat_map(|t| std::iter::once(0.5).chain(openai_row(t)))
            .collect();
        let out = host(e.forward(matrix(&rows, 3, 17, &device))).unwrap();
        let row = |i: usize| &out[i * 64..(i + 1) * 64];
        assert_ne!(row(0), row(1), "swapped colours read alike");
        assert_eq!(row(0), row(2));
        let frozen = e.frozen.as_ref().unwrap();
        assert_eq!(
            frozen.cache.lock().unwrap().len(),
            2,
            "one embedding per instruction"
        );
        // The cached embedding is the checkpoint's own of the decoded text.
        let clip = ClipModel::load(&tiny_clip(), &Device::flex()).unwrap();
        let theirs = clip.embed_texts(&texts).unwrap();
        let ours = frozen.embed(&rows[1..17], 16);
        assert_eq!(ours, theirs.row(0));
    }

    #[test]
    fn a_frozen_clip_tower_refuses_another_vocabulary_and_a_missing_checkpoint() {
        let mut rng = EnvRng::seed_from_u64(3);
        let mut cfg = TextConfig {
            clip: Some(tiny_clip()),
            ..TextConfig::default()
        };
        let new = |cfg: &TextConfig, vocab: u32, rng: &mut EnvRng| {
            InstructionEncoder::new(vec![(0, 4)], &[vocab], cfg, &Device::flex(), rng)
                .err()
                .unwrap()
                .to_string()
        };
        let error = new(&cfg, 12, &mut rng);
        assert!(error.contains("OpenAI's CLIP BPE"), "{error}");
        cfg.clip = Some(PathBuf::from("/nonexistent/clip"));
        let error = new(&cfg, 49_408, &mut rng);
        assert!(error.contains("/nonexistent/clip"), "{error}");
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
