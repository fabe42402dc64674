//! Moving data between host slices and tensors.

use crate::base::error::{LearnError, Result};
use burn::prelude::*;

/// A `[rows, cols]` tensor from a row-major slice.
pub fn matrix(data: &[f32], rows: usize, cols: usize, device: &Device) -> Tensor<2> {
    Tensor::from_data(TensorData::new(data.to_vec(), [rows, cols]), device)
}

/// A `[len]` tensor from a slice.
pub fn vector(data: &[f32], device: &Device) -> Tensor<1> {
    Tensor::from_data(TensorData::new(data.to_vec(), [data.len()]), device)
}

/// A tensor's values, row-major, on the host.
pub fn host<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.into_data()
        .try_into_vec::<f32>()
        .map_err(|e| LearnError::Device(format!("cannot read a tensor back: {e:?}")))
}
