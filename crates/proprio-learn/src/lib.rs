//! # proprio-learn
//!
//! Learners for Proprio envs on burn 0.22: PPO, SAC, TD3, DSAC-T and GRPO, with checkpoints,
//! metrics and learning curves. Networks run on burn's CPU backend (`flex`)
//! by default, or on any GPU through `wgpu` (cargo feature `wgpu`); the
//! algorithm code is the same for both.

pub mod actor;
mod burn_rl;
pub mod critic;
mod device;
pub mod dsac;
pub mod encoder;
mod envs;
mod error;
mod grad;
pub mod grpo;
mod head;
mod integrity;
mod layout;
mod mlp;
pub mod offpolicy;
pub mod plot;
mod policy;
pub mod ppo;
pub mod recording;
pub mod replay;
pub mod run;
pub mod sac;
pub mod sequence;
pub mod td3;
mod tensor;
mod train;
mod transformer;
mod tuned;
pub mod video;

pub use burn_rl::BurnRlEnv;
pub use device::Backend;
pub use envs::{EnvSource, Evaluation, Normalization, NormalizerStats, TrainEnv, evaluate};
pub use error::{LearnError, Result};
pub use grad::clip_global_norm;
pub use head::{ActionHead, standard_normal};
pub use mlp::{Activation, Mlp, orthogonal};
pub use policy::Policy;
pub use run::Algo;
pub use train::{TrainRequest, default_config, resume, train};
pub use tuned::tuned;
