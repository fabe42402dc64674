//! Wrappers: everything beyond the core API (Gymnasium's design).
//!
//! [`TimeLimit`] wraps a single [`Env`](crate::Env) (truncation must happen
//! inside autoreset). The others wrap a [`VecEnv`](crate::VecEnv), so they
//! apply to every backend, thread-pooled or GPU-batched. Order them as
//! CleanRL does: statistics innermost, normalisation outside them.

mod action;
mod autoreset;
mod episode_stats;
mod frame_stack;
mod normalize;
mod time_limit;

pub use action::{ClipAction, RescaleAction};
pub use autoreset::SameStepAutoreset;
pub use episode_stats::RecordEpisodeStatistics;
pub use frame_stack::FrameStack;
pub use normalize::{EPSILON, NormalizeObservation, NormalizeReward, RunningMeanStd};
pub use time_limit::TimeLimit;

/// Forwards the [`VecEnv`](crate::VecEnv) methods a wrapper does not change to `self.inner`.
macro_rules! forward_vec_env {
    ($($method:ident),* $(,)?) => {
        $(forward_vec_env!(@one $method);)*
    };
    (@one spec) => {
        fn spec(&self) -> &$crate::EnvSpec { self.inner.spec() }
    };
    (@one num_envs) => {
        fn num_envs(&self) -> usize { self.inner.num_envs() }
    };
    (@one autoreset_mode) => {
        fn autoreset_mode(&self) -> $crate::AutoresetMode { self.inner.autoreset_mode() }
    };
    (@one batch) => {
        fn batch(&self) -> &$crate::Batch { self.inner.batch() }
        fn batch_mut(&mut self) -> &mut $crate::Batch { self.inner.batch_mut() }
    };
    (@one snapshot) => {
        fn snapshot(&self, env: usize) -> $crate::Result<$crate::State> { self.inner.snapshot(env) }
    };
    (@one scene) => {
        fn scene(&self, env: usize, scene: &mut $crate::Scene) -> $crate::Result<()> {
            self.inner.scene(env, scene)
        }
        fn scenes(&self, envs: &[usize], scenes: &mut [$crate::Scene]) -> $crate::Result<()> {
            self.inner.scenes(envs, scenes)
        }
    };
    (@one reset) => {
        fn reset(&mut self, seed: Option<u64>, options: $crate::ResetOptions) -> $crate::Result<()> {
            self.inner.reset(seed, options)
        }
    };
    (@one reset_envs) => {
        fn reset_envs(&mut self, mask: &[bool], options: $crate::ResetOptions) -> $crate::Result<()> {
            self.inner.reset_envs(mask, options)
        }
    };
    // reset, reset_envs and restore, each followed by `self.after_reset(which)`,
    // where `which(i)` tells whether env `i` was reset or restored.
    (@one resets_then_after_reset) => {
        fn reset(&mut self, seed: Option<u64>, options: $crate::ResetOptions) -> $crate::Result<()> {
            self.inner.reset(seed, options)?;
            self.after_reset(&|_| true);
            Ok(())
        }
        fn reset_envs(&mut self, mask: &[bool], options: $crate::ResetOptions) -> $crate::Result<()> {
            self.inner.reset_envs(mask, options)?;
            self.after_reset(&|i| mask[i]);
            Ok(())
        }
        fn restore(&mut self, state: &$crate::State, envs: &[usize]) -> $crate::Result<()> {
            self.inner.restore(state, envs)?;
            self.after_reset(&|i| envs.contains(&i));
            Ok(())
        }
    };
    (@one restore) => {
        fn restore(&mut self, state: &$crate::State, envs: &[usize]) -> $crate::Result<()> {
            self.inner.restore(state, envs)
        }
    };
}
pub(crate) use forward_vec_env;
