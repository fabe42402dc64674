//! Keyboard teleoperation: a key map built from the env's action space (and,
//! where the family is known, names for its components), and the action the
//! keys held now ask for.

use bevy::input::ButtonInput;
use bevy::input::keyboard::KeyCode;
use proprio_core::{EnvSpec, Space, Teleop};

/// Key pairs (decrease, increase) given to continuous action components, in order.
const PAIRS: [(KeyCode, KeyCode, &str); 8] = [
    (KeyCode::KeyA, KeyCode::KeyD, "A/D"),
    (KeyCode::KeyS, KeyCode::KeyW, "S/W"),
    (KeyCode::KeyQ, KeyCode::KeyE, "Q/E"),
    (KeyCode::KeyJ, KeyCode::KeyL, "J/L"),
    (KeyCode::KeyK, KeyCode::KeyI, "K/I"),
    (KeyCode::KeyU, KeyCode::KeyO, "U/O"),
    (KeyCode::KeyZ, KeyCode::KeyX, "Z/X"),
    (KeyCode::KeyC, KeyCode::KeyV, "C/V"),
];

const DIGITS: [KeyCode; 10] = [
    KeyCode::Digit0,
    KeyCode::Digit1,
    KeyCode::Digit2,
    KeyCode::Digit3,
    KeyCode::Digit4,
    KeyCode::Digit5,
    KeyCode::Digit6,
    KeyCode::Digit7,
    KeyCode::Digit8,
    KeyCode::Digit9,
];

/// How a continuous component follows its keys.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Feel {
    /// Full low/high while a key is held, the rest value otherwise (a torque, a velocity).
    Spring,
    /// Each frame a key is held moves the value 2% of the range; it stays on release (a throttle).
    Sticky,
}

/// One continuous component on a key pair.
#[derive(Debug, Clone)]
pub struct Axis {
    index: usize,
    keys: (KeyCode, KeyCode),
    label: String,
    low: f32,
    high: f32,
    feel: Feel,
    value: f32,
    rest: f32,
}

/// What the keyboard controls, for one action space.
#[derive(Debug, Clone)]
pub enum KeyMap {
    /// Box actions: one key pair per component.
    Axes(Vec<Axis>),
    /// Two discrete actions on the arrow keys (no key: alternate, no net push).
    LeftRight { alternate: bool },
    /// A discrete action chosen by a digit key (held), `start` offset;
    /// `rest` while no key is held (a car's meta-action "idle").
    Choice {
        n: u32,
        start: i32,
        held: Option<u32>,
        rest: u32,
    },
    /// Token actions typed digit by digit; `offset` maps digit d to token d + offset.
    Typed {
        len: usize,
        offset: u32,
        vocab: u32,
        typed: Vec<u32>,
    },
    /// An action space the keyboard cannot drive.
    None,
}

/// The name of action component `k`: the env's, else "action k".
fn label(teleop: &Teleop, k: usize) -> String {
    teleop
        .labels
        .get(k)
        .map_or(format!("action {k}"), |s| (*s).to_string())
}

impl KeyMap {
    /// The key map for `spec`'s action space, as the env's `teleop` names it.
    pub fn new(spec: &EnvSpec, teleop: &Teleop) -> Self {
        match &spec.action_space {
            Space::Box { low, high } if low.len() <= PAIRS.len() => {
                let names: Vec<String> = (0..low.len()).map(|k| label(teleop, k)).collect();
                let mut axes: Vec<Axis> = low
                    .iter()
                    .zip(high)
                    .enumerate()
                    .map(|(k, (&lo, &hi))| {
                        let (lo, hi) = (lo.max(-1e3), hi.min(1e3));
                        let sticky = names[k] == "gripper"
                            || names[k] == "thrust"
                            || names[k].starts_with("motor");
                        let rest = if names[k] == "gripper" {
                            hi
                        } else {
                            0.0f32.clamp(lo, hi)
                        };
                        let slot = teleop.slots.get(k).copied().unwrap_or(k);
                        Axis {
                            index: k,
                            keys: (PAIRS[slot].0, PAIRS[slot].1),
                            label: format!("{}  {}", PAIRS[slot].2, names[k]),
                            low: lo,
                            high: hi,
                            feel: if sticky { Feel::Sticky } else { Feel::Spring },
                            value: rest,
                            rest,
                        }
                    })
                    .collect();
                axes.sort_by_key(|a| PAIRS.iter().position(|p| p.0 == a.keys.0));
                Self::Axes(axes)
            }
            Space::Discrete { n: 2, .. } => Self::LeftRight { alternate: false },
            Space::Discrete { n, start } if *n <= 10 => Self::Choice {
                n: *n,
                start: *start,
                held: None,
                rest: teleop.rest,
            },
            Space::Tokens { vocab, max_len } => {
                let offset = teleop.token_offset;
                Self::Typed {
                    len: *max_len,
                    offset,
                    vocab: *vocab,
                    typed: Vec::with_capacity(*max_len),
                }
            }
            _ => Self::None,
        }
    }

