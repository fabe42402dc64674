//! The orbit camera: left-drag turns, right-drag pans, the wheel zooms, `F`
//! frames the env again. The default framing comes from the env's scene
//! (and covers the whole grid when a batch is shown); when the framing
//! moves (it follows a car), the camera moves with it.

use crate::SimShared;
use crate::capture::Headless;
use crate::draw::{DrawSet, RenderFit, grid_offset, to_bevy};
use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::input::mouse::{AccumulatedMouseMotion, AccumulatedMouseScroll};
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::ui::IsDefaultUiCamera;

/// Where the camera looks from, around a target.
#[derive(Resource, Default)]
struct Orbit {
    target: Vec3,
    yaw: f32,
    pitch: f32,
    distance: f32,
    /// The env id and grid size the framing was made for.
    framed_for: Option<(&'static str, usize)>,
    /// The first env's framing target last frame: when it moves (a car's
    /// framing follows the car), the camera moves with it.
    followed: Vec3,
}

/// Spawns and steers the camera.
pub struct OrbitPlugin;

impl Plugin for OrbitPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Orbit>()
            .add_systems(Startup, spawn)
            .add_systems(Update, (frame, steer, apply).chain().after(DrawSet));
    }
}

fn spawn(
    mut commands: Commands,
    headless: Option<ResMut<Headless>>,
    fit: Res<RenderFit>,
    mut images: ResMut<Assets<Image>>,
) {
    let mut camera = commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        if fit.software {
            Msaa::Off
        } else {
            Msaa::Sample4
        },
        Transform::from_xyz(0.0, 2.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y),
        IsDefaultUiCamera,
    ));
    if let Some(mut headless) = headless.filter(|h| !h.capture.window) {
        let (w, h) = headless.capture.size;
        let image = images.add(Image::new_target_texture(
            w,
            h,
            TextureFormat::Rgba8UnormSrgb,
            None,
        ));
        camera.insert(RenderTarget::Image(image.clone().into()));
        headless.target = Some(image);
    }
}

/// Frames the env anew when it (or the grid) changes, or on `F`.
fn frame(sim: Res<SimShared>, keys: Res<ButtonInput<KeyCode>>, mut orbit: ResMut<Orbit>) {
    let sim = sim.0.get();
    let Some(first) = sim.scenes.first() else {
        return;
    };
    let now = (sim.id(), sim.scenes.len());
    if orbit.framed_for == Some(now) && !keys.just_pressed(KeyCode::KeyF) {
        let moved = to_bevy(first.framing.target) - orbit.followed;
        orbit.target += moved;
        orbit.followed += moved;
        return;
    }
    orbit.framed_for = Some(now);
    let framing = first.framing;
    let n = sim.scenes.len();
    let last = grid_offset(n - 1, n, &framing);
    let cols = (n as f32).sqrt().ceil();
    let far = grid_offset(cols as usize - 1, n, &framing)[0];
    let centre = [far / 2.0, last[1] / 2.0, 0.0];
    let target = to_bevy(framing.target) + to_bevy(centre);
    let eye = to_bevy(framing.eye) + to_bevy(centre);
    let offset = eye - target;
    // A grid needs the whole of it in view: at least 1.1 × its width away.
    let spacing = 2.4 * framing.half_extent;
    let whole = if n > 1 { 1.1 * cols * spacing } else { 0.0 };
    orbit.target = target;
    orbit.followed = to_bevy(framing.target);
    orbit.distance = (offset.length() * cols).max(whole).max(0.1);
    orbit.yaw = offset.x.atan2(offset.z);
    orbit.pitch = (offset.y / orbit.distance).clamp(-1.0, 1.0).asin();
}

fn steer(
    buttons: Res<ButtonInput<MouseButton>>,
    motion: Res<AccumulatedMouseMotion>,
    scroll: Res<AccumulatedMouseScroll>,
    mut orbit: ResMut<Orbit>,
) {
    let d = motion.delta;
    if buttons.pressed(MouseButton::Left) {
        orbit.yaw -= d.x * 0.005;
        orbit.pitch = (orbit.pitch + d.y * 0.005).clamp(-1.5, 1.5);
    }
    if buttons.pressed(MouseButton::Right) || buttons.pressed(MouseButton::Middle) {
        let rot = Quat::from_euler(EulerRot::YXZ, orbit.yaw, -orbit.pitch, 0.0);
        let pan = (rot * Vec3::X * -d.x + rot * Vec3::Y * d.y) * 0.0015 * orbit.distance;
        orbit.target += pan;
    }
    if scroll.delta.y != 0.0 {
        orbit.distance = (orbit.distance * (1.0 - 0.1 * scroll.delta.y.clamp(-3.0, 3.0))).max(0.05);
    }
}

