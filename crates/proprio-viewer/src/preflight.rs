//! Checks made before bevy starts, so a machine without a display or a GPU
//! driver gets one clear sentence instead of a panic from deep inside winit or wgpu.

use crate::ViewerError;
use std::path::Path;
use wgpu::{Backends, Instance, InstanceDescriptor, PowerPreference, RequestAdapterOptions};

/// A window needs an X11 display (the viewer is built with winit's X11 backend).
pub fn display() -> Result<(), ViewerError> {
    let Some(display) = std::env::var_os("DISPLAY").filter(|d| !d.is_empty()) else {
        return Err(ViewerError::NoDisplay("DISPLAY is not set".into()));
    };
    let display = display.to_string_lossy().to_string();
    // A local display ":N" is served on /tmp/.X11-unix/XN.
    if let Some(number) = display.strip_prefix(':') {
        let number = number.split('.').next().unwrap_or_default();
        let socket = format!("/tmp/.X11-unix/X{number}");
        if !Path::new(&socket).exists() {
            return Err(ViewerError::NoDisplay(format!(
                "DISPLAY is {display} but no X server listens on {socket}"
            )));
        }
    }
    Ok(())
}

/// The adapter the viewer renders with. It is chosen here (honouring
/// `WGPU_BACKEND` and `WGPU_POWER_PREF`), and bevy
/// is then told to use exactly this one, so the render settings fit it.
#[derive(Debug, Clone)]
pub struct Adapter {
    /// Vulkan, GL, Metal or DX12.
    pub backend: wgpu::Backend,
    /// A CPU rasteriser (lavapipe, llvmpipe): render cheaply.
    pub software: bool,
    /// The adapter's name, for bevy's adapter selection.
    pub name: String,
    /// What the adapter supports.
    pub limits: wgpu::Limits,
}

/// Rendering needs a wgpu adapter (a GPU driver, Mesa's lavapipe, or Mesa's GL).
pub fn adapter() -> Result<Adapter, ViewerError> {
    // Without `WGPU_BACKEND`, Vulkan/Metal/DX12 come first and GL is the
    // fallback (wgpu alone would rank Mesa's GL above lavapipe, a CPU device).
    let tries = match Backends::from_env() {
        Some(chosen) => vec![chosen],
        None => vec![Backends::PRIMARY, Backends::GL],
    };
    let options = RequestAdapterOptions {
        power_preference: PowerPreference::from_env().unwrap_or(PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: None,
    };
    let mut found = Err("no backend tried".to_string());
    for backends in tries {
        let mut descriptor = InstanceDescriptor::new_without_display_handle_from_env();
        descriptor.backends = backends;
        let instance = Instance::new(descriptor);
        found =
            bevy::tasks::block_on(instance.request_adapter(&options)).map_err(|e| e.to_string());
        if found.is_ok() {
            break;
        }
    }
    let adapter = found.map_err(|e| {
        ViewerError::NoAdapter(format!("wgpu found no Vulkan, GL or other adapter: {e}"))
    })?;
    let info = adapter.get_info();
    Ok(Adapter {
        backend: info.backend,
        software: info.device_type == wgpu::DeviceType::Cpu,
        name: info.name,
        limits: adapter.limits(),
    })
}
