//! A progress model on disk, one directory: `progress.json` (its sizes, the
//! embedding width, its instructions and how it was fitted),
//! `progress.bpk` (burn's record of the network) and `clip/`, a copy of the
//! CLIP whose embeddings it reads, so the directory is whole on its own.

use super::{ProgressConfig, ProgressNet};
use crate::clip::ClipModel;
use crate::{Result, RewardError};
use burn::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The sub-directory holding the model's CLIP.
pub const CLIP_SUBDIR: &str = "clip";
const CONFIG_FILE: &str = "progress.json";
const WEIGHTS_FILE: &str = "progress.bpk";

/// A fitted progress network with what it needs to be used again.
#[derive(Debug)]
pub struct ProgressModel {
    /// The network.
    pub net: ProgressNet,
    /// Its sizes and fit settings.
    pub config: ProgressConfig,
    /// Width of a frame's embedding it reads (the CLIP's, times the views).
    pub dim: usize,
    /// Width of an instruction's embedding (the CLIP's).
    pub text_dim: usize,
    /// The instructions it was fitted under (one, for a task without instructions).
    pub instructions: Vec<String>,
    /// Each instruction's success caption, which the model reads in the
    /// instruction's place (`fit-progress --goals`); `None` reads the instructions.
    pub goals: Option<BTreeMap<String, String>>,
}

/// `progress.json`.
#[derive(Serialize, Deserialize)]
struct Header {
    config: ProgressConfig,
    dim: usize,
    text_dim: usize,
    instructions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    goals: Option<BTreeMap<String, String>>,
    #[serde(default)]
    fit: serde_json::Value,
}

impl ProgressModel {
    /// Writes the model into the new directory `dir`, with a copy of the
    /// CLIP in `clip` and `fit` (what the fit measured) in its header; an
    /// existing `dir` is refused, so nothing a user has is overwritten.
    pub fn save(&self, dir: &Path, clip: &Path, fit: serde_json::Value) -> Result<()> {
        if dir.exists() {
            return Err(RewardError::io(
                dir,
                "already exists; choose a new directory",
            ));
        }
        let partial = dir.with_extension("partial");
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(|e| RewardError::io(&partial, e))?;
        }
        let copy = partial.join(CLIP_SUBDIR);
        std::fs::create_dir_all(&copy).map_err(|e| RewardError::io(&copy, e))?;
        for entry in std::fs::read_dir(clip).map_err(|e| RewardError::io(clip, e))? {
            let path = entry.map_err(|e| RewardError::io(clip, e))?.path();
            if path.is_file() {
                let to = copy.join(path.file_name().unwrap_or_default());
                std::fs::copy(&path, &to).map_err(|e| RewardError::io(&path, e))?;
            }
        }
        let header = Header {
            config: self.config.clone(),
            dim: self.dim,
            text_dim: self.text_dim,
            instructions: self.instructions.clone(),
            goals: self.goals.clone(),
            fit,
        };
        let text =
            serde_json::to_string_pretty(&header).map_err(|e| RewardError::io(&partial, e))?;
        let config = partial.join(CONFIG_FILE);
        std::fs::write(&config, text).map_err(|e| RewardError::io(&config, e))?;
        let weights = partial.join(WEIGHTS_FILE);
        self.net
            .clone()
            .save_file(&weights)
            .map_err(|e| RewardError::io(&weights, e))?;
        std::fs::rename(&partial, dir).map_err(|e| RewardError::io(dir, e))
    }

    /// Reads a directory [`ProgressModel::save`] wrote, onto the CPU.
    pub fn load(dir: &Path) -> Result<Self> {
        let config = dir.join(CONFIG_FILE);
        if !config.is_file() {
            return Err(RewardError::io(
                dir,
                format!("not a progress model (no {CONFIG_FILE})"),
            ));
        }
        let text = std::fs::read_to_string(&config).map_err(|e| RewardError::io(&config, e))?;
        let header: Header =
            serde_json::from_str(&text).map_err(|e| RewardError::config(&config, e.to_string()))?;
        header
            .config
            .validate()
            .and_then(|()| header.config.check_dims(header.dim, header.text_dim))
            .map_err(|m| RewardError::config(&config, m))?;
        if header.dim == 0 || header.text_dim == 0 || header.instructions.is_empty() {
            return Err(RewardError::config(
                &config,
                "a progress model reads embeddings of at least one value under at least one instruction",
            ));
        }
        let weights = dir.join(WEIGHTS_FILE);
        let checkpoint = |e: burn::store::RecordError| RewardError::Checkpoint {
            path: weights.clone(),
            message: e.to_string(),
        };
        let bytes = std::fs::read(&weights).map_err(|e| RewardError::io(&weights, e))?;
        let record =
            burn::store::ModuleRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes))
                .map_err(checkpoint)?;
        let device = Device::flex();
        let net = ProgressNet::new(&header.config, header.dim, header.text_dim, &device)
            .try_load_record(record)
            .map_err(checkpoint)?;
        Ok(Self {
            net,
            config: header.config,
            dim: header.dim,
            text_dim: header.text_dim,
            instructions: header.instructions,
            goals: header.goals,
        })
    }

    /// The texts the model reads for `instructions` ([`instruction_texts`] of its goals).
    pub fn texts(&self, instructions: &[String]) -> Result<Vec<String>> {
        instruction_texts(self.goals.as_ref(), instructions)
    }

    /// The directory of the CLIP a saved model in `dir` reads embeddings of.
    pub fn clip_dir(dir: &Path) -> PathBuf {
        dir.join(CLIP_SUBDIR)
    }

    /// The model's CLIP, loaded from the saved directory `dir`; its
    /// embedding width must be the one the network reads.
    pub fn load_clip(&self, dir: &Path, device: &Device) -> Result<ClipModel> {
        let path = Self::clip_dir(dir);
        let clip = ClipModel::load(&path, device)?;
        self.check_clip(&clip, &path)?;
        Ok(clip)
    }

    /// Whether `clip` (loaded from `path`) embeds into the widths the network reads.
    pub fn check_clip(&self, clip: &ClipModel, path: &Path) -> Result<()> {
        let width = clip.config().projection_dim;
        let text = self.config.reading().width(clip.config());
        if text != self.text_dim || !self.dim.is_multiple_of(width) {
            return Err(RewardError::config(
                path,
                format!(
                    "this CLIP embeds frames into {width} values and instructions into {text}; the progress model reads frames of {} and instructions of {}",
                    self.dim, self.text_dim
                ),
            ));
        }
        Ok(())
    }

    /// Camera views per frame the model reads through `clip` (its frame width over the CLIP's).
    pub fn views(&self, clip: &ClipModel) -> usize {
        self.dim / clip.config().projection_dim.max(1)
    }
}

