//! Typing an instruction into the viewer (the `instruction` config key of
//! `manipulation/instruct-v0`, or of any env that takes one): Enter opens a
//! line, typed characters fill it, Backspace takes one back, Enter remakes
//! the batch with the text as its instruction (an empty line removes it;
//! the env's one-line refusal is shown instead if it has one), Escape
//! closes the line unchanged. While the line is open no key reaches
//! anything else, so typing "d" does not drive the arm.

use crate::SimShared;
use crate::sim::{Sim, make};
use bevy::input::keyboard::{KeyCode, KeyboardInput};
use bevy::input::{ButtonInput, ButtonState};
use bevy::prelude::*;
use proprio_core::serde_json::Value;

/// Characters a line holds at most (an instruction is at most 14 tokens).
const MAX_LINE: usize = 120;

/// Reads this frame's key presses into the line; clears every key for the
/// other systems while the line is (or was, this frame) open.
pub(crate) fn type_line(
    sim: Res<SimShared>,
    mut events: MessageReader<KeyboardInput>,
    mut keys: ResMut<ButtonInput<KeyCode>>,
) {
    let mut sim = sim.0.get();
    let was_open = sim.line.is_some();
    for event in events.read() {
        if event.state == ButtonState::Pressed {
            sim.line_key(event.key_code, event.text.as_deref());
        }
    }
    if was_open || sim.line.is_some() {
        keys.reset_all();
    }
}

impl Sim {
    /// One key press: Enter opens or applies the line, Escape closes it,
    /// Backspace edits it, any other key's text is typed into it.
    pub fn line_key(&mut self, key: KeyCode, text: Option<&str>) {
        let Some(line) = self.line.as_mut() else {
            if key == KeyCode::Enter {
                self.line = Some(String::new());
            }
            return;
        };
        match key {
            KeyCode::Enter => {
                let text = std::mem::take(line);
                self.line = None;
                self.instruct(text.trim());
            }
            KeyCode::Escape => self.line = None,
            KeyCode::Backspace => {
                line.pop();
            }
            _ => {
                let room = MAX_LINE.saturating_sub(line.chars().count());
                line.extend(
                    text.unwrap_or("")
                        .chars()
                        .filter(|c| !c.is_control())
                        .take(room),
                );
            }
        }
    }

    /// Remakes the batch with `text` as its `instruction` (none if empty),
    /// keeping the rest of the config; a refusal leaves the batch as it was.
    fn instruct(&mut self, text: &str) {
        let mut config = self.config.as_object().cloned().unwrap_or_default();
        if text.is_empty() {
            config.remove("instruction");
        } else {
            config.insert("instruction".into(), Value::String(text.into()));
        }
        let config = Value::Object(config);
        match make(self.id(), &config, &self.obs, self.venv.num_envs()) {
            Ok(venv) => {
                self.venv = venv;
                self.config = config;
                self.episodes.clear();
                self.notice = Some(match text {
                    "" => "instructions drawn by the env again".into(),
                    _ => format!("every episode: {text:?}"),
                });
                if let Err(e) = self.reset() {
                    self.paused = true;
                    self.notice = Some(format!("paused: {e}"));
                }
            }
            Err(e) => self.notice = Some(format!("instruction not taken: {e}")),
        }
    }
}
