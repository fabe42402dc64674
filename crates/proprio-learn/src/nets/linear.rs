//! A fully connected layer, `x · W + b` (or the twin critics' two layers
//! side by side), as one backend op with its own backward. On flex (the CPU)
//! its three matrix products write straight into fresh `f32` buffers: flex's
//! own product output (`FlexTensor::empty`) is a zeroed byte vector copied
//! again into an aligned one, so every product paid a `memset` and a
//! `memcpy` of its result (`callgrind` on a PPO actor step: 15% of the
//! instructions). The products are flex's own `gemm` calls, with its
//! arguments and threading, and the bias is added after them as flex adds
//! it: the results are flex's to the bit. Other devices compose burn's ops.

use crate::base::flex::plain;
use crate::base::threads::products_may_split;
use burn::backend::TensorMetadata;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor};
use burn::prelude::*;
use burn::tensor::{Bytes, DType, Shape};

/// flex's threshold for splitting one product over the update's threads (192³ multiply-adds).
const PARALLEL_THRESHOLD: usize = 192 * 192 * 192;
/// flex's threshold for running a batch's products on the threads side by side (128³ in all).
const BATCH_PARALLEL_THRESHOLD: usize = 128 * 128 * 128;

/// The linear-layer ops Proprio's networks call: one layer `x [rows, in] ·
/// weight [in, out] + bias [out]`, or a group of them side by side (the twin
/// critics) `x [G, rows, in] · weight [G, in, out] + bias [G, 1, out]`.
#[backend_extension(Flex, Cube: cfg(feature = "wgpu"), Autodiff)]
pub trait LinearBackend: Backend {
    /// `x · weight + bias`, per group when the operands have three dimensions.
    fn fused_linear(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        composed_linear::<Self>(x, weight, bias)
    }

    /// `grad · weightᵀ`: the gradient of the layer's input.
    fn fused_linear_x_backward(
        weight: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        composed_x_backward::<Self>(weight, grad)
    }

    /// `xᵀ · grad`: the gradient of the layer's weight.
    fn fused_linear_weight_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        composed_weight_backward::<Self>(x, grad)
    }
}

/// The layer in burn's ops: its `linear`, or a batched product and a broadcast add for a group.
fn composed_linear<B: Backend>(
    x: FloatTensor<B>,
    weight: FloatTensor<B>,
    bias: FloatTensor<B>,
) -> FloatTensor<B> {
    if x.shape().num_dims() == 3 {
        B::float_add(B::float_matmul(x, weight), bias)
    } else {
        B::linear(x, weight, Some(bias))
    }
}

/// The input's gradient in burn's ops.
fn composed_x_backward<B: Backend>(weight: FloatTensor<B>, grad: FloatTensor<B>) -> FloatTensor<B> {
    if grad.shape().num_dims() == 3 {
        B::float_matmul(grad, B::float_swap_dims(weight, 1, 2))
    } else {
        B::linear_x_backward(weight, grad)
    }
}

/// The weight's gradient in burn's ops.
fn composed_weight_backward<B: Backend>(x: FloatTensor<B>, grad: FloatTensor<B>) -> FloatTensor<B> {
    if grad.shape().num_dims() == 3 {
        B::float_matmul(B::float_swap_dims(x, 1, 2), grad)
    } else {
        B::linear_weight_backward(x, grad)
    }
}

/// The bias's gradient, the output's gradient summed over the rows (burn's
/// own reduction, so its order and bits are burn's).
fn bias_backward<B: Backend>(grad: FloatTensor<B>) -> FloatTensor<B> {
    if grad.shape().num_dims() == 3 {
        B::float_sum_dim(grad, 1)
    } else {
        B::linear_bias_backward(grad)
    }
}

/// An `f32` operand of a product: `groups` matrices of `rows × cols`, each
/// `group_stride` apart (0 for an input shared by every group), with strides.
#[derive(Clone, Copy)]
struct Operand<'a> {
    data: &'a [f32],
    grouped: bool,
    groups: usize,
    group_stride: isize,
    rows: usize,
    cols: usize,
    row_stride: isize,
    col_stride: isize,
}