fn apply(orbit: Res<Orbit>, mut camera: Query<&mut Transform, With<Camera3d>>) {
    let rot = Quat::from_euler(EulerRot::YXZ, orbit.yaw, -orbit.pitch, 0.0);
    for mut t in &mut camera {
        let eye = orbit.target + rot * Vec3::Z * orbit.distance;
        *t = Transform::from_translation(eye).looking_at(orbit.target, Vec3::Y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{input_app, key};
    use bevy::input::ButtonState;
    use bevy::input::mouse::{MouseButtonInput, MouseMotion, MouseScrollUnit, MouseWheel};
    use bevy::input::touch::TouchPhase;
    use proprio_core::serde_json::Value;

    /// The camera's eye and the point it orbits.
    fn view(app: &mut App) -> (Vec3, Vec3) {
        let world = app.world_mut();
        let eye = world
            .query_filtered::<&Transform, With<Camera3d>>()
            .single(world)
            .unwrap()
            .translation;
        (eye, world.resource::<Orbit>().target)
    }

    fn button(app: &mut App, button: MouseButton, state: ButtonState) {
        app.world_mut().write_message(MouseButtonInput {
            button,
            state,
            window: Entity::PLACEHOLDER,
        });
    }

    /// One frame of mouse motion by `delta` pixels.
    fn drag(app: &mut App, delta: Vec2) {
        app.world_mut().write_message(MouseMotion { delta });
        app.update();
    }

    #[test]
    fn mouse_turns_pans_and_zooms_and_f_frames_again() {
        let (mut app, _sim) = input_app("classic/cartpole-v1", Value::Null);
        app.init_resource::<Orbit>()
            .add_systems(Update, (frame, steer, apply).chain());
        app.world_mut()
            .spawn((Camera3d::default(), Transform::default()));
        app.update();
        let (home, target) = view(&mut app);
        let distance = home.distance(target);
        assert!(distance > 1.0, "framed from {home} onto {target}");

        // Left drag turns around the target at the same distance.
        button(&mut app, MouseButton::Left, ButtonState::Pressed);
        drag(&mut app, Vec2::new(120.0, 40.0));
        button(&mut app, MouseButton::Left, ButtonState::Released);
        let (turned, same) = view(&mut app);
        assert_eq!(same, target);
        assert!((turned.distance(target) - distance).abs() < 1e-3 * distance);
        assert!(turned.distance(home) > 0.3 * distance, "{home} -> {turned}");

        // Right drag pans: eye and target move together.
        button(&mut app, MouseButton::Right, ButtonState::Pressed);
        drag(&mut app, Vec2::new(-60.0, 30.0));
        button(&mut app, MouseButton::Right, ButtonState::Released);
        let (panned, moved) = view(&mut app);
        assert!(moved.distance(target) > 0.05 * distance);
        assert!((panned - moved - (turned - target)).length() < 1e-3 * distance);

        // The wheel zooms in by 10% a notch.
        app.world_mut().write_message(MouseWheel {
            unit: MouseScrollUnit::Line,
            x: 0.0,
            y: 1.0,
            window: Entity::PLACEHOLDER,
            phase: TouchPhase::Moved,
        });
        app.update();
        let (zoomed, at) = view(&mut app);
        assert!((zoomed.distance(at) - 0.9 * distance).abs() < 1e-3 * distance);

        // A mouse moved without a button held leaves the view alone.
        drag(&mut app, Vec2::new(200.0, 200.0));
        assert_eq!(view(&mut app), (zoomed, at));

        // F frames the env as at the start.
        key(&mut app, KeyCode::KeyF, ButtonState::Pressed);
        app.update();
        let (back, home_target) = view(&mut app);
        assert!(back.distance(home) < 1e-3 * distance && home_target == target);
    }
}
