//! The group learner's update: epochs of minibatch Adam steps on the clipped, weighted loss.

use super::batch::Prepared;
use super::config::{AdvantageMode, GrpoConfig};
use crate::base::error::{LearnError, Result};
use crate::base::grad::clip_global_norm;
use crate::base::tensor::matrix;
use crate::estimators::{clipped_surrogate_per_unit, k3};
use crate::nets::actor::Actor;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::EnvRng;
use proprio::rand::RngExt;

/// Diagnostics of one update, averaged over its minibatches.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateStats {
    /// Weighted clipped-surrogate loss.
    pub policy_loss: f32,
    /// Weighted value loss (`gae` only).
    pub value_loss: f32,
    /// Mean entropy per unit.
    pub entropy: f32,
    /// Mean k3 KL to the reference policy (when `kl_coef` > 0).
    pub kl_ref: f32,
    /// Mean `ρ − 1 − log ρ`: how far the update moved from the sampling policy.
    pub approx_kl: f32,
    /// Fraction of units with A < 0 clipped at 1 − ε_low.
    pub clip_low_fraction: f32,
    /// Fraction of units with A > 0 clipped at 1 + ε_high.
    pub clip_high_fraction: f32,
    /// Global gradient norm before clipping (last minibatch).
    pub grad_norm: f64,
}

fn gather(data: &[f32], width: usize, rows: &[usize]) -> Vec<f32> {
    rows.iter()
        .flat_map(|&r| data[r * width..(r + 1) * width].iter().copied())
        .collect()
}

fn mean(t: Tensor<2>) -> f32 {
    t.mean().into_scalar::<f32>()
}

/// Runs `update_epochs` passes of `num_minibatches` Adam steps over the rows of `batch`.
#[allow(clippy::too_many_arguments)]
pub fn update<A: Actor>(
    mut actor: A,
    optim: &mut ModuleOptimizer,
    cfg: &GrpoConfig,
    batch: &Prepared,
    obs_dim: usize,
    lr: f64,
    rng: &mut EnvRng,
    device: &Device,
) -> Result<(A, UpdateStats)> {
    let (u, s) = (actor.units(), actor.stored_width());
    let mut order: Vec<usize> = (0..batch.rows).collect();
    let mut stats = UpdateStats::default();
    let mut steps = 0usize;
    let minibatches = cfg.num_minibatches.min(batch.rows.max(1));
    let size = batch.rows.div_ceil(minibatches);
    for _ in 0..cfg.update_epochs {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for rows in order.chunks(size.max(1)) {
            let m = rows.len();
            let unit = |data: &[f32]| matrix(&gather(data, u, rows), m, u, device);
            // Weights sum over the whole batch; each minibatch stands for its share of it.
            let scale = batch.rows as f32 / m as f32;
            let weights = unit(&batch.weights).mul_scalar(scale);
            let advantages = unit(&batch.advantages);
            let old = unit(&batch.old_logp);
            let scores = actor.score(
                &gather(&batch.obs, obs_dim, rows),
                &gather(&batch.stored, s, rows),
                m,
                cfg.temperature,
            );
            let log_ratio = scores.logp.clone() - old;
            let ratio = log_ratio.clone().exp();
            let mut per_unit = clipped_surrogate_per_unit(
                ratio.clone(),
                advantages.clone(),
                cfg.clip_low,
                cfg.clip_high,
            );
            if let Some(reference) = &batch.ref_logp {
                let kl = k3(
                    scores.logp.clone(),
                    matrix(&gather(reference, u, rows), m, u, device),
                );
                stats.kl_ref += mean(kl.clone().detach());
                per_unit = per_unit + kl.mul_scalar(cfg.kl_coef);
            }
            per_unit = per_unit - scores.entropy.clone().mul_scalar(cfg.ent_coef);
            let policy = (per_unit * weights.clone()).sum();
            let mut total = policy.clone();
            if cfg.advantage == AdvantageMode::Gae {
                let returns = unit(&batch.returns);
                let value = (scores.value - returns)
                    .square()
                    .mul(weights)
                    .sum()
                    .mul_scalar(0.5);
                stats.value_loss += value.clone().into_scalar::<f32>();
                total = total + value.mul_scalar(cfg.vf_coef);
            }
            let loss = total.clone().into_scalar::<f32>();
            if !loss.is_finite() {
                return Err(LearnError::Diverged(format!(
                    "group-learner loss is {loss}"
                )));
            }
            stats.policy_loss += policy.into_scalar::<f32>();
            stats.entropy += mean(scores.entropy.detach());
            stats.approx_kl += mean((ratio.clone() - 1.0 - log_ratio).detach());
            let low = ratio.clone().lower_elem(1.0 - cfg.clip_low).float()
                * advantages.clone().lower_elem(0.0).float();
            let high = ratio.greater_elem(1.0 + cfg.clip_high).float()
                * advantages.greater_elem(0.0).float();
            stats.clip_low_fraction += mean(low.detach());
            stats.clip_high_fraction += mean(high.detach());
            let mut grads = GradientsParams::from_grads(total.backward(), &actor);
            stats.grad_norm = clip_global_norm(&actor, &mut grads, cfg.max_grad_norm);
            actor = optim.step(lr, actor, grads);
            steps += 1;
        }
    }
    let k = steps.max(1) as f32;
    for v in [
        &mut stats.policy_loss,
        &mut stats.value_loss,
        &mut stats.entropy,
        &mut stats.kl_ref,
        &mut stats.approx_kl,
        &mut stats.clip_low_fraction,
        &mut stats.clip_high_fraction,
    ] {
        *v /= k;
    }
    Ok((actor, stats))
}