    /// Lines for the on-screen key map.
    pub fn help(&self) -> Vec<String> {
        match self {
            Self::Axes(axes) => axes.iter().map(|a| a.label.clone()).collect(),
            Self::LeftRight { .. } => vec!["Left/Right  push the cart".into()],
            Self::Choice { n, start, .. } => vec![format!(
                "0-{}  action {start}..{}",
                n - 1,
                *start + *n as i32 - 1
            )],
            Self::Typed { len, offset, .. } => vec![format!(
                "0-9  type {len} token(s){}",
                if *offset == 1 { " (digits)" } else { " (ids)" }
            )],
            Self::None => vec!["(this action space has no keyboard control)".into()],
        }
    }

    /// True if a key of this map is pressed this frame (the user takes over).
    pub fn touched(&self, keys: &ButtonInput<KeyCode>) -> bool {
        match self {
            Self::Axes(axes) => axes
                .iter()
                .any(|a| keys.any_just_pressed([a.keys.0, a.keys.1])),
            Self::LeftRight { .. } => {
                keys.any_just_pressed([KeyCode::ArrowLeft, KeyCode::ArrowRight])
            }
            Self::Choice { .. } | Self::Typed { .. } => keys.any_just_pressed(DIGITS),
            Self::None => false,
        }
    }

    /// Reads the keys of this frame. For typed tokens, returns whether a full
    /// action is ready to send; every other map is always ready.
    pub fn read(&mut self, keys: &ButtonInput<KeyCode>) -> bool {
        match self {
            Self::Axes(axes) => {
                for a in axes.iter_mut() {
                    let dir = f32::from(u8::from(keys.pressed(a.keys.1)))
                        - f32::from(u8::from(keys.pressed(a.keys.0)));
                    a.value = match a.feel {
                        Feel::Spring if dir > 0.0 => a.high,
                        Feel::Spring if dir < 0.0 => a.low,
                        Feel::Spring => a.rest,
                        Feel::Sticky => {
                            (a.value + dir * 0.02 * (a.high - a.low)).clamp(a.low, a.high)
                        }
                    };
                }
                true
            }
            Self::Choice { n, held, .. } => {
                *held = (0..*n).find(|&d| keys.pressed(DIGITS[d as usize]));
                true
            }
            Self::Typed {
                len,
                offset,
                vocab,
                typed,
            } => {
                for (d, key) in DIGITS.iter().enumerate() {
                    let token = d as u32 + *offset;
                    if keys.just_pressed(*key) && token < *vocab && typed.len() < *len {
                        typed.push(token);
                    }
                }
                typed.len() == *len
            }
            Self::LeftRight { .. } | Self::None => true,
        }
    }

    /// Writes the action of one env (after [`KeyMap::read`] said it is ready).
    pub fn write(&mut self, keys: &ButtonInput<KeyCode>, action: &mut [f32]) {
        match self {
            Self::Axes(axes) => {
                for a in axes.iter() {
                    action[a.index] = a.value;
                }
            }
            Self::LeftRight { alternate } => {
                action[0] = if keys.pressed(KeyCode::ArrowLeft) {
                    0.0
                } else if keys.pressed(KeyCode::ArrowRight) {
                    1.0
                } else {
                    *alternate = !*alternate;
                    f32::from(u8::from(*alternate))
                };
            }
            Self::Choice {
                start, held, rest, ..
            } => {
                action[0] = (*start + held.unwrap_or(*rest) as i32) as f32;
            }
            Self::Typed { typed, .. } => {
                for (slot, &t) in action.iter_mut().zip(typed.iter()) {
                    *slot = t as f32;
                }
            }
            Self::None => {}
        }
    }

    /// Forgets partly typed tokens (after a step or a reset).
    pub fn clear_typed(&mut self) {
        if let Self::Typed { typed, .. } = self {
            typed.clear();
        }
    }

    /// The tokens typed so far, for the overlay.
    pub fn typed(&self) -> Option<&[u32]> {
        match self {
            Self::Typed { typed, .. } => Some(typed),
            _ => None,
        }
    }
}
