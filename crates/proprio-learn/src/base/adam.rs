//! Adam in one pass per parameter. burn's Adam takes about fourteen
//! element-wise ops per parameter tensor, each a pass and an allocation; on
//! flex this does the same arithmetic, in the same order, in one in-place
//! loop, so its results are burn's to the bit and its state is burn's
//! `AdamState` (old optimizer files load). Other devices compose burn's ops.

use crate::base::flex::{owned, plain, writable};
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::{
    Autodiff, AutodiffBackend, Backend, Dispatch, ExtensionType, Flex, backend_extension,
    tensor::FloatTensor,
};
use burn::optim::{AdamState, AdaptiveMomentumState, LearningRate, ModuleOptimizer, Optimizer};
use burn::prelude::*;

/// burn's default ε.
pub const BURN_EPSILON: f32 = 1e-5;
/// burn's default β₁ and β₂.
const BETAS: (f32, f32) = (0.9, 0.999);

/// The scalars of one step, computed as burn's Adam computes them.
#[derive(Debug, Clone, Copy)]
pub struct AdamScalars {
    beta_1: f32,
    beta_2: f32,
    /// `1 − β₁`, `1 − β₂`.
    factors: (f32, f32),
    /// `√(1 − β₂ᵗ) / (1 − β₁ᵗ)`.
    combined: f32,
    /// `ε √(1 − β₂ᵗ)`.
    epsilon: f32,
    lr: f32,
    /// The first step: the moments start from the gradient alone.
    first: bool,
}

impl AdamScalars {
    fn new(epsilon: f32, time: usize, lr: LearningRate) -> Self {
        let (beta_1, beta_2) = BETAS;
        let t = time as i32;
        let correction = (1.0 - beta_2.powi(t)).sqrt();
        Self {
            beta_1,
            beta_2,
            factors: (1.0 - beta_1, 1.0 - beta_2),
            combined: correction / (1.0 - beta_1.powi(t)),
            epsilon: epsilon * correction,
            lr: lr as f32,
            first: time == 1,
        }
    }
}

/// A parameter and its two moments after a step.
#[derive(ExtensionType)]
pub struct AdamTensors<B: Backend> {
    /// The parameter.
    pub param: FloatTensor<B>,
    /// The first moment.
    pub moment_1: FloatTensor<B>,
    /// The second moment.
    pub moment_2: FloatTensor<B>,
}

/// One Adam step as a backend op.
#[backend_extension(Flex, Cube: cfg(feature = "wgpu"), Autodiff)]
pub trait AdamBackend: Backend {
    /// The step of `param` with `grad` from `moment_1`, `moment_2` (ignored on the first step).
    fn adam_step(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        scalars: AdamScalars,
    ) -> AdamTensors<Self> {
        composed::<Self>(param, grad, moment_1, moment_2, scalars)
    }
}

/// burn's Adam, op by op.
fn composed<B: Backend>(
    param: FloatTensor<B>,
    grad: FloatTensor<B>,
    moment_1: FloatTensor<B>,
    moment_2: FloatTensor<B>,
    s: AdamScalars,
) -> AdamTensors<B> {
    let (f1, f2) = s.factors;
    let g1 = B::float_mul_scalar(grad.clone(), f1.into());
    let g2 = B::float_mul_scalar(B::float_mul(grad.clone(), grad), f2.into());
    let (moment_1, moment_2) = if s.first {
        (g1, g2)
    } else {
        (
            B::float_add(B::float_mul_scalar(moment_1, s.beta_1.into()), g1),
            B::float_add(B::float_mul_scalar(moment_2, s.beta_2.into()), g2),
        )
    };
    let denominator = B::float_add_scalar(B::float_sqrt(moment_2.clone()), s.epsilon.into());
    let step = B::float_div(
        B::float_mul_scalar(moment_1.clone(), s.combined.into()),
        denominator,
    );
    let param = B::float_sub(param, B::float_mul_scalar(step, s.lr.into()));
    AdamTensors {
        param,
        moment_1,
        moment_2,
    }
}

