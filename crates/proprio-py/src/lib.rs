//! The native half of the `proprio` Python package: registered envs as Python
//! classes that take actions and return outcomes as one buffer per batch.
//!
//! The Python half (`python/proprio`) turns these into `gymnasium.Env` and
//! `gymnasium.vector.VectorEnv`: spaces, observation layouts and info dicts in
//! Gymnasium's shapes. Here every call is one batch: the actions arrive as one
//! float32 buffer, the physics runs with the GIL released, and each output is
//! one new buffer copied from the batch (no per-env copies).

mod convert;

use convert::{
    bool_bytes, column_dict, f32_bytes, info_columns, parse_json, parse_options, py_err, read_f32s,
};
use proprio::{AutoresetMode, Backend, Env, Info, VecEnv, VecOptions};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyTuple};
use std::sync::Mutex;

/// A batch of one registered env (the engine of `proprio.VectorEnv`).
#[pyclass(module = "proprio._native")]
struct NativeVecEnv {
    /// `Mutex` makes the class `Sync`; calls take `&mut self`, so it is never contended.
    env: Mutex<Box<dyn VecEnv>>,
    spec_json: String,
    /// Actions copied here when Python hands over unaligned bytes.
    actions: Vec<f32>,
}

/// The env behind a class's `Mutex`, which exclusive access makes free to reach.
fn inner<T: ?Sized>(env: &mut Mutex<T>) -> &mut T {
    env.get_mut()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[pymethods]
impl NativeVecEnv {
    /// Builds `num_envs` envs of `id`; `config` and `obs` are JSON objects (or None).
    #[new]
    // Python's keyword arguments, one per `make_vec` option.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (id, num_envs, config=None, autoreset="next-step", threads=None, backend="cpu", obs=None))]
    fn new(
        py: Python<'_>,
        id: &str,
        num_envs: usize,
        config: Option<&str>,
        autoreset: &str,
        threads: Option<usize>,
        backend: &str,
        obs: Option<&str>,
    ) -> PyResult<Self> {
        let config = parse_json("config", config)?;
        let options = VecOptions {
            autoreset: autoreset.parse::<AutoresetMode>().map_err(py_value_error)?,
            threads,
            backend: backend.parse::<Backend>().map_err(py_value_error)?,
        };
        if threads == Some(0) {
            return Err(py_value_error("threads must be at least 1".into()));
        }
        let obs: proprio::render::ObsOptions = match obs {
            None => Default::default(),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| py_value_error(format!("invalid observation options: {e}")))?,
        };
        let id = id.to_owned();
        let env = py
            .detach(|| proprio::make_vec_observed(&id, num_envs, &config, options, &obs))
            .map_err(py_err)?;
        let spec_json = serde_json::to_string(env.spec()).map_err(json_error)?;
        Ok(Self {
            env: Mutex::new(env),
            spec_json,
            actions: Vec::new(),
        })
    }

    /// The spec of each env, as JSON (spaces in the Rust `Space` layout).
    #[getter]
    fn spec_json(&self) -> &str {
        &self.spec_json
    }

    /// Number of envs N.
    #[getter]
    fn num_envs(&mut self) -> usize {
        inner(&mut self.env).num_envs()
    }

    /// Resets every env: `(obs, info)`, the observations `[N × D]` as float32 bytes.
    #[pyo3(signature = (seed=None, options=None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
        options: Option<&str>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let options = parse_options(options)?;
        let env = inner(&mut self.env);
        py.detach(|| env.reset(seed, options.as_ref()))
            .map_err(py_err)?;
        let batch = env.batch();
        (
            f32_bytes(py, &batch.obs),
            info_columns(py, &batch.infos, None)?,
        )
            .into_pyobject(py)
    }

    /// Resets the envs whose `mask` entry (one byte each) is non-zero:
    /// `(obs, info)`, the info holding the reset envs only.
    #[pyo3(signature = (mask, options=None))]
    fn reset_envs<'py>(
        &mut self,
        py: Python<'py>,
        mask: &[u8],
        options: Option<&str>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let options = parse_options(options)?;
        let mask: Vec<bool> = mask.iter().map(|&b| b != 0).collect();
        let mask = mask.as_slice();
        let env = inner(&mut self.env);
        py.detach(|| env.reset_envs(mask, options.as_ref()))
            .map_err(py_err)?;
        let batch = env.batch();
        (
            f32_bytes(py, &batch.obs),
            info_columns(py, &batch.infos, Some(mask))?,
        )
            .into_pyobject(py)
    }

    /// Steps every env with `actions` (`N × A` float32 bytes):
    /// `(obs, reward, terminated, truncated, info, final)` where `final` is
    /// `None` or, in same-step mode when some episode ended,
    /// `(final_obs, has_final, final_info)`.
    fn step<'py>(&mut self, py: Python<'py>, actions: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
        let actions = read_f32s(actions, &mut self.actions)?;
        let env = inner(&mut self.env);
        py.detach(|| env.step(actions)).map_err(py_err)?;
        let same_step = env.autoreset_mode() == AutoresetMode::SameStep;
        let batch = env.batch();
        let finals = if same_step && batch.has_final.iter().any(|&f| f) {
            let final_obs = f32_bytes(py, &batch.final_obs);
            let has_final = bool_bytes(py, &batch.has_final);
            let final_info = info_columns(py, &batch.final_infos, Some(&batch.has_final))?;
            (final_obs, has_final, final_info)
                .into_pyobject(py)?
                .into_any()
        } else {
            py.None().into_bound(py)
        };
        (
            f32_bytes(py, &batch.obs),
            f32_bytes(py, &batch.reward),
            bool_bytes(py, &batch.terminated),
            bool_bytes(py, &batch.truncated),
            info_columns(py, &batch.infos, None)?,
            finals,
        )
            .into_pyobject(py)
    }

    /// Env `env`'s full state, as JSON.
    fn snapshot(&mut self, env: usize) -> PyResult<String> {
        let state = inner(&mut self.env).snapshot(env).map_err(py_err)?;
        serde_json::to_string(&state).map_err(json_error)
    }

    /// Restores one snapshot (JSON) into each listed env; returns the observations.
    fn restore<'py>(
        &mut self,
        py: Python<'py>,
        state: &str,
        envs: Vec<usize>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let state = serde_json::from_str(state)
            .map_err(|e| py_value_error(format!("invalid state: {e}")))?;
        let env = inner(&mut self.env);
        py.detach(|| env.restore(&state, &envs)).map_err(py_err)?;
        Ok(f32_bytes(py, &env.batch().obs))
    }
}

