//! Images per second through pixel-policy encoders on burn's CPU backend:
//! a PPO minibatch step (forward, backward, Adam) on 400 images and
//! inference on 64, for 64×64 images of 6 channels (two RGB cameras).
//!
//! `cargo run --example encoder_speed -p proprio-learn` (figures in docs/benchmarks.md).

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use proprio::Space;
use proprio_learn::nets::encoder::{CnnConfig, Encoder, ObsLayout};
use std::time::Instant;

fn main() {
    let (side, channels, batch) = (64, 6, 400);
    let space = Space::Image {
        height: side,
        width: side,
        channels,
    };
    let cnn = |channels: &[usize], kernels: &[usize], strides: &[usize], features| CnnConfig {
        channels: channels.to_vec(),
        kernels: kernels.to_vec(),
        strides: strides.to_vec(),
        features,
    };
    let encoders = [
        ("patchify 16-32, 128 (default)", CnnConfig::default()),
        ("patchify 32-64, 256", cnn(&[32, 64], &[4, 2], &[4, 2], 256)),
        (
            "conv 16-32, 128 (kernels 8, 4)",
            cnn(&[16, 32], &[8, 4], &[4, 2], 128),
        ),
        (
            "Nature CNN",
            cnn(&[32, 64, 64], &[8, 4, 3], &[4, 2, 1], 512),
        ),
    ];
    let pixels: Vec<f32> = (0..batch * side * side * channels)
        .map(|i| (i % 251) as f32)
        .collect();
    let device = Device::flex().autodiff();
    let row = side * side * channels;
    for (name, cfg) in encoders {
        let mut rng = proprio::episode_rng(0, 0, 0);
        let layout = ObsLayout::new(&space).expect("an image space");
        let mut encoder = Encoder::new(layout, &cfg, &device, &mut rng).expect("a valid CNN");
        let mut optim = AdamConfig::new().init();
        let x = Tensor::<2>::from_data(TensorData::new(pixels.clone(), [batch, row]), &device);
        let steps = 5;
        let start = Instant::now();
        for _ in 0..steps {
            let loss = encoder.forward(x.clone()).mean();
            let grads = GradientsParams::from_grads(loss.backward(), &encoder);
            encoder = optim.step(1e-4, encoder, grads);
        }
        let train = (steps * batch) as f64 / start.elapsed().as_secs_f64();
        let frozen = encoder.valid();
        let x = Tensor::<2>::from_data(
            TensorData::new(pixels[..64 * row].to_vec(), [64, row]),
            &Device::flex(),
        );
        let start = Instant::now();
        for _ in 0..20 {
            frozen.forward(x.clone()).sum().into_scalar::<f32>();
        }
        let infer = (20 * 64) as f64 / start.elapsed().as_secs_f64();
        println!("{name}: train {train:.0} images/s, inference {infer:.0} images/s");
    }
}
