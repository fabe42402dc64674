//! The reward config as it is written (TOML, and JSON in `run.json`): one
//! flat table whose `kind` says which other keys apply. Reading checks that
//! they fit together, naming the key at fault, and makes the typed
//! [`RewardConfig`]; writing flattens it back, so old `run.json` files read.

use super::{Demo, Goal, Labeller, Pooling, RewardConfig, RewardKind, Shaping};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which vision-language reward (the `kind` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Kind {
    /// Every step: the VLM-RM similarity of the frame to the goal text.
    VlmRm,
    /// At an episode's end only: the similarity of the episode's pooled frame
    /// embeddings to a demonstration's (RoboCLIP).
    Roboclip,
    /// A reward network on frame embeddings, fitted during training to
    /// labelled pairs of segments (Bradley–Terry; PEBBLE, RL-VLM-F).
    Preference,
    /// Every step: a progress model's reading of the last frames.
    Progress,
}

/// Who labels pairs of segments for a preference reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum LabellerKind {
    /// CLIP: the segment whose last frame is closer to `goal` (RL-VLM-F with CLIP as the judge).
    Clip,
    /// The task's true return (an ablation with perfect labels).
    Oracle,
    /// A person: each round's pairs are written to `label_dir` as
    /// side-by-side clips, training waits, and `proprio reward-model label`
    /// shows them and writes the answers.
    Human,
}

/// The flat form of a [`RewardConfig`], every kind's keys side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RewardFile {
    /// `vlm-rm`, `roboclip`, `preference` or `progress`.
    kind: Kind,
    /// A CLIP checkpoint directory in the Hugging Face layout (default: `PROPRIO_CLIP_DIR`).
    #[serde(default)]
    model: Option<PathBuf>,
    /// The goal, as a caption of what success looks like (VLM-RM).
    #[serde(default)]
    goal: Option<String>,
    /// A caption of success per instruction, in `goal`'s or `demo_text`'s
    /// place, for an env whose episodes each draw one: each env is scored
    /// against its own episode's (VLM-RM, RoboCLIP).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    goals: BTreeMap<String, String>,
    /// The baseline caption VLM-RM projects away (needed when `alpha > 0`).
    #[serde(default)]
    baseline: Option<String>,
    /// VLM-RM's projection strength in [0, 1]; 0 is plain cosine similarity.
    #[serde(default)]
    alpha: f32,
    /// RoboCLIP's demonstration: an animated GIF (e.g. from `proprio record`)
    /// or a directory of PNG frames, in order of their names.
    #[serde(default)]
    demo: Option<PathBuf>,
    /// RoboCLIP's demonstration given as a text instead of a video.
    #[serde(default)]
    demo_text: Option<String>,
    /// How RoboCLIP pools an episode's frames.
    #[serde(default)]
    pooling: Pooling,
    /// The camera the model looks through, or several joined by commas
    /// (`"front,side"`): each env's embedding is then the unit mean of its
    /// views', so a frame must match the goal from every side.
    #[serde(default = "default_camera")]
    camera: String,
    /// Added to the model's reward before weighting. VLM-RM's reward is
    /// mostly positive, which makes an episode that ends on success worth
    /// less than one that goes on; −1 turns it into a distance penalty
    /// (`−½‖M(s − g)‖²`), like the tasks' own "−1 per step" rewards.
    #[serde(default)]
    offset: f32,
    /// Who labels pairs (`preference`).
    #[serde(default)]
    labeller: Option<LabellerKind>,
    /// Where a human labeller's questions and answers are exchanged
    /// (`labeller = "human"`): a folder both the run and the person's viewer reach.
    #[serde(default)]
    label_dir: Option<PathBuf>,
    /// Frames per segment (`preference`; PEBBLE: 50, shorter for short episodes).
    #[serde(default = "segment")]
    segment: usize,
    /// Pairs labelled per round (`preference`).
    #[serde(default = "queries")]
    queries: usize,
    /// Env steps (of all envs together) between labelling rounds (`preference`).
    #[serde(default = "query_every")]
    query_every: u64,
    /// The task's instruction (`progress`; default: the model's first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instruction: Option<String>,
    /// What each step pays of the progress read (`progress`).
    #[serde(default)]
    shaping: Shaping,
    /// Further progress models, each on its own CLIP, whose lowest reading
    /// the step pays with `model`'s (`progress`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ensemble: Vec<PathBuf>,
    /// Weight of the model's reward.
    #[serde(default = "one")]
    weight: f32,
    /// Weight of the task's own reward (0: the model's reward replaces it).
    #[serde(default)]
    task_weight: f32,
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

