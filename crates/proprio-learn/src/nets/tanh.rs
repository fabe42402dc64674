//! `tanh` as one backend op with its own backward. On flex (the CPU) the
//! forward is a rational approximation computed in place in one vectorisable
//! pass, and the backward reads the stored output (`1 − y²`); burn's own
//! sigmoid and tanh call libm's `expf` / `tanhf` one value at a time, and
//! its autodiff recomputes them from the input in the backward pass (`perf`
//! on a PPO update: 34% of the time). Other devices compose burn's ops.

use crate::base::flex::{plain, writable, zip_in_place};
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::ops::FloatTensorOps;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor};
use burn::prelude::*;

/// Largest |x| the rational form is evaluated at; beyond it tanh is ±1 in `f32`.
const CLAMP: f32 = 7.905_311;
/// Below this |x|, tanh x = x in `f32`.
const TINY: f32 = 4e-4;
/// Odd numerator coefficients, x¹ … x¹³ (a minimax rational fit of tanh on [0, CLAMP]).
const P: [f32; 7] = [
    4.893_524_6e-3,
    6.372_619_3e-4,
    1.485_722_4e-5,
    5.122_297e-8,
    -8.604_672e-11,
    2.000_188e-13,
    -2.760_768_5e-16,
];
/// Even denominator coefficients, x⁰ … x⁶.
const Q: [f32; 4] = [4.893_525e-3, 2.268_434_6e-3, 1.185_347_1e-4, 1.198_258_4e-6];

/// tanh of one value, branch-free (the tiny-input case is a select), so that
/// a loop over a slice vectorises; `pulp` compiles the loops for AVX2 and AVX-512.
#[inline(always)]
fn rational_tanh(x: f32) -> f32 {
    let c = x.clamp(-CLAMP, CLAMP);
    let x2 = c * c;
    let mut p = P[6];
    for &a in P[..6].iter().rev() {
        p = p * x2 + a;
    }
    let q = ((Q[3] * x2 + Q[2]) * x2 + Q[1]) * x2 + Q[0];
    let y = c * p / q;
    // `c` is `x` there; selecting the input itself would let LLVM store only
    // the non-tiny lanes, a masked store that is slow on AMD cores.
    if x.abs() < TINY { c } else { y }
}

/// `grad · (1 − y²)` in three of the backend's ops.
fn composed_backward<B: Backend>(y: FloatTensor<B>, grad: FloatTensor<B>) -> FloatTensor<B> {
    let square = B::float_mul(y.clone(), y);
    let slope = B::float_add_scalar(B::float_neg(square), 1.0f32.into());
    B::float_mul(grad, slope)
}

/// The tanh ops Proprio's networks call.
#[backend_extension(Flex, Cube: cfg(feature = "wgpu"), Autodiff)]
pub trait TanhBackend: Backend {
    /// `tanh x`, element-wise.
    fn fused_tanh(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let two = Self::sigmoid(Self::float_mul_scalar(x, 2.0f32.into()));
        Self::float_sub_scalar(Self::float_mul_scalar(two, 2.0f32.into()), 1.0f32.into())
    }

    /// `grad · (1 − y²)`: the gradient through `y = tanh x`.
    fn fused_tanh_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        composed_backward::<Self>(y, grad)
    }
}

impl TanhBackend for Flex {
    fn fused_tanh(mut x: FloatTensor<Self>) -> FloatTensor<Self> {
        if !writable(&x) {
            return Self::float_tanh(x);
        }
        let n = x.layout().num_elements();
        let values = &mut x.storage_mut::<f32>()[..n];
        pulp::Arch::new().dispatch(|| {
            for v in values {
                *v = rational_tanh(*v);
            }
        });
        x
    }

    fn fused_tanh_backward(y: FloatTensor<Self>, mut grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let same = y.layout().shape() == grad.layout().shape();
        if !(same && writable(&grad) && plain(&y)) {
            return composed_backward::<Self>(y, grad);
        }
        zip_in_place(&mut grad, &y, |g, v| *g *= 1.0 - v * v);
        grad
    }
}