impl AdamBackend for Flex {
    fn adam_step(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        s: AdamScalars,
    ) -> AdamTensors<Self> {
        // Shared tensors (a module cloned into its step; the first step's moments, both the gradient) are copied once.
        let (mut param, mut moment_1, mut moment_2) =
            (owned(param), owned(moment_1), owned(moment_2));
        let n = param.layout().num_elements();
        let fits = |t: &FloatTensor<Self>| t.layout().num_elements() == n;
        let ready = writable(&param)
            && plain(&grad)
            && writable(&moment_1)
            && writable(&moment_2)
            && fits(&grad)
            && fits(&moment_1)
            && fits(&moment_2);
        if !ready {
            return composed::<Self>(param, grad, moment_1, moment_2, s);
        }
        let g = &grad.storage::<f32>()[..n];
        let p = &mut param.storage_mut::<f32>()[..n];
        let m1 = &mut moment_1.storage_mut::<f32>()[..n];
        let m2 = &mut moment_2.storage_mut::<f32>()[..n];
        // The scalars as locals, moved into the loop: read through a reference, LLVM
        // reloads them every element (it cannot rule out the writes aliasing them) and
        // the loop stays scalar.
        let AdamScalars {
            beta_1,
            beta_2,
            factors: (f1, f2),
            combined,
            epsilon,
            lr,
            first,
        } = s;
        pulp::Arch::new().dispatch(move || {
            for (((p, &g), m1), m2) in p.iter_mut().zip(g).zip(m1).zip(m2) {
                let (g1, g2) = (g * f1, (g * g) * f2);
                (*m1, *m2) = if first {
                    (g1, g2)
                } else {
                    (*m1 * beta_1 + g1, *m2 * beta_2 + g2)
                };
                let step = (*m1 * combined) / (m2.sqrt() + epsilon);
                *p -= step * lr;
            }
        });
        AdamTensors {
            param,
            moment_1,
            moment_2,
        }
    }
}

#[cfg(feature = "wgpu")]
impl AdamBackend for burn::backend::Cube {}

/// An optimizer's tensors carry no gradient: step the inner backend's.
impl<B: Backend + AdamBackend, C: CheckpointStrategy> AdamBackend for Autodiff<B, C> {
    fn adam_step(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        s: AdamScalars,
    ) -> AdamTensors<Self> {
        let out = B::adam_step(
            param.into_primitive(),
            grad.into_primitive(),
            moment_1.into_primitive(),
            moment_2.into_primitive(),
            s,
        );
        AdamTensors {
            param: Self::from_inner(out.param),
            moment_1: Self::from_inner(out.moment_1),
            moment_2: Self::from_inner(out.moment_2),
        }
    }
}

/// Adam (β₁ 0.9, β₂ 0.999, no weight decay, no AMSGrad) with `epsilon`, one pass a parameter.
#[derive(Debug, Clone, Copy)]
pub struct FusedAdam {
    epsilon: f32,
}

impl Optimizer for FusedAdam {
    type State<const D: usize> = AdamState<D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        let time = state.as_ref().map_or(1, |s| s.momentum.time + 1);
        let scalars = AdamScalars::new(self.epsilon, time, lr);
        let (moment_1, moment_2) = match state {
            Some(s) => (s.momentum.moment_1, s.momentum.moment_2),
            None => (grad.clone(), grad.clone()),
        };
        let out = <Dispatch as AdamBackend>::adam_step(
            tensor.into_dispatch(),
            grad.into_dispatch(),
            moment_1.into_dispatch(),
            moment_2.into_dispatch(),
            scalars,
        );
        let momentum = AdaptiveMomentumState::new(
            time,
            Tensor::from_dispatch(out.moment_1),
            Tensor::from_dispatch(out.moment_2),
        );
        (
            Tensor::from_dispatch(out.param),
            Some(AdamState::new(momentum)),
        )
    }

    fn to_device<const D: usize>(mut state: Self::State<D>, device: &Device) -> Self::State<D> {
        state.momentum = state.momentum.to_device(device);
        state
    }
}

