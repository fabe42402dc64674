//! The group learner's loss on `[rows, units]` tensors: the clipped surrogate
//! with separate low and high clips, and the k3 KL estimator.

use burn::prelude::*;

/// DAPO's clipped surrogate per unit: `−min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A)`.
pub fn clipped_surrogate(
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
