//! The reward a run optimises, as a user writes it (`proprio train --reward
//! reward.toml`): which model, which goal, and how it mixes with the task's
//! reward. In memory each kind carries exactly its own keys ([`RewardKind`]),
//! so a config that mixes kinds cannot be written; on disk it stays one flat
//! table (`file.rs`), whose reading names the key at fault.

mod file;

use crate::{Result, RewardError};
use file::RewardFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which vision-language reward, with the keys that kind takes.
#[derive(Debug, Clone, PartialEq)]
pub enum RewardKind {
    /// Every step: the VLM-RM similarity of the frame to the goal text.
    VlmRm {
        /// What success looks like: one caption, or one per instruction.
        goal: Goal,
        /// The baseline caption VLM-RM projects away (the goal itself when absent).
        baseline: Option<String>,
        /// VLM-RM's projection strength in [0, 1]; 0 is plain cosine similarity.
        alpha: f32,
    },
    /// At an episode's end only: the similarity of the episode's pooled frame
    /// embeddings to a demonstration's (RoboCLIP).
    Roboclip {
        /// The demonstration.
        demo: Demo,
        /// How an episode's frames are pooled.
        pooling: Pooling,
    },
    /// A reward network on frame embeddings, fitted during training to
    /// labelled pairs of segments (Bradley–Terry; PEBBLE, RL-VLM-F).
    Preference {
        /// Who labels the pairs.
        labeller: Labeller,
        /// Frames per segment (PEBBLE: 50, shorter for short episodes).
        segment: usize,
        /// Pairs labelled per round.
        queries: usize,
        /// Env steps (of all envs together) between labelling rounds.
        query_every: u64,
    },
    /// Every step: a progress model's reading of the env's last frames
    /// under the instruction (`model` is a `fit-progress` directory).
    Progress {
        /// The task's instruction (default: each env's own where its
        /// observation carries one, else the first the model was fitted under).
        instruction: Option<String>,
        /// What each step pays of the progress read.
        shaping: Shaping,
        /// Further progress models, each read through its own CLIP: the
        /// step pays from the lowest reading of all (a pessimistic ensemble).
        ensemble: Vec<PathBuf>,
    },
}

/// What a progress reward pays each step, for progress `Φ` read after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shaping {
    /// `Φ(s') − Φ(s)` (a potential difference, `Φ` = 0 before the first
    /// step): an episode's model return is the progress it ends at, so the
    /// policies it prefers are those a reward of the final progress prefers.
    #[default]
    Increase,
    /// `Φ(s')` itself every step (ReWiND's reward): dense, but it also pays
    /// for lingering at partial progress.
    Progress,
}

impl Shaping {
    /// What a step pays for the progress `read` after it, `last` holding
    /// the env's previous reading (updated to `read`).
    pub fn pay(self, read: f32, last: &mut f32) -> f32 {
        let paid = match self {
            Shaping::Increase => read - *last,
            Shaping::Progress => read,
        };
        *last = read;
        paid
    }
}

/// What success looks like, in words.
#[derive(Debug, Clone, PartialEq)]
pub enum Goal {
    /// One caption for every env.
    Text(String),
    /// For an env whose episodes each draw an instruction (`manipulation/instruct-v0`):
    /// each instruction, as the env words it, with the caption of its success.
    /// Each env is scored against its own episode's caption.
    PerInstruction(BTreeMap<String, String>),
}

impl Goal {
    /// The `[goals]` table of a TOML file (a reward file's, or a file of
    /// that table alone; its other keys are not read): each instruction with
    /// its success caption, none empty.
    pub fn read_table(path: &Path) -> Result<BTreeMap<String, String>> {
        #[derive(Deserialize)]
        struct Table {
            goals: Option<BTreeMap<String, String>>,
        }
        let text = std::fs::read_to_string(path).map_err(|e| RewardError::io(path, e))?;
        let table: Table = toml::from_str(&text).map_err(|e| {
            RewardError::config(path, e.message().trim_end_matches('\n').to_string())
        })?;
        let goals = table.goals.filter(|g| !g.is_empty()).ok_or_else(|| {
            RewardError::config(path, "no [goals] table of instruction = \"caption\" lines")
        })?;
        check_goals(&goals).map_err(|m| RewardError::config(path, m))?;
        Ok(goals)
    }
}

