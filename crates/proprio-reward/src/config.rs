//! The reward a run optimises, as a user writes it (`proprio train --reward
//! reward.toml`): which model, which goal, and how it mixes with the task's reward.

use crate::{Result, RewardError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which vision-language reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewardKind {
    /// Every step: the VLM-RM similarity of the frame to the goal text.
    VlmRm,
    /// At an episode's end only: the similarity of the episode's pooled frame
    /// embeddings to a demonstration's (RoboCLIP).
    Roboclip,
    /// A reward network on frame embeddings, fitted during training to
    /// labelled pairs of segments (Bradley–Terry; PEBBLE, RL-VLM-F).
    Preference,
}

/// Who labels pairs of segments for a preference reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabellerKind {
    /// CLIP: the segment whose last frame is closer to `goal` (RL-VLM-F with CLIP as the judge).
    Clip,
    /// The task's true return (an ablation with perfect labels).
    Oracle,
    /// A person: each round's pairs are written to `label_dir` as
    /// side-by-side clips, training waits, and `proprio reward-model label`
    /// shows them and writes the answers.
    Human,
}

/// How RoboCLIP pools an episode's frame embeddings into one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pooling {
    /// The mean of every frame's embedding (RoboCLIP with an image model).
    #[default]
    Mean,
    /// The last frame's embedding alone (where the episode ended up).
    Last,
}

/// A reward model and how its reward replaces or joins the task's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardConfig {
    /// `vlm-rm` or `roboclip`.
    pub kind: RewardKind,
    /// A CLIP checkpoint directory in the Hugging Face layout (default: `PROPRIO_CLIP_DIR`).
    #[serde(default)]
    pub model: Option<PathBuf>,
    /// The goal, as a caption of what success looks like (VLM-RM).
    #[serde(default)]
    pub goal: Option<String>,
    /// The baseline caption VLM-RM projects away (needed when `alpha > 0`).
    #[serde(default)]
    pub baseline: Option<String>,
    /// VLM-RM's projection strength in [0, 1]; 0 is plain cosine similarity.
    #[serde(default)]
    pub alpha: f32,
    /// RoboCLIP's demonstration: an animated GIF (e.g. from `proprio record`)
    /// or a directory of PNG frames, in order of their names.
    #[serde(default)]
    pub demo: Option<PathBuf>,
    /// RoboCLIP's demonstration given as a text instead of a video.
    #[serde(default)]
    pub demo_text: Option<String>,
    /// How RoboCLIP pools an episode's frames.
    #[serde(default)]
    pub pooling: Pooling,
    /// The camera the model looks through, or several joined by commas
    /// (`"front,side"`): each env's embedding is then the unit mean of its
    /// views', so a frame must match the goal from every side.
    #[serde(default = "default_camera")]
    pub camera: String,
    /// Added to the model's reward before weighting. VLM-RM's reward is
    /// mostly positive, which makes an episode that ends on success worth
    /// less than one that goes on; −1 turns it into a distance penalty
    /// (`−½‖M(s − g)‖²`), like the tasks' own "−1 per step" rewards.
    #[serde(default)]
    pub offset: f32,
    /// Who labels pairs (`preference`).
    #[serde(default)]
    pub labeller: Option<LabellerKind>,
    /// Where a human labeller's questions and answers are exchanged
    /// (`labeller = "human"`): a folder both the run and the person's viewer reach.
    #[serde(default)]
    pub label_dir: Option<PathBuf>,
    /// Frames per segment (`preference`; PEBBLE: 50, shorter for short episodes).
    #[serde(default = "segment")]
    pub segment: usize,
    /// Pairs labelled per round (`preference`).
    #[serde(default = "queries")]
    pub queries: usize,
    /// Env steps (of all envs together) between labelling rounds (`preference`).
    #[serde(default = "query_every")]
    pub query_every: u64,
    /// Weight of the model's reward.
    #[serde(default = "one")]
    pub weight: f32,
    /// Weight of the task's own reward (0: the model's reward replaces it).
    #[serde(default)]
    pub task_weight: f32,
}

fn default_camera() -> String {
    "default".into()
}

fn one() -> f32 {
    1.0
}

fn segment() -> usize {
    25
}

