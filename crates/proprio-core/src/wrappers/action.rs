//! Action clipping and rescaling for continuous (box) action spaces.

use super::forward_vec_env;
use crate::env::EnvSpec;
use crate::error::{Error, Result};
use crate::space::Space;
use crate::vec_env::{VecEnv, check_actions_len};

fn box_bounds(spec: &EnvSpec, wrapper: &str) -> Result<(Vec<f32>, Vec<f32>)> {
    match &spec.action_space {
        Space::Box { low, high } => Ok((low.clone(), high.clone())),
        other => Err(Error::Config {
            id: spec.id.clone(),
            message: format!("{wrapper} needs a box action space, not {other}"),
        }),
    }
}

/// Writes `f(action, low, high)` for every component of a batch of box actions into `out`.
fn map_actions(
    out: &mut [f32],
    actions: &[f32],
    low: &[f32],
    high: &[f32],
    f: impl Fn(f32, f32, f32) -> f32,
) {
    let dim = low.len().max(1);
    for (out_row, row) in out.chunks_exact_mut(dim).zip(actions.chunks_exact(dim)) {
        for ((o, &a), (&lo, &hi)) in out_row.iter_mut().zip(row).zip(low.iter().zip(high)) {
            *o = f(a, lo, hi);
        }
    }
}

/// Clips each action component into the box bounds before the env sees it (Gymnasium's `ClipAction`).
pub struct ClipAction<V> {
    inner: V,
    low: Vec<f32>,
    high: Vec<f32>,
    buffer: Vec<f32>,
}

impl<V: VecEnv> ClipAction<V> {
    /// Clips actions of `inner`, whose action space must be a box.
    pub fn new(inner: V) -> Result<Self> {
        let (low, high) = box_bounds(inner.spec(), "ClipAction")?;
        let buffer = vec![0.0; inner.num_envs() * low.len()];
        Ok(Self {
            inner,
            low,
            high,
            buffer,
        })
    }
}

impl<V: VecEnv> VecEnv for ClipAction<V> {
    forward_vec_env!(
        spec,
        num_envs,
        autoreset_mode,
        batch,
        snapshot,
        reset,
        reset_envs,
        restore,
        scene,
    );

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        check_actions_len(self.inner.spec(), self.inner.num_envs(), actions)?;
        // NaN passes through so the env rejects it with a clear error.
        map_actions(
            &mut self.buffer,
            actions,
            &self.low,
            &self.high,
            |a, lo, hi| {
                if a.is_nan() { a } else { a.clamp(lo, hi) }
            },
        );
        self.inner.step(&self.buffer)
    }
}

/// Lets the agent act in `[min, max]` (usually `[-1, 1]`) and maps that
/// affinely onto the env's box (Gymnasium's `RescaleAction`).
pub struct RescaleAction<V> {
    inner: V,
    spec: EnvSpec,
    low: Vec<f32>,
    high: Vec<f32>,
    min: f32,
    max: f32,
    buffer: Vec<f32>,
}

impl<V: VecEnv> RescaleAction<V> {
    /// Rescales `[min, max]` onto `inner`'s box, which must have finite bounds.
    pub fn new(inner: V, min: f32, max: f32) -> Result<Self> {
        let (low, high) = box_bounds(inner.spec(), "RescaleAction")?;
        let spec = inner.spec().clone();
        if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less)
            || low.iter().chain(&high).any(|v| !v.is_finite())
        {
            return Err(Error::Config {
                id: spec.id,
                message: format!(
                    "RescaleAction needs min < max (got {min}, {max}) and finite box bounds"
                ),
            });
        }
        let mut spec = spec;
        spec.action_space = Space::uniform_box(low.len(), min, max);
        let buffer = vec![0.0; inner.num_envs() * low.len()];
        Ok(Self {
            inner,
            spec,
            low,
            high,
            min,
            max,
            buffer,
        })
    }
}

impl<V: VecEnv> VecEnv for RescaleAction<V> {
    forward_vec_env!(
        num_envs,
        autoreset_mode,
        batch,
        snapshot,
        reset,
        reset_envs,
        restore,
        scene,
    );

    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        check_actions_len(&self.spec, self.inner.num_envs(), actions)?;
        let (min, span) = (self.min, self.max - self.min);
        map_actions(
            &mut self.buffer,
            actions,
            &self.low,
            &self.high,
            |a, lo, hi| lo + (hi - lo) * (a - min) / span,
        );
        self.inner.step(&self.buffer)
    }
}