/// A one-line reason a goals table holds an empty instruction or caption, if it does.
fn check_goals(goals: &BTreeMap<String, String>) -> std::result::Result<(), String> {
    match goals
        .iter()
        .find(|(i, g)| i.trim().is_empty() || g.trim().is_empty())
    {
        Some((instruction, _)) => Err(format!(
            "goals: the instruction \"{instruction}\" or its caption is empty"
        )),
        None => Ok(()),
    }
}

/// RoboCLIP's demonstration.
#[derive(Debug, Clone, PartialEq)]
pub enum Demo {
    /// An animated GIF (e.g. from `proprio record`) or a directory of PNG
    /// frames, in order of their names.
    Video(PathBuf),
    /// A text instead of a video (one, or one per instruction).
    Text(Goal),
}

/// Who labels pairs of segments for a preference reward.
#[derive(Debug, Clone, PartialEq)]
pub enum Labeller {
    /// CLIP: the segment whose last frame is closer to `goal` (RL-VLM-F with CLIP as the judge).
    Clip {
        /// The caption frames are judged against; per instruction, each
        /// segment against its own, and `r_ψ` reads the caption beside each frame.
        goal: Goal,
    },
    /// The task's true return (an ablation with perfect labels).
    Oracle,
    /// A person: each round's pairs are written to `label_dir` as
    /// side-by-side clips, training waits, and `proprio reward-model label`
    /// shows them and writes the answers.
    Human {
        /// Where the run and the person's viewer exchange questions and answers.
        label_dir: PathBuf,
        /// The goal shown to the person, if given.
        goal: Option<String>,
    },
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
#[serde(try_from = "RewardFile", into = "RewardFile")]
pub struct RewardConfig {
    /// The model's reward and the keys of its kind.
    pub kind: RewardKind,
    /// A CLIP checkpoint directory in the Hugging Face layout (default:
    /// `PROPRIO_CLIP_DIR`); for `progress`, the directory `fit-progress` wrote.
    pub model: Option<PathBuf>,
    /// The camera the model looks through, or several joined by commas
    /// (`"front,side"`): each env's embedding is then the unit mean of its
    /// views', so a frame must match the goal from every side.
    pub camera: String,
    /// Added to the model's reward before weighting. VLM-RM's reward is
    /// mostly positive, which makes an episode that ends on success worth
    /// less than one that goes on; −1 turns it into a distance penalty
    /// (`−½‖M(s − g)‖²`), like the tasks' own "−1 per step" rewards.
    pub offset: f32,
    /// Weight of the model's reward.
    pub weight: f32,
    /// Weight of the task's own reward (0: the model's reward replaces it).
    pub task_weight: f32,
}

impl RewardConfig {
    /// A config of `kind` with every other key at its default.
    pub fn new(kind: RewardKind) -> Self {
        Self {
            kind,
            model: None,
            camera: "default".into(),
            offset: 0.0,
            weight: 1.0,
            task_weight: 0.0,
        }
    }

    /// Reads and checks a TOML file; relative paths in it are taken
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
        let others: Vec<&mut PathBuf> = match &mut config.kind {
            RewardKind::Roboclip {
                demo: Demo::Video(path),
                ..
            } => vec![path],
            RewardKind::Preference {
                labeller: Labeller::Human { label_dir, .. },
                ..
            } => vec![label_dir],
            RewardKind::Progress { ensemble, .. } => ensemble.iter_mut().collect(),
            _ => Vec::new(),
        };
        for p in config.model.as_mut().into_iter().chain(others) {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        Ok(config)
    }

    /// Checks a config built in code as reading a file does.
    pub fn validate(&self) -> std::result::Result<(), String> {
        Self::try_from(RewardFile::from(self.clone())).map(|_| ())
    }

    /// The CLIP the reward embeds frames with: `model`, else
    /// `PROPRIO_CLIP_DIR`; for `progress`, the one inside its model.
    pub fn clip_dir(&self) -> Result<PathBuf> {
        let dir = self.model_dir()?;
        Ok(match self.kind {
            RewardKind::Progress { .. } => crate::progress::ProgressModel::clip_dir(&dir),
            _ => dir,
        })
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
