//! Global gradient-norm clipping over every parameter (PyTorch's `clip_grad_norm_`).
//!
//! burn's `GradientClipping::Norm` clips each parameter tensor on its own;
//! CleanRL clips the norm of all gradients together, which is what this does.

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::prelude::*;

struct SquaredNorm<'a> {
    grads: &'a GradientsParams,
    total: f64,
}

impl ModuleVisitor for SquaredNorm<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(g) = self.grads.get::<D>(param.id) {
            self.total += f64::from(g.square().sum().into_scalar::<f32>());
        }
    }
}

struct Scale<'a> {
    grads: &'a mut GradientsParams,
    factor: f64,
    ids: Vec<ParamId>,
}

impl ModuleVisitor for Scale<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if self.ids.contains(&param.id) {
            return;
        }
        self.ids.push(param.id);
        if let Some(g) = self.grads.remove::<D>(param.id) {
            self.grads.register(param.id, g.mul_scalar(self.factor));
        }
    }
}

/// Scales `grads` so their global L2 norm is at most `max_norm`; returns the norm before clipping.
pub fn clip_global_norm<M: Module>(module: &M, grads: &mut GradientsParams, max_norm: f64) -> f64 {
    let mut norm = SquaredNorm { grads, total: 0.0 };
    module.visit(&mut norm);
    let total = norm.total.sqrt();
    let factor = max_norm / (total + 1e-6);
    if factor < 1.0 {
        module.visit(&mut Scale {
            grads,
            factor,
            ids: Vec::new(),
        });
    }
    total
}