/// `goals` where given, else the one `goal`.
fn goal(goal: Option<String>, goals: BTreeMap<String, String>) -> Goal {
    match goals.is_empty() {
        true => Goal::Text(goal.unwrap_or_default()),
        false => Goal::PerInstruction(goals),
    }
}

impl RewardFile {
    /// Exactly one of `goal` and `goals`; `missing` says what the first is for.
    fn one_goal(&self, missing: &str) -> Result<(), String> {
        let blank = self.goal.as_deref().is_none_or(|g| g.trim().is_empty());
        match (blank, self.goals.is_empty()) {
            (true, true) => Err(format!("{missing} (or goals, one per instruction)")),
            (false, false) => Err("give goal or goals, not both".into()),
            _ => Ok(()),
        }
    }

    /// Writes `goal` back as `goal` or `goals`.
    fn set_goal(&mut self, goal: Goal) {
        match goal {
            Goal::Text(text) => self.goal = Some(text),
            Goal::PerInstruction(goals) => self.goals = goals,
        }
    }

    /// Checks that the keys fit together; the message names the key at fault.
    fn validate(&self) -> Result<(), String> {
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
        if self.instruction.is_some() && self.kind != Kind::Progress {
            return Err("instruction is for kind = \"progress\"".into());
        }
        if !self.ensemble.is_empty() && self.kind != Kind::Progress {
            return Err("ensemble is for kind = \"progress\"".into());
        }
        let clip_labeller = self.labeller == Some(LabellerKind::Clip);
        if !self.goals.is_empty()
            && !matches!(self.kind, Kind::VlmRm | Kind::Roboclip)
            && !clip_labeller
        {
            return Err("goals (a caption per instruction) is for kind = \"vlm-rm\", \"roboclip\" or a preference's labeller = \"clip\"".into());
        }
        super::check_goals(&self.goals)?;
        match self.kind {
            Kind::Progress => {
                if self.model.is_none() {
                    return Err(
                        "kind = \"progress\" needs model, a directory `proprio reward-model fit-progress` wrote"
                            .into(),
                    );
                }
                if self
                    .instruction
                    .as_deref()
                    .is_some_and(|t| t.trim().is_empty())
                {
                    return Err("instruction is empty".into());
                }
                if self.goal.is_some()
                    || self.demo.is_some()
                    || self.demo_text.is_some()
                    || self.labeller.is_some()
                {
                    return Err("kind = \"progress\" takes instruction and shaping, not goal, demo or labeller".into());
                }
            }
            Kind::VlmRm => {
                self.one_goal("kind = \"vlm-rm\" needs goal, a caption of success")?;
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
            Kind::Preference => {
                match self.labeller {
                    None => {
                        return Err(
                            "kind = \"preference\" needs labeller = \"clip\", \"oracle\" or \"human\""
                                .into(),
                        );
                    }
                    Some(LabellerKind::Clip) => self.one_goal(
                        "labeller = \"clip\" needs goal, the caption it judges frames against",
                    )?,
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
            Kind::Roboclip => {
                let given = [
                    self.demo.is_some(),
                    self.demo_text.is_some(),
                    !self.goals.is_empty(),
                ];
                match given.iter().filter(|&&g| g).count() {
                    0 => {
                        return Err("kind = \"roboclip\" needs demo (a GIF or a folder of PNG frames), demo_text or goals".into());
                    }
                    1 => {}
                    _ => return Err("give one of demo, demo_text and goals, not several".into()),
                }
                if self
                    .demo_text
                    .as_deref()
                    .is_some_and(|t| t.trim().is_empty())
                {
                    return Err("demo_text is empty".into());
                }
            }
        }
        Ok(())
    }
}

impl TryFrom<RewardFile> for RewardConfig {
    type Error = String;

    /// Checks the keys, then keeps those of the file's kind.
    fn try_from(file: RewardFile) -> Result<Self, String> {
        file.validate()?;
        let kind = match file.kind {
            Kind::VlmRm => RewardKind::VlmRm {
                goal: goal(file.goal, file.goals),
                baseline: file.baseline,
                alpha: file.alpha,
            },
            Kind::Roboclip => RewardKind::Roboclip {
                demo: match (file.demo, file.demo_text) {
                    (Some(video), _) => Demo::Video(video),
                    (None, text) => Demo::Text(goal(text, file.goals)),
                },
                pooling: file.pooling,
            },
            Kind::Preference => RewardKind::Preference {
                labeller: match (file.labeller, file.label_dir) {
                    (Some(LabellerKind::Clip), _) => Labeller::Clip {
                        goal: goal(file.goal, file.goals),
                    },
                    (Some(LabellerKind::Human), Some(label_dir)) => Labeller::Human {
                        label_dir,
                        goal: file.goal,
                    },
                    _ => Labeller::Oracle,
                },
                segment: file.segment,
                queries: file.queries,
                query_every: file.query_every,
            },
            Kind::Progress => RewardKind::Progress {
                instruction: file.instruction,
                shaping: file.shaping,
                ensemble: file.ensemble,
            },
        };
        Ok(RewardConfig {
            kind,
            model: file.model,
            camera: file.camera,
            offset: file.offset,
            weight: file.weight,
            task_weight: file.task_weight,
        })
    }
}

impl From<RewardConfig> for RewardFile {
    /// The flat form, with the other kinds' keys at their defaults.
    fn from(config: RewardConfig) -> Self {
        let mut file = RewardFile {
            kind: Kind::VlmRm,
            model: config.model,
            goal: None,
            goals: BTreeMap::new(),
            baseline: None,
            alpha: 0.0,
            demo: None,
            demo_text: None,
            pooling: Pooling::default(),
            camera: config.camera,
            offset: config.offset,
            labeller: None,
            label_dir: None,
            segment: segment(),
            queries: queries(),
            query_every: query_every(),
            instruction: None,
            shaping: Shaping::default(),
            ensemble: Vec::new(),
            weight: config.weight,
            task_weight: config.task_weight,
        };
        match config.kind {
            RewardKind::VlmRm {
                goal,
                baseline,
                alpha,
            } => {
                (file.baseline, file.alpha) = (baseline, alpha);
                file.set_goal(goal);
            }
            RewardKind::Roboclip { demo, pooling } => {
                file.kind = Kind::Roboclip;
                file.pooling = pooling;
                match demo {
                    Demo::Video(path) => file.demo = Some(path),
                    Demo::Text(Goal::Text(text)) => file.demo_text = Some(text),
                    Demo::Text(goals) => file.set_goal(goals),
                }
            }
            RewardKind::Preference {
                labeller,
                segment,
                queries,
                query_every,
            } => {
                file.kind = Kind::Preference;
                (file.segment, file.queries, file.query_every) = (segment, queries, query_every);
                (file.labeller, file.goal, file.label_dir) = match labeller {
                    Labeller::Clip { goal } => {
                        file.set_goal(goal);
                        (Some(LabellerKind::Clip), file.goal.take(), None)
                    }
                    Labeller::Oracle => (Some(LabellerKind::Oracle), None, None),
                    Labeller::Human { label_dir, goal } => {
                        (Some(LabellerKind::Human), goal, Some(label_dir))
                    }
                };
            }
            RewardKind::Progress {
                instruction,
                shaping,
                ensemble,
            } => {
                (file.kind, file.instruction, file.shaping, file.ensemble) =
                    (Kind::Progress, instruction, shaping, ensemble);
            }
        }
        file
    }
}

#[cfg(test)]
mod tests;
