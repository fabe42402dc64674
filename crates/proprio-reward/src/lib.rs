//! Reward models that read pixels: CLIP in burn, loaded from the checkpoints
//! people publish on the Hugging Face hub, and the vision-language rewards
//! built on it (VLM-RM, RoboCLIP, Bradley–Terry preference rewards, a learned
//! progress model), as a wrapper around any env that renders.
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
mod instructions;
mod make;
pub mod preference;
pub mod progress;
mod roboclip;
mod vlm_rm;
mod wrapper;

pub use config::{Demo, Goal, Labeller, Pooling, RewardConfig, RewardKind, Shaping};
pub use error::{Result, RewardError};
pub use make::{model_reward, reward_head};
pub use roboclip::{RoboClip, read_video};
pub use vlm_rm::{InstructedVlmRm, VlmRm};
pub use wrapper::{
    MODEL_RETURN, MODEL_REWARD, Mix, ModelReward, RewardCost, RewardHead, SharedHead, TASK_REWARD,
    Watch,
};

/// The module `init` builds, its initial weights drawn from `device`'s
/// generator seeded with `seed`, under a lock: burn's generator is one per
/// process and its parameters initialise lazily (on first use), so two fits
/// side by side (tests do) would otherwise draw from each other's stream.
pub(crate) fn seeded<M: burn::module::Module>(
    device: &burn::prelude::Device,
    seed: u64,
    init: impl FnOnce() -> M,
) -> M {
    /// Reads every parameter, which runs its pending initialiser now.
    struct Materialise;
    impl burn::module::ModuleVisitor for Materialise {
        fn visit_float<const D: usize>(
            &mut self,
            param: &burn::module::Param<burn::prelude::Tensor<D>>,
        ) {
            let _ = param.val();
        }
    }
    static INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = INIT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    device.seed(seed);
    let module = init();
    module.visit(&mut Materialise);
    module
}