impl<'a> Operand<'a> {
    /// `t` as one matrix (rank 2) or a group of them (rank 3), or `None`
    /// when flex must serve it (another dtype or rank, a flipped view).
    fn of(t: &'a FlexTensor) -> Option<Self> {
        let layout = t.layout();
        let (shape, strides) = (layout.shape(), layout.strides());
        let rank = shape.num_dims();
        if t.dtype() != DType::F32 || !(2..=3).contains(&rank) || strides.iter().any(|&s| s < 0) {
            return None;
        }
        let grouped = rank == 3;
        let (groups, group_stride) = if grouped {
            (shape[0], if shape[0] > 1 { strides[0] } else { 0 })
        } else {
            (1, 0)
        };
        Some(Self {
            data: &t.storage::<f32>()[layout.start_offset()..],
            grouped,
            groups,
            group_stride,
            rows: shape[rank - 2],
            cols: shape[rank - 1],
            row_stride: strides[rank - 2],
            col_stride: strides[rank - 1],
        })
    }

    /// Each matrix transposed (a view: strides swapped).
    fn transposed(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// The first element of group `g`.
    fn at(&self, g: usize) -> *const f32 {
        self.data
            .as_ptr()
            .wrapping_offset(g as isize * self.group_stride)
    }
}

/// `lhs · rhs`, group by group, into a new row-major tensor, through the
/// `gemm` calls flex's matmul makes (same strides, same threading), or
/// `None` for what flex must serve (an empty dimension, groups that differ).
fn product(lhs: Operand, rhs: Operand) -> Option<FlexTensor> {
    let (groups, m, k, n) = (lhs.groups, lhs.rows, lhs.cols, rhs.cols);
    if k != rhs.rows || groups != rhs.groups || lhs.grouped != rhs.grouped {
        return None;
    }
    if groups == 0 || m == 0 || n == 0 || k == 0 {
        return None;
    }
    let per_matrix = m.saturating_mul(n).saturating_mul(k);
    let mut out: Vec<f32> = Vec::with_capacity(groups * m * n);
    let one = |g: usize, dst: *mut f32, parallelism: gemm::Parallelism| {
        // SAFETY: `dst` holds m·n floats of capacity and `gemm` writes every
        // one (read_dst is false, k > 0); the operands' views lie inside
        // their storage (their layouts say so), as flex's own call relies on.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                dst,
                1,
                n as isize,
                false,
                lhs.at(g),
                lhs.col_stride,
                lhs.row_stride,
                rhs.at(g),
                rhs.col_stride,
                rhs.row_stride,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
    };
    let dst = out.as_mut_ptr() as usize;
    let at = |g: usize| (dst as *mut f32).wrapping_add(g * m * n);
    let split = products_may_split();
    if split && per_matrix >= PARALLEL_THRESHOLD {
        (0..groups).for_each(|g| one(g, at(g), gemm::Parallelism::Rayon(0)));
    } else if split && groups > 1 && groups * per_matrix >= BATCH_PARALLEL_THRESHOLD {
        use rayon::prelude::*;
        (0..groups)
            .into_par_iter()
            .for_each(|g| one(g, at(g), gemm::Parallelism::None));
    } else {
        (0..groups).for_each(|g| one(g, at(g), gemm::Parallelism::None));
    }
    // SAFETY: every group's m·n floats were written above.
    unsafe { out.set_len(groups * m * n) };
    let shape = if lhs.grouped {
        Shape::new([groups, m, n])
    } else {
        Shape::new([m, n])
    };
    Some(FlexTensor::new(
        Bytes::from_elems(out),
        Layout::contiguous(shape),
        DType::F32,
    ))
}

impl LinearBackend for Flex {
    fn fused_linear(x: FlexTensor, weight: FlexTensor, bias: FlexTensor) -> FlexTensor {
        // Only a plain bias of one row per group is added here; anything else is flex's.
        let operands = Operand::of(&x)
            .zip(Operand::of(&weight))
            .filter(|(x, w)| plain(&bias) && bias.layout().num_elements() == x.groups * w.cols);
        let Some((x_op, w_op)) = operands else {
            return composed_linear::<Self>(x, weight, bias);
        };
        let (groups, n, per_group) = (x_op.groups, w_op.cols, x_op.rows * w_op.cols);
        let Some(mut out) = product(x_op, w_op) else {
            return composed_linear::<Self>(x, weight, bias);
        };
        let b = &bias.storage::<f32>()[..groups * n];
        let values = out.storage_mut::<f32>();
        // The bias added after the product, as flex adds it (`out + b`): flex's bits.
        pulp::Arch::new().dispatch(move || {
            for (group, b) in values.chunks_exact_mut(per_group).zip(b.chunks_exact(n)) {
                for row in group.chunks_exact_mut(n) {
                    for (v, &b) in row.iter_mut().zip(b) {
                        *v += b;
                    }
                }
            }
        });
        out
    }

