//! Polyak averaging of any module into its target copy, parameter by
//! parameter in visiting order (the two have the same structure). On flex
//! each parameter is mixed in place in one pass (a backend extension),
//! with burn's arithmetic to the bit; other devices compose burn's ops.

use crate::base::flex::{owned, plain, writable, zip_in_place};
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::{
    Autodiff, AutodiffBackend, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor,
};
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::prelude::*;

/// `target · (1 − τ) + online · τ` as one backend op; `weights` = (1 − τ, τ) in `f32`.
#[backend_extension(Flex, Cube: cfg(feature = "wgpu"), Autodiff)]
pub trait PolyakBackend: Backend {
    /// The mix of `target` with `online` (same shape).
    fn polyak_mix(
        target: FloatTensor<Self>,
        online: FloatTensor<Self>,
        weights: (f32, f32),
    ) -> FloatTensor<Self> {
        composed::<Self>(target, online, weights)
    }
}

/// The mix in three of the backend's ops, as burn computes `t·(1−τ) + o·τ`.
fn composed<B: Backend>(
    target: FloatTensor<B>,
    online: FloatTensor<B>,
    (keep, take): (f32, f32),
) -> FloatTensor<B> {
    B::float_add(
        B::float_mul_scalar(target, keep.into()),
        B::float_mul_scalar(online, take.into()),
    )
}

impl PolyakBackend for Flex {
    fn polyak_mix(
        target: FloatTensor<Self>,
        online: FloatTensor<Self>,
        (keep, take): (f32, f32),
    ) -> FloatTensor<Self> {
        // A target cloned into the mix is copied once, not mixed op by op.
        let mut target = owned(target);
        let n = target.layout().num_elements();
        let ready = writable(&target) && plain(&online) && online.layout().num_elements() == n;
        if !ready {
            return composed::<Self>(target, online, (keep, take));
        }
        zip_in_place(&mut target, &online, move |t, o| *t = *t * keep + o * take);
        target
    }
}

#[cfg(feature = "wgpu")]
impl PolyakBackend for burn::backend::Cube {}

/// A target network is never trained: mix the inner backend's tensors, untracked.
impl<B: Backend + PolyakBackend, C: CheckpointStrategy> PolyakBackend for Autodiff<B, C> {
    fn polyak_mix(
        target: FloatTensor<Self>,
        online: FloatTensor<Self>,
        weights: (f32, f32),
    ) -> FloatTensor<Self> {
        let mixed = B::polyak_mix(target.into_primitive(), online.into_primitive(), weights);
        Self::from_inner(mixed)
    }
}

/// Every float parameter of a module, flattened, in visiting order.
struct Collect(Vec<Tensor<1>>);

impl ModuleVisitor for Collect {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let t = param.val();
        let n = t.shape().num_elements();
        self.0.push(t.reshape([n]));
    }
}

/// Mixes each parameter with the online one at the same place.
struct Mix {
    online: std::vec::IntoIter<Tensor<1>>,
    tau: f64,
}

impl ModuleMapper for Mix {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let Some(online) = self.online.next() else {
            return param;
        };
        // As burn's scalar ops convert them: (1 − τ) in f64, then each to the element type.
        let weights = ((1.0 - self.tau) as f32, self.tau as f32);
        param.map(|t| {
            let o: Tensor<D> = online.to_device(&t.device()).reshape(t.shape());
            let mixed = <Dispatch as PolyakBackend>::polyak_mix(
                t.into_dispatch(),
                o.into_dispatch(),
                weights,
            );
            // Detached: a target network is never trained, and must not keep the online graph alive.
            Tensor::from_dispatch(mixed).detach()
        })
    }
}

/// `tau · online + (1 − tau) · target` for every parameter (`tau` = 1: a copy).
pub fn polyak<M: Module>(online: &M, target: M, tau: f64) -> M {
    let mut collect = Collect(Vec::new());
    online.visit(&mut collect);
    target.map(&mut Mix {
        online: collect.0.into_iter(),
        tau,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::host;
    use burn::nn::{Linear, LinearConfig};

    #[test]
    fn mixes_every_parameter_by_tau() {
        let device = Device::default();
        let online: Linear = LinearConfig::new(3, 2).init(&device);
        let target: Linear = LinearConfig::new(3, 2).init(&device);
        let w = |l: &Linear| host(l.weight.val()).unwrap();
        let b = |l: &Linear| host(l.bias.as_ref().unwrap().val()).unwrap();
        let mixed = polyak(&online, target.clone(), 0.25);
        for (m, (o, t)) in w(&mixed).iter().zip(w(&online).iter().zip(w(&target))) {
            assert!((m - (0.25 * o + 0.75 * t)).abs() < 1e-6);
        }
        for (m, (o, t)) in b(&mixed).iter().zip(b(&online).iter().zip(b(&target))) {
            assert!((m - (0.25 * o + 0.75 * t)).abs() < 1e-6);
        }
        assert_eq!(w(&polyak(&online, target, 1.0)), w(&online));
    }

    #[test]
    fn the_fused_mix_on_flex_is_burns_to_the_bit() {
        let device = Device::flex().autodiff();
        let online: Linear = LinearConfig::new(17, 9).init(&device);
        let target: Linear = LinearConfig::new(17, 9).init(&device);
        let bits =
            |t: Tensor<2>| -> Vec<u32> { host(t).unwrap().iter().map(|v| v.to_bits()).collect() };
        let tau = 0.005;
        let burns = target
            .weight
            .val()
            .mul_scalar(1.0 - tau)
            .add(online.weight.val().mul_scalar(tau));
        let mixed = polyak(&online, target, tau);
        assert_eq!(bits(mixed.weight.val()), bits(burns));
        assert!(!mixed.weight.val().is_require_grad());
    }
}