/// A module optimizer running [`FusedAdam`] with `epsilon` (burn's default: [`BURN_EPSILON`]).
pub fn adam(epsilon: f32) -> ModuleOptimizer {
    ModuleOptimizer::from(FusedAdam { epsilon })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::host;
    use crate::nets::mlp::{Activation, Mlp};
    use burn::optim::{AdamConfig, GradientsParams};

    /// On flex, where the fused loop runs.
    fn net() -> (Mlp, Tensor<2>) {
        let device = Device::flex().autodiff();
        let rng = &mut proprio::episode_rng(9, 0, 0);
        let mlp = Mlp::new(&[6, 40, 24, 3], Activation::Tanh, 1.0, &device, rng);
        let data: Vec<f32> = (0..50 * 6)
            .map(|k| ((k * 53 % 97) as f32 / 30.0) - 1.6)
            .collect();
        (
            mlp,
            Tensor::from_data(TensorData::new(data, [50, 6]), &device),
        )
    }

    fn step(optim: &mut ModuleOptimizer, mlp: Mlp, x: &Tensor<2>, lr: f64) -> Mlp {
        let out = mlp.forward(x.clone());
        let grads = GradientsParams::from_grads((out.clone() * out).sum().backward(), &mlp);
        optim.step(lr, mlp, grads)
    }

    fn weights(mlp: &Mlp) -> Vec<u32> {
        let mut bits = Vec::new();
        for layer in &mlp.layers {
            bits.extend(
                host(layer.weight.val())
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits()),
            );
            let bias = layer.bias.as_ref().unwrap().val();
            bits.extend(host(bias).unwrap().iter().map(|v| v.to_bits()));
        }
        bits
    }

    /// The batch, our Adam, burn's (both ε 1e-7), and one network for each.
    fn side_by_side() -> (Tensor<2>, ModuleOptimizer, ModuleOptimizer, (Mlp, Mlp)) {
        let (mlp, x) = net();
        let burns = AdamConfig::new().with_epsilon(1e-7).init();
        (x, adam(1e-7), burns, (mlp.clone(), mlp))
    }

    #[test]
    fn fused_adam_steps_are_burns_to_the_bit() {
        let (x, mut ours, mut burns, (mut a, mut b)) = side_by_side();
        for k in 0..6 {
            let lr = 3e-3 / f64::from(k + 1);
            a = step(&mut ours, a, &x, lr);
            b = step(&mut burns, b, &x, lr);
            assert_eq!(weights(&a), weights(&b), "step {k}");
        }
    }

    #[test]
    fn a_module_stepped_while_shared_is_stepped_as_burns_and_its_clone_untouched() {
        // SAC steps `self.critics.clone()`: the fused loop must copy, not write into the clone.
        let (x, mut ours, mut burns, (mut a, mut b)) = side_by_side();
        for k in 0..3 {
            let before = weights(&a);
            let kept = a.clone();
            a = step(&mut ours, kept.clone(), &x, 1e-3);
            b = step(&mut burns, b, &x, 1e-3);
            assert_eq!(
                weights(&kept),
                before,
                "step {k} wrote into the shared module"
            );
            assert_eq!(weights(&a), weights(&b), "step {k}");
        }
    }

    #[test]
    fn its_state_files_are_burns() {
        let dir = std::env::temp_dir().join(format!("proprio-adam-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (mlp, x) = net();
        let mut ours = adam(BURN_EPSILON);
        let mut a = step(&mut ours, mlp, &x, 1e-3);
        a = step(&mut ours, a, &x, 1e-3);
        crate::base::store::save_optimizer(&ours, &dir, "ours.bpk").unwrap();
        // burn's Adam resumes from our file, and ours from burn's: the same next step.
        let mut burns =
            crate::base::store::load_optimizer(AdamConfig::new().init(), &dir, "ours.bpk").unwrap();
        let b = step(&mut burns, a.clone(), &x, 1e-3);
        crate::base::store::save_optimizer(&burns, &dir, "burns.bpk").unwrap();
        let mut again =
            crate::base::store::load_optimizer(adam(BURN_EPSILON), &dir, "burns.bpk").unwrap();
        let a = step(&mut ours, a, &x, 1e-3);
        assert_eq!(weights(&a), weights(&b));
        let (c, d) = (
            step(&mut again, a.clone(), &x, 1e-3),
            step(&mut burns, b, &x, 1e-3),
        );
        assert_eq!(weights(&c), weights(&d));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
