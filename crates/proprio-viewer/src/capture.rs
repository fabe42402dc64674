//! Screenshots: `P` saves the window to a new PNG in the working directory;
//! `--screenshot FILE --frames N` renders N frames (offscreen, or in the
//! window with `--window`), writes FILE and exits.

use crate::{Capture, Outcome, SimShared, ViewerError};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Frames a capture waits, past `--frames`, for the first rendered picture.
const MAX_WAIT_FRAMES: u32 = 600;

/// True for a picture of one colour: the target before its first render
/// (a rendered frame always shows the ground below the sky).
fn unrendered(image: &Image) -> bool {
    image.data.as_ref().is_none_or(|data| {
        let first = data.get(..4).unwrap_or_default();
        data.chunks_exact(4).all(|p| p == first)
    })
}

/// The headless capture in progress.
#[derive(Resource)]
pub struct Headless {
    /// What to render.
    pub capture: Capture,
    /// The image the camera renders into (`None`: the window).
    pub target: Option<Handle<Image>>,
    frame: u32,
    /// A screenshot was asked for and has not come back (or came back unrendered).
    in_flight: Arc<AtomicBool>,
}

impl Headless {
    /// A capture that has not started.
    pub fn new(capture: Capture) -> Self {
        Self {
            capture,
            target: None,
            frame: 0,
            in_flight: Arc::default(),
        }
    }
}

/// Refuses a capture that would overwrite a file (without leave) or cannot be written.
pub fn check_target(c: &Capture) -> Result<(), ViewerError> {
    let bad = |message: String| ViewerError::Options(message);
    if c.path.extension().and_then(|e| e.to_str()) != Some("png") {
        return Err(bad(format!(
            "--screenshot must name a .png file, got {}",
            c.path.display()
        )));
    }
    if c.path.exists() && !c.overwrite {
        return Err(bad(format!(
            "{} already exists; pass --force to overwrite it",
            c.path.display()
        )));
    }
    let parent = c.path.parent().filter(|p| !p.as_os_str().is_empty());
    if parent.is_some_and(|p| !p.is_dir()) {
        return Err(bad(format!(
            "the folder of {} does not exist",
            c.path.display()
        )));
    }
    if c.frames == 0 || c.frames > 1_000_000 {
        return Err(bad(format!(
            "--frames must be 1 to 1000000, got {}",
            c.frames
        )));
    }
    let (w, h) = c.size;
    if !(16..=4096).contains(&w) || !(16..=4096).contains(&h) {
        return Err(bad(format!(
            "--size must be 16 to 4096 pixels a side, got {w}x{h}"
        )));
    }
    Ok(())
}

/// Takes screenshots.
pub struct CapturePlugin;

impl Plugin for CapturePlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, (headless, on_key));
    }
}

fn write_png(image: Image, path: &Path) -> Result<(), String> {
    let pixels = image
        .try_into_dynamic()
        .map_err(|e| e.to_string())?
        .to_rgb8();
    pixels.save(path).map_err(|e| e.to_string())
}

fn headless(mut commands: Commands, state: Option<ResMut<Headless>>) {
    let Some(mut state) = state else {
        return;
    };
    state.frame += 1;
    if state.frame < state.capture.frames || state.in_flight.swap(true, Ordering::SeqCst) {
        return;
    }
    let give_up = state.frame >= state.capture.frames + MAX_WAIT_FRAMES;
    let in_flight = state.in_flight.clone();
    let screenshot = match &state.target {
        Some(image) => Screenshot::image(image.clone()),
        None => Screenshot::primary_window(),
    };
    let path = state.capture.path.clone();
    commands.spawn(screenshot).observe(
        move |captured: On<ScreenshotCaptured>,
              outcome: Res<Outcome>,
              mut exit: MessageWriter<AppExit>| {
            if unrendered(&captured.image) && !give_up {
                in_flight.store(false, Ordering::SeqCst);
                return;
            }
            outcome.set(write_png(captured.image.clone(), &path).map(|()| Some(path.clone())));
            exit.write(AppExit::Success);
        },
    );
}

/// The first `proprio-ENV-K.png` in the working directory that does not exist.
fn free_name(id: &str) -> PathBuf {
    let stem = id.replace('/', "-");
    (1..)
        .map(|k| PathBuf::from(format!("proprio-{stem}-{k}.png")))
        .find(|p| !p.exists())
        .expect("some name is free")
}

fn on_key(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    sim: Res<SimShared>,
    headless: Option<Res<Headless>>,
) {
    if headless.is_some() || !keys.any_just_pressed([KeyCode::KeyP, KeyCode::F12]) {
        return;
    }
    let shared = sim.0.clone();
    let path = free_name(shared.get().id());
    commands.spawn(Screenshot::primary_window()).observe(
        move |captured: On<ScreenshotCaptured>| {
            let notice = match write_png(captured.image.clone(), &path) {
                Ok(()) => format!("saved {}", path.display()),
                Err(e) => format!("screenshot failed: {e}"),
            };
            shared.get().notice = Some(notice);
        },
    );
}
