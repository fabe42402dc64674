//! What the cloning tests share: an env's default source, reach's expert
//! demonstrations, and a small training request on reach (each test
//! crate that includes it uses part of it).
#![allow(dead_code)]

use proprio::serde_json::Value;
use proprio_learn::bc::collect;
use proprio_learn::{Algo, ComputeDevice, EnvSource, TrainRequest};
use std::path::{Path, PathBuf};

pub const INSTRUCT: &str = "manipulation/instruct-v0";
pub const REACH: &str = "manipulation/reach-v0";

/// Env `id` under its default config, state observations, CPU.
pub fn source(id: &str) -> EnvSource {
    let spec = proprio::registry().spec(id, &Value::Null).unwrap();
    EnvSource::new(id, spec.config, Default::default())
}

/// Reach's expert demonstrations in `dir/reach.safetensors`.
pub fn reach_demos(dir: &Path, episodes: usize) -> PathBuf {
    let path = dir.join("reach.safetensors");
    collect(&source(REACH), episodes, 0.0, 3)
        .unwrap()
        .write(&path)
        .unwrap();
    path
}

/// `algo` on reach with `overrides`, seed 7, one CPU thread, saved at `out`.
pub fn request(algo: Algo, overrides: Value, out: PathBuf) -> TrainRequest {
    TrainRequest {
        algo,
        env: EnvSource::new(REACH, Value::Null, Default::default()),
        seed: 7,
        device: ComputeDevice::Cpu,
        threads: Some(1),
        overrides: overrides.as_object().cloned().unwrap_or_default(),
        out: Some(out),
        video_every: None,
        init: None,
    }
}
