//! # proprio-core
//!
//! The environment API of Proprio, the crate third-party agents depend on:
//! [`Space`]s, the single-env [`Env`] and batched [`VecEnv`] traits,
//! Gymnasium's three [`AutoresetMode`]s, per-(seed, env, episode) seeding,
//! serialisable snapshots ([`State`]), the [`Registry`] and standard
//! [`wrappers`]. Env authors implement [`Task`]; [`TaskEnv`] and
//! [`ThreadedVecEnv`] turn it into single and batched envs.
//!
//! Observations and actions are flat `f32` vectors in the encoding of their
//! space; batched buffers hold N of them back to back.

mod agent;
pub mod check;
pub mod chunked;
mod entry;
mod env;
mod error;
pub mod family;
mod info;
mod kernel;
pub mod memory;
pub mod parity;
mod pool;
mod registry;
pub mod rng;
mod scene;
mod space;
mod task;
mod threaded;
mod vec_env;
pub mod wrappers;

pub use agent::{ActMode, Agent, RandomAgent, first_episodes};
pub use chunked::{ChunkedKernel, ChunkedModel, Stepped};
pub use entry::{EnvEntry, MAX_EPISODE_STEPS, split_config};
pub use env::{Env, EnvSpec, Phase, ResetOptions, State, Step, Transition};
pub use error::{ActionError, Error, Result};
pub use family::Family;
pub use info::Info;
pub use kernel::{Kernel, KernelEnv, KernelVecEnv, command};
pub use pool::WorkerPool;
pub use registry::{Caption, MakeEnv, MakeScripted, MakeTeleop, MakeVecEnv, Registry, Teleop};
pub use rng::{EnvRng, RandomActions, episode_rng};
pub use scene::{Framing, Line, Pose, Scene, SceneCamera, Shape, Texture, Visual};
pub use space::Space;
pub use task::{NoConfig, Outcome, Task, TaskEnv};
pub use threaded::{MAX_THREADS, MIN_ENVS_PER_THREAD, ThreadedVecEnv};
pub use vec_env::{
    AutoresetMode, Backend, Batch, Rows, VecEnv, VecOptions, check_actions_len, check_batch,
    check_env_indices, check_mask_len,
};

/// Re-exported so env crates and agents use the same versions.
pub use {rand, serde_json};
