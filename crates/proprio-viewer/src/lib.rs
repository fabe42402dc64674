//! # proprio-viewer
//!
//! The interactive viewer: opens any registered env in a bevy window, draws
//! the [`proprio_core::Scene`] each env describes, and lets the user pause,
//! single-step, reset, change speed, show one env or the whole batch, drive
//! it from the keyboard, or watch a policy (and take over from it).
//! `--screenshot` renders headless to a PNG for docs and tests.
//!
//! Its own crate, so users of the env crates never compile bevy.

mod camera;
mod capture;
mod draw;
mod entry;
mod hud;
mod label;
mod preflight;
mod sim;
mod teleop;

pub use label::{LabelDesk, LabelReport, OpenPairs, label};
pub use sim::Episode;

use bevy::app::ScheduleRunnerPlugin;
use bevy::input::InputSystems;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::settings::WgpuSettings;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
pub use proprio::render::ObsOptions;
use proprio_core::Agent;
use proprio_core::serde_json::Value;
use sim::{Sim, SimRes};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why the viewer could not run.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// The env could not be made, reset, stepped or drawn.
    #[error(transparent)]
    Env(#[from] proprio_core::Error),
    /// No window can be opened here.
    #[error(
        "no display to open a window on ({0}); run it under X11 (or `xvfb-run proprio view …`), or render headless with --screenshot FILE"
    )]
    NoDisplay(String),
    /// wgpu found no adapter to render with.
    #[error(
        "no GPU adapter for rendering ({0}); install a Vulkan driver (on Debian/Ubuntu without a GPU: `apt-get install mesa-vulkan-drivers libvulkan1`)"
    )]
    NoAdapter(String),
    /// The renderer stopped with an error on this adapter.
    #[error(
        "{0}; RUST_LOG=wgpu=error shows why, and WGPU_BACKEND=vulkan or WGPU_BACKEND=gl picks another adapter"
    )]
    Render(String),
    /// The screenshot could not be written.
    #[error("cannot write the screenshot {path}: {message}")]
    Screenshot { path: PathBuf, message: String },
    /// A bad option.
    #[error("{0}")]
    Options(String),
    /// The preference pairs could not be read or their answers written.
    #[error("{0}")]
    Labels(String),
}

/// A headless render: `frames` frames, then `path` is written and the viewer exits.
#[derive(Debug, Clone)]
pub struct Capture {
    /// PNG to write (never overwritten unless `overwrite`).
    pub path: PathBuf,
    /// Frames to simulate and draw before the picture is taken.
    pub frames: u32,
    /// Image size in pixels.
    pub size: (u32, u32),
    /// Replace `path` if it exists.
    pub overwrite: bool,
    /// Render in a real window (needs a display, e.g. Xvfb) instead of offscreen.
    pub window: bool,
}

/// What to open.
pub struct ViewerOptions {
    /// Env id (`None`: the first registered env).
    pub env: Option<String>,
    /// Env config (JSON object or null).
    pub config: Value,
    /// What the env observes: the state, or images for a pixel policy.
    pub obs: ObsOptions,
    /// Seed of the first reset.
    pub seed: u64,
    /// Envs in the batch (shown as a grid).
    pub num_envs: usize,
    /// A policy for `env`, which starts driving.
    pub agent: Option<Box<dyn Agent + Send>>,
    /// Speed multiplier (headless: env steps per frame).
    pub speed: f32,
    /// Render headless and exit instead of opening a window.
    pub capture: Option<Capture>,
    /// Start with the overlay hidden (`H` toggles it).
    pub hide_overlay: bool,
}

/// What happened while the viewer ran.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Env steps taken.
    pub steps: u64,
    /// Episodes finished, in order.
    pub episodes: Vec<Episode>,
    /// Return and length of each env's unfinished episode at exit.
    pub running: Vec<(f64, u64)>,
    /// The screenshot written, if any.
    pub screenshot: Option<PathBuf>,
}

/// Shared between the app and [`run`]'s caller (bevy's window loop owns the app).
#[derive(Resource, Clone)]
struct Outcome(Arc<Mutex<Result<Option<PathBuf>, String>>>);

impl Default for Outcome {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Ok(None))))
    }
}

impl Outcome {
    fn set(&self, value: Result<Option<PathBuf>, String>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = value;
    }
}