fn queries() -> usize {
    100
}

fn query_every() -> u64 {
    5_000
}

impl RewardConfig {
    /// A config of `kind` with every other key at its default (set the goal,
    /// demo or labeller the kind needs before use).
    pub fn new(kind: RewardKind) -> Self {
        Self {
            kind,
            model: None,
            goal: None,
            baseline: None,
            alpha: 0.0,
            demo: None,
            demo_text: None,
            pooling: Pooling::default(),
            camera: default_camera(),
            offset: 0.0,
            labeller: None,
            label_dir: None,
            segment: segment(),
            queries: queries(),
            query_every: query_every(),
            weight: one(),
            task_weight: 0.0,
        }
    }

    /// Reads and validates a TOML file; relative paths in it are taken
    /// relative to the file's folder.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| RewardError::io(path, e))?;
        let mut config: Self = toml::from_str(&text).map_err(|e| {
            RewardError::config(path, e.message().trim_end_matches('\n').to_string())
        })?;
        // Absolute, so a run that saved this config finds its files from anywhere.
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let base = std::fs::canonicalize(parent.unwrap_or(Path::new(".")))
            .map_err(|e| RewardError::io(path, e))?;
        let paths = [&mut config.model, &mut config.demo, &mut config.label_dir];
        for p in paths.into_iter().flatten() {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        config
            .validate()
            .map_err(|m| RewardError::config(path, m))?;
        Ok(config)
    }

