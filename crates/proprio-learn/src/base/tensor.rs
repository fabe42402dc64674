//! Moving data between host slices and tensors, and to and from the
//! little-endian bytes of safetensors files.

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

/// `values` as little-endian bytes (a safetensors F32 tensor's data).
pub fn le_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The floats of little-endian `bytes` (a safetensors F32 tensor's data).
pub fn le_floats(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
