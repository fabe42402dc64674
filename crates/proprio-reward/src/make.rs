//! Builds the reward wrapper a [`RewardConfig`] describes.

use crate::Result;
use crate::clip::ClipModel;
use crate::config::{LabellerKind, RewardConfig, RewardKind};
use crate::preference::human::HumanDesk;
use crate::preference::{Labeller, PreferenceConfig, PreferenceHead, Schedule};
use crate::roboclip::{RoboClip, read_video};
use crate::vlm_rm::VlmRm;
use crate::wrapper::{Mix, ModelReward, RewardHead};
use burn::prelude::Device;
use proprio::VecEnv;
use proprio::render::FrameSource;

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
    let clip = ClipModel::load(&config.model_dir()?, device)?;
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
    let text = |t: &Option<String>| t.as_deref().unwrap_or_default().to_owned();
    Ok(match config.kind {
        RewardKind::VlmRm => {
            let goal = text(&config.goal);
            let baseline = config.baseline.clone().unwrap_or_else(|| goal.clone());
            let texts = clip.embed_texts(&[&goal, &baseline])?;
            Box::new(VlmRm::new(texts.row(0), texts.row(1), config.alpha)?)
        }
        RewardKind::Roboclip => {
            let demo = match &config.demo {
                Some(path) => RoboClip::embed_video(clip, &read_video(path)?, config.pooling)?,
                None => clip.embed_texts(&[&text(&config.demo_text)])?.values,
            };
            Box::new(RoboClip::new(demo, config.pooling, num_envs)?)
        }
        RewardKind::Preference => {
            let labeller = match (config.labeller, &config.label_dir) {
                (Some(LabellerKind::Clip), _) => {
                    Labeller::Clip(clip.embed_texts(&[&text(&config.goal)])?.values)
                }
                (Some(LabellerKind::Human), Some(dir)) => {
                    Labeller::Human(HumanDesk::new(dir, config.goal.clone())?)
                }
                _ => Labeller::Oracle,
            };
            let preference = PreferenceConfig {
                segment: config.segment,
                ..PreferenceConfig::default()
            };
            let schedule = Schedule {
                queries: config.queries,
                query_every: config.query_every,
                ..Schedule::default()
            };
            let dim = clip.config().projection_dim;
            Box::new(PreferenceHead::new(
                dim, num_envs, preference, schedule, labeller,
            )?)
        }
    })
}