/// Runs the viewer until its window closes (or the headless capture is written).
pub fn run(options: ViewerOptions) -> Result<Report, ViewerError> {
    let ids: Vec<&'static str> = proprio::registry().ids().collect();
    let current = match &options.env {
        None => 0,
        Some(id) => match ids.iter().position(|i| i == id) {
            Some(k) => k,
            None => {
                // Let the registry say why (and suggest a close id).
                proprio::registry().spec(id, &options.config)?;
                return Err(ViewerError::Options(format!("unknown env '{id}'")));
            }
        },
    };
    if options.num_envs == 0 || options.num_envs > 64 {
        return Err(ViewerError::Options(format!(
            "--num-envs must be 1 to 64, got {}",
            options.num_envs
        )));
    }
    if !(options.speed.is_finite() && (1.0 / 16.0..=64.0).contains(&options.speed)) {
        return Err(ViewerError::Options(format!(
            "--speed must be between 1/16 and 64, got {}",
            options.speed
        )));
    }
    if let Some(c) = &options.capture {
        capture::check_target(c)?;
    }
    let offscreen = options.capture.as_ref().is_some_and(|c| !c.window);
    if !offscreen {
        preflight::display()?;
    }
    let adapter = preflight::adapter()?;
    let agent = options.agent.map(|p| (p, ids[current].to_string()));
    let mut sim = Sim::new(
        ids,
        current,
        options.config,
        options.obs,
        options.seed,
        options.num_envs,
        agent,
    )?;
    sim.speed = options.speed;
    let sim = Arc::new(SimRes(Mutex::new(sim)));
    let outcome = Outcome::default();
    let mut app = App::new();
    let gl = adapter.backend == wgpu::Backend::Gl;
    let synchronous_pipeline_compilation = options.capture.is_some();
    let mut gl_failure = None;
    if let Some(c) = options.capture.clone().filter(|c| !c.window) {
        app.add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    ..default()
                })
                .set(render_plugin(&adapter, synchronous_pipeline_compilation))
                .set(log_plugin())
                .disable::<WinitPlugin>(),
        )
        .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::ZERO))
        .insert_resource(capture::Headless::new(c));
    } else {
        let window = Window {
            title: "Proprio viewer".into(),
            resolution: options
                .capture
                .as_ref()
                .map_or((1280, 720), |c| c.size)
                .into(),
            ..default()
        };
        gl_failure =
            add_window_plugins(&mut app, &adapter, window, synchronous_pipeline_compilation);
        if let Some(c) = options.capture.clone() {
            app.insert_resource(capture::Headless::new(c));
        }
    }
    app.insert_resource(SimShared(sim.clone()))
        .insert_resource(draw::RenderFit {
            software: adapter.software,
            gl,
        })
        .insert_resource(hud::Overlay {
            visible: !options.hide_overlay,
        })
        .insert_resource(outcome.clone())
        .add_plugins((
            draw::DrawPlugin,
            camera::OrbitPlugin,
            hud::HudPlugin,
            capture::CapturePlugin,
        ))
        .add_systems(PreUpdate, entry::type_line.after(InputSystems))
        .add_systems(Update, drive.before(draw::DrawSet));
    let exit = app.run();
    if let Some(failure) = gl_failure.and_then(GlFailure::take) {
        return Err(failure);
    }
    let written = outcome.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let screenshot = written.map_err(|message| ViewerError::Screenshot {
        path: options
            .capture
            .as_ref()
            .map(|c| c.path.clone())
            .unwrap_or_default(),
        message,
    })?;
    if let AppExit::Error(code) = exit {
        return Err(ViewerError::Render(format!(
            "rendering failed on {} ({:?}) with error code {code}",
            adapter.name, adapter.backend
        )));
    }
    let sim = sim.get();
    Ok(Report {
        steps: sim.steps,
        episodes: sim.episodes.clone(),
        running: sim.running.clone(),
        screenshot,
    })
}

/// Why a GL window's renderer could not be made, filled in when the app builds it.
struct GlFailure(Arc<Mutex<Option<ViewerError>>>);

