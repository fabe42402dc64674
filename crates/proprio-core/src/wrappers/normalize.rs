//! Observation and reward normalisation with running statistics (Gymnasium / CleanRL).

use super::forward_vec_env;
use crate::env::{ResetOptions, State};
use crate::error::Result;
use crate::vec_env::{AutoresetMode, Batch, VecEnv};
use serde::{Deserialize, Serialize};

/// Added to variances before taking square roots (Gymnasium's default).
pub const EPSILON: f64 = 1e-8;

/// Running mean and variance per component (parallel Welford, as Gymnasium's
/// `RunningMeanStd`); serialisable so it can be saved with a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningMeanStd {
    /// Mean per component.
    pub mean: Vec<f64>,
    /// Variance per component.
    pub var: Vec<f64>,
    /// Number of samples seen (starts at 1e-4, as Gymnasium does).
    pub count: f64,
}

impl RunningMeanStd {
    /// Statistics for `dim` components: mean 0, variance 1, count 1e-4.
    pub fn new(dim: usize) -> Self {
        Self {
            mean: vec![0.0; dim],
            var: vec![1.0; dim],
            count: 1e-4,
        }
    }

    /// `1 / sqrt(var + EPSILON)` of component `k`: the factor normalisation multiplies by.
    pub fn inverse_std(&self, k: usize) -> f64 {
        1.0 / (self.var[k] + EPSILON).sqrt()
    }

    /// Normalises rows of `row_dim` values in place, `(x − mean) / std`, clipped
    /// to ±`clip` if given, where these statistics describe `components` of a
    /// row (all but the image pixels): what [`NormalizeObservation`] does,
    /// usable on raw observations at inference time.
    pub fn normalize_components(
        &self,
        rows: &mut [f32],
        row_dim: usize,
        components: &[usize],
        clip: Option<f32>,
    ) {
        for row in rows.chunks_exact_mut(row_dim.max(1)) {
            for (k, &j) in components.iter().enumerate() {
                let z = ((f64::from(row[j]) - self.mean[k]) * self.inverse_std(k)) as f32;
                row[j] = clip.map_or(z, |c| z.clamp(-c, c));
            }
        }
    }

    /// Folds in `rows` samples laid out row-major (`rows × dim`) in `x`, skipping rows where `skip` is true.
    pub fn update(&mut self, x: &[f32], skip: impl Fn(usize) -> bool) {
        let dim = self.mean.len().max(1);
        let kept = || (0..x.len() / dim).filter(|&r| !skip(r));
        let n = kept().count() as f64;
        if n == 0.0 {
            return;
        }
        let tot = self.count + n;
        for k in 0..self.mean.len() {
            let batch_mean = kept().map(|r| f64::from(x[r * dim + k])).sum::<f64>() / n;
            let batch_var = kept()
                .map(|r| (f64::from(x[r * dim + k]) - batch_mean).powi(2))
                .sum::<f64>()
                / n;
            let delta = batch_mean - self.mean[k];
            self.mean[k] += delta * n / tot;
            let m2 =
                self.var[k] * self.count + batch_var * n + delta * delta * self.count * n / tot;
            self.var[k] = m2 / tot;
        }
        self.count = tot;
    }
}

/// Normalises observations to zero mean, unit variance with running statistics
/// (Gymnasium's `NormalizeObservation`), optionally clipping the result (CleanRL clips to ±10).
/// Image pixels are left as they are, as SB3's `VecNormalize` leaves image keys:
/// per-pixel statistics would blow rarely changing pixels up to the clip.
pub struct NormalizeObservation<V> {
    inner: V,
    rms: RunningMeanStd,
    clip: Option<f32>,
    update: bool,
    /// The flat components normalised (all but image pixels).
    components: Vec<usize>,
    /// (mean, 1/std) per normalised component, refreshed every call; kept to avoid allocating.
    scale: Vec<(f64, f64)>,
    /// The normalised components of the batch, gathered for the statistics (only with images).
    gathered: Vec<f32>,
}

impl<V: VecEnv> NormalizeObservation<V> {
    /// Normalises `inner`'s observations; `clip` bounds the normalised values.
    pub fn new(inner: V, clip: Option<f32>) -> Self {
        let components = inner.spec().observation_space.normalized_components();
        let dim = components.len();
        Self {
            inner,
            rms: RunningMeanStd::new(dim),
            clip,
            update: true,
            components,
            scale: Vec::with_capacity(dim),
            gathered: Vec::new(),
        }
    }

    /// The wrapped vector env.
    pub fn inner(&self) -> &V {
        &self.inner
    }

    /// The running statistics (save them with a checkpoint).
    pub fn stats(&self) -> &RunningMeanStd {
        &self.rms
    }

    /// Replaces the running statistics (load them from a checkpoint).
    pub fn set_stats(&mut self, stats: RunningMeanStd) {
        self.rms = stats;
    }

    /// Freezes (`false`) or resumes (`true`) the statistics, e.g. for evaluation.
    pub fn set_update(&mut self, update: bool) {
        self.update = update;
    }

