//! Data parallelism inside one update: a minibatch split into a fixed
//! number of row shards whose forward passes, losses and gradients run side
//! by side on the update pool's threads, the gradients summed in shard
//! order. One shard is the plain update; with more, results depend on the
//! shard count (a hyper-parameter), never on how many threads run them.

use crate::base::threads::on_this_thread;
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;
use rayon::prelude::*;
use std::ops::Range;

/// How a minibatch of `rows` is split into `count` shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shards {
    count: usize,
    rows: usize,
}

impl Shards {
    /// `count` near-equal shards of `rows` (at most one a row; at least one shard).
    pub fn new(count: usize, rows: usize) -> Self {
        Self {
            count: count.clamp(1, rows.max(1)),
            rows,
        }
    }

    /// The rows shard `k` holds: the first `rows % count` shards one row longer.
    fn range(&self, k: usize) -> Range<usize> {
        let (size, extra) = (self.rows / self.count, self.rows % self.count);
        let start = k * size + k.min(extra);
        start..start + size + usize::from(k < extra)
    }

    /// Shard `k`'s rows of a `[rows, ·]` tensor (the tensor itself when there is one shard).
    pub fn take(&self, t: &Tensor<2>, k: usize) -> Tensor<2> {
        if self.count == 1 {
            return t.clone();
        }
        let [_, cols] = t.dims();
        t.clone().slice([self.range(k), 0..cols])
    }

    /// A shard's mean-over-rows loss weighted by its share of the batch, so
    /// that the shards' losses (and gradients) sum to the batch's mean.
    pub fn share(&self, loss: Tensor<1>, k: usize) -> Tensor<1> {
        if self.count == 1 {
            return loss;
        }
        loss.mul_scalar(self.range(k).len() as f64 / self.rows as f64)
    }

    /// `f(k)` for every shard, in shard order; side by side on the current pool when more than one.
    pub fn map<T: Send>(&self, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
        if self.count == 1 {
            return vec![f(0)];
        }
        // The shards are the parallelism: each keeps its products on its thread.
        (0..self.count)
            .into_par_iter()
            .map(|k| on_this_thread(|| f(k)))
            .collect()
    }

    /// The shards' `[rows_k, ·]` outputs stacked back into `[rows, ·]`.
    pub fn cat(&self, mut parts: Vec<Tensor<2>>) -> Tensor<2> {
        if parts.len() == 1 {
            return parts.remove(0);
        }
        Tensor::cat(parts, 0)
    }

    /// The gradient of `Σₖ loss(module, k)` with respect to `module`'s
    /// parameters, and that sum's value: each shard's loss and backward pass
    /// on a fork of `module` (the same values and parameter ids, its own
    /// autodiff graph), the gradients added in shard order.
    pub fn grads<M, F>(&self, module: &M, loss: F) -> (GradientsParams, f32)
    where
        M: Module + Send + Sync,
        F: Fn(M, usize) -> Tensor<1> + Sync + Send,
    {
        let parts = self.map(|k| {
            let fork = if self.count == 1 {
                module.clone()
            } else {
                module.clone().map(&mut Fork)
            };
            let loss = loss(fork.clone(), k);
            let value = loss.clone().into_scalar::<f32>();
            (GradientsParams::from_grads(loss.backward(), &fork), value)
        });
        let total = parts.iter().map(|(_, v)| v).sum::<f32>();
        let mut parts: Vec<GradientsParams> = parts.into_iter().map(|(g, _)| g).collect();
        if parts.len() == 1 {
            return (parts.remove(0), total);
        }
        let mut sum = Sum {
            parts,
            total: GradientsParams::new(),
        };
        module.visit(&mut sum);
        (sum.total, total)
    }
}

/// Every parameter as a fresh autodiff leaf with the same value and id.
struct Fork;

impl ModuleMapper for Fork {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        param.map(|t| t.detach().require_grad())
    }
}

/// Each parameter's gradient summed over the shards, in shard order.
struct Sum {
    parts: Vec<GradientsParams>,
    total: GradientsParams,
}

impl ModuleVisitor for Sum {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let mut grads = self
            .parts
            .iter_mut()
            .filter_map(|g| g.remove::<D>(param.id));
        if let Some(first) = grads.next() {
            let sum = grads.fold(first, |sum, g| sum + g);
            self.total.register(param.id, sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::host;
    use crate::base::threads::update_pool;
    use crate::nets::mlp::{Activation, Mlp};

    fn problem() -> (Mlp, Tensor<2>, Tensor<2>) {
        let device = Device::flex().autodiff();
        let rng = &mut proprio::episode_rng(5, 0, 0);
        let mlp = Mlp::new(&[4, 32, 16, 2], Activation::Relu, 1.0, &device, rng);
        let wave = |n: usize, f: usize| -> Vec<f32> {
            (0..n).map(|k| ((k * f % 89) as f32 / 20.0) - 2.2).collect()
        };
        let x = Tensor::from_data(TensorData::new(wave(37 * 4, 31), [37, 4]), &device);
        let y = Tensor::from_data(TensorData::new(wave(37 * 2, 17), [37, 2]), &device);
        (mlp, x, y)
    }

    /// Every parameter's gradient, flattened in visiting order.
    fn flat(mlp: &Mlp, grads: &GradientsParams) -> Vec<f32> {
        let mut out = Vec::new();
        for layer in &mlp.layers {
            out.extend(host(grads.get::<2>(layer.weight.id).unwrap()).unwrap());
            let bias = layer.bias.as_ref().unwrap();
            out.extend(host(grads.get::<1>(bias.id).unwrap()).unwrap());
        }
        out
    }

    /// The mean squared error's gradient over `count` shards, on a pool of `threads`.
    fn sharded(count: usize, threads: usize) -> (Vec<f32>, f32) {
        let (mlp, x, y) = problem();
        let shards = Shards::new(count, 37);
        let (grads, loss) = update_pool(threads).unwrap().install(|| {
            shards.grads(&mlp, |net, k| {
                let error = net.forward(shards.take(&x, k)) - shards.take(&y, k);
                shards.share(error.square().mean(), k)
            })
        });
        (flat(&mlp, &grads), loss)
    }

    #[test]
    fn shards_cover_the_rows_once_in_order() {
        let shards = Shards::new(3, 10);
        let ranges: Vec<_> = (0..3).map(|k| shards.range(k)).collect();
        assert_eq!(ranges, [0..4, 4..7, 7..10]);
        assert_eq!(Shards::new(8, 3).count, 3);
    }

    #[test]
    fn sharded_gradients_are_the_whole_batchs() {
        let (whole, loss) = sharded(1, 1);
        for count in [2, 3, 5] {
            let (parts, sum) = sharded(count, 2);
            assert!(
                (sum - loss).abs() <= 1e-5 * loss.abs(),
                "{count}: {sum} vs {loss}"
            );
            for (p, w) in parts.iter().zip(&whole) {
                assert!(
                    (p - w).abs() <= 1e-5 * (1.0 + w.abs()),
                    "{count}: {p} vs {w}"
                );
            }
        }
    }

    #[test]
    fn sharded_gradients_do_not_depend_on_the_thread_count() {
        let bits = |(g, l): (Vec<f32>, f32)| -> Vec<u32> {
            g.iter().chain([&l]).map(|v| v.to_bits()).collect()
        };
        let one = bits(sharded(4, 1));
        assert_eq!(bits(sharded(4, 2)), one);
        assert_eq!(bits(sharded(4, 3)), one);
    }
}
