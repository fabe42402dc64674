//! Loading a checkpoint in the Hugging Face hub layout: `config.json`,
//! `model.safetensors` (PyTorch tensor names and layouts, mapped onto the
//! burn modules by `burn-store`), `preprocessor_config.json`, `merges.txt`.

use super::model::Clip;
use crate::{Result, RewardError};
use burn::prelude::*;
use burn_store::{ApplyError, ModuleSnapshot, PyTorchToBurnAdapter, SafetensorsStore};
use safetensors::{Dtype, SafeTensors};
use std::path::Path;

/// Overwrites every weight of `model` with the checkpoint's; returns its
/// `logit_scale`. A missing or mis-shaped tensor is an error naming it.
pub fn load_weights(model: &mut Clip, path: &Path) -> Result<f32> {
    if !path.is_file() {
        return Err(RewardError::io(path, "no such file"));
    }
    let mut store = SafetensorsStore::from_file(path)
        .with_from_adapter(PyTorchToBurnAdapter)
        .validate(false)
        .allow_partial(true);
    let applied = model
        .load_from(&mut store)
        .map_err(|e| checkpoint(path, e))?;
    if let Some(error) = applied.errors.first() {
        return Err(match error {
            ApplyError::ShapeMismatch {
                path: tensor,
                expected,
                found,
            } => RewardError::Shape {
                path: path.to_path_buf(),
                tensor: tensor.clone(),
                expected: expected.to_vec(),
                found: found.to_vec(),
            },
            other => checkpoint(path, other),
        });
    }
    if let Some((tensor, _)) = applied.missing.first() {
        return Err(RewardError::Missing {
            path: path.to_path_buf(),
            tensor: tensor.clone(),
        });
    }
    logit_scale(path)
}

/// The checkpoint's `logit_scale`, a 0-d float32 tensor.
fn logit_scale(path: &Path) -> Result<f32> {
    let file = std::fs::File::open(path).map_err(|e| RewardError::io(path, e))?;
    // SAFETY: the map is read-only and dropped before this function returns;
    // a checkpoint rewritten meanwhile gives wrong numbers, not unsafety in our code.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| RewardError::io(path, e))?;
    let tensors = SafeTensors::deserialize(&map).map_err(|e| checkpoint(path, e))?;
    let view = tensors
        .tensor("logit_scale")
        .map_err(|_| RewardError::Missing {
            path: path.to_path_buf(),
            tensor: "logit_scale".into(),
        })?;
    match (view.dtype(), view.data()) {
        (Dtype::F32, &[a, b, c, d]) => Ok(f32::from_le_bytes([a, b, c, d])),
        (dtype, _) => Err(checkpoint(
            path,
            format!(
                "logit_scale is {dtype:?} of shape {:?}, not one float32",
                view.shape()
            ),
        )),
    }
}

fn checkpoint(path: &Path, e: impl std::fmt::Display) -> RewardError {
    RewardError::Checkpoint {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A readable tensor error for device read-backs.
pub(crate) fn backend(e: impl std::fmt::Debug) -> RewardError {
    RewardError::Backend(format!("cannot read a tensor back: {e:?}"))
}

/// `[rows, cols]` i64 ids on `device`.
pub(crate) fn id_matrix(
    ids: Vec<i64>,
    rows: usize,
    cols: usize,
    device: &Device,
) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(ids, [rows, cols]), device)
}
