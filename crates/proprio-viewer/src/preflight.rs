//! Checks made before bevy starts, so a machine without a display or a GPU
//! driver gets one clear sentence instead of a panic from deep inside winit or wgpu.

use crate::ViewerError;
use bevy::app::{App, AppExit, Plugin, Startup};
use bevy::ecs::message::MessageWriter;
use bevy::render::RenderPlugin;
use bevy::render::renderer::{
    RenderAdapter, RenderAdapterInfo, RenderDevice, RenderInstance, RenderQueue, WgpuWrapper,
};
use bevy::render::settings::{RenderCreation, WgpuSettings};
use bevy::winit::DisplayHandleWrapper;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use wgpu::rwh::HasDisplayHandle;
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

/// bevy's `RenderPlugin` for a window on wgpu's GL backend. bevy 0.19 makes
/// its wgpu instance without the display, so EGL falls back to its
/// surfaceless platform and no window surface fits the adapter ("no present
/// mode"). This plugin takes bevy's place after winit has opened the display
/// and makes the instance on it.
pub struct GlWindowRender {
    /// Limits the device must not exceed.
    pub limits: wgpu::Limits,
    /// Compile pipelines before the first frame (captures need every frame drawn).
    pub synchronous_pipeline_compilation: bool,
    /// Why the renderer could not be made, if it could not; the app then stops.
    pub failure: Arc<Mutex<Option<ViewerError>>>,
    inner: OnceLock<RenderPlugin>,
}

impl GlWindowRender {
    /// The plugin; the renderer is made when it is built.
    pub fn new(limits: wgpu::Limits, synchronous: bool) -> Self {
        Self {
            limits,
            synchronous_pipeline_compilation: synchronous,
            failure: Arc::default(),
            inner: OnceLock::new(),
        }
    }
}

impl Plugin for GlWindowRender {
    fn build(&self, app: &mut App) {
        let display = app
            .world()
            .get_resource::<DisplayHandleWrapper>()
            .map(|d| d.0.clone());
        let render_creation = match gl_window_renderer(display, &self.limits) {
            Ok(creation) => creation,
            Err(e) => {
                *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                app.add_systems(Startup, |mut exit: MessageWriter<AppExit>| {
                    exit.write(AppExit::error());
                });
                RenderCreation::Automatic(Box::new(WgpuSettings {
                    backends: None,
                    ..Default::default()
                }))
            }
        };
        let inner = self.inner.get_or_init(|| RenderPlugin {
            render_creation,
            synchronous_pipeline_compilation: self.synchronous_pipeline_compilation,
            ..Default::default()
        });
        inner.build(app);
    }

    fn ready(&self, app: &App) -> bool {
        self.inner.get().is_none_or(|p| p.ready(app))
    }

    fn finish(&self, app: &mut App) {
        if let Some(inner) = self.inner.get() {
            inner.finish(app);
        }
    }
}

/// The renderer on wgpu's GL backend, its instance made on winit's display.
fn gl_window_renderer(
    display: Option<impl HasDisplayHandle + std::fmt::Debug + Send + Sync + 'static>,
    limits: &wgpu::Limits,
) -> Result<RenderCreation, ViewerError> {
    let gl_error = |e: String| {
        ViewerError::NoAdapter(format!(
            "wgpu's GL backend cannot serve a window on this display ({e}); \
             install Mesa's Vulkan driver (mesa-vulkan-drivers) or capture offscreen (--screenshot without --window)"
        ))
    };
    let display = display.ok_or_else(|| gl_error("winit opened no display".into()))?;
    let mut descriptor = InstanceDescriptor::new_with_display_handle_from_env(Box::new(display));
    descriptor.backends = Backends::GL;
    let instance = Instance::new(descriptor);
    let options = RequestAdapterOptions {
        power_preference: PowerPreference::from_env().unwrap_or(PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: None,
    };
    let adapter = bevy::tasks::block_on(instance.request_adapter(&options))
        .map_err(|e| gl_error(e.to_string()))?;
    let descriptor = wgpu::DeviceDescriptor {
        label: Some("proprio viewer (GL window)"),
        required_features: adapter.features(),
        required_limits: adapter.limits().or_worse_values_from(limits),
        ..Default::default()
    };
    let (device, queue) = bevy::tasks::block_on(adapter.request_device(&descriptor))
        .map_err(|e| gl_error(e.to_string()))?;
    let info = adapter.get_info();
    Ok(RenderCreation::manual(
        RenderDevice::from(device),
        RenderQueue(Arc::new(WgpuWrapper::new(queue))),
        RenderAdapterInfo(WgpuWrapper::new(info)),
        RenderAdapter(Arc::new(WgpuWrapper::new(adapter))),
        RenderInstance(Arc::new(WgpuWrapper::new(instance))),
    ))
}
