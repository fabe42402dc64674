//! TD3's two departures from DDPG on toys: the smoothed target action and the
//! delayed actor and target updates.

use super::*;
use crate::nets::mlp::Activation;
use burn::module::{ModuleVisitor, Param};
use proprio::episode_rng;

fn device() -> Device {
    Device::default().autodiff()
}

#[test]
fn smoothing_noise_is_clipped_then_the_action_is_kept_in_the_box() {
    let dev = device();
    // Half-widths 2 and 0.5: a clip of 0.5 half-widths is ±1 and ±0.25.
    let b = ActionBox::new(&[-2.0, 0.0], &[2.0, 1.0], &dev);
    let target = matrix(&[0.0, 0.5, 1.5, 0.9, 0.0, 0.5], 3, 2, &dev);
    let eps = matrix(&[100.0, -100.0, 100.0, 100.0, 0.5, 1.0], 3, 2, &dev);
    let out = host(smoothed(target, eps, 0.2, 0.5, &b)).unwrap();
    let want = [
        1.0, 0.25, // both noises clipped to +c, −c
        2.0, 1.0, // clipped noise, then clipped to the box's upper bounds
        0.2, 0.6, // unclipped: 0.2·0.5·2 and 0.2·1·0.5
    ];
    for (got, want) in out.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{out:?} vs {want:?}");
    }
}

fn learner(policy_frequency: u64) -> (TwinDelayed, EnvRng) {
    let dev = device();
    let mut rng = episode_rng(3, 0, 0);
    let cfg = Td3Config {
        hidden: vec![8],
        policy_frequency,
        ..Td3Config::default()
    };
    let shape = Shape {
        obs_dim: 3,
        low: &[-1.0],
        high: &[1.0],
        device: &dev,
    };
    (TwinDelayed::new(cfg, &shape, &mut rng), rng)
}

fn batch(device: &Device) -> Minibatch {
    let obs: Vec<f32> = (0..12).map(|i| (i as f32 * 0.37).sin()).collect();
    Minibatch {
        obs: matrix(&obs, 4, 3, device),
        actions: matrix(&[0.5, -0.5, 0.1, 0.9], 4, 1, device),
        rewards: matrix(&[1.0, 0.0, -1.0, 2.0], 4, 1, device),
        next_obs: matrix(&obs, 4, 3, device).mul_scalar(0.5),
        not_done: matrix(&[1.0, 1.0, 0.0, 1.0], 4, 1, device),
    }
}

/// Every parameter of a module, flattened, for before/after comparisons.
fn weights<M: Module>(module: &M) -> Vec<f32> {
    struct Flatten(Vec<f32>);
    impl ModuleVisitor for Flatten {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0
                .extend(host(param.val().flatten::<1>(0, D - 1)).unwrap());
        }
    }
    let mut flat = Flatten(Vec::new());
    module.visit(&mut flat);
    flat.0
}

#[test]
fn the_actor_and_the_targets_move_only_every_policy_frequency_steps() {
    let (mut td3, mut rng) = learner(3);
    let dev = td3.device.clone();
    let snapshot = |t: &TwinDelayed| {
        (
            weights(&t.actor),
            weights(&t.target_actor),
            weights(&t.critics),
            weights(&t.target_critics),
        )
    };
    let mut last = snapshot(&td3);
    for iteration in 1..=6 {
        td3.update(batch(&dev), iteration, &mut rng).unwrap();
        let now = snapshot(&td3);
        assert_ne!(
            now.2, last.2,
            "step {iteration}: the critics learn every step"
        );
        let delayed = iteration % 3 == 0;
        assert_eq!(now.0 != last.0, delayed, "step {iteration}: actor");
        assert_eq!(now.1 != last.1, delayed, "step {iteration}: target actor");
        assert_eq!(now.3 != last.3, delayed, "step {iteration}: target critics");
        last = now;
    }
}

#[test]
fn the_activation_key_reaches_both_critics_and_old_configs_read_as_relu() {
    let dev = device();
    let obs = matrix(&[0.3, -0.7, 0.2, 0.9, 0.1, -0.4], 2, 3, &dev);
    let act = matrix(&[0.5, -0.2], 2, 1, &dev);
    let q = |critics: &TwinCritic, k: f32| {
        let both = critics.forward(obs.clone().mul_scalar(k), act.clone().mul_scalar(k));
        (
            host(both).unwrap(),
            host(critics.first(obs.clone().mul_scalar(k), act.clone().mul_scalar(k))).unwrap(),
        )
    };
    let mut rng = episode_rng(5, 0, 0);
    // Biases start at 0, so a ReLU network is positively homogeneous: q(2x) = 2 q(x).
    let relu = TwinCritic::new(4, &[16, 16], 1, Activation::Relu, &dev, &mut rng);
    let ((both1, first1), (both2, first2)) = (q(&relu, 1.0), q(&relu, 2.0));
    for (a, b) in both1.iter().chain(&first1).zip(both2.iter().chain(&first2)) {
        assert!((2.0 * a - b).abs() < 1e-4 * b.abs().max(1.0), "{a} {b}");
    }
    // A tanh network saturates: far inputs give the same output, which ReLU's would not.
    let tanh = TwinCritic::new(4, &[16, 16], 1, Activation::Tanh, &dev, &mut rng);
    let ((both1, first1), (both2, first2)) = (q(&tanh, 1e3), q(&tanh, 2e3));
    for (a, b) in both1.iter().chain(&first1).zip(both2.iter().chain(&first2)) {
        assert!((a - b).abs() < 1e-4, "{a} {b}");
    }
    assert_eq!(&both1[..2], &first1[..], "first() is the first critic");
    let mut old = proprio::serde_json::to_value(Td3Config::default()).unwrap();
    old.as_object_mut().unwrap().remove("activation");
    let cfg: Td3Config = proprio::serde_json::from_value(old).unwrap();
    assert_eq!(cfg.activation, Activation::Relu);
}
