//! Builds the reward wrapper a [`RewardConfig`] describes.

use crate::clip::ClipModel;
use crate::config::{Demo, Goal, Labeller, RewardConfig, RewardKind, Shaping};
use crate::preference::human::HumanDesk;
use crate::preference::{self, PreferenceConfig, PreferenceHead, Schedule};
use crate::progress::{Member, ProgressEnsemble, ProgressHead, ProgressModel};
use crate::roboclip::{RoboClip, read_video};
use crate::vlm_rm::{InstructedVlmRm, VlmRm};
use crate::wrapper::{Mix, ModelReward, RewardHead};
use crate::{Result, RewardError};
use burn::prelude::Device;
use proprio::VecEnv;
use proprio::render::FrameSource;
use std::path::PathBuf;

/// Wraps `inner` (next-step or disabled autoreset) so that it pays
/// `config`'s reward, the model running on `device` and its frames drawn from
/// `frames` (the source `inner`'s pixel observations use, if any).
pub fn model_reward<V: VecEnv>(
    inner: V,
    config: &RewardConfig,
    frames: &FrameSource,
    device: &Device,
) -> Result<ModelReward<V>> {
    config.validate().map_err(crate::RewardError::Input)?;
    let clip = ClipModel::load(&config.clip_dir()?, device)?;
    let head = reward_head(&clip, config, inner.num_envs())?;
    let mix = Mix {
        offset: config.offset,
        weight: config.weight,
        task_weight: config.task_weight,
    };
    ModelReward::new(inner, clip, head, mix, &config.camera, frames)
}

/// The head scoring `num_envs` envs' frames as `config` says.
pub fn reward_head(
    clip: &ClipModel,
    config: &RewardConfig,
    num_envs: usize,
) -> Result<Box<dyn RewardHead>> {
    Ok(match &config.kind {
        RewardKind::VlmRm {
            goal: Goal::Text(goal),
            baseline,
            alpha,
        } => {
            let baseline = baseline.as_deref().unwrap_or(goal);
            let texts = clip.embed_texts(&[goal, baseline])?;
            Box::new(VlmRm::new(texts.row(0), texts.row(1), *alpha)?)
        }
        RewardKind::VlmRm {
            goal: Goal::PerInstruction(goals),
            baseline,
            alpha,
        } => {
            let baseline = match baseline {
                Some(text) => Some(clip.embed_texts(&[text])?.values),
                None => None,
            };
            Box::new(InstructedVlmRm::new(goals.clone(), baseline, *alpha)?)
        }
        RewardKind::Roboclip { demo, pooling } => {
            let demo = match demo {
                Demo::Video(path) => RoboClip::embed_video(clip, &read_video(path)?, *pooling)?,
                Demo::Text(Goal::Text(text)) => clip.embed_texts(&[text])?.values,
                Demo::Text(Goal::PerInstruction(goals)) => {
                    let dim = clip.config().projection_dim;
                    let head = RoboClip::per_instruction(goals.clone(), dim, *pooling, num_envs);
                    return Ok(Box::new(head));
                }
            };
            Box::new(RoboClip::new(demo, *pooling, num_envs)?)
        }
        RewardKind::Progress {
            instruction,
            shaping,
            ensemble,
        } => {
            let dir = config.model_dir()?;
            let model = ProgressModel::load(&dir)?;
            model.check_clip(clip, &config.clip_dir()?)?;
            // `load` refuses a model without instructions. Without one named,
            // an env that carries its own is read under it, others under the model's first.
            let own = instruction.is_none();
            let instruction = instruction
                .clone()
                .unwrap_or_else(|| model.instructions[0].clone());
            if !ensemble.is_empty() {
                return progress_ensemble(clip, model, ensemble, &instruction, *shaping, num_envs);
            }
            let text = read_instruction(clip, &model, &instruction)?;
            Box::new(ProgressHead::new(model, text, own, *shaping, num_envs)?)
        }
        RewardKind::Preference {
            labeller,
            segment,
            queries,
            query_every,
        } => {
            let labeller = match labeller {
                Labeller::Clip {
                    goal: Goal::Text(goal),
                } => preference::Labeller::Clip(clip.embed_texts(&[goal])?.values),
                Labeller::Clip {
                    goal: Goal::PerInstruction(each),
                } => preference::Labeller::ClipPerInstruction(each.clone()),
                Labeller::Human { label_dir, goal } => {
                    preference::Labeller::Human(HumanDesk::new(label_dir, goal.clone())?)
                }
                Labeller::Oracle => preference::Labeller::Oracle,
            };
            let preference = PreferenceConfig {
                segment: *segment,
                ..PreferenceConfig::default()
            };
            let schedule = Schedule {
                queries: *queries,
                query_every: *query_every,
                ..Schedule::default()
            };
            let dim = clip.config().projection_dim;
            Box::new(PreferenceHead::new(
                dim, num_envs, preference, schedule, labeller,
            )?)
        }
    })
}

/// `first` (read through the wrapper's `clip`) and the models in `others`,
/// each through its own CLIP, paying from their lowest reading of each env
/// under `instruction`.
fn progress_ensemble(
    clip: &ClipModel,
    first: ProgressModel,
    others: &[PathBuf],
    instruction: &str,
    shaping: Shaping,
    num_envs: usize,
) -> Result<Box<dyn RewardHead>> {
    let side = clip.config().vision_config.image_size;
    let head = |model, text| ProgressHead::new(model, text, false, Shaping::Progress, num_envs);
    let text = read_instruction(clip, &first, instruction)?;
    let mut members = vec![Member {
        clip: None,
        head: head(first, text)?,
    }];
    for dir in others {
        let model = ProgressModel::load(dir)?;
        let own = model.load_clip(dir, clip.device())?;
        if own.config().vision_config.image_size != side {
            return Err(RewardError::config(
                &ProgressModel::clip_dir(dir),
                format!(
                    "this CLIP reads {0}×{0} frames; the ensemble's first reads {side}×{side}",
                    own.config().vision_config.image_size
                ),
            ));
        }
        let text = read_instruction(&own, &model, instruction)?;
        members.push(Member {
            clip: Some(own),
            head: head(model, text)?,
        });
    }
    Ok(Box::new(ProgressEnsemble::new(members, shaping, num_envs)?))
}

/// `instruction` embedded by `clip` as `model` reads it (its goal caption, where it reads those).
fn read_instruction(
    clip: &ClipModel,
    model: &ProgressModel,
    instruction: &str,
) -> Result<Vec<f32>> {
    let text = model.texts(&[instruction.to_string()])?;
    Ok(clip.read_texts(&[&text[0]], model.config.reading())?.values)
}