impl GlFailure {
    fn take(self) -> Option<ViewerError> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// On GL, bevy's SSAO compute shaders (which the viewer does not use) gather
/// depth with an offset, which GLSL cannot express, and a failed pipeline
/// stops the app. bevy loads SSAO only with 5 or more storage textures per
/// stage, so on GL the viewer asks for 4.
fn gl_limits(adapter: &preflight::Adapter) -> Option<wgpu::Limits> {
    (adapter.backend == wgpu::Backend::Gl).then(|| wgpu::Limits {
        max_storage_textures_per_shader_stage: adapter
            .limits
            .max_storage_textures_per_shader_stage
            .min(4),
        ..adapter.limits.clone()
    })
}

/// bevy's renderer on the adapter the preflight picked.
fn render_plugin(adapter: &preflight::Adapter, synchronous: bool) -> RenderPlugin {
    RenderPlugin {
        render_creation: WgpuSettings {
            backends: Some(adapter.backend.into()),
            adapter_name: Some(adapter.name.clone()),
            constrained_limits: gl_limits(adapter),
            ..default()
        }
        .into(),
        synchronous_pipeline_compilation: synchronous,
        ..default()
    }
}

/// Warnings only: wgpu probes every backend (the ones missing here are not
/// errors), and a failed render is reported once, not as pages of shader
/// source; RUST_LOG=wgpu=error shows those.
fn log_plugin() -> bevy::log::LogPlugin {
    bevy::log::LogPlugin {
        level: bevy::log::Level::WARN,
        filter: "wgpu=off,wgpu_hal=off,naga=off,bevy_render=off,winit=error,bevy_pbr::ssao=error"
            .into(),
        ..default()
    }
}

/// bevy's plugins for an app in `window` on `adapter`; on GL, the handle
/// that says why the renderer could not be made.
fn add_window_plugins(
    app: &mut App,
    adapter: &preflight::Adapter,
    window: Window,
    synchronous: bool,
) -> Option<GlFailure> {
    let plugins = DefaultPlugins
        .set(WindowPlugin {
            primary_window: Some(window),
            ..default()
        })
        .set(log_plugin());
    match gl_limits(adapter) {
        Some(limits) => {
            let plugin = preflight::GlWindowRender::new(limits, synchronous);
            let failure = GlFailure(plugin.failure.clone());
            app.add_plugins(
                plugins
                    .disable::<RenderPlugin>()
                    .add_before::<bevy::image::ImagePlugin>(plugin),
            );
            Some(failure)
        }
        None => {
            app.add_plugins(plugins.set(render_plugin(adapter, synchronous)));
            None
        }
    }
}

/// The simulation, shared with [`run`] so it can report after the app ends.
#[derive(Resource, Clone)]
pub(crate) struct SimShared(pub Arc<SimRes>);

/// Applies the viewer's keys and advances the simulation by this frame's steps.
fn drive(
    sim: Res<SimShared>,
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    headless: Option<Res<capture::Headless>>,
) {
    let mut sim = sim.0.get();
    sim.control(&keys);
    sim.advance(&keys, time.delta_secs(), headless.is_some());
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::input::ButtonState;
    use bevy::input::InputPlugin;
    use bevy::input::keyboard::{Key, KeyboardInput};
    use bevy::time::TimeUpdateStrategy;

    /// The simulation and input plugins only (no window, no renderer), 20 ms a frame.
    pub(crate) fn input_app(id: &str, config: Value) -> (App, Arc<SimRes>) {
        let ids: Vec<&'static str> = proprio::registry().ids().collect();
        let current = ids.iter().position(|i| *i == id).unwrap();
        let sim = Sim::new(ids, current, config, ObsOptions::default(), 7, 1, None).unwrap();
        let sim = Arc::new(SimRes(Mutex::new(sim)));
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, InputPlugin))
            .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
                20,
            )))
            .insert_resource(SimShared(sim.clone()))
            .add_systems(PreUpdate, entry::type_line.after(InputSystems))
            .add_systems(Update, drive);
        (app, sim)
    }

    pub(crate) fn key(app: &mut App, key_code: KeyCode, state: ButtonState) {
        app.world_mut().write_message(KeyboardInput {
            key_code,
            logical_key: Key::Unidentified(bevy::input::keyboard::NativeKey::Unidentified),
            state,
            text: None,
            repeat: false,
            window: Entity::PLACEHOLDER,
        });
    }

    /// Holds `held` for `frames` frames and returns env 0's observation.
    fn hold(id: &str, config: Value, held: Option<KeyCode>, frames: usize) -> Vec<f32> {
        let (mut app, sim) = input_app(id, config);
        app.update();
        if let Some(k) = held {
            key(&mut app, k, ButtonState::Pressed);
        }
        for _ in 0..frames {
            app.update();
        }
        let sim = sim.get();
        assert!(sim.steps > 0, "{id}: no env step was taken");
        sim.venv.batch().obs(0).to_vec()
    }

    #[test]
    fn arrow_keys_push_the_cart_through_bevy_input() {
        let id = "classic/cartpole-v1";
        let right = hold(id, Value::Null, Some(KeyCode::ArrowRight), 8);
        let left = hold(id, Value::Null, Some(KeyCode::ArrowLeft), 8);
        // obs[1] is the cart's velocity: 8 pushes of 10 N on 1.1 kg, 20 ms each.
        assert!(right[1] > 1.0, "right: {right:?}");
        assert!(left[1] < -1.0, "left: {left:?}");
    }

    #[test]
    fn keys_move_the_arm_and_the_drone() {
        let config = proprio_core::serde_json::json!({"control": "pd_ee_delta_pos"});
        let id = "manipulation/reach-v0";
        let still = hold(id, config.clone(), None, 6);
        let pushed = hold(id, config, Some(KeyCode::KeyD), 6);
        let moved: f32 = still.iter().zip(&pushed).map(|(a, b)| (a - b).abs()).sum();
        assert!(moved > 0.05, "the D key did not move the hand: {moved}");
        // Motor 2 (S/W) is a throttle: held W raises its speed, which tilts and lifts the drone.
        let idle = hold("drones/hover-v0", Value::Null, None, 6);
        let throttle = hold("drones/hover-v0", Value::Null, Some(KeyCode::KeyW), 6);
        assert_ne!(idle, throttle);
    }

    #[test]
    fn typed_digits_answer_a_language_task() {
        let (mut app, sim) = input_app("language/arithmetic-v0", Value::Null);
        app.update();
        for k in [KeyCode::Digit1, KeyCode::Digit0, KeyCode::Digit4] {
            key(&mut app, k, ButtonState::Pressed);
            app.update();
            key(&mut app, k, ButtonState::Released);
            app.update();
        }
        let sim = sim.get();
        assert_eq!(sim.steps, 3, "one step per typed digit");
        let obs = sim.venv.batch().obs(0);
        // The answer so far sits at the end: digit tokens 1+1, 1+0, 1+4.
        assert_eq!(&obs[obs.len() - 3..], &[2.0, 1.0, 5.0]);
    }

    /// Presses and releases `key_code` with `text` as its typed text, one frame each.
    fn press(app: &mut App, key_code: KeyCode, text: Option<&str>) {
        for state in [ButtonState::Pressed, ButtonState::Released] {
            app.world_mut().write_message(KeyboardInput {
                key_code,
                logical_key: Key::Unidentified(bevy::input::keyboard::NativeKey::Unidentified),
                state,
                text: text.map(Into::into),
                repeat: false,
                window: Entity::PLACEHOLDER,
            });
            app.update();
        }
    }

    #[test]
    fn an_instruction_typed_into_the_viewer_remakes_the_env_with_it() {
        let (mut app, sim) = input_app("manipulation/instruct-v0", Value::Null);
        app.update();
        let type_line = |app: &mut App, text: &str| {
            press(app, KeyCode::Enter, None);
            for c in text.chars() {
                // "d" is also a drive key: an open line keeps it from the arm.
                press(app, KeyCode::KeyD, Some(&c.to_string()));
                let keys = app.world().resource::<ButtonInput<KeyCode>>();
                assert_eq!(
                    keys.get_pressed().count(),
                    0,
                    "a typed key reached the drive"
                );
            }
        };
        type_line(&mut app, "lift the blue blockk");
        press(&mut app, KeyCode::Backspace, None);
        assert_eq!(sim.get().line.as_deref(), Some("lift the blue block"));
        press(&mut app, KeyCode::Enter, None);
        {
            let sim = sim.get();
            assert_eq!(sim.line, None);
            assert_eq!(sim.config["instruction"], "lift the blue block");
            assert_eq!(sim.scenes[0].text, ["lift the blue block"]);
        }
        // A text the env cannot follow is refused in one line; the batch stays as it was.
        type_line(&mut app, "dance");
        press(&mut app, KeyCode::Enter, None);
        {
            let sim = sim.get();
            let notice = sim.notice.clone().unwrap();
            assert!(notice.contains("names no cube colour"), "{notice}");
            assert_eq!(notice.lines().count(), 1);
            assert_eq!(sim.config["instruction"], "lift the blue block");
        }
        // Escape drops a line; an empty one hands the instructions back to the env.
        type_line(&mut app, "push red left");
        press(&mut app, KeyCode::Escape, None);
        assert_eq!(sim.get().config["instruction"], "lift the blue block");
        type_line(&mut app, "");
        press(&mut app, KeyCode::Enter, None);
        assert!(sim.get().config.get("instruction").is_none());
    }

    #[test]
    fn pause_stops_and_period_single_steps() {
        let (mut app, sim) = input_app("classic/pendulum-v1", Value::Null);
        key(&mut app, KeyCode::Space, ButtonState::Pressed);
        app.update();
        let before = sim.get().steps;
        for _ in 0..5 {
            app.update();
        }
        assert_eq!(sim.get().steps, before);
        key(&mut app, KeyCode::Period, ButtonState::Pressed);
        app.update();
        assert_eq!(sim.get().steps, before + 1);
    }
}
