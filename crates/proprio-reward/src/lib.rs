//! Reward models that read pixels: CLIP in burn, loaded from the checkpoints
//! people publish on the Hugging Face hub, for vision-language rewards.
//!
//! ```no_run
//! use proprio_reward::clip::ClipModel;
//! let device = burn::prelude::Device::default();
//! let clip = ClipModel::load("models/clip-vit-base-patch32".as_ref(), &device)?;
//! let texts = clip.embed_texts(&["a robot arm touching a green ball"])?;
//! # Ok::<(), proprio_reward::RewardError>(())
//! ```

pub mod clip;
mod error;

pub use error::{Result, RewardError};
