//! A multi-layer perceptron with CleanRL's orthogonal initialisation.

use crate::base::polyak::polyak;
use crate::nets::head::standard_normal;
use crate::nets::linear::linear;
pub use crate::nets::tanh::tanh;
use burn::module::Param;
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use proprio::EnvRng;
use serde::{Deserialize, Serialize};

/// Hidden-layer non-linearity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// `tanh`, CleanRL's PPO choice (and Learning to Fly's, for TD3).
    Tanh,
    /// `max(x, 0)`, CleanRL's SAC and TD3 choice.
    #[default]
    Relu,
}

impl Activation {
    /// `x` through the non-linearity.
    pub fn apply<const D: usize>(self, x: Tensor<D>) -> Tensor<D> {
        match self {
            Activation::Tanh => tanh(x),
            Activation::Relu => burn::tensor::activation::relu(x),
        }
    }
}

/// Fully connected layers with an activation between them (none after the last).
#[derive(Module, Debug)]
pub struct Mlp {
    pub(crate) layers: Vec<Linear>,
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
            x = match &layer.bias {
                Some(bias) => linear(x, layer.weight.val(), bias.val()),
                None => layer.forward(x),
            };
            if k < last {
                x = self.activation.apply(x);
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
    use crate::base::tensor::host;

    #[test]
    fn an_mlp_through_the_fused_tanh_has_burns_gradients() {
        let device = Device::flex().autodiff();
        let rng = &mut proprio::episode_rng(4, 0, 0);
        let mlp = Mlp::new(&[5, 48, 32, 3], Activation::Tanh, 1.0, &device, rng);
        let data: Vec<f32> = (0..40 * 5)
            .map(|k| ((k * 37 % 101) as f32 / 25.0 - 2.0) * 1.5)
            .collect();
        let x = Tensor::<2>::from_data(TensorData::new(data, [40, 5]), &device);
        let loss = |out: Tensor<2>| (out.clone() * out).sum();
        let ours = loss(mlp.forward(x.clone())).backward();
        // The same network through burn's own tanh.
        let mut h = x;
        for (k, layer) in mlp.layers.iter().enumerate() {
            h = layer.forward(h);
            if k + 1 < mlp.layers.len() {
                h = h.tanh();
            }
        }
        let reference = loss(h).backward();
        let close = |a: Vec<f32>, b: Vec<f32>| {
            for (a, b) in a.iter().zip(&b) {
                assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
            }
        };
        for layer in &mlp.layers {
            let w = layer.weight.val();
            close(
                host(w.grad(&ours).unwrap()).unwrap(),
                host(w.grad(&reference).unwrap()).unwrap(),
            );
            let b = layer.bias.as_ref().unwrap().val();
            close(
                host(b.grad(&ours).unwrap()).unwrap(),
                host(b.grad(&reference).unwrap()).unwrap(),
            );
        }
    }
}
