//! `classic/pendulum-v1`: Gymnasium's Pendulum-v1, swing a pendulum up and hold it.

use crate::config::PendulumConfig;
use crate::options;
use proprio_core::rand::RngExt;
use proprio_core::{EnvEntry, EnvRng, Error, Info, Outcome, ResetOptions, Result, Space, Task};
use std::f64::consts::PI;

const MAX_SPEED: f64 = 8.0;
const MAX_TORQUE: f32 = 2.0;
/// Seconds per step (semi-implicit Euler).
const DT: f64 = 0.05;
const MASS: f64 = 1.0;
const LENGTH: f64 = 1.0;

/// Registry entry.
pub const ENTRY: EnvEntry = EnvEntry {
    id: "classic/pendulum-v1",
    description: "Swing a frictionless pendulum upright and keep it there (Gymnasium Pendulum-v1).",
    reward_range: (-(PI * PI + 0.1 * MAX_SPEED * MAX_SPEED + 0.001 * 4.0), 0.0),
    max_episode_steps: Some(200),
    physics_steps_per_step: 1,
    reward: "-(theta^2 + 0.1 theta_dot^2 + 0.001 torque^2), theta normalised to [-pi, pi), 0 = upright",
    termination: "never terminates; truncated after 200 steps",
    action_handling: "torque is clipped to [-2, 2], as Gymnasium does",
};

/// Pendulum state `[theta, theta_dot]`, Gymnasium's order.
pub struct Pendulum {
    g: f64,
    state: [f64; 2],
}

/// Wraps an angle into `[-pi, pi)` exactly as numpy's `((x + pi) % (2 pi)) - pi`.
fn angle_normalize(x: f64) -> f64 {
    (x + PI).rem_euclid(2.0 * PI) - PI
}

impl Task for Pendulum {
    type Config = PendulumConfig;
    type State = [f64; 2];

    fn new(config: &PendulumConfig) -> std::result::Result<Self, String> {
        if !config.g.is_finite() {
            return Err(format!("g must be a finite number, not {}", config.g));
        }
        Ok(Self {
            g: config.g,
            state: [0.0; 2],
        })
    }

    fn observation_space(&self) -> Space {
        Space::Box {
            low: vec![-1.0, -1.0, -MAX_SPEED as f32],
            high: vec![1.0, 1.0, MAX_SPEED as f32],
        }
    }

    fn action_space(&self) -> Space {
        Space::uniform_box(1, -MAX_TORQUE, MAX_TORQUE)
    }

    /// Options `x_init` (default pi) and `y_init` (default 1) bound the
    /// uniform initial angle and angular velocity.
    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, _info: &mut Info) -> Result<()> {
        options::only(options, &["x_init", "y_init"])?;
        let high = [
            options::number(options, "x_init", PI)?,
            options::number(options, "y_init", 1.0)?,
        ];
        if high.iter().any(|h| *h < 0.0) {
            return Err(Error::Options(format!(
                "x_init and y_init must be non-negative, got {high:?}"
            )));
        }
        for (s, h) in self.state.iter_mut().zip(high) {
            *s = -h + 2.0 * h * rng.random::<f64>();
        }
        Ok(())
    }

    fn observe(&self, obs: &mut [f32]) {
        let [theta, theta_dot] = self.state;
        obs[0] = theta.cos() as f32;
        obs[1] = theta.sin() as f32;
        obs[2] = theta_dot as f32;
    }

    fn step(&mut self, action: &[f32], _rng: &mut EnvRng, _info: &mut Info) -> Outcome {
        let [theta, theta_dot] = self.state;
        // Gymnasium clips the float32 torque, and numpy 2's promotion rules keep every
        // product of it with a Python float in float32; the order of operations is theirs.
        let u = action[0].clamp(-MAX_TORQUE, MAX_TORQUE);
        let torque_term = f64::from(3.0 / (MASS * LENGTH * LENGTH) as f32 * u);
        let cost = angle_normalize(theta).powi(2)
            + 0.1 * (theta_dot * theta_dot)
            + f64::from(0.001 * (u * u));
        let new_theta_dot = (theta_dot
            + (3.0 * self.g / (2.0 * LENGTH) * theta.sin() + torque_term) * DT)
            .clamp(-MAX_SPEED, MAX_SPEED);
        self.state = [theta + new_theta_dot * DT, new_theta_dot];
        Outcome {
            reward: -cost,
            terminated: false,
        }
    }

    fn state(&self) -> [f64; 2] {
        self.state
    }

    fn set_state(&mut self, state: [f64; 2]) -> Result<()> {
        self.state = state;
        Ok(())
    }

    fn scene(&self, scene: &mut proprio_core::Scene) {
        crate::visuals::pendulum(self.state[0] as f32, LENGTH as f32, scene);
        scene.step_seconds = Some(DT as f32);
    }
}

/// A caption of a pendulum observation `[cos θ, sin θ, θ̇]` (θ = 0 upright):
/// where the rod points, in the words an in-domain CLIP is trained on
/// (`proprio reward-model fit-clip`). Positive angles put the tip towards
/// −x, which the default camera shows on the left.
pub fn caption(obs: &[f32]) -> Option<String> {
    let &[cos, sin, _] = obs else {
        return None;
    };
    let degrees = sin.atan2(cos).to_degrees();
    let side = if degrees > 0.0 { "left" } else { "right" };
    Some(match degrees.abs() {
        d if d < 20.0 => "a pendulum pointing straight up".to_string(),
        d if d < 70.0 => format!("a pendulum leaning up to the {side}"),
        d if d < 110.0 => format!("a pendulum sticking out sideways to the {side}"),
        d if d < 160.0 => format!("a pendulum hanging down to the {side}"),
        _ => "a pendulum hanging straight down".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::caption;

    #[test]
    fn captions_name_where_the_rod_points() {
        let at = |degrees: f32| {
            let t = degrees.to_radians();
            caption(&[t.cos(), t.sin(), 0.0]).unwrap()
        };
        assert_eq!(at(5.0), "a pendulum pointing straight up");
        assert_eq!(at(45.0), "a pendulum leaning up to the left");
        assert_eq!(at(-90.0), "a pendulum sticking out sideways to the right");
        assert_eq!(at(135.0), "a pendulum hanging down to the left");
        assert_eq!(at(180.0), "a pendulum hanging straight down");
        assert_eq!(caption(&[1.0, 0.0]), None);
    }
}