    fn fused_linear_x_backward(weight: FlexTensor, grad: FlexTensor) -> FlexTensor {
        let dx = Operand::of(&grad)
            .zip(Operand::of(&weight))
            .and_then(|(g, w)| product(g, w.transposed()));
        dx.unwrap_or_else(|| composed_x_backward::<Self>(weight, grad))
    }

    fn fused_linear_weight_backward(x: FlexTensor, grad: FlexTensor) -> FlexTensor {
        let dw = Operand::of(&x)
            .zip(Operand::of(&grad))
            .and_then(|(x, g)| product(x.transposed(), g));
        dw.unwrap_or_else(|| composed_weight_backward::<Self>(x, grad))
    }
}

#[cfg(feature = "wgpu")]
impl LinearBackend for burn::backend::Cube {}

impl<B: Backend + LinearBackend, C: CheckpointStrategy> LinearBackend for Autodiff<B, C> {
    fn fused_linear(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        /// The backward of a layer; its state is the input (for the weight's
        /// gradient) and the weight (for the input's), each kept only when needed.
        #[derive(Debug)]
        struct Linear;

        impl<B: Backend + LinearBackend> Backward<B, 3> for Linear {
            type State = (
                Option<B::FloatTensorPrimitive>,
                Option<B::FloatTensorPrimitive>,
            );

            fn backward(
                self,
                ops: Ops<Self::State, 3>,
                grads: &mut Gradients,
                _: &mut Checkpointer,
            ) {
                let [node_x, node_weight, node_bias] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x, weight) = ops.state;
                if let (Some(node), Some(weight)) = (node_x, weight) {
                    let dx = B::fused_linear_x_backward(weight, grad.clone());
                    grads.register::<B>(node.id, dx);
                }
                if let (Some(node), Some(x)) = (node_weight, x) {
                    let dw = B::fused_linear_weight_backward(x, grad.clone());
                    grads.register::<B>(node.id, dw);
                }
                if let Some(node) = node_bias {
                    grads.register::<B>(node.id, bias_backward::<B>(grad));
                }
            }
        }

        let (x_tracked, weight_tracked) = (x.is_tracked(), weight.is_tracked());
        let prepared = Linear
            .prepare::<C>([x.node(), weight.node(), bias.node()])
            .compute_bound()
            .stateful();
        let (x, weight, bias) = (
            x.into_primitive(),
            weight.into_primitive(),
            bias.into_primitive(),
        );
        match prepared {
            OpsKind::Tracked(prep) => {
                // The input is needed only for the weight's gradient, and vice versa.
                let state = (
                    weight_tracked.then(|| x.clone()),
                    x_tracked.then(|| weight.clone()),
                );
                prep.finish(state, B::fused_linear(x, weight, bias))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::fused_linear(x, weight, bias)),
        }
    }
}

