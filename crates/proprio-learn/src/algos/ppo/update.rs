//! The PPO clipped-surrogate update (CleanRL `ppo.py`, lines "bootstrap value" to "optimizer.step").

use super::config::PpoConfig;
use crate::base::error::{LearnError, Result};
use crate::base::grad::clip_global_norm;
use crate::estimators::clipped_surrogate;
use crate::nets::actor_critic::ActorCritic;
use crate::nets::head::ActionHead;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::EnvRng;
use proprio::rand::RngExt;

/// The flattened rollout on the training device.
pub struct Batch {
    pub obs: Tensor<2>,
    pub actions: Tensor<2>,
    pub logprobs: Tensor<1>,
    pub advantages: Tensor<1>,
    pub returns: Tensor<1>,
    pub values: Tensor<1>,
}

/// Losses and diagnostics of one update (last minibatch, as CleanRL logs them).
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateStats {
    pub policy_loss: f32,
    pub value_loss: f32,
    pub entropy: f32,
    pub approx_kl: f32,
    pub clip_fraction: f32,
    pub grad_norm: f64,
    /// Mean squared error of the auxiliary prediction, when it is on.
    pub aux_loss: Option<f32>,
}

/// Losses of one minibatch; `ratio` deviation statistics for logging.
pub struct Losses {
    pub total: Tensor<1>,
    pub policy: Tensor<1>,
    pub value: Tensor<1>,
    pub entropy: Tensor<1>,
    pub approx_kl: Tensor<1>,
    pub clip_fraction: Tensor<1>,
    pub aux: Option<Tensor<1>>,
}

/// How far past the action box the bounds penalty starts, in half-widths (rl_games' soft bound 1.1).
const BOUND_MARGIN: f32 = 0.1;

/// The PPO loss on one minibatch (indices into `batch`); `warming`: the
/// critic's value loss alone, on fixed features (`critic_warmup`).
pub fn losses(
    agent: &ActorCritic,
    head: &ActionHead,
    cfg: &PpoConfig,
    batch: &Batch,
    idx: Tensor<1, Int>,
    warming: bool,
) -> Losses {
    let obs = batch.obs.clone().select(0, idx.clone());
    let actions = batch.actions.clone().select(0, idx.clone());
    let old_logprob = batch.logprobs.clone().select(0, idx.clone());
    let mut adv = batch.advantages.clone().select(0, idx.clone());
    let returns = batch.returns.clone().select(0, idx.clone());
    let old_values = batch.values.clone().select(0, idx);

    let (params, new_value, aux) = if warming {
        let (params, value) = agent.forward_critic_only(obs);
        (params, value, None)
    } else {
        agent.forward_with_aux(obs)
    };
    let excess = (cfg.bound_coef > 0.0)
        .then(|| head.bound_excess(params.clone(), BOUND_MARGIN))
        .flatten();
    let (new_logprob, entropy) = head.log_prob_entropy(params, agent.log_std(), actions);
    let log_ratio = new_logprob - old_logprob;
    let ratio = log_ratio.clone().exp();
    let approx_kl = (ratio.clone().sub_scalar(1.0) - log_ratio).mean().detach();
    let clip_fraction = ratio
        .clone()
        .sub_scalar(1.0)
        .abs()
        .greater_elem(cfg.clip_coef)
        .float()
        .mean()
        .detach();

    if cfg.norm_adv {
        let [n] = adv.dims();
        let mean = adv.clone().mean();
        let centered = adv - mean.unsqueeze();
        let std = centered
            .clone()
            .square()
            .sum()
            .div_scalar((n.max(2) - 1) as f32)
            .sqrt();
        adv = centered / std.add_scalar(1e-8).unsqueeze();
    }
    let policy = clipped_surrogate(ratio, adv, cfg.clip_coef);

    let value = if cfg.clip_vloss {
        let unclipped = (new_value.clone() - returns.clone()).square();
        let clipped_value =
            old_values.clone() + (new_value - old_values).clamp(-cfg.clip_coef, cfg.clip_coef);
        let clipped = (clipped_value - returns).square();
        unclipped.max_pair(clipped).mean().mul_scalar(0.5)
    } else {
        (new_value - returns).square().mean().mul_scalar(0.5)
    };
    let entropy = entropy.mean();
    let mut total = if warming {
        value.clone().mul_scalar(cfg.vf_coef)
    } else {
        policy.clone() - entropy.clone().mul_scalar(cfg.ent_coef)
            + value.clone().mul_scalar(cfg.vf_coef)
    };
    if let Some(aux) = &aux {
        total = total + aux.clone().mul_scalar(cfg.aux_coef);
    }
    if let Some(excess) = excess {
        total = total + excess.mul_scalar(cfg.bound_coef);
    }
    Losses {
        total,
        policy,
        value,
        entropy,
        approx_kl,
        clip_fraction,
        aux,
    }
}