/// The texts a progress model reads for `instructions`: their captions in
/// `goals` (matched as the tokenizer reads an instruction back; one without
/// a caption is an error), or without goals the instructions themselves.
pub fn instruction_texts(
    goals: Option<&BTreeMap<String, String>>,
    instructions: &[String],
) -> Result<Vec<String>> {
    let Some(goals) = goals else {
        return Ok(instructions.to_vec());
    };
    // CLIP's context: long enough that no instruction is cut before matching.
    let tokenizer = proprio_text::ClipTokenizer::openai(77);
    let goals = crate::instructions::keyed(&tokenizer, goals);
    instructions
        .iter()
        .map(|text| {
            goals
                .get(&crate::instructions::read_back(&tokenizer, text))
                .cloned()
                .ok_or_else(|| {
                    RewardError::Input(format!(
                        "the goals give no caption for the instruction \"{text}\""
                    ))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::{Episode, EpisodeKind, ProgressData, running_progress};

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("proprio-progress-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_saved_model_reads_as_it_was_written_and_is_never_replaced() {
        let root = scratch("store");
        let clip = root.join("clip-src");
        std::fs::create_dir_all(&clip).unwrap();
        std::fs::write(clip.join("config.json"), "{}").unwrap();
        let cfg = ProgressConfig {
            window: 4,
            width: 16,
            heads: 2,
            ..ProgressConfig::default()
        };
        let device = Device::flex();
        let model = ProgressModel {
            net: crate::seeded(&device, 7, || ProgressNet::new(&cfg, 6, 3, &device)),
            config: cfg.clone(),
            dim: 6,
            text_dim: 3,
            instructions: vec!["stack the cubes".into()],
            goals: Some([("Stack  the cubes".into(), "a tower".into())].into()),
        };
        let dir = root.join("model");
        model
            .save(&dir, &clip, serde_json::json!({"steps": 0}))
            .unwrap();
        assert!(dir.join(CLIP_SUBDIR).join("config.json").is_file());
        let loaded = ProgressModel::load(&dir).unwrap();
        assert_eq!(loaded.instructions, model.instructions);
        assert_eq!(loaded.goals, model.goals);
        // Matched as the tokenizer reads an instruction back; one without a caption is refused.
        assert_eq!(
            loaded.texts(&["stack the cubes".into()]).unwrap(),
            ["a tower"]
        );
        let uncaptioned = loaded.texts(&["lift".into()]).unwrap_err();
        assert!(
            uncaptioned.to_string().contains("\"lift\""),
            "{uncaptioned}"
        );
        assert_eq!((loaded.dim, loaded.text_dim), (6, 3));
        assert_eq!(loaded.config, model.config);
        let data = ProgressData {
            dim: 6,
            texts: vec![vec![0.3, -0.2, 0.9]],
            episodes: vec![Episode {
                frames: (0..42).map(|v| (v as f32 * 0.37).sin()).collect(),
                text: 0,
                kind: EpisodeKind::Demo,
                unscored: 0,
            }],
        };
        let a = running_progress(&model.net, &data, 0, 4).unwrap();
        let b = running_progress(&loaded.net, &data, 0, 4).unwrap();
        assert_eq!(a, b);
        let again = model
            .save(&dir, &clip, serde_json::Value::Null)
            .unwrap_err();
        assert!(again.to_string().contains("already exists"), "{again}");
        let missing = ProgressModel::load(&root).unwrap_err();
        assert!(
            missing.to_string().contains("not a progress model"),
            "{missing}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
