//! `classic/cartpole-v1`: Gymnasium's CartPole-v1 (Barto, Sutton & Anderson, 1983).

use crate::config::CartPoleConfig;
use crate::options;
use crate::visuals;
use proprio_core::rand::RngExt;
use proprio_core::{
    EnvEntry, EnvRng, Error, Info, Outcome, ResetOptions, Result, Scene, Space, Task,
};

const GRAVITY: f64 = 9.8;
const MASS_CART: f64 = 1.0;
const MASS_POLE: f64 = 0.1;
const TOTAL_MASS: f64 = MASS_POLE + MASS_CART;
/// Half the pole's length.
const LENGTH: f64 = 0.5;
const POLE_MASS_LENGTH: f64 = MASS_POLE * LENGTH;
const FORCE_MAG: f64 = 10.0;
/// Seconds per step (explicit Euler).
const TAU: f64 = 0.02;
const THETA_THRESHOLD: f64 = 12.0 * 2.0 * std::f64::consts::PI / 360.0;
const X_THRESHOLD: f64 = 2.4;

/// Registry entry.
pub const ENTRY: EnvEntry = EnvEntry {
    id: "classic/cartpole-v1",
    description: "Balance a pole on a cart by pushing it left or right (Gymnasium CartPole-v1).",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(500),
    physics_steps_per_step: 1,
    reward: "+1 for every step, including the one where the pole falls (sutton_barto_reward: 0 per step, -1 on the fall)",
    termination: "terminated when |x| > 2.4 or |theta| > 12 degrees; truncated after 500 steps",
    action_handling: "discrete: 0 pushes left, 1 pushes right; anything else is an error",
};

/// Cart-pole state `[x, x_dot, theta, theta_dot]`, Gymnasium's order, in f64 as Gymnasium keeps it.
pub struct CartPole {
    config: CartPoleConfig,
    state: [f64; 4],
}

impl Task for CartPole {
    type Config = CartPoleConfig;
    type State = [f64; 4];

    fn new(config: &CartPoleConfig) -> std::result::Result<Self, String> {
        Ok(Self {
            config: config.clone(),
            state: [0.0; 4],
        })
    }

    fn observation_space(&self) -> Space {
        Space::Box {
            low: vec![
                -2.0 * X_THRESHOLD as f32,
                f32::NEG_INFINITY,
                -2.0 * THETA_THRESHOLD as f32,
                f32::NEG_INFINITY,
            ],
            high: vec![
                2.0 * X_THRESHOLD as f32,
                f32::INFINITY,
                2.0 * THETA_THRESHOLD as f32,
                f32::INFINITY,
            ],
        }
    }

    fn action_space(&self) -> Space {
        Space::discrete(2)
    }

    /// Options `low` / `high` (default ±0.05) bound the uniform initial state.
    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, _info: &mut Info) -> Result<()> {
        options::only(options, &["low", "high"])?;
        let low = options::number(options, "low", -0.05)?;
        let high = options::number(options, "high", 0.05)?;
        if low >= high {
            return Err(Error::Options(format!(
                "low ({low}) must be below high ({high})"
            )));
        }
        for s in &mut self.state {
            *s = low + (high - low) * rng.random::<f64>();
        }
        Ok(())
    }

    fn observe(&self, obs: &mut [f32]) {
        for (o, s) in obs.iter_mut().zip(self.state) {
            *o = s as f32;
        }
    }

    fn step(&mut self, action: &[f32], _rng: &mut EnvRng, _info: &mut Info) -> Outcome {
        let [x, x_dot, theta, theta_dot] = self.state;
        let force = if action[0] == 1.0 {
            FORCE_MAG
        } else {
            -FORCE_MAG
        };
        let (sin, cos) = theta.sin_cos();
        let temp = (force + POLE_MASS_LENGTH * theta_dot * theta_dot * sin) / TOTAL_MASS;
        let theta_acc = (GRAVITY * sin - cos * temp)
            / (LENGTH * (4.0 / 3.0 - MASS_POLE * (cos * cos) / TOTAL_MASS));
        let x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS;
        self.state = [
            x + TAU * x_dot,
            x_dot + TAU * x_acc,
            theta + TAU * theta_dot,
            theta_dot + TAU * theta_acc,
        ];
        let [x, _, theta, _] = self.state;
        let terminated = !(-X_THRESHOLD..=X_THRESHOLD).contains(&x)
            || !(-THETA_THRESHOLD..=THETA_THRESHOLD).contains(&theta);
        let reward = match (self.config.sutton_barto_reward, terminated) {
            (false, _) => 1.0,
            (true, false) => 0.0,
            (true, true) => -1.0,
        };
        Outcome { reward, terminated }
    }

    fn state(&self) -> [f64; 4] {
        self.state
    }

    fn set_state(&mut self, state: [f64; 4]) -> Result<()> {
        self.state = state;
        Ok(())
    }

    fn scene(&self, scene: &mut Scene) {
        let [x, _, theta, _] = self.state;
        visuals::cartpole(
            x as f32,
            theta as f32,
            LENGTH as f32,
            X_THRESHOLD as f32,
            scene,
        );
        scene.step_seconds = Some(TAU as f32);
    }
}

/// A caption of a cart-pole observation `[x, x_dot, theta, theta_dot]`: how
/// far the pole leans and where the cart is, in the words an in-domain CLIP
/// is trained on (`proprio reward-model fit-clip`). Positive angles lean
/// towards +x, which the default camera shows on the right.
pub fn caption(obs: &[f32]) -> Option<String> {
    let &[x, _, theta, _] = obs else {
        return None;
    };
    let degrees = theta.to_degrees();
    let side = if degrees < 0.0 { "left" } else { "right" };
    let pole = match degrees.abs() {
        d if d < 2.0 => "a pole balanced upright".to_string(),
        d if d < 7.0 => format!("a pole leaning slightly to the {side}"),
        _ => format!("a pole leaning far to the {side}"),
    };
    let cart = match x {
        x if x < -1.2 => "near the left end of the track",
        x if x > 1.2 => "near the right end of the track",
        _ => "in the middle of the track",
    };
    Some(format!("{pole} on a cart {cart}"))
}
