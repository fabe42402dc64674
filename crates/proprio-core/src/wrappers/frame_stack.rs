//! Frame stacking: each observation carries the env's last `k` observations.

use super::forward_vec_env;
use crate::{AutoresetMode, Batch, EnvSpec, Error, ResetOptions, Result, Space, State, VecEnv};

/// Gives each env's last `k` observations, oldest first, as one observation
/// (Gymnasium's `FrameStackObservation` padded with the first observation of
/// an episode), so a policy that sees only pixels can tell motion. The space
/// becomes a `Tuple` of `k` copies of the inner space: frame after frame in
/// the flat row. Snapshots hold the inner env's state only; a restored env's
/// stack restarts from its restored observation.
pub struct FrameStack<V> {
    inner: V,
    frames: usize,
    spec: EnvSpec,
    batch: Batch,
    /// Envs whose next observation starts an episode (next-step autoreset).
    restarting: Vec<bool>,
}

impl<V: VecEnv> FrameStack<V> {
    /// Stacks `frames` (at least 1) observations of `inner`.
    pub fn new(inner: V, frames: usize) -> Result<Self> {
        if frames == 0 {
            return Err(Error::Options(
                "frame stacking needs at least one frame".into(),
            ));
        }
        let mut spec = inner.spec().clone();
        spec.observation_space = Space::Tuple {
            spaces: vec![spec.observation_space.clone(); frames],
        };
        let n = inner.num_envs();
        let batch = Batch::new(n, spec.observation_space.flat_dim())?;
        let mut stacked = Self {
            inner,
            frames,
            spec,
            batch,
            restarting: vec![false; n],
        };
        stacked.batch.copy_outcome(stacked.inner.batch());
        for i in 0..n {
            stacked.restart(i);
        }
        Ok(stacked)
    }

    /// How many observations each stack holds.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Fills env `i`'s stack with copies of its current inner observation.
    fn restart(&mut self, i: usize) {
        let obs = self.inner.batch().obs(i);
        let d = self.batch.obs_dim;
        for frame in self.batch.obs[i * d..(i + 1) * d].chunks_exact_mut(obs.len().max(1)) {
            frame.copy_from_slice(obs);
        }
        self.restarting[i] = false;
    }
}

/// Drops the oldest frame of `stack` and appends `newest`.
fn push(stack: &mut [f32], newest: &[f32]) {
    stack.copy_within(newest.len().., 0);
    let at = stack.len() - newest.len();
    stack[at..].copy_from_slice(newest);
}

impl<V: VecEnv> VecEnv for FrameStack<V> {
    forward_vec_env!(num_envs, autoreset_mode, snapshot, scene);

    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.inner.reset(seed, options)?;
        self.batch.copy_outcome(self.inner.batch());
        for i in 0..self.batch.num_envs {
            self.restart(i);
        }
        Ok(())
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        self.inner.reset_envs(mask, options)?;
        for i in (0..mask.len()).filter(|&i| mask[i]) {
            self.batch.copy_reset_outcome(i, self.inner.batch());
            self.restart(i);
        }
        Ok(())
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        self.batch.copy_outcome(self.inner.batch());
        let next_step = self.inner.autoreset_mode() == AutoresetMode::NextStep;
        let d = self.batch.obs_dim;
        for i in 0..self.batch.num_envs {
            let inner = self.inner.batch();
            let done = inner.terminated[i] || inner.truncated[i];
            if self.restarting[i] {
                self.restart(i);
            } else if let Some(last) = inner.final_obs(i) {
                let b = &mut self.batch;
                b.final_obs[i * d..(i + 1) * d].copy_from_slice(&b.obs[i * d..(i + 1) * d]);
                push(&mut b.final_obs[i * d..(i + 1) * d], last);
                self.restart(i);
            } else {
                push(&mut self.batch.obs[i * d..(i + 1) * d], inner.obs(i));
            }
            self.restarting[i] = next_step && done;
        }
        Ok(())
    }

    fn batch(&self) -> &Batch {
        &self.batch
    }

    fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        self.inner.restore(state, envs)?;
        for &i in envs {
            self.restart(i);
        }
        Ok(())
    }
}