#[cfg(feature = "wgpu")]
impl TanhBackend for burn::backend::Cube {}

impl<B: Backend + TanhBackend, C: CheckpointStrategy> TanhBackend for Autodiff<B, C> {
    fn fused_tanh(x: FloatTensor<Self>) -> FloatTensor<Self> {
        /// The backward of tanh; its state is the output.
        #[derive(Debug)]
        struct Tanh;

        impl<B: Backend + TanhBackend> Backward<B, 1> for Tanh {
            type State = B::FloatTensorPrimitive;

            fn backward(
                self,
                ops: Ops<Self::State, 1>,
                grads: &mut Gradients,
                _: &mut Checkpointer,
            ) {
                let y = ops.state;
                unary::<B, _>(ops.parents, ops.node, grads, |grad| {
                    B::fused_tanh_backward(y, grad)
                });
            }
        }

        match Tanh.prepare::<C>([x.node()]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let y = B::fused_tanh(x.into_primitive());
                prep.finish(y.clone(), y)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::fused_tanh(x.into_primitive())),
        }
    }

    fn fused_tanh_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        // Only reached for a second derivative (no learner takes one): tracked ops.
        composed_backward::<Self>(y, grad)
    }
}

/// `tanh x` through [`TanhBackend`]: one op forward and one backward, on any device.
pub fn tanh<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as TanhBackend>::fused_tanh(x.into_dispatch()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::{host, vector};

    #[test]
    fn the_fused_tanh_is_tanh_and_its_gradient_everywhere() {
        // Dense over the curve, then the tiny and the saturated ranges.
        let mut xs: Vec<f32> = (-400..=400).map(|k| k as f32 * 0.025).collect();
        xs.extend([1e-6, -3e-4, 5e-4, 7.9, -8.0, 20.0, -1e4]);
        let device = Device::flex();
        let ours = host(tanh(vector(&xs, &device))).unwrap();
        for (x, y) in xs.iter().zip(&ours) {
            let exact = f64::from(*x).tanh();
            // 4e-7 at worst (x ≈ ±5.9: a few ulp of values near ±1).
            assert!(
                (f64::from(*y) - exact).abs() <= 5e-7,
                "tanh({x}) = {y}, not {exact}"
            );
        }
        let grad_device = Device::flex().autodiff();
        let x = vector(&xs, &grad_device).require_grad();
        let grads = tanh(x.clone()).sum().backward();
        let dx = host(x.grad(&grads).unwrap()).unwrap();
        for (x, d) in xs.iter().zip(&dx) {
            let exact = 1.0 - f64::from(*x).tanh().powi(2);
            assert!(
                (f64::from(*d) - exact).abs() <= 1e-6,
                "tanh'({x}): {d} vs {exact}"
            );
        }
    }

    #[test]
    fn tiny_inputs_come_out_as_they_went_in_to_the_bit() {
        // tanh x = x in f32 below 4e-4; the rational form would be an ulp off.
        let xs = [0.0, -0.0, 1e-40, -1e-40, 1e-20, -2.5e-7, 3.9e-4, -3.9e-4];
        let ours = host(tanh(vector(&xs, &Device::flex()))).unwrap();
        for (x, y) in xs.iter().zip(&ours) {
            assert_eq!(x.to_bits(), y.to_bits(), "tanh({x:e}) = {y:e}");
        }
    }

    #[test]
    fn a_strided_input_takes_the_composed_path_with_the_same_values() {
        // A transposed view is not one contiguous slice: flex's own tanh serves it.
        let device = Device::flex();
        let data: Vec<f32> = (0..12).map(|k| k as f32 * 0.3 - 1.7).collect();
        let m = Tensor::<2>::from_data(TensorData::new(data, [3, 4]), &device);
        let ours = host(tanh(m.clone().transpose())).unwrap();
        let exact = host(m.transpose().tanh()).unwrap();
        for (a, b) in ours.iter().zip(&exact) {
            assert!((a - b).abs() <= 5e-7, "{a} vs {b}");
        }
    }
}
