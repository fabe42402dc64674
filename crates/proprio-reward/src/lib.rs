//! Reward models that read pixels: CLIP in burn, loaded from the checkpoints
//! people publish on the Hugging Face hub, and the vision-language rewards
//! built on it (VLM-RM, RoboCLIP, Bradley–Terry preference rewards), as a wrapper around any env that renders.
//!
//! ```no_run
//! use proprio_reward::clip::ClipModel;
//! let device = burn::prelude::Device::default();
//! let clip = ClipModel::load("models/clip-vit-base-patch32".as_ref(), &device)?;
//! let texts = clip.embed_texts(&["a robot arm touching a green ball"])?;
//! # Ok::<(), proprio_reward::RewardError>(())
//! ```

pub mod clip;
mod config;
mod error;
pub mod fit;
mod make;
pub mod preference;
mod roboclip;
mod vlm_rm;
mod wrapper;

pub use config::{Demo, Labeller, Pooling, RewardConfig, RewardKind};
pub use error::{Result, RewardError};
pub use make::{model_reward, reward_head};
pub use roboclip::{RoboClip, read_video};
pub use vlm_rm::VlmRm;
pub use wrapper::{
    MODEL_RETURN, MODEL_REWARD, Mix, ModelReward, RewardCost, RewardHead, SharedHead, TASK_REWARD,
};
