//! Polyak averaging of any module into its target copy, parameter by
//! parameter in visiting order (the two have the same structure).

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::prelude::*;

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
        let tau = self.tau;
        param.map(|t| {
            let o = online.to_device(&t.device()).reshape(t.shape());
            // Detached: a target network is never trained, and must not keep the online graph alive.
            t.mul_scalar(1.0 - tau).add(o.mul_scalar(tau)).detach()
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
}
