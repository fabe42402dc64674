//! A network's own, fixed standardisation of the observation's state values:
//! `(x − mean) / std` per component, the statistics taken once from the data
//! it is first fitted to (behaviour cloning's demonstrations) and carried in
//! its weights, so evaluation and a learner that continues from it (`--init`)
//! read the state exactly as it was cloned. Millimetre-scale differences in
//! positions of a few centimetres' spread become visible to an MLP.

use burn::module::Param;
use burn::prelude::*;

/// The smallest standard deviation a component is divided by: values that
/// barely vary in the data are not blown up into large inputs.
pub const MIN_STD: f32 = 0.01;

/// Per-component shift and scale over a flat observation (0 and 1 on image
/// pixels and token ids, which pass unchanged).
#[derive(Module, Debug)]
pub struct Standardize {
    shift: Param<Tensor<1>>,
    scale: Param<Tensor<1>>,
}

impl Standardize {
    /// The identity on `dim` values (what a network built from scratch starts with).
    pub fn identity(dim: usize, device: &Device) -> Self {
        Self {
            shift: Param::from_tensor(Tensor::zeros([dim], device)),
            scale: Param::from_tensor(Tensor::ones([dim], device)),
        }
    }

    /// The statistics of observations of `dim` values over `components` (the
    /// state values: [`proprio::Space::normalized_components`]); `column(k)`
    /// yields column `k` of every row (rows need not sit in one slice).
    pub fn fitted<C: Iterator<Item = f32>>(
        dim: usize,
        components: &[usize],
        column: impl Fn(usize) -> C,
        device: &Device,
    ) -> Self {
        let (mut shift, mut scale) = (vec![0.0f32; dim], vec![1.0f32; dim]);
        for &k in components {
            let column = || column(k).map(f64::from);
            let n = column().count().max(1) as f64;
            let mean = column().sum::<f64>() / n;
            let var = column().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
            shift[k] = mean as f32;
            scale[k] = 1.0 / (var.sqrt() as f32).max(MIN_STD);
        }
        let vector = |v: Vec<f32>| Tensor::<1>::from_data(TensorData::new(v, [dim]), device);
        Self {
            shift: Param::from_tensor(vector(shift)),
            scale: Param::from_tensor(vector(scale)),
        }
    }

    /// `[B, D]` observations standardised; the statistics take no gradient.
    pub fn forward(&self, obs: Tensor<2>) -> Tensor<2> {
        let shift = self.shift.val().detach().unsqueeze();
        let scale = self.scale.val().detach().unsqueeze();
        (obs - shift) * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tensor::{host, matrix};

    #[test]
    fn state_values_come_out_standardised_and_tokens_unchanged() {
        let device = Device::flex();
        // Two columns of state (spread 0.02 m and none) and one token id.
        let rows = [0.10, 5.0, 49406.0, 0.12, 5.0, 320.0, 0.14, 5.0, 7.0];
        let column = |k: usize| rows.iter().skip(k).step_by(3).copied();
        let norm = Standardize::fitted(3, &[0, 1], column, &device);
        let out = host(norm.forward(matrix(&rows, 3, 3, &device))).unwrap();
        let std = (0.02f32 * 0.02 * 2.0 / 3.0).sqrt();
        for (got, want) in out.iter().zip([
            -0.02 / std,
            0.0,
            49406.0,
            0.0,
            0.0,
            320.0,
            0.02 / std,
            0.0,
            7.0,
        ]) {
            assert!((got - want).abs() < 1e-3, "{out:?}");
        }
        let same = Standardize::identity(3, &device).forward(matrix(&rows, 3, 3, &device));
        assert_eq!(host(same).unwrap(), rows);
    }
}