/// A device that cannot hold or run the rollout (e.g. a pixel batch past the GPU's largest buffer) fails with its cause and the rollout's size.
fn rollout_failed(e: &impl std::fmt::Display, batch: &Batch) -> LearnError {
    let [rows, width] = batch.obs.dims();
    LearnError::Device(format!(
        "the PPO update failed on the network device: {} (the rollout holds {rows} observations of {width} values, {:.1} GB; lower num_envs or num_steps, or use --device cpu)",
        root_cause(&e.to_string()),
        (rows * width * 4) as f64 / 1e9
    ))
}

/// The innermost `Caused by:` line of a burn execution error (its whole text spans dozens of lines).
fn root_cause(text: &str) -> &str {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .rposition(|l| l.trim() == "Caused by:")
        .and_then(|i| lines.get(i + 1))
        .or(lines.first())
        .map_or("", |l| l.trim())
}

fn scalar(t: Tensor<1>) -> f32 {
    t.into_scalar::<f32>()
}

/// Runs `update_epochs` epochs of minibatch Adam steps on `batch` (the
/// critic's alone while `warming`).
#[allow(clippy::too_many_arguments)]
pub fn update(
    mut agent: ActorCritic,
    optim: &mut ModuleOptimizer,
    head: &ActionHead,
    cfg: &PpoConfig,
    batch: &Batch,
    lr: f64,
    warming: bool,
    rng: &mut EnvRng,
    device: &Device,
) -> Result<(ActorCritic, UpdateStats)> {
    let size = cfg.batch_size();
    let mut order: Vec<usize> = (0..size).collect();
    let mut stats = UpdateStats::default();
    let mut clip_fractions = Vec::new();
    for _ in 0..cfg.update_epochs {
        // Fisher–Yates with the learner's own generator: the same order on every backend.
        for i in (1..size).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for chunk in order.chunks(cfg.minibatch_size()) {
            let ids: Vec<i64> = chunk.iter().map(|&i| i as i64).collect();
            let idx = Tensor::<1, Int>::from_data(TensorData::new(ids, [chunk.len()]), device);
            let l = losses(&agent, head, cfg, batch, idx, warming);
            let total = l
                .total
                .clone()
                .try_into_scalar::<f32>()
                .map_err(|e| rollout_failed(&e, batch))?;
            if !total.is_finite() {
                return Err(LearnError::Diverged(format!("PPO loss is {total}")));
            }
            stats.approx_kl = scalar(l.approx_kl);
            clip_fractions.push(scalar(l.clip_fraction));
            stats.policy_loss = scalar(l.policy.clone());
            stats.value_loss = scalar(l.value.clone());
            stats.entropy = scalar(l.entropy.clone());
            stats.aux_loss = l.aux.clone().map(scalar);
            let mut grads = GradientsParams::from_grads(l.total.backward(), &agent);
            stats.grad_norm = clip_global_norm(&agent, &mut grads, cfg.max_grad_norm);
            agent = optim.step(lr, agent, grads);
        }
        if cfg.target_kl.is_some_and(|kl| stats.approx_kl > kl) {
            break;
        }
    }
    stats.clip_fraction = clip_fractions.iter().sum::<f32>() / clip_fractions.len().max(1) as f32;
    Ok((agent, stats))
}

#[cfg(test)]
mod tests {
    use super::root_cause;

    #[test]
    fn a_device_failure_is_told_by_its_innermost_cause() {
        // As burn's wgpu backend reported a 1024-env pixel rollout on an H100.
        let text = "Execution(An error happened during execution\nCaused by:\n  Several failures at once\nCaused by:\n  The bytes were never written (failure #3515, still claiming 41 buffer(s))\n  skipped `KernelBinop`\nCaused by:\n  An IO error happened\nCaused by:\n  can't allocate buffer of size: 5043200000\nNo backtrace available\nAsked at:\nNo backtrace available)";
        assert_eq!(
            root_cause(text),
            "can't allocate buffer of size: 5043200000"
        );
        assert_eq!(root_cause("out of memory"), "out of memory");
    }
}