    /// Checks that the keys fit together; the message names the key at fault.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let finite = |key: &str, v: f32| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(format!("{key} must be a finite number, not {v}"))
            }
        };
        finite("weight", self.weight)?;
        finite("task_weight", self.task_weight)?;
        finite("offset", self.offset)?;
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(format!("alpha must lie in [0, 1], not {}", self.alpha));
        }
        if self.weight == 0.0 && self.task_weight == 0.0 {
            return Err("weight and task_weight are both 0: nothing would be rewarded".into());
        }
        if self.camera.split(',').any(|c| c.trim().is_empty()) {
            return Err("camera must name cameras (e.g. \"default\" or \"front,side\")".into());
        }
        let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
        if self.label_dir.is_some() && self.labeller != Some(LabellerKind::Human) {
            return Err("label_dir is for labeller = \"human\"".into());
        }
        match self.kind {
            RewardKind::VlmRm => {
                if blank(&self.goal) {
                    return Err("kind = \"vlm-rm\" needs goal, a caption of success".into());
                }
                if self.alpha > 0.0 && blank(&self.baseline) {
                    return Err(format!(
                        "alpha = {} projects onto goal − baseline: give baseline too (or alpha = 0)",
                        self.alpha
                    ));
                }
                if self.demo.is_some() || self.demo_text.is_some() {
                    return Err("demo and demo_text are for kind = \"roboclip\"".into());
                }
                if self.labeller.is_some() {
                    return Err("labeller is for kind = \"preference\"".into());
                }
            }
            RewardKind::Preference => {
                match self.labeller {
                    None => {
                        return Err(
                            "kind = \"preference\" needs labeller = \"clip\", \"oracle\" or \"human\""
                                .into(),
                        );
                    }
                    Some(LabellerKind::Clip) if blank(&self.goal) => {
                        return Err(
                            "labeller = \"clip\" needs goal, the caption it judges frames against"
                                .into(),
                        );
                    }
                    Some(LabellerKind::Human) if self.label_dir.is_none() => {
                        return Err(
                            "labeller = \"human\" needs label_dir, the folder where pairs are shown and answered"
                                .into(),
                        );
                    }
                    _ => {}
                }
                if self.segment == 0 || self.queries == 0 || self.query_every == 0 {
                    return Err("segment, queries and query_every must be positive".into());
                }
                if self.demo.is_some() || self.demo_text.is_some() {
                    return Err("demo and demo_text are for kind = \"roboclip\"".into());
                }
            }
            RewardKind::Roboclip => match (&self.demo, &self.demo_text) {
                (None, None) => {
                    return Err("kind = \"roboclip\" needs demo (a GIF or a folder of PNG frames) or demo_text".into());
                }
                (Some(_), Some(_)) => return Err("give demo or demo_text, not both".into()),
                (_, Some(t)) if t.trim().is_empty() => {
                    return Err("demo_text is empty".into());
                }
                _ => {}
            },
        }
        Ok(())
    }

    /// The model directory: `model`, else `PROPRIO_CLIP_DIR`.
    pub fn model_dir(&self) -> Result<PathBuf> {
        self.model
            .clone()
            .or_else(crate::clip::ClipModel::dir_from_env)
            .ok_or_else(|| {
                RewardError::Input(format!(
                    "no reward model: set model = \"DIR\" in the reward config or {}",
                    crate::clip::MODEL_DIR_VAR
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<RewardConfig, String> {
        let config: RewardConfig = toml::from_str(text).map_err(|e| e.message().to_string())?;
        config.validate().map(|()| config)
    }

    #[test]
    fn a_full_vlm_rm_config_reads_with_its_defaults() {
        let c = parse(
            "kind = \"vlm-rm\"\nmodel = \"m\"\ngoal = \"a pole upright\"\nbaseline = \"a pole\"\nalpha = 0.5\n",
        )
        .unwrap();
        assert_eq!(c.kind, RewardKind::VlmRm);
        assert_eq!((c.weight, c.task_weight, c.alpha), (1.0, 0.0, 0.5));
        assert_eq!(c.camera, "default");
    }

    #[test]
    fn every_bad_key_is_named() {
        let cases = [
            ("kind = \"vlm\"\ngoal = \"g\"", "unknown variant"),
            ("kind = \"vlm-rm\"", "needs goal"),
            (
                "kind = \"vlm-rm\"\ngoal = \"g\"\nalpha = 2.0",
                "alpha must lie",
            ),
            (
                "kind = \"vlm-rm\"\ngoal = \"g\"\nalpha = 0.5",
                "give baseline",
            ),
            (
                "kind = \"vlm-rm\"\ngoal = \"g\"\ngaol = \"x\"",
                "unknown field `gaol`",
            ),
            ("kind = \"vlm-rm\"\ngoal = \"g\"\nweight = 0.0", "both 0"),
            ("kind = \"vlm-rm\"\ngoal = \"g\"\nweight = nan", "finite"),
            (
                "kind = \"vlm-rm\"\ngoal = \"g\"\ndemo = \"d.gif\"",
                "roboclip",
            ),
            ("kind = \"roboclip\"", "needs demo"),
            (
                "kind = \"roboclip\"\ndemo = \"a\"\ndemo_text = \"b\"",
                "not both",
            ),
            ("kind = \"roboclip\"\ndemo_text = \"  \"", "empty"),
            ("goal = \"g\"", "missing field `kind`"),
            ("kind = \"preference\"", "needs labeller"),
            ("kind = \"preference\"\nlabeller = \"clip\"", "needs goal"),
            (
                "kind = \"preference\"\nlabeller = \"oracle\"\nsegment = 0",
                "positive",
            ),
            (
                "kind = \"preference\"\nlabeller = \"human\"",
                "needs label_dir",
            ),
            (
                "kind = \"preference\"\nlabeller = \"oracle\"\nlabel_dir = \"q\"",
                "label_dir is for",
            ),
            (
                "kind = \"preference\"\nlabeller = \"person\"",
                "unknown variant",
            ),
            (
                "kind = \"vlm-rm\"\ngoal = \"g\"\nlabeller = \"oracle\"",
                "for kind = \"preference\"",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).expect_err(text);
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn relative_paths_are_read_from_the_files_folder() {
        let dir = std::env::temp_dir().join(format!("proprio-reward-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("reward.toml");
        std::fs::write(
            &file,
            "kind = \"roboclip\"\nmodel = \"clip\"\ndemo = \"demo.gif\"\n",
        )
        .unwrap();
        let c = RewardConfig::read(&file).unwrap();
        assert_eq!(c.model.as_deref(), Some(dir.join("clip").as_path()));
        assert_eq!(c.demo.as_deref(), Some(dir.join("demo.gif").as_path()));
        std::fs::write(&file, "kind = \"roboclip\"\n").unwrap();
        let err = RewardConfig::read(&file).unwrap_err().to_string();
        assert!(err.starts_with(&file.display().to_string()) && err.contains("needs demo"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
