//! [`SameStepAutoreset`]: Gymnasium's same-step autoreset over any vector env
//! run with autoreset disabled, written once for every wrapper that must see
//! an episode's last step before the reset (pixel observations, reward models).

use crate::env::{ResetOptions, State};
use crate::error::{Error, Result};
use crate::vec_env::{AutoresetMode, Batch, VecEnv};
use crate::{EnvSpec, Scene};

/// Resets each env on the step that ends its episode: `obs` and `infos` hold
/// the new start, `final_obs` / `final_infos` the ending step, and the step's
/// reward and flags stay. The inner env (and every wrapper in it) runs with
/// autoreset disabled, so it observes the finished state before the reset;
/// the reset goes through the inner stack's own `reset_envs`.
pub struct SameStepAutoreset<V> {
    inner: V,
    finished: Vec<bool>,
    /// The ending step's reward and flags of each finished env, put back after its reset.
    outcome: Vec<(f32, bool, bool)>,
}

impl<V: VecEnv> SameStepAutoreset<V> {
    /// Wraps `inner`, which must run with autoreset disabled.
    pub fn new(inner: V) -> Result<Self> {
        if inner.autoreset_mode() != AutoresetMode::Disabled {
            return Err(Error::Options(format!(
                "same-step autoreset wraps an env with autoreset disabled, not {}",
                inner.autoreset_mode()
            )));
        }
        let n = inner.num_envs();
        Ok(Self {
            inner,
            finished: vec![false; n],
            outcome: vec![(0.0, false, false); n],
        })
    }

    /// The wrapped env.
    pub fn inner(&self) -> &V {
        &self.inner
    }

    /// Keeps each finished env's last observation and info, resets it, and
    /// restores the ending step's reward and flags.
    fn reset_finished(&mut self) -> Result<()> {
        let batch: &mut Batch = self.inner.batch_mut();
        let mut any = false;
        for (i, finished) in self.finished.iter_mut().enumerate() {
            *finished = batch.done(i);
            if *finished {
                any = true;
                batch.keep_final(i);
                self.outcome[i] = (batch.reward[i], batch.terminated[i], batch.truncated[i]);
            }
        }
        if !any {
            return Ok(());
        }
        self.inner.reset_envs(&self.finished, None)?;
        let batch = self.inner.batch_mut();
        for (i, _) in self.finished.iter().enumerate().filter(|(_, f)| **f) {
            (batch.reward[i], batch.terminated[i], batch.truncated[i]) = self.outcome[i];
            batch.has_final[i] = true;
        }
        Ok(())
    }
}

impl<V: VecEnv> VecEnv for SameStepAutoreset<V> {
    fn spec(&self) -> &EnvSpec {
        self.inner.spec()
    }

    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }

    fn autoreset_mode(&self) -> AutoresetMode {
        AutoresetMode::SameStep
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.inner.reset(seed, options)
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        self.inner.reset_envs(mask, options)
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        self.reset_finished()
    }

    fn batch(&self) -> &Batch {
        self.inner.batch()
    }

    fn batch_mut(&mut self) -> &mut Batch {
        self.inner.batch_mut()
    }

    fn snapshot(&self, env: usize) -> Result<State> {
        self.inner.snapshot(env)
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        self.inner.restore(state, envs)
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()> {
        self.inner.scene(env, scene)
    }

    fn scenes(&self, envs: &[usize], scenes: &mut [Scene]) -> Result<()> {
        self.inner.scenes(envs, scenes)
    }
}
