//! The estimators learners share: GAE, the clipped surrogates of PPO and of
//! DAPO, explained variance, and the k3 KL estimator.

use burn::prelude::*;

/// Generalised advantage estimation over a rollout laid out `[T, N]`.
///
/// `dones[t]` says that `obs[t]` starts a new episode (CleanRL's convention);
/// `next_value` and `next_done` describe the observation after the last step.
/// Truncated episodes are bootstrapped before this, by adding γ·V(final obs)
/// to their last reward, so a done here always cuts the return.
pub fn gae(
    rewards: &[f32],
    values: &[f32],
    dones: &[f32],
    next_value: &[f32],
    next_done: &[f32],
    gamma: f32,
    lambda: f32,
) -> (Vec<f32>, Vec<f32>) {
    let n = next_value.len();
    let steps = rewards.len() / n;
    let mut advantages = vec![0.0; rewards.len()];
    let mut last = vec![0.0f32; n];
    for t in (0..steps).rev() {
        for i in 0..n {
            let k = t * n + i;
            let (next_nonterminal, next_values) = if t + 1 == steps {
                (1.0 - next_done[i], next_value[i])
            } else {
                (1.0 - dones[k + n], values[k + n])
            };
            let delta = rewards[k] + gamma * next_values * next_nonterminal - values[k];
            last[i] = delta + gamma * lambda * next_nonterminal * last[i];
            advantages[k] = last[i];
        }
    }
    let returns = advantages.iter().zip(values).map(|(a, v)| a + v).collect();
    (advantages, returns)
}

/// PPO's clipped surrogate loss `mean(max(−A·ρ, −A·clip(ρ, 1−ε, 1+ε)))` for ratios `ρ`.
pub fn clipped_surrogate(ratio: Tensor<1>, advantages: Tensor<1>, clip: f32) -> Tensor<1> {
    let unclipped = advantages.clone().neg() * ratio.clone();
    let clipped = advantages.neg() * ratio.clamp(1.0 - clip, 1.0 + clip);
    unclipped.max_pair(clipped).mean()
}

/// 1 − Var(returns − values) / Var(returns) (NaN when the returns do not vary).
pub fn explained_variance(values: &[f32], returns: &[f32]) -> f64 {
    let var = |x: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = x.collect();
        let m = v.iter().sum::<f64>() / v.len().max(1) as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len().max(1) as f64
    };
    let var_y = var(&mut returns.iter().map(|&y| f64::from(y)));
    let var_diff = var(&mut returns.iter().zip(values).map(|(&y, &v)| f64::from(y - v)));
    if var_y == 0.0 {
        f64::NAN
    } else {
        1.0 - var_diff / var_y
    }
}

/// DAPO's clipped surrogate per unit: `−min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A)`.
pub fn clipped_surrogate_per_unit(
    ratio: Tensor<2>,
    advantages: Tensor<2>,
    clip_low: f32,
    clip_high: f32,
) -> Tensor<2> {
    let unclipped = advantages.clone().neg() * ratio.clone();
    let clipped = advantages.neg() * ratio.clamp(1.0 - clip_low, 1.0 + clip_high);
    unclipped.max_pair(clipped)
}

/// Schulman's k3 estimator of KL(π ‖ π_ref) per unit: `π_ref/π − log(π_ref/π) − 1`, always ≥ 0.
pub fn k3(logp: Tensor<2>, ref_logp: Tensor<2>) -> Tensor<2> {
    let log_ratio = ref_logp - logp;
    log_ratio.clone().exp() - log_ratio - 1.0
}
