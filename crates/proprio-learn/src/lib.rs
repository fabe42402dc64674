//! # proprio-learn
//!
//! Learners for Proprio envs on burn 0.22: PPO, SAC, TD3, DSAC-T, GRPO and ArCHer, with checkpoints,
//! metrics and learning curves. Networks run on burn's CPU backend (`flex`)
//! by default, or on any GPU through `wgpu` (cargo feature `wgpu`); the
//! algorithm code is the same for both.
//!
//! Layers, each importing only those below it: `base` (errors, tensors,
//! devices, seeds) → `nets` (networks) and `estimators` → `env` (the envs a
//! learner steps and evaluates on) → `run` (the run directory) → `learner`
//! (the one training loop) → `algos` (one folder per algorithm) → `policy`
//! (a checkpoint that acts), `recording` → `train` (the table of algorithms).

pub mod algos;
pub mod base;
mod burn_rl;
pub mod env;
pub mod estimators;
pub mod learner;
pub mod nets;
pub mod plot;
mod policy;
pub mod recording;
pub mod replay;
pub mod run;
mod train;
pub mod tuned;
pub mod video;

pub use algos::{archer, bc, dsac, grpo, offpolicy, ppo, sac, td3};
pub use base::device::ComputeDevice;
pub use base::error::{LearnError, Result};
pub use base::grad::clip_global_norm;
pub use burn_rl::BurnRlEnv;
pub use env::{
    Curriculum, EnvSource, Evaluation, Growth, Normalization, NormalizerStats, TrainEnv, evaluate,
};
pub use learner::{Cadence, Learner, WALL_CLOCK_COLUMNS};
pub use nets::head::{ActionHead, standard_normal};
pub use nets::mlp::{Activation, Mlp, orthogonal};
pub use policy::Policy;
pub use run::Algo;
pub use train::{TrainRequest, default_config, resume, train};
pub use tuned::{Recipe, tuned};
