//! Conversions at the boundary: JSON arguments and byte buffers in; typed
//! errors, byte buffers and info dicts out.
//!
//! Arrays cross as raw native-endian bytes: the Python side views them with
//! `numpy.frombuffer` (a `bytearray` gives a writable array without another
//! copy). This needs nothing beyond CPython's stable ABI, so one abi3
//! extension serves every Python from 3.9.

use proprio::{Error, Info};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};
use serde_json::Value;

/// The library's error as the Python exception a caller expects: bad
/// arguments are `ValueError`, a call in the wrong state, an unusable
/// backend or an agent that failed `RuntimeError`, a batch too large for memory `MemoryError`; the
/// message is the library's.
pub fn py_err(e: Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::Memory { .. } => PyMemoryError::new_err(message),
        Error::NotReset { .. }
        | Error::EpisodeOver { .. }
        | Error::Backend(_)
        | Error::Agent(_) => PyRuntimeError::new_err(message),
        Error::InvalidAction { .. }
        | Error::UnknownEnv { .. }
        | Error::Config { .. }
        | Error::Options(_)
        | Error::State(_)
        | Error::Shape(_) => PyValueError::new_err(message),
    }
}

/// Parses an optional JSON argument (`None` is JSON null).
pub fn parse_json(what: &str, text: Option<&str>) -> PyResult<Value> {
    text.map_or(Ok(Value::Null), |t| {
        serde_json::from_str(t).map_err(|e| PyValueError::new_err(format!("invalid {what}: {e}")))
    })
}

/// Parses optional reset options (a JSON object, or `None`).
pub fn parse_options(text: Option<&str>) -> PyResult<Option<Value>> {
    text.map(|t| parse_json("reset options", Some(t)))
        .transpose()
}

/// The native-endian `f32`s in `bytes`: the bytes themselves when they are
/// aligned (they are when Python made them), else a copy in `scratch`.
pub fn read_f32s<'a>(bytes: &'a [u8], scratch: &'a mut Vec<f32>) -> PyResult<&'a [f32]> {
    if !bytes.len().is_multiple_of(4) {
        return Err(PyValueError::new_err(format!(
            "a float32 buffer cannot hold {} bytes",
            bytes.len()
        )));
    }
    if let Ok(floats) = bytemuck::try_cast_slice(bytes) {
        return Ok(floats);
    }
    scratch.clear();
    scratch.extend(
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
    );
    Ok(scratch)
}

/// A new `bytearray` holding `values`.
pub fn f32_bytes<'py>(py: Python<'py>, values: &[f32]) -> Bound<'py, PyByteArray> {
    PyByteArray::new(py, bytemuck::cast_slice(values))
}

/// A new `bytearray` of one byte (0 or 1) per flag.
pub fn bool_bytes<'py>(py: Python<'py>, flags: &[bool]) -> Bound<'py, PyByteArray> {
    PyByteArray::new(py, bytemuck::cast_slice(flags))
}

/// One env's info as a dict of floats.
pub fn column_dict<'py>(
    py: Python<'py>,
    entries: impl Iterator<Item = (&'static str, f64)>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in entries {
        dict.set_item(key, value)?;
    }
    Ok(dict)
}

/// A batch of infos by key: each key maps to `(values, mask)`, the `[N]`
/// float64 values and the `[N]` flags of the envs that set it (Gymnasium's
/// `key` and `_key`), as bytes. Only the envs whose `only` entry is true are read.
pub fn info_columns<'py>(
    py: Python<'py>,
    infos: &[Info],
    only: Option<&[bool]>,
) -> PyResult<Bound<'py, PyDict>> {
    let n = infos.len();
    let mut columns: Vec<(&'static str, Vec<f64>, Vec<bool>)> = Vec::new();
    // Most steps of most envs set nothing: skip those without a look inside.
    let set = infos
        .iter()
        .enumerate()
        .filter(|(_, info)| !info.is_empty());
    for (i, info) in set {
        if only.is_some_and(|mask| !mask[i]) {
            continue;
        }
        for (j, (key, value)) in info.iter().enumerate() {
            // Envs of a batch set the same keys in the same order: the j-th
            // key is almost always column j, and the same static string.
            let same = |k: &&str| std::ptr::eq(*k, key) || *k == key;
            let c = match columns.get(j) {
                Some((k, ..)) if same(k) => j,
                _ => match columns.iter().position(|(k, ..)| same(k)) {
                    Some(c) => c,
                    None => {
                        columns.push((key, vec![0.0; n], vec![false; n]));
                        columns.len() - 1
                    }
                },
            };
            columns[c].1[i] = value;
            columns[c].2[i] = true;
        }
    }
    let dict = PyDict::new(py);
    for (key, values, mask) in columns {
        let values = PyByteArray::new(py, bytemuck::cast_slice(&values));
        dict.set_item(key, (values, bool_bytes(py, &mask)))?;
    }
    Ok(dict)
}