/// `x · weight + bias` through [`LinearBackend`]: `x` `[rows, in]`, `weight` `[in, out]`, `bias` `[out]`.
pub fn linear(x: Tensor<2>, weight: Tensor<2>, bias: Tensor<1>) -> Tensor<2> {
    Tensor::from_dispatch(<Dispatch as LinearBackend>::fused_linear(
        x.into_dispatch(),
        weight.into_dispatch(),
        bias.into_dispatch(),
    ))
}

/// A group of layers side by side through [`LinearBackend`]: `x` `[G, rows, in]`
/// (an input shared by the group may be an expanded view), `weight` `[G, in, out]`, `bias` `[G, 1, out]`.
pub fn linear_group(x: Tensor<3>, weight: Tensor<3>, bias: Tensor<3>) -> Tensor<3> {
    Tensor::from_dispatch(<Dispatch as LinearBackend>::fused_linear(
        x.into_dispatch(),
        weight.into_dispatch(),
        bias.into_dispatch(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::host;
    use burn::tensor::Gradients;

    fn matrix(rows: usize, cols: usize, seed: f32, device: &Device) -> Tensor<2> {
        let data: Vec<f32> = (0..rows * cols)
            .map(|k| ((k as f32 + seed) * 0.731).sin())
            .collect();
        Tensor::from_data(TensorData::new(data, [rows, cols]), device)
    }

    /// The layer and burn's `linear` on the same operands: outputs and all
    /// three gradients, compared bit for bit.
    fn same_as_burn(x: Tensor<2>, weight: Tensor<2>, bias: Tensor<1>) {
        let (x, weight, bias) = (x.require_grad(), weight.require_grad(), bias.require_grad());
        let ours = linear(x.clone(), weight.clone(), bias.clone());
        let theirs = burn::tensor::module::linear(x.clone(), weight.clone(), Some(bias.clone()));
        assert_eq!(host(ours.clone()).unwrap(), host(theirs.clone()).unwrap());
        // A loss that weights every output differently, so a transposed or
        // misplaced gradient cannot pass.
        let [rows, cols] = ours.dims();
        let mask = matrix(rows, cols, 3.0, &ours.device());
        let ours = (ours * mask.clone()).sum().backward();
        let theirs = (theirs * mask).sum().backward();
        same_grad("x", &x, &ours, &theirs);
        same_grad("weight", &weight, &ours, &theirs);
        same_grad("bias", &bias, &ours, &theirs);
    }

    /// A tensor's gradient from two backward passes, which must agree to the bit.
    fn same_grad<const D: usize>(name: &str, t: &Tensor<D>, ours: &Gradients, theirs: &Gradients) {
        let [a, b] = [ours, theirs].map(|g| host(t.grad(g).unwrap()).unwrap());
        assert_eq!(a, b, "{name}'s gradient");
    }

    #[test]
    fn the_layer_is_burns_linear_to_the_bit_with_its_gradients() {
        let device = Device::flex().autodiff();
        // A hidden layer, a narrow head and a product large enough to be split over threads.
        for (rows, inputs, outputs) in [(37, 49, 128), (800, 128, 4), (300, 256, 256)] {
            let bias = matrix(1, outputs, 7.0, &device).reshape([outputs]);
            same_as_burn(
                matrix(rows, inputs, 0.0, &device),
                matrix(inputs, outputs, 1.0, &device),
                bias,
            );
        }
    }

    #[test]
    fn the_flex_product_is_the_matrix_product_and_flexs_to_the_bit() {
        use burn::backend::ops::FloatTensorOps;
        let flex = |rows: usize, cols: usize, seed: f32| {
            let data: Vec<f32> = (0..rows * cols)
                .map(|k| ((k as f32 + seed) * 0.731).sin())
                .collect();
            FlexTensor::from_data(TensorData::new(data, [rows, cols]))
        };
        let (a, b) = (flex(13, 49, 0.0), flex(49, 6, 1.0));
        let ours = product(Operand::of(&a).unwrap(), Operand::of(&b).unwrap()).unwrap();
        let (a_host, b_host) = (a.storage::<f32>(), b.storage::<f32>());
        for (k, &v) in ours.storage::<f32>().iter().enumerate() {
            let (i, j) = (k / 6, k % 6);
            let exact: f64 = (0..49)
                .map(|l| f64::from(a_host[i * 49 + l]) * f64::from(b_host[l * 6 + j]))
                .sum();
            assert!(
                (f64::from(v) - exact).abs() < 1e-5,
                "({i}, {j}): {v} vs {exact}"
            );
        }
        let theirs = Flex::float_matmul(a.clone(), b.clone());
        assert_eq!(ours.storage::<f32>(), theirs.storage::<f32>());
        // Through transposed views on both sides: (bᵀ · aᵀ)ᵀ = a · b.
        let (at, bt) = (a.transpose(0, 1), b.transpose(0, 1));
        let swapped = product(Operand::of(&bt).unwrap(), Operand::of(&at).unwrap()).unwrap();
        let theirs = Flex::float_matmul(bt, at);
        assert_eq!(swapped.layout().shape().to_vec(), vec![6, 13]);
        assert_eq!(swapped.storage::<f32>(), theirs.storage::<f32>());
        // A group of two on one shared input (an expanded view: group stride 0).
        let shared =
            FlexTensor::from_data(TensorData::new(a.storage::<f32>().to_vec(), [1, 13, 49]))
                .with_layout(Layout::new(Shape::new([2, 13, 49]), vec![0, 49, 1], 0));
        let weights = flex(2 * 49, 6, 2.0).reshape(Shape::new([2, 49, 6]));
        let grouped = product(
            Operand::of(&shared).unwrap(),
            Operand::of(&weights).unwrap(),
        )
        .unwrap();
        let theirs = Flex::float_matmul(shared, weights);
        assert_eq!(grouped.layout().shape().to_vec(), vec![2, 13, 6]);
        assert_eq!(grouped.storage::<f32>(), theirs.storage::<f32>());
    }

    #[test]
    fn a_group_of_layers_on_a_shared_input_is_burns_batched_product_to_the_bit() {
        let device = Device::flex().autodiff();
        // The twin critics' shapes: one input expanded over both, and a product large enough to split.
        for (rows, inputs, outputs) in [(256, 26, 64), (256, 256, 256), (256, 64, 1)] {
            let input = matrix(rows, inputs, 0.0, &device).require_grad();
            let weight = Tensor::<3>::from_data(
                host(matrix(2 * inputs, outputs, 1.0, &device))
                    .map(|v| TensorData::new(v, [2, inputs, outputs]))
                    .unwrap(),
                &device,
            )
            .require_grad();
            let bias = matrix(2, outputs, 5.0, &device)
                .reshape([2, 1, outputs])
                .require_grad();
            let shared = || {
                input
                    .clone()
                    .unsqueeze_dim::<3>(0)
                    .expand([2, rows, inputs])
            };
            let ours = linear_group(shared(), weight.clone(), bias.clone());
            let theirs = shared().matmul(weight.clone()) + bias.clone();
            assert_eq!(host(ours.clone()).unwrap(), host(theirs.clone()).unwrap());
            let mask = Tensor::<3>::from_data(
                host(matrix(2 * rows, outputs, 3.0, &device))
                    .map(|v| TensorData::new(v, [2, rows, outputs]))
                    .unwrap(),
                &device,
            );
            let ours = (ours * mask.clone()).sum().backward();
            let theirs = (theirs * mask).sum().backward();
            let shape = format!("{rows}x{inputs}x{outputs}");
            same_grad(&format!("input {shape}"), &input, &ours, &theirs);
            same_grad(&format!("weight {shape}"), &weight, &ours, &theirs);
            same_grad(&format!("bias {shape}"), &bias, &ours, &theirs);
        }
    }

    #[test]
    fn a_transposed_input_is_read_through_its_strides() {
        let device = Device::flex().autodiff();
        let x = matrix(49, 37, 0.0, &device).transpose();
        let bias = matrix(1, 16, 2.0, &device).reshape([16]);
        same_as_burn(x, matrix(49, 16, 1.0, &device), bias);
    }
}
