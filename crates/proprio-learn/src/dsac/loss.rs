//! DSAC-T's critic loss: a Gaussian value distribution per critic, trained
//! with expected-value substitution, twin value distribution learning and
//! variance-based critic gradient adjustment (Duan et al. 2023, §III).

use burn::prelude::*;

/// The clipping bound of a sampled target, in the batch's mean standard deviations (the paper's ξ).
pub const TD_BOUND_SIGMAS: f32 = 3.0;

/// The standard-normal draws of a target sample are clipped to ± this (as the authors' code).
pub const SAMPLE_CLIP: f32 = 3.0;

/// Mean `[2, B, 1]` and standard deviation `[2, B, 1]` of both critics' value
/// distributions, from the twin critic's raw `[2, B, 2]` output (mean, log σ).
pub fn gaussian(out: Tensor<3>) -> (Tensor<3>, Tensor<3>) {
    let [two, batch, _] = out.dims();
    let mean = out.clone().slice([0..two, 0..batch, 0..1]);
    let log_std = out.slice([0..two, 0..batch, 1..2]).clamp(-10.0, 10.0);
    (mean, log_std.exp())
}

/// The critic loss of both critics, summed.
///
/// - `mean`, `std` `[2, B, 1]`: the critics' value distributions at `(s, a)`;
/// - `target` `[B, 1]`: `r + γ(1 − d)(min_i Q̄ᵢ(s′, a′) − α log π(a′|s′))`, the
///   expected value that replaces a sample in the mean's gradient;
/// - `target_sample` `[B, 1]`: the same with a sample of the target critic of
///   the smaller mean instead of `min_i Q̄ᵢ`, which trains σ.
///
/// Per critic `i`, with `sg` a stopped gradient, `b_i = ξ · mean(sg σᵢ)`,
/// `yᵢ = sg Qᵢ + clip(target_sample − sg Qᵢ, −bᵢ, bᵢ)` and
/// `ω = ½ Σᵢ mean(sg σᵢ²)`:
/// `ω · mean[(Qᵢ − target)² / (2 sg σᵢ²) + (sg Qᵢ − yᵢ)² / (2 σᵢ²) + ln σᵢ]`.
pub fn critic_loss(
    mean: Tensor<3>,
    std: Tensor<3>,
    target: Tensor<2>,
    target_sample: Tensor<2>,
) -> Tensor<1> {
    let [two, batch, _] = mean.dims();
    let target = target.unsqueeze_dim::<3>(0).expand([two, batch, 1]);
    let target_sample = target_sample.unsqueeze_dim::<3>(0).expand([two, batch, 1]);
    let (q, sigma) = (mean.clone().detach(), std.clone().detach());
    let variance = sigma.clone().square();
    // Per-critic bound: ξ times that critic's mean σ over the batch.
    let bound = sigma.mean_dim(1).mul_scalar(TD_BOUND_SIGMAS);
    let bound = bound.expand([two, batch, 1]);
    let difference = (target_sample - q.clone())
        .max_pair(bound.clone().neg())
        .min_pair(bound);
    let bounded = q.clone() + difference;
    let weight = variance.clone().mean().detach();
    let mean_term = (mean - target).square() / variance.mul_scalar(2.0);
    let std_term = (q - bounded).square() / std.clone().square().mul_scalar(2.0) + std.log();
    // mean() averages over both critics too: ×2 makes it the sum of their losses.
    (mean_term + std_term).mean().mul(weight).mul_scalar(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::host;

    fn t3(values: &[f32]) -> Tensor<3> {
        Tensor::from_data(
            TensorData::new(values.to_vec(), [2, 2, 1]),
            &Device::default(),
        )
    }

    fn t2(values: &[f32]) -> Tensor<2> {
        Tensor::from_data(TensorData::new(values.to_vec(), [2, 1]), &Device::default())
    }

    /// Two critics, two transitions, worked by hand:
    /// σ = (1, 2 | 0.5, 1): bounds b₁ = 3·1.5 = 4.5, b₂ = 3·0.75 = 2.25;
    /// ω = ½(mean(1, 4) + mean(0.25, 1)) = ½(2.5 + 0.625) = 1.5625.
    /// Critic 1, Q = (0, 1), targets (1, −1), samples (10, 0):
    ///   y = (0 + 4.5, 1 − 1) → terms (1/2 + 20.25/2 + 0) and (4/8 + 1/8 + ln 2).
    /// Critic 2, Q = (2, −1), σ = (0.5, 1):
    ///   y = (2 + 2.25, −1 + 1) → terms (1/0.5 + 5.0625/0.5 + ln 0.5) and (0/2 + 1/2 + 0).
    #[test]
    fn the_critic_loss_matches_a_hand_worked_case() {
        let mean = t3(&[0.0, 1.0, 2.0, -1.0]);
        let std = t3(&[1.0, 2.0, 0.5, 1.0]);
        let loss = critic_loss(mean, std, t2(&[1.0, -1.0]), t2(&[10.0, 0.0]));
        let ln2 = std::f64::consts::LN_2;
        let critic1 = (0.5 + 10.125) + (0.5 + 0.125 + ln2);
        let critic2 = (2.0 + 10.125 - ln2) + 0.5;
        let want = 1.5625 * (critic1 / 2.0 + critic2 / 2.0);
        let got = f64::from(host(loss).unwrap()[0]);
        assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    }

    #[test]
    fn the_raw_output_splits_into_a_mean_and_a_positive_std() {
        let out = Tensor::<3>::from_data(
            TensorData::new(vec![1.0f32, 0.0, -2.0, 100.0], [2, 1, 2]),
            &Device::default(),
        );
        let (mean, std) = gaussian(out);
        assert_eq!(host(mean).unwrap(), vec![1.0, -2.0]);
        let std = host(std).unwrap();
        assert!((std[0] - 1.0).abs() < 1e-6 && (std[1] - 10f32.exp()).abs() < 1.0);
    }
}
