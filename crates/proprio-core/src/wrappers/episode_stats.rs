//! Episode return and length, reported when an episode ends (Gymnasium's `RecordEpisodeStatistics`).

use super::forward_vec_env;
use crate::env::{Phase, ResetOptions, State};
use crate::error::Result;
use crate::vec_env::{AutoresetMode, VecEnv};
use std::collections::VecDeque;

/// Writes `episode.return` and `episode.length` into `infos[i]` on the step
/// where env `i`'s episode ends (in every autoreset mode), and keeps the last
/// `window` returns and lengths for progress reports.
pub struct RecordEpisodeStatistics<V> {
    inner: V,
    returns: Vec<f64>,
    lengths: Vec<u64>,
    prev_done: Vec<bool>,
    recent: VecDeque<(f64, u64)>,
    window: usize,
    episodes: u64,
}

impl<V: VecEnv> RecordEpisodeStatistics<V> {
    /// Records statistics of `inner`, remembering the last `window` episodes.
    pub fn new(inner: V, window: usize) -> Self {
        let n = inner.num_envs();
        Self {
            inner,
            returns: vec![0.0; n],
            lengths: vec![0; n],
            prev_done: vec![false; n],
            recent: VecDeque::with_capacity(window),
            window,
            episodes: 0,
        }
    }

    /// (return, length) of the most recent finished episodes, oldest first.
    pub fn recent(&self) -> &VecDeque<(f64, u64)> {
        &self.recent
    }

    /// Number of episodes finished since construction.
    pub fn episodes(&self) -> u64 {
        self.episodes
    }

    /// Starts counting afresh for the envs that were reset or restored.
    fn after_reset(&mut self, which: &dyn Fn(usize) -> bool) {
        for i in (0..self.returns.len()).filter(|&i| which(i)) {
            self.returns[i] = 0.0;
            self.lengths[i] = 0;
            self.prev_done[i] = false;
        }
    }
}

impl<V: VecEnv> VecEnv for RecordEpisodeStatistics<V> {
    forward_vec_env!(spec, num_envs, autoreset_mode, batch, snapshot, scene);

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.inner.reset(seed, options)?;
        self.after_reset(&|_| true);
        Ok(())
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        self.inner.reset_envs(mask, options)?;
        self.after_reset(&|i| mask[i]);
        Ok(())
    }

    /// Continues the snapshot's episode statistics: its return and length so far.
    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        self.inner.restore(state, envs)?;
        let reset_step_next =
            state.phase != Phase::Running && self.inner.autoreset_mode() == AutoresetMode::NextStep;
        for &i in envs {
            self.returns[i] = state.episode_return;
            self.lengths[i] = state.elapsed_steps;
            self.prev_done[i] = reset_step_next;
        }
        Ok(())
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        let next_step = self.inner.autoreset_mode() == AutoresetMode::NextStep;
        let batch = self.inner.batch_mut();
        for i in 0..self.returns.len() {
            if next_step && self.prev_done[i] {
                // This step only reset env i.
                self.prev_done[i] = false;
                continue;
            }
            self.returns[i] += f64::from(batch.reward[i]);
            self.lengths[i] += 1;
            self.prev_done[i] = batch.terminated[i] || batch.truncated[i];
            if self.prev_done[i] {
                let (ret, len) = (self.returns[i], self.lengths[i]);
                batch.infos[i].set("episode.return", ret);
                batch.infos[i].set("episode.length", len as f64);
                if self.recent.len() == self.window {
                    self.recent.pop_front();
                }
                if self.window > 0 {
                    self.recent.push_back((ret, len));
                }
                self.episodes += 1;
                self.returns[i] = 0.0;
                self.lengths[i] = 0;
            }
        }
        Ok(())
    }
}
