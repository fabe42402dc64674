//! ArCHer's two updates. The critic learns from replayed turns by TD, a
//! whole turn one action; the actor answers each replayed observation
//! afresh and follows the critic's advantage of that answer, token by
//! token, less its own token baseline.

use super::config::ArcherConfig;
use crate::base::error::{LearnError, Result};
use crate::base::grad::clip_global_norm;
use crate::base::tensor::{host, matrix, vector};
use crate::nets::sequence::SequencePolicy;
use crate::nets::turn_critic::TurnCritic;
use crate::replay::Sample;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::EnvRng;

/// What one critic step measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct CriticStats {
    /// Mean squared TD error of both Q critics.
    pub q_loss: f32,
    /// Mean squared error of both V critics.
    pub v_loss: f32,
    /// Mean Q(s, a) of the first critic.
    pub q_mean: f32,
}

/// What one actor step measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActorStats {
    /// Policy-gradient loss.
    pub pg_loss: f32,
    /// Mean squared error of the token baseline.
    pub baseline_loss: f32,
    /// Mean turn advantage min Q(s, a) − min V(s) of the fresh answers.
    pub advantage: f32,
    /// Mean entropy per token.
    pub entropy: f32,
}

/// Q's TD target per turn: `r + γ · (1 − terminated) · V̄(s′)` (a truncated turn still bootstraps).
pub fn q_targets(rewards: &[f32], terminated: &[f32], next_v: &[f32], gamma: f32) -> Vec<f32> {
    rewards
        .iter()
        .zip(terminated)
        .zip(next_v)
        .map(|((r, done), v)| r + gamma * (1.0 - done) * v)
        .collect()
}

fn tokens(answers: &[f32]) -> Vec<i64> {
    answers.iter().map(|&t| t as i64).collect()
}

fn finite(loss: f32, what: &str) -> Result<f32> {
    if loss.is_finite() {
        Ok(loss)
    } else {
        Err(LearnError::Diverged(format!(
            "ArCHer's {what} loss is {loss}"
        )))
    }
}

/// One critic step on `batch`: Q(s, a) toward [`q_targets`] of the target
/// critics' smaller V(s′), V(s) toward the target critics' smaller
/// Q(s, a_π), where `policy_answers` are the actor's answers to `s` (clipped
/// double Q for both). Returns the critic and what the step measured.
#[allow(clippy::too_many_arguments)]
pub fn critic_step(
    critic: TurnCritic,
    target: &TurnCritic,
    optim: &mut ModuleOptimizer,
    batch: &Sample,
    policy_answers: &[i64],
    cfg: &ArcherConfig,
    device: &Device,
) -> Result<(TurnCritic, CriticStats)> {
    let n = batch.rewards.len();
    let answers = tokens(&batch.actions);
    // Targets on the host: no gradient reaches the target critics.
    let next_v = host(target.values(&batch.next_obs, &answers, n).min().1)?;
    let y_q = q_targets(&batch.rewards, &batch.terminated, &next_v, cfg.gamma);
    let y_v = host(target.values(&batch.obs, policy_answers, n).min().0)?;
    let (y_q, y_v) = (vector(&y_q, device), vector(&y_v, device));
    let values = critic.values(&batch.obs, &answers, n);
    let q_mean = host(values.q[0].clone().mean())?[0];
    let q_loss = values
        .q
        .into_iter()
        .map(|q| (q - y_q.clone()).square().mean())
        .reduce(|a, b| a + b)
        .ok_or_else(|| LearnError::Config("no critics".into()))?;
    let v_loss = values
        .v
        .into_iter()
        .map(|v| (v - y_v.clone()).square().mean())
        .reduce(|a, b| a + b)
        .ok_or_else(|| LearnError::Config("no critics".into()))?;
    let stats = CriticStats {
        q_loss: finite(q_loss.clone().into_scalar::<f32>(), "Q")? / 2.0,
        v_loss: finite(v_loss.clone().into_scalar::<f32>(), "V")? / 2.0,
        q_mean,
    };
    let mut grads = GradientsParams::from_grads((q_loss + v_loss).backward(), &critic);
    clip_global_norm(&critic, &mut grads, cfg.max_grad_norm);
    Ok((optim.step(cfg.critic_lr, critic, grads), stats))
}

/// One actor step on the observations `obs` (`[n × D]`, from the replay):
/// the actor answers them afresh, the critic values those answers
/// (advantage `min Q − min V`), each token's log-probability is pushed by
/// that advantage less the token's baseline, and the value head learns the
/// advantage as that baseline (ArCHer with a token-level baseline).
#[allow(clippy::too_many_arguments)]
pub fn actor_step(
    actor: SequencePolicy,
    critic: &TurnCritic,
    optim: &mut ModuleOptimizer,
    obs: &[f32],
    n: usize,
    cfg: &ArcherConfig,
    rng: &mut EnvRng,
    device: &Device,
) -> Result<(SequencePolicy, ActorStats)> {
    let (answers, _) = actor
        .valid()
        .generate(obs, n, cfg.temperature, false, rng)?;
    let (q, v) = critic.values(obs, &answers, n).min();
    let advantage = host(q - v)?;
    let a = actor.answer_len();
    let per_token: Vec<f32> = advantage
        .iter()
        .flat_map(|&x| std::iter::repeat_n(x, a))
        .collect();
    let per_token = matrix(&per_token, n, a, device);
    let (logp, entropy, baseline) = actor.score_answers(obs, &answers, n, cfg.temperature);
    let mut residual = per_token.clone() - baseline.clone().detach();
    if cfg.normalize_advantage {
        // Scale-free steps: a rare reward leaves advantages of a few thousandths,
        // which the entropy bonus would drown (PPO's advantage normalisation, without the shift).
        let std = residual.clone().square().mean().sqrt().add_scalar(1e-8);
        residual = residual / std.unsqueeze::<2>();
    }
    let pg = (residual * logp).sum_dim(1).mean().neg();
    let baseline_loss = (baseline - per_token).square().mean();
    let entropy_mean = entropy.mean();
    let loss = pg.clone() + baseline_loss.clone().mul_scalar(cfg.vf_coef)
        - entropy_mean.clone().mul_scalar(cfg.ent_coef);
    finite(loss.clone().into_scalar::<f32>(), "actor")?;
    let stats = ActorStats {
        pg_loss: pg.into_scalar::<f32>(),
        baseline_loss: baseline_loss.into_scalar::<f32>(),
        advantage: advantage.iter().sum::<f32>() / n.max(1) as f32,
        entropy: entropy_mean.into_scalar::<f32>(),
    };
    let mut grads = GradientsParams::from_grads(loss.backward(), &actor);
    clip_global_norm(&actor, &mut grads, cfg.max_grad_norm);
    Ok((optim.step(cfg.actor_lr, actor, grads), stats))
}
