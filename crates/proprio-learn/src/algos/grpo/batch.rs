//! From collected groups to a training batch: advantages, weights, reference log-probabilities.

use super::advantage::{all_equal, group_advantages, step_advantages, unit_weights};
use super::config::{AdvantageMode, GrpoConfig, RewardMode};
use super::rollout::{Groups, Rollout};
use crate::base::error::Result;
use crate::base::tensor::host;
use crate::estimators::gae;
use crate::nets::actor::Actor;

/// Rows scored per forward pass outside the update.
const SCORE_CHUNK: usize = 1024;

/// The training batch on the host, one row per env step, `units` values per row.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// Rows kept.
    pub rows: usize,
    /// Observations `[rows × obs_dim]`.
    pub obs: Vec<f32>,
    /// Stored actions `[rows × stored_width]`.
    pub stored: Vec<f32>,
    /// Sampling log-probabilities `[rows × units]`.
    pub old_logp: Vec<f32>,
    /// Advantages `[rows × units]`.
    pub advantages: Vec<f32>,
    /// Loss weights `[rows × units]` (they sum to 1 over a full batch for the token mean).
    pub weights: Vec<f32>,
    /// Value targets `[rows × units]` (`gae` only).
    pub returns: Vec<f32>,
    /// Reference log-probabilities `[rows × units]` (when `kl_coef` > 0).
    pub ref_logp: Option<Vec<f32>>,
    /// Groups kept (not all-equal).
    pub kept_groups: usize,
}

/// Values `[rows × units]` of the rows `obs` / `stored` under `actor`, or its
/// log-probabilities when `logp`, a chunk of rows per forward pass.
fn score_rows<A: Actor>(
    actor: &A,
    obs: &[f32],
    stored: &[f32],
    obs_dim: usize,
    temperature: f32,
    logp: bool,
) -> Result<Vec<f32>> {
    let s = actor.stored_width();
    let rows = obs.len() / obs_dim.max(1);
    let mut out = Vec::with_capacity(rows * actor.units());
    for start in (0..rows).step_by(SCORE_CHUNK) {
        let end = (start + SCORE_CHUNK).min(rows);
        let scores = actor.score(
            &obs[start * obs_dim..end * obs_dim],
            &stored[start * s..end * s],
            end - start,
            temperature,
        );
        out.extend(host(if logp { scores.logp } else { scores.value })?);
    }
    Ok(out)
}

/// Per-unit advantages and value targets (empty unless `gae`) of one rollout.
type UnitTargets = (Vec<f32>, Vec<f32>);

/// Per-unit advantages and value targets of every rollout under the config's estimator;
/// `None` for a dropped rollout.
fn advantages<A: Actor>(
    groups: &Groups,
    cfg: &GrpoConfig,
    actor: &A,
    obs_dim: usize,
) -> Result<Vec<Option<UnitTargets>>> {
    let u = actor.units();
    let broadcast = |per_step: &[f64]| -> Vec<f32> {
        per_step.iter().flat_map(|&a| vec![a as f32; u]).collect()
    };
    if cfg.advantage == AdvantageMode::Gae {
        let values = score_rows(
            actor,
            &groups.obs,
            &groups.stored,
            obs_dim,
            cfg.temperature,
            false,
        )?;
        return Ok(groups
            .rollouts
            .iter()
            .map(|r| {
                let units = r.steps * u;
                let v = &values[r.first_row * u..r.first_row * u + units];
                let mut rewards = vec![0.0f32; units];
                for (t, reward) in r.rewards.iter().enumerate() {
                    rewards[(t + 1) * u - 1] = *reward as f32;
                }
                let (adv, ret) = gae(
                    &rewards,
                    v,
                    &vec![0.0; units],
                    &[0.0],
                    &[1.0],
                    cfg.gamma,
                    cfg.gae_lambda,
                );
                Some((adv, ret))
            })
            .collect());
    }
    let mut out = Vec::with_capacity(groups.rollouts.len());
    for group in groups.rollouts.chunks(cfg.group_size) {
        let outcomes: Vec<f64> = group.iter().map(Rollout::outcome).collect();
        if cfg.drop_equal_groups && all_equal(&outcomes) {
            out.extend(group.iter().map(|_| None));
            continue;
        }
        match cfg.reward {
            RewardMode::Outcome => {
                let adv = group_advantages(&outcomes, cfg.advantage)?;
                out.extend(
                    group
                        .iter()
                        .zip(adv)
                        .map(|(r, a)| Some((broadcast(&vec![a; r.steps]), Vec::new()))),
                );
            }
            RewardMode::PerStep | RewardMode::PerPosition => {
                let steps: Vec<Vec<f64>> = group.iter().map(|r| r.rewards.clone()).collect();
                let pooled = cfg.reward == RewardMode::PerStep;
                let adv = step_advantages(&steps, cfg.advantage, f64::from(cfg.gamma), pooled)?;
                out.extend(adv.iter().map(|a| Some((broadcast(a), Vec::new()))));
            }
        }
    }
    Ok(out)
}

/// Builds the training batch from `groups`: drops degenerate groups, computes
/// advantages and loss weights, and the reference log-probabilities for the KL term.
pub fn prepare<A: Actor>(
    groups: &Groups,
    cfg: &GrpoConfig,
    actor: &A,
    reference: Option<&A>,
    loss_constant: f64,
    obs_dim: usize,
) -> Result<Prepared> {
    let (u, s) = (actor.units(), actor.stored_width());
    let per_rollout = advantages(groups, cfg, actor, obs_dim)?;
    let mut p = Prepared::default();
    let mut kept_units = Vec::new();
    for (r, adv) in groups.rollouts.iter().zip(&per_rollout) {
        let Some((adv, ret)) = adv else { continue };
        let rows = r.first_row..r.first_row + r.steps;
        p.obs
            .extend_from_slice(&groups.obs[rows.start * obs_dim..rows.end * obs_dim]);
        p.stored
            .extend_from_slice(&groups.stored[rows.start * s..rows.end * s]);
        p.old_logp
            .extend_from_slice(&groups.logp[rows.start * u..rows.end * u]);
        p.advantages.extend_from_slice(adv);
        p.returns.extend_from_slice(ret);
        p.rows += r.steps;
        kept_units.push(r.steps * u);
    }
    p.kept_groups = per_rollout
        .chunks(cfg.group_size)
        .filter(|g| g.iter().any(Option::is_some))
        .count();
    let weights = unit_weights(&kept_units, cfg.loss_aggregation, loss_constant);
    for (&units, w) in kept_units.iter().zip(weights) {
        p.weights.extend(std::iter::repeat_n(w as f32, units));
    }
    if cfg.advantage == AdvantageMode::Gae {
        normalize(&mut p.advantages);
    }
    if let (Some(reference), true) = (reference, cfg.kl_coef > 0.0 && p.rows > 0) {
        let ref_logp = score_rows(reference, &p.obs, &p.stored, obs_dim, cfg.temperature, true)?;
        p.ref_logp = Some(ref_logp);
    }
    Ok(p)
}

/// Scales to mean 0 and standard deviation 1 (PPO's advantage normalisation, over the batch).
fn normalize(x: &mut [f32]) {
    let n = x.len().max(1) as f32;
    let mean = x.iter().sum::<f32>() / n;
    let std = (x.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / (n - 1.0).max(1.0)).sqrt();
    x.iter_mut().for_each(|v| *v = (*v - mean) / (std + 1e-8));
}