/// One registered env (the engine of `proprio.make`).
#[pyclass(module = "proprio._native")]
struct NativeEnv {
    env: Mutex<Box<dyn Env>>,
    spec_json: String,
    obs: Vec<f32>,
    action: Vec<f32>,
    info: Info,
}

#[pymethods]
impl NativeEnv {
    /// Builds one env of `id` with `config` (a JSON object, or None).
    #[new]
    #[pyo3(signature = (id, config=None))]
    fn new(id: &str, config: Option<&str>) -> PyResult<Self> {
        let config = parse_json("config", config)?;
        let env = proprio::make(id, &config).map_err(py_err)?;
        let spec_json = serde_json::to_string(env.spec()).map_err(json_error)?;
        let obs = vec![0.0; env.spec().observation_space.flat_dim()];
        Ok(Self {
            env: Mutex::new(env),
            spec_json,
            obs,
            action: Vec::new(),
            info: Info::default(),
        })
    }

    /// The env's spec, as JSON.
    #[getter]
    fn spec_json(&self) -> &str {
        &self.spec_json
    }

    /// Starts an episode: `(obs, info)`, the observation as float32 bytes.
    #[pyo3(signature = (seed=None, options=None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
        options: Option<&str>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let options = parse_options(options)?;
        let env = inner(&mut self.env);
        env.reset_into(seed, options.as_ref(), &mut self.obs, &mut self.info)
            .map_err(py_err)?;
        (f32_bytes(py, &self.obs), column_dict(py, self.info.iter())?).into_pyobject(py)
    }

    /// Steps with `action` (`A` float32 bytes): `(obs, reward, terminated, truncated, info)`.
    fn step<'py>(&mut self, py: Python<'py>, action: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
        let action = read_f32s(action, &mut self.action)?;
        let env = inner(&mut self.env);
        let t = env
            .step_into(action, &mut self.obs, &mut self.info)
            .map_err(py_err)?;
        (
            f32_bytes(py, &self.obs),
            t.reward,
            t.terminated,
            t.truncated,
            column_dict(py, self.info.iter())?,
        )
            .into_pyobject(py)
    }

    /// The env's full state, as JSON.
    fn snapshot(&mut self) -> PyResult<String> {
        let env = inner(&mut self.env);
        let state = env.snapshot().map_err(py_err)?;
        serde_json::to_string(&state).map_err(json_error)
    }

    /// Restores a snapshot (JSON); returns the observation.
    fn restore<'py>(&mut self, py: Python<'py>, state: &str) -> PyResult<Bound<'py, PyByteArray>> {
        let state = serde_json::from_str(state)
            .map_err(|e| py_value_error(format!("invalid state: {e}")))?;
        let env = inner(&mut self.env);
        env.restore(&state, &mut self.obs).map_err(py_err)?;
        Ok(f32_bytes(py, &self.obs))
    }
}

/// Every registered id, e.g. `classic/cartpole-v1`.
#[pyfunction]
fn env_ids() -> Vec<&'static str> {
    proprio::registry().ids().collect()
}

fn py_value_error(message: String) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(message)
}

fn json_error(e: serde_json::Error) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(e.to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeVecEnv>()?;
    m.add_class::<NativeEnv>()?;
    m.add_function(wrap_pyfunction!(env_ids, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
