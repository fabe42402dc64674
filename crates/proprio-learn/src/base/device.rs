//! The compute device the networks run on, chosen at run time (burn 0.22 `Device`).

use crate::base::error::Result;
use burn::tensor::Device;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Where the networks run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeDevice {
    /// burn's `flex` backend: pure-Rust SIMD kernels on the CPU (the default;
    /// measured faster than `ndarray` for our MLPs, see docs/benchmarks.md).
    #[default]
    Cpu,
    /// burn's `wgpu` backend (Vulkan, Metal, DX12; lavapipe without a GPU),
    /// compiled with the `wgpu` cargo feature (on by default).
    Wgpu,
}

impl fmt::Display for ComputeDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cpu => "cpu",
            Self::Wgpu => "wgpu",
        })
    }
}

impl FromStr for ComputeDevice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "wgpu" => Ok(Self::Wgpu),
            other => Err(format!("unknown device '{other}' (expected cpu or wgpu)")),
        }
    }
}

impl ComputeDevice {
    /// The inference device (no gradients) of this backend.
    pub fn device(self) -> Result<Device> {
        match self {
            Self::Cpu => Ok(Device::flex()),
            Self::Wgpu => wgpu_device(),
        }
    }
}

/// Initialises burn's wgpu runtime once per process; a machine without an
/// adapter gets a typed error instead of burn's panic on first use.
#[cfg(feature = "wgpu")]
fn wgpu_device() -> Result<Device> {
    static DEVICE: std::sync::OnceLock<std::result::Result<Device, String>> =
        std::sync::OnceLock::new();
    DEVICE
        .get_or_init(|| Device::wgpu_options().init().map_err(|e| e.to_string()))
        .clone()
        .map_err(|e| {
            crate::base::error::LearnError::Device(format!(
                "no wgpu adapter ({e}); install a GPU driver, or mesa-vulkan-drivers for lavapipe on the CPU"
            ))
        })
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_device() -> Result<Device> {
    Err(crate::base::error::LearnError::Device(
        "this build has no wgpu backend: rebuild with the `wgpu` feature of proprio-learn (on by default)".into(),
    ))
}
