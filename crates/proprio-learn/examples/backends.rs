//! burn CPU backends on Proprio's learner workloads: `flex` (our default) vs `ndarray`.
//!
//! ```sh
//! cargo run -p proprio-learn --features bench-ndarray --example backends
//! ```
//! Times a PPO Adam step (64-64 tanh MLP, batch 128), a batch-4 inference with
//! readback (one env step of PPO's rollout) and a SAC Adam step (256-256 ReLU, batch 256).

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use proprio::episode_rng;
use proprio_learn::{Activation, Mlp};
use std::time::Instant;

fn adam_step_us(
    device: &Device,
    sizes: &[usize],
    activation: Activation,
    batch: usize,
    steps: usize,
) -> f64 {
    let device = device.clone().autodiff();
    let mut model = Mlp::new(sizes, activation, 1.0, &device, &mut episode_rng(0, 0, 0));
    let mut optim = AdamConfig::new().init();
    let data: Vec<f32> = (0..batch * sizes[0])
        .map(|k| (k as f32 * 0.37).sin())
        .collect();
    let x = Tensor::<2>::from_data(TensorData::new(data, [batch, sizes[0]]), &device);
    let mut run = |n: usize| {
        let start = Instant::now();
        for _ in 0..n {
            let loss = model.forward(x.clone()).square().mean();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(3e-4, model.clone(), grads);
        }
        start.elapsed().as_secs_f64() / n as f64 * 1e6
    };
    run(steps / 10);
    run(steps)
}

fn inference_us(device: &Device, steps: usize) -> f64 {
    let model = Mlp::new(
        &[4, 64, 64, 2],
        Activation::Tanh,
        1.0,
        device,
        &mut episode_rng(0, 0, 0),
    );
    let x = Tensor::<2>::from_data(TensorData::new(vec![0.1f32; 16], [4, 4]), device);
    let start = Instant::now();
    let mut sum = 0.0;
    for _ in 0..steps {
        let out: Vec<f32> = model
            .forward(x.clone())
            .into_data()
            .try_into_vec()
            .unwrap_or_default();
        sum += out.first().copied().unwrap_or(0.0);
    }
    assert!(sum.is_finite());
    start.elapsed().as_secs_f64() / steps as f64 * 1e6
}

fn main() {
    println!("backend  PPO Adam step 64-64 b128   inference b4   SAC Adam step 256-256 b256");
    for (name, device) in [("flex", Device::flex()), ("ndarray", Device::ndarray())] {
        println!(
            "{name:8} {:>22.1} µs {:>12.1} µs {:>24.1} µs",
            adam_step_us(&device, &[4, 64, 64, 1], Activation::Tanh, 128, 2000),
            inference_us(&device, 5000),
            adam_step_us(&device, &[4, 256, 256, 1], Activation::Relu, 256, 200),
        );
    }
}
