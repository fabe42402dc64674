//! Checks made before bevy starts, so a machine without a display or a GPU
//! driver gets one clear sentence instead of a panic from deep inside winit or wgpu.

use crate::ViewerError;
use std::path::Path;
use wgpu::{Backends, Instance, InstanceDescriptor};

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

/// Rendering needs a wgpu adapter (a GPU driver, or Mesa's lavapipe on a CPU).
/// Returns true when every adapter is a software one (render cheaply then).
pub fn adapter() -> Result<bool, ViewerError> {
    let instance = Instance::new(InstanceDescriptor::new_without_display_handle_from_env());
    let adapters = bevy::tasks::block_on(instance.enumerate_adapters(Backends::all()));
    if adapters.is_empty() {
        return Err(ViewerError::NoAdapter(
            "wgpu found no Vulkan, GL or other adapter".into(),
        ));
    }
    Ok(adapters
        .iter()
        .all(|a| a.get_info().device_type == wgpu::DeviceType::Cpu))
}
