//! A multi-layer perceptron with CleanRL's orthogonal initialisation.

use crate::base::polyak::polyak;
use crate::nets::head::standard_normal;
use burn::module::Param;
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use proprio::EnvRng;
use serde::{Deserialize, Serialize};

/// Hidden-layer non-linearity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// `tanh`, CleanRL's PPO choice.
    Tanh,
    /// `max(x, 0)`, CleanRL's SAC choice.
    Relu,
}

/// `tanh x = 2σ(2x) − 1`, through the backend's fused sigmoid (flex: `expf`).
/// Flex's own `tanh` calls libm's `tanhf`, whose `expm1f` took over half of a
/// PPO run's time on pick-cube (`perf`); this one agrees within 3e-7 (tested).
pub fn tanh<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    burn::tensor::activation::sigmoid(x.mul_scalar(2.0))
        .mul_scalar(2.0)
        .sub_scalar(1.0)
}

/// Fully connected layers with an activation between them (none after the last).
#[derive(Module, Debug)]
pub struct Mlp {
    layers: Vec<Linear>,
    #[module(skip)]
    activation: Activation,
}

impl Mlp {
    /// Layers `sizes[0] → sizes[1] → … → sizes[n]`. Hidden weights are orthogonal
    /// with gain √2, the output layer's with `out_gain`; biases start at 0
    /// (CleanRL's `layer_init`). Weights are drawn on the host from `rng`, so
    /// they are the same on every backend and independent of burn's global seed.
    pub fn new(
        sizes: &[usize],
        activation: Activation,
        out_gain: f64,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Self {
        let last = sizes.len().saturating_sub(2);
        let layers = sizes
            .windows(2)
            .enumerate()
            .map(|(k, w)| {
                let gain = if k == last { out_gain } else { 2f64.sqrt() };
                let mut layer = LinearConfig::new(w[0], w[1]).with_bias(false).init(device);
                let weight = orthogonal(w[0], w[1], gain, rng);
                layer.weight = Param::from_tensor(Tensor::from_data(
                    TensorData::new(weight, [w[0], w[1]]),
                    device,
                ));
                layer.bias = Some(Param::from_tensor(Tensor::zeros([w[1]], device)));
                layer
            })
            .collect();
        Self { layers, activation }
    }

    /// Applies the network to a batch `[B, in]`, giving `[B, out]`.
    pub fn forward(&self, mut x: Tensor<2>) -> Tensor<2> {
        let last = self.layers.len().saturating_sub(1);
        for (k, layer) in self.layers.iter().enumerate() {
            x = layer.forward(x);
            if k < last {
                x = match self.activation {
                    Activation::Tanh => tanh(x),
                    Activation::Relu => burn::tensor::activation::relu(x),
                };
            }
        }
        x
    }

    /// The device the weights live on.
    pub fn device(&self) -> Device {
        self.layers
            .first()
            .map_or_else(Device::default, |l| l.weight.val().device())
    }

    /// `tau · self + (1 − tau) · target`, parameter by parameter (Polyak averaging).
    pub fn polyak_into(&self, target: Mlp, tau: f64) -> Mlp {
        polyak(self, target, tau)
    }
}

/// A `rows × cols` (semi-)orthogonal matrix times `gain`, row-major: Gram–Schmidt on
/// a standard-normal matrix, as PyTorch's `orthogonal_` does with QR (signs fixed by `R`'s diagonal).
pub fn orthogonal(rows: usize, cols: usize, gain: f64, rng: &mut EnvRng) -> Vec<f32> {
    // Orthonormalise the `k` longest-dimension vectors of length `m`.
    let (m, k) = (rows.max(cols), rows.min(cols));
    let mut q: Vec<Vec<f64>> = Vec::with_capacity(k);
    while q.len() < k {
        let mut v: Vec<f64> = (0..m).map(|_| f64::from(standard_normal(rng))).collect();
        for _ in 0..2 {
            for u in &q {
                let dot: f64 = v.iter().zip(u).map(|(a, b)| a * b).sum();
                v.iter_mut().zip(u).for_each(|(a, b)| *a -= dot * b);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 1e-6 {
            q.push(v.into_iter().map(|x| x / norm).collect());
        }
    }
    // q[j] are orthonormal columns of an m × k matrix; lay them out as rows × cols.
    let mut out = vec![0.0f32; rows * cols];
    for (j, column) in q.iter().enumerate() {
        for (i, &x) in column.iter().enumerate() {
            let (r, c) = if rows >= cols { (i, j) } else { (j, i) };
            out[r * cols + c] = (x * gain) as f32;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::{host, vector};

    #[test]
    fn tanh_through_the_sigmoid_is_tanh_and_its_gradient() {
        let xs: Vec<f32> = (-400..=400).map(|k| k as f32 * 0.05).collect();
        let device = Device::default();
        let ours = host(tanh(vector(&xs, &device))).unwrap();
        let worst = xs
            .iter()
            .zip(&ours)
            .map(|(x, y)| (y - x.tanh()).abs())
            .fold(0.0f32, f32::max);
        assert!(worst <= 3e-7, "worst |2σ(2x) − 1 − tanh x| = {worst}");
        let grad_device = Device::default().autodiff();
        let x = vector(&xs, &grad_device).require_grad();
        let grads = tanh(x.clone()).sum().backward();
        let dx = host(x.grad(&grads).unwrap()).unwrap();
        for (x, d) in xs.iter().zip(&dx) {
            let exact = 1.0 - x.tanh().powi(2);
            assert!((d - exact).abs() <= 1e-6, "tanh'({x}): {d} vs {exact}");
        }
    }
}
