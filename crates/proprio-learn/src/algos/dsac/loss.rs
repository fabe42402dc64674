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

/// Added to σ² and σ³ where they divide, and to ω (the authors' code: 0.1),
/// so a critic whose σ shrinks towards 0 cannot blow its gradients up.
pub const STD_BIAS: f32 = 0.1;

/// The critic loss of both critics, summed: a surrogate whose gradients are
/// the paper's (its value is not a likelihood).
///
/// - `mean`, `std` `[2, B, 1]`: the critics' value distributions at `(s, a)`;
/// - `target` `[B, 1]`: `r + γ(1 − d)(min_i Q̄ᵢ(s′, a′) − α log π(a′|s′))`, the
///   expected value that replaces a sample in the mean's gradient;
/// - `target_sample` `[B, 1]`: the same with a sample of the target critic of
///   the smaller mean instead of `min_i Q̄ᵢ`, which trains σ.
///
/// Per critic `i`, with `sg` a stopped gradient, `ε` = [`STD_BIAS`],
/// `bᵢ = ξ · mean(sg σᵢ)`, `yᵢ = sg Qᵢ + clip(target_sample − sg Qᵢ, −bᵢ, bᵢ)`
/// and `ωᵢ = mean(sg σᵢ)² + ε`:
/// `ωᵢ · mean[(Qᵢ − target)² / (2(sg σᵢ² + ε)) − sg(((sg Qᵢ − yᵢ)² − σᵢ²) / (σᵢ³ + ε)) · σᵢ]`,
/// whose σ-gradient is the Gaussian likelihood's, `−((Q − y)² − σ²) / σ³`,
/// with ε in the denominator.
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
    let mean_sigma = sigma.clone().mean_dim(1);
    // Per-critic bound: ξ times that critic's mean σ over the batch.
    let bound = mean_sigma.clone().mul_scalar(TD_BOUND_SIGMAS);
    let bound = bound.expand([two, batch, 1]);
    let difference = (target_sample - q.clone())
        .max_pair(bound.clone().neg())
        .min_pair(bound);
    let weight = mean_sigma
        .square()
        .add_scalar(STD_BIAS)
        .expand([two, batch, 1]);
    let mean_term =
        (mean - target).square() / variance.clone().add_scalar(STD_BIAS).mul_scalar(2.0);
    let std_grad =
        (difference.square() - variance.clone()) / (variance * sigma).add_scalar(STD_BIAS);
    let std_term = std_grad.neg() * std;
    // mean() averages over both critics too: ×2 makes it the sum of their losses.
    ((mean_term + std_term) * weight).mean().mul_scalar(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::host;

    fn t3(values: &[f32]) -> Tensor<3> {
        Tensor::from_data(
            TensorData::new(values.to_vec(), [2, 2, 1]),
            &Device::default(),
        )
    }

    fn t2(values: &[f32]) -> Tensor<2> {
        Tensor::from_data(TensorData::new(values.to_vec(), [2, 1]), &Device::default())
    }

    /// Two critics, two transitions, worked by hand (ε = 0.1):
    /// σ = (1, 2 | 0.5, 1): bounds b₁ = 3·1.5 = 4.5, b₂ = 3·0.75 = 2.25;
    /// ω₁ = 1.5² + ε = 2.35, ω₂ = 0.75² + ε = 0.6625.
    /// Critic 1, Q = (0, 1), targets (1, −1), samples (10, 0): clipped
    /// differences (4.5, −1) → mean terms (1/2.2, 4/8.2), σ terms
    /// −(20.25 − 1)/1.1 · 1 and −(1 − 4)/8.1 · 2.
    /// Critic 2, Q = (2, −1), σ = (0.5, 1): differences (2.25, 1) → mean terms
    /// (1/0.7, 0/2.2), σ terms −(5.0625 − 0.25)/0.225 · 0.5 and −(1 − 1)/1.1 · 1.
    #[test]
    fn the_critic_loss_matches_a_hand_worked_case() {
        let mean = t3(&[0.0, 1.0, 2.0, -1.0]);
        let std = t3(&[1.0, 2.0, 0.5, 1.0]);
        let loss = critic_loss(mean, std, t2(&[1.0, -1.0]), t2(&[10.0, 0.0]));
        let critic1 = (1.0 / 2.2 - 19.25 / 1.1) + (4.0 / 8.2 + 6.0 / 8.1);
        let critic2 = (1.0 / 0.7 - 4.8125 / 0.225 * 0.5) + 0.0;
        let want = 2.35 * critic1 / 2.0 + 0.6625 * critic2 / 2.0;
        let got = f64::from(host(loss).unwrap()[0]);
        assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    }

    /// The σ-gradient is the Gaussian likelihood's with ε below: for one
    /// transition with Q on its target, `ω · −(d² − σ²) / (σ³ + ε)` per critic.
    #[test]
    fn the_std_gradient_is_the_likelihoods_with_the_bias() {
        let device = Device::default().autodiff();
        let std = Tensor::<3>::from_data(TensorData::new(vec![1.0f32, 0.5], [2, 1, 1]), &device)
            .require_grad();
        let mean = Tensor::<3>::from_data(TensorData::new(vec![0.0f32, 0.0], [2, 1, 1]), &device);
        let target = Tensor::<2>::from_data(TensorData::new(vec![0.0f32], [1, 1]), &device);
        let sample = Tensor::<2>::from_data(TensorData::new(vec![1.0f32], [1, 1]), &device);
        let grads = critic_loss(mean, std.clone(), target, sample).backward();
        let got = host(std.grad(&grads).unwrap()).unwrap();
        // d = 1 (inside both bounds, 3σ); ω = σ² + ε; ×2 over critics, ÷2 by the mean.
        let want = |s: f64| -(s * s + 0.1) * (1.0 - s * s) / (s * s * s + 0.1);
        assert!((f64::from(got[0]) - want(1.0)).abs() < 1e-5, "{got:?}");
        assert!((f64::from(got[1]) - want(0.5)).abs() < 1e-5, "{got:?}");
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
