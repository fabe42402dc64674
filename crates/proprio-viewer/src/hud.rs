//! The overlay: the env and who drives it, step, reward, episode return,
//! success and the env's `info` (top left); the env picker (top right); the
//! key map (bottom left).

use crate::SimShared;
use crate::draw::DrawSet;
use crate::sim::{Driver, Sim};
use bevy::prelude::*;
use std::fmt::Write;

/// Whether the overlay is drawn.
#[derive(Resource)]
pub struct Overlay {
    /// Drawn now.
    pub visible: bool,
}

#[derive(Component)]
enum Panel {
    Status,
    Picker,
    Keys,
}

/// Draws the overlay.
pub struct HudPlugin;

impl Plugin for HudPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Startup, spawn)
            .add_systems(Update, update.after(DrawSet));
    }
}

fn panel(commands: &mut Commands, which: Panel, node: Node) {
    commands.spawn((
        Text::new(""),
        TextFont {
            font_size: FontSize::Px(14.0),
            ..default()
        },
        TextColor(Color::WHITE),
        BackgroundColor(Color::srgba(0.0, 0.0, 0.0, 0.55)),
        Node {
            position_type: PositionType::Absolute,
            padding: UiRect::all(Val::Px(6.0)),
            ..node
        },
        which,
    ));
}

fn spawn(mut commands: Commands) {
    let at = |top: Option<f32>, left: Option<f32>, bottom: Option<f32>, right: Option<f32>| Node {
        top: top.map_or(Val::Auto, Val::Px),
        left: left.map_or(Val::Auto, Val::Px),
        bottom: bottom.map_or(Val::Auto, Val::Px),
        right: right.map_or(Val::Auto, Val::Px),
        ..default()
    };
    panel(
        &mut commands,
        Panel::Status,
        at(Some(8.0), Some(8.0), None, None),
    );
    panel(
        &mut commands,
        Panel::Picker,
        at(Some(8.0), None, None, Some(8.0)),
    );
    panel(
        &mut commands,
        Panel::Keys,
        at(None, Some(8.0), Some(8.0), None),
    );
}

fn status(sim: &Sim) -> String {
    let mut s = String::new();
    let driver = match (sim.driver, sim.has_agent()) {
        (Driver::Agent, true) => "policy",
        _ => "keyboard",
    };
    let pace = if sim.paused { "paused" } else { "running" };
    let _ = writeln!(s, "{}  [{driver}, {pace}, speed {}x]", sim.id(), sim.speed);
    let batch = sim.venv.batch();
    let (ret, len) = sim.running.first().copied().unwrap_or_default();
    let _ = writeln!(
        s,
        "env 0 of {}   step {len}   reward {:+.3}   return {ret:.2}",
        sim.venv.num_envs(),
        batch.reward[0]
    );
    if let Some(last) = sim.episodes.iter().rev().find(|e| e.env == 0) {
        let success = last.success.map_or(String::new(), |ok| {
            format!("   success {}", if ok { "yes" } else { "no" })
        });
        let _ = writeln!(
            s,
            "last episode: return {:.2} in {} steps{success}   ({} finished in all)",
            last.ret,
            last.steps,
            sim.episodes.len()
        );
    }
    for (key, value) in batch.infos[0].iter() {
        let _ = writeln!(s, "  {key}: {value:.4}");
    }
    if let Some(scene) = sim.scenes.first() {
        for line in &scene.text {
            let _ = writeln!(s, "{line}");
        }
    }
    if let Some(typed) = sim.keys.typed().filter(|t| !t.is_empty()) {
        let _ = writeln!(s, "typed: {typed:?}");
    }
    if let Some(line) = &sim.line {
        let _ = writeln!(s, "instruction> {line}_   (Enter: use it, Esc: cancel)");
    }
    if let Some(notice) = &sim.notice {
        let _ = writeln!(s, "{notice}");
    }
    s.trim_end().to_string()
}

fn picker(sim: &Sim) -> String {
    let mut s = String::from("envs ([ and ] to switch)\n");
    for (k, id) in sim.ids.iter().enumerate() {
        let mark = if k == sim.current { "> " } else { "  " };
        let _ = writeln!(s, "{mark}{id}");
    }
    s.trim_end().to_string()
}

fn key_map(sim: &Sim) -> String {
    let mut s = String::from("keys\n");
    for line in sim.keys.help() {
        let _ = writeln!(s, "  {line}");
    }
    s.push_str("  Space pause   . step   R reset   -/= speed   G grid of the batch\n");
    s.push_str("  Enter type an instruction (envs with an instruction key)\n");
    s.push_str(
        "  F frame   P screenshot   H hide this   mouse: drag turn, right-drag pan, wheel zoom",
    );
    if sim.has_agent() {
        s.push_str("\n  Tab policy/keyboard (any drive key takes over)");
    }
    s
}

fn update(
    sim: Res<SimShared>,
    keys: Res<ButtonInput<KeyCode>>,
    mut overlay: ResMut<Overlay>,
    mut panels: Query<(&Panel, &mut Text, &mut Visibility)>,
) {
    if keys.just_pressed(KeyCode::KeyH) {
        overlay.visible = !overlay.visible;
    }
    let sim = sim.0.get();
    for (which, mut text, mut visibility) in &mut panels {
        let wanted = if overlay.visible {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
        visibility.set_if_neq(wanted);
        let new = match which {
            Panel::Status => status(&sim),
            Panel::Picker => picker(&sim),
            Panel::Keys => key_map(&sim),
        };
        if text.0 != new {
            text.0 = new;
        }
    }
}