    /// Normalises the rows `fresh` picks, which the inner env has just
    /// written raw (all after a step or a full reset; the reset or restored
    /// envs otherwise: the other rows are normalised already). `update`
    /// adds them to the statistics first; a restore does not, as a restored
    /// state is not a new sample.
    fn normalise(&mut self, fresh: &dyn Fn(usize) -> bool, update: bool) {
        let batch = self.inner.batch_mut();
        if update {
            if self.components.len() == batch.obs_dim {
                self.rms.update(&batch.obs, |r| !fresh(r));
            } else {
                self.gathered.clear();
                for (_, row) in (batch.obs.chunks_exact(batch.obs_dim.max(1)).enumerate())
                    .filter(|(r, _)| fresh(*r))
                {
                    self.gathered
                        .extend(self.components.iter().map(|&j| row[j]));
                }
                self.rms.update(&self.gathered, |_| false);
            }
        }
        let Batch {
            obs,
            final_obs,
            has_final,
            obs_dim,
            ..
        } = batch;
        self.scale.clear();
        let rms = &self.rms;
        self.scale
            .extend((0..rms.mean.len()).map(|k| (rms.mean[k], rms.inverse_std(k))));
        let (scale, components) = (&self.scale, &self.components);
        let apply = |row: &mut [f32]| {
            for (&j, &(m, s)) in components.iter().zip(scale) {
                let z = ((f64::from(row[j]) - m) * s) as f32;
                row[j] = self.clip.map_or(z, |c| z.clamp(-c, c));
            }
        };
        let dim = (*obs_dim).max(1);
        for (r, row) in obs.chunks_exact_mut(dim).enumerate() {
            if fresh(r) {
                apply(row);
            }
        }
        for (r, (row, _)) in (final_obs.chunks_exact_mut(dim).zip(has_final.iter()))
            .enumerate()
            .filter(|(_, (_, h))| **h)
        {
            if fresh(r) {
                apply(row);
            }
        }
    }
}

impl<V: VecEnv> VecEnv for NormalizeObservation<V> {
    forward_vec_env!(spec, num_envs, autoreset_mode, batch, snapshot, scene,);

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        self.normalise(&|_| true, self.update);
        Ok(())
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.inner.reset(seed, options)?;
        self.normalise(&|_| true, self.update);
        Ok(())
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        self.inner.reset_envs(mask, options)?;
        self.normalise(&|i| mask[i], self.update);
        Ok(())
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        self.inner.restore(state, envs)?;
        self.normalise(&|i| envs.contains(&i), false);
        Ok(())
    }
}

/// Scales rewards by the running standard deviation of the discounted return
/// (Gymnasium's `NormalizeReward`, as CleanRL's PPO uses it).
pub struct NormalizeReward<V> {
    inner: V,
    rms: RunningMeanStd,
    returns: Vec<f32>,
    prev_done: Vec<bool>,
    gamma: f32,
    clip: Option<f32>,
    update: bool,
}

impl<V: VecEnv> NormalizeReward<V> {
    /// Normalises `inner`'s rewards for discount `gamma`; `clip` bounds the
    /// scaled rewards (CleanRL clips to ±10).
    pub fn new(inner: V, gamma: f32, clip: Option<f32>) -> Self {
        let n = inner.num_envs();
        Self {
            inner,
            rms: RunningMeanStd::new(1),
            returns: vec![0.0; n],
            prev_done: vec![false; n],
            gamma,
            clip,
            update: true,
        }
    }

    /// The wrapped vector env.
    pub fn inner(&self) -> &V {
        &self.inner
    }

    /// The wrapped vector env, mutably.
    pub fn inner_mut(&mut self) -> &mut V {
        &mut self.inner
    }

    /// The running statistics of the discounted return.
    pub fn stats(&self) -> &RunningMeanStd {
        &self.rms
    }

    /// Replaces the running statistics (load them from a checkpoint).
    pub fn set_stats(&mut self, stats: RunningMeanStd) {
        self.rms = stats;
    }

    /// Freezes (`false`) or resumes (`true`) the statistics.
    pub fn set_update(&mut self, update: bool) {
        self.update = update;
    }

    /// Drops the running returns of the envs that were reset or restored.
    fn after_reset(&mut self, which: &dyn Fn(usize) -> bool) {
        for i in (0..self.returns.len()).filter(|&i| which(i)) {
            self.returns[i] = 0.0;
            self.prev_done[i] = false;
        }
    }
}

impl<V: VecEnv> VecEnv for NormalizeReward<V> {
    forward_vec_env!(
        spec,
        num_envs,
        autoreset_mode,
        batch,
        snapshot,
        resets_then_after_reset,
        scene,
    );

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        let same_step = self.inner.autoreset_mode() == AutoresetMode::SameStep;
        let batch = self.inner.batch_mut();
        // In next-step and disabled modes the step after a done is a reset, not part of a return.
        let inactive = |i: usize| !same_step && self.prev_done[i];
        for i in (0..self.returns.len()).filter(|&i| !inactive(i)) {
            let keep = if batch.terminated[i] { 0.0 } else { self.gamma };
            self.returns[i] = self.returns[i] * keep + batch.reward[i];
        }
        if self.update {
            self.rms.update(&self.returns, inactive);
        }
        let scale = self.rms.inverse_std(0);
        for (i, r) in batch.reward.iter_mut().enumerate() {
            let scaled = (f64::from(*r) * scale) as f32;
            *r = self.clip.map_or(scaled, |c| scaled.clamp(-c, c));
            self.prev_done[i] = batch.terminated[i] || batch.truncated[i];
            if same_step && self.prev_done[i] {
                self.returns[i] = 0.0;
            }
        }
        Ok(())
    }
}
