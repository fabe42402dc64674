//! Where a small network's update goes: forward, backward and Adam, timed
//! apart, for the shapes Proprio's state-based learners train.
//!
//! ```sh
//! cargo run -p proprio-learn --example update_cost [-- NAME]   # only the cases whose name contains NAME
//! ```
//! The `proprio` command's learners keep glibc's freed blocks in the heap
//! (`proprio-cli`'s `learn/heap.rs`); for the same heap here, run with
//! `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824`.
//! Each row is one Adam step of an MLP on a fixed batch (a mean-square loss),
//! split into the forward pass, `backward()` and the learners' Adam step
//! (`base::adam`); `GFLOP/s` counts the forward product and the backward's
//! two per layer.

use burn::optim::GradientsParams;
use burn::prelude::*;
use proprio::episode_rng;
use proprio_learn::base::adam::{BURN_EPSILON, adam};
use proprio_learn::{Activation, Mlp};
use std::time::{Duration, Instant};

/// One network shape and batch.
struct Case {
    name: &'static str,
    sizes: &'static [usize],
    activation: Activation,
    batch: usize,
}

const CASES: [Case; 5] = [
    Case {
        name: "PPO pick-cube actor 128-128, minibatch 1600",
        sizes: &[49, 128, 128, 8],
        activation: Activation::Tanh,
        batch: 1600,
    },
    Case {
        name: "PPO hover 64-64, minibatch 1024",
        sizes: &[22, 64, 64, 4],
        activation: Activation::Tanh,
        batch: 1024,
    },
    Case {
        name: "TD3 hover critic 64-64, batch 256",
        sizes: &[26, 64, 64, 1],
        activation: Activation::Relu,
        batch: 256,
    },
    Case {
        name: "SAC Pendulum critic 256-256, batch 256",
        sizes: &[4, 256, 256, 1],
        activation: Activation::Relu,
        batch: 256,
    },
    Case {
        name: "PPO 64-64 tanh, batch 128 (the 541 µs figure)",
        sizes: &[4, 64, 64, 1],
        activation: Activation::Tanh,
        batch: 128,
    },
];

fn main() {
    let device = Device::flex().autodiff();
    println!(
        "{:48} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "case", "forward", "backward", "adam", "total", "GFLOP/s"
    );
    let only = std::env::args().nth(1).unwrap_or_default();
    for case in CASES.into_iter().filter(|c| c.name.contains(only.as_str())) {
        let mut model = Mlp::new(
            case.sizes,
            case.activation,
            1.0,
            &device,
            &mut episode_rng(0, 0, 0),
        );
        let mut optim = adam(BURN_EPSILON);
        let data: Vec<f32> = (0..case.batch * case.sizes[0])
            .map(|k| (k as f32 * 0.37).sin())
            .collect();
        let x = Tensor::<2>::from_data(TensorData::new(data, [case.batch, case.sizes[0]]), &device);
        let steps = (2_000_000 / case.batch.max(1)).clamp(50, 4000);
        let mut parts = [Duration::ZERO; 3];
        for k in 0..steps + steps / 10 {
            let t0 = Instant::now();
            let loss = model.forward(x.clone()).square().mean();
            let t1 = Instant::now();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            let t2 = Instant::now();
            model = optim.step(3e-4, model, grads);
            let t3 = Instant::now();
            if k >= steps / 10 {
                parts[0] += t1 - t0;
                parts[1] += t2 - t1;
                parts[2] += t3 - t2;
            }
        }
        let us = parts.map(|d| d.as_secs_f64() / steps as f64 * 1e6);
        let macs: usize = case.sizes.windows(2).map(|w| w[0] * w[1]).sum::<usize>() * case.batch;
        // Forward, and backward's two products per layer: 3 products, 2 flops each.
        let gflops = 6.0 * macs as f64 / us.iter().sum::<f64>() / 1e3;
        println!(
            "{:48} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            case.name,
            us[0],
            us[1],
            us[2],
            us.iter().sum::<f64>(),
            gflops
        );
    }
}
