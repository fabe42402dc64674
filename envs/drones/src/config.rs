//! The config of every drone task (serde, with defaults) and its validated form.

use proprio_core::check::{finite_in, substeps};
use serde::{Deserialize, Serialize};

/// What the four action components mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionMode {
    /// Normalised motor speed commands in [−1, 1]⁴ (−1 stopped, +1 full speed): the hard setting.
    #[default]
    Motors,
    /// Collective thrust in [−1, 1] (0 to full) and body rates in [−1, 1]³ (±2π rad/s),
    /// tracked by an on-board rate controller at the physics rate: the easier setting.
    ThrustRates,
}

/// Domain randomisation: each physical parameter is scaled by `1 + U(−f, f)` at reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Randomize {
    /// Fraction for the mass.
    pub mass: f32,
    /// Fraction for each principal moment of inertia.
    pub inertia: f32,
    /// Fraction for the thrust coefficient.
    pub thrust: f32,
    /// Fraction for the reaction-torque coefficient.
    pub torque: f32,
    /// Fraction for the motor time constant.
    pub motor_tau: f32,
}

/// Wind drawn at reset: a constant part and a sinusoidal gust, both in the horizontal plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Wind {
    /// Largest constant wind speed, m/s (speed uniform in [0, speed], direction uniform).
    pub speed: f32,
    /// Largest gust amplitude, m/s.
    pub gust: f32,
    /// Largest gust frequency, Hz (uniform in [0.1, gust_hz]).
    pub gust_hz: f32,
}

impl Default for Wind {
    fn default() -> Self {
        Self {
            speed: 0.0,
            gust: 0.0,
            gust_hz: 1.0,
        }
    }
}

/// Spread of the initial state around the start point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Start {
    /// Position offset, m, uniform per axis in [−position, position].
    pub position: f32,
    /// Velocity, m/s, uniform per axis.
    pub velocity: f32,
    /// Largest tilt from upright, degrees (random horizontal axis).
    pub tilt_deg: f32,
    /// Largest heading from the x axis, degrees, uniform in [−yaw_deg, yaw_deg] (180: any heading).
    pub yaw_deg: f32,
    /// Body rates, rad/s, uniform per axis.
    pub angular_velocity: f32,
    /// Draw the attitude uniformly over all rotations, upside-down included.
    pub upside_down: bool,
    /// Fraction of episodes that start exactly at the start point, level and at rest
    /// (Learning to Fly's "guidance": 0.1), so the learner sees the state it must hold.
    pub guidance: f32,
}

impl Default for Start {
    fn default() -> Self {
        Self {
            position: 0.5,
            velocity: 0.5,
            tilt_deg: 30.0,
            yaw_deg: 180.0,
            angular_velocity: 1.0,
            upside_down: false,
            guidance: 0.0,
        }
    }
}

/// Learning to Fly's hover reward (Eschmann et al. 2024, `reward_squared_position_only_torque`):
/// `constant − scale · (position·|e|² + distance·|e| + orientation·(1 − q_w²) + velocity·|v|² + rate·|ω|² + action·|a − a_hover|²)`,
/// plus `bonus` inside the success region, `termination` on the step an episode ends early,
/// and an episode that ends once the drone is farther than `exit` from the target on any axis.
/// `1 − q_w²` is `sin²(θ/2)` of the attitude's angle θ from level at yaw 0: it asks for yaw 0 too, which
/// lets the policy fly in one frame instead of learning every heading's (TD3 hovered 0.5 m off without it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SquaredReward {
    /// Weight of the squared distance to the target, 1/m² (Learning to Fly: 5, raised to 40 by its curriculum).
    pub position: f32,
    /// Weight of the distance to the target, 1/m: a pull that does not fade near it (Learning to Fly: 0).
    pub distance: f32,
    /// Weight of the tilt cost (Learning to Fly: 5).
    pub orientation: f32,
    /// Weight of the squared speed, s²/m² (Learning to Fly: 0.01, raised to 1).
    pub velocity: f32,
    /// Weight of the squared body rate, s²/rad² (Learning to Fly: 0).
    pub rate: f32,
    /// Weight of the squared distance of the action from the hover command (Learning to Fly: 0.01, raised to 1).
    pub action: f32,
    /// The reward of a perfect hover before `scale` (Learning to Fly: 2).
    pub constant: f32,
    /// Factor of the weighted cost (Learning to Fly: 0.5).
    pub scale: f32,
    /// Added per step inside the success region (Learning to Fly: 0).
    pub bonus: f32,
    /// The reward of a step that ends the episode early: a crash or an exit (Learning to Fly: 0).
    pub termination: f32,
    /// The episode ends farther than this from the target on any axis, m (Learning to Fly: 0.6).
    pub exit: f32,
}

impl Default for SquaredReward {
    fn default() -> Self {
        Self {
            position: 5.0,
            distance: 0.0,
            orientation: 5.0,
            velocity: 0.01,
            rate: 0.0,
            action: 0.01,
            constant: 2.0,
            scale: 0.5,
            bonus: 0.0,
            termination: 0.0,
            exit: 0.6,
        }
    }
}

/// Config keys of `drones/*` (task-specific keys are rejected by the other tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DroneConfig {
    /// Physics integration rate, Hz.
    pub physics_hz: u32,
    /// Control rate (env steps per second), Hz; must divide `physics_hz`.
    pub control_hz: u32,
    /// Meaning of the action.
    pub action: ActionMode,
    /// Domain randomisation.
    pub randomize: Randomize,
    /// Wind.
    pub wind: Wind,
    /// Initial-state spread.
    pub start: Start,
    /// Append the four motor speeds (normalised like the action) to the observation:
    /// the state the motors' 25 ms lag hides, which a Q-learner needs to be Markov.
    pub observe_motors: bool,
    /// hover: the point to hold, m (default [0, 0, 1]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<[f32; 3]>,
    /// hover: Learning to Fly's squared reward and exit box instead of the shaped reward (default: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub squared_reward: Option<SquaredReward>,
    /// waypoints: how many points to visit, 1–8 (default 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_waypoints: Option<u32>,
    /// waypoints: distance that counts as visiting a point, m (default 0.15).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waypoint_radius: Option<f32>,
    /// gates: how many gates, 1–8 (default 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_gates: Option<u32>,
    /// gates: side of the square opening, m (default 0.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate_size: Option<f32>,
    /// gates: radius of the circular course, m (default 1.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub course_radius: Option<f32>,
}

impl Default for DroneConfig {
    fn default() -> Self {
        Self {
            physics_hz: 500,
            control_hz: 100,
            action: ActionMode::Motors,
            randomize: Randomize::default(),
            wind: Wind::default(),
            start: Start::default(),
            observe_motors: false,
            target: None,
            squared_reward: None,
            num_waypoints: None,
            waypoint_radius: None,
            num_gates: None,
            gate_size: None,
            course_radius: None,
        }
    }
}

impl DroneConfig {
    /// The defaults with the task's own keys filled in (what `proprio info` shows).
    pub fn defaults_for(task: TaskKind) -> Self {
        let mut c = Self::default();
        match task {
            TaskKind::Hover => c.target = Some([0.0, 0.0, 1.0]),
            TaskKind::Waypoints => {
                c.num_waypoints = Some(4);
                c.waypoint_radius = Some(0.15);
            }
            TaskKind::Gates => {
                c.num_gates = Some(4);
                c.gate_size = Some(0.5);
                c.course_radius = Some(1.5);
            }
        }
        c
    }
}

/// Which drone task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// Reach and hold a point.
    Hover = 0,
    /// Visit points in order.
    Waypoints = 1,
    /// Fly through gates in order.
    Gates = 2,
}

/// Most targets (waypoints or gates) of one episode.
pub const MAX_POINTS: usize = 8;

/// A validated config with every task key resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The task.
    pub task: TaskKind,
    /// Physics steps per control step.
    pub substeps: u32,
    /// Physics step, s.
    pub dt: f32,
    /// Control steps per second.
    pub control_hz: u32,
    /// Meaning of the action.
    pub action: ActionMode,
    /// Domain randomisation.
    pub randomize: Randomize,
    /// Wind.
    pub wind: Wind,
    /// Initial-state spread.
    pub start: Start,
    /// The motor speeds are observed.
    pub observe_motors: bool,
    /// Hover target.
    pub target: [f32; 3],
    /// Hover: the squared reward, if chosen.
    pub squared_reward: Option<SquaredReward>,
    /// Number of waypoints or gates (1 for hover).
    pub count: u32,
    /// Waypoint radius, m.
    pub waypoint_radius: f32,
    /// Gate opening, m.
    pub gate_size: f32,
    /// Course radius, m.
    pub course_radius: f32,
}

impl Settings {
    /// Checks `config` for `task`; the message names the bad key.
    pub fn new(task: TaskKind, config: &DroneConfig) -> Result<Self, String> {
        let c = config;
        let substeps = substeps(c.physics_hz, c.control_hz)?;
        if !(1..=64).contains(&substeps) || c.physics_hz > 10_000 {
            return Err("physics_hz / control_hz must be 1–64 and physics_hz at most 10000".into());
        }
        let r = c.randomize;
        for (name, v) in [
            ("randomize.mass", r.mass),
            ("randomize.inertia", r.inertia),
            ("randomize.thrust", r.thrust),
            ("randomize.torque", r.torque),
            ("randomize.motor_tau", r.motor_tau),
        ] {
            finite_in(name, v, 0.0, 0.9)?;
        }
        finite_in("wind.speed", c.wind.speed, 0.0, 20.0)?;
        finite_in("wind.gust", c.wind.gust, 0.0, 20.0)?;
        finite_in("wind.gust_hz", c.wind.gust_hz, 0.1, 50.0)?;
        finite_in("start.position", c.start.position, 0.0, 2.0)?;
        finite_in("start.velocity", c.start.velocity, 0.0, 10.0)?;
        finite_in("start.tilt_deg", c.start.tilt_deg, 0.0, 180.0)?;
        finite_in("start.yaw_deg", c.start.yaw_deg, 0.0, 180.0)?;
        finite_in("start.guidance", c.start.guidance, 0.0, 1.0)?;
        finite_in(
            "start.angular_velocity",
            c.start.angular_velocity,
            0.0,
            20.0,
        )?;
        let only = |key: &str, set: bool, owner: TaskKind| {
            if set && task != owner {
                Err(format!("{key} is a key of drones/{owner:?} only").to_lowercase())
            } else {
                Ok(())
            }
        };
        only("target", c.target.is_some(), TaskKind::Hover)?;
        only(
            "squared_reward",
            c.squared_reward.is_some(),
            TaskKind::Hover,
        )?;
        if let Some(r) = &c.squared_reward {
            for (name, v) in [
                ("squared_reward.position", r.position),
                ("squared_reward.distance", r.distance),
                ("squared_reward.rate", r.rate),
                ("squared_reward.orientation", r.orientation),
                ("squared_reward.velocity", r.velocity),
                ("squared_reward.action", r.action),
                ("squared_reward.scale", r.scale),
            ] {
                finite_in(name, v, 0.0, 1000.0)?;
            }
            for (name, v) in [
                ("squared_reward.constant", r.constant),
                ("squared_reward.bonus", r.bonus),
                ("squared_reward.termination", r.termination),
            ] {
                finite_in(name, v, -1000.0, 1000.0)?;
            }
            finite_in("squared_reward.exit", r.exit, 0.05, 10.0)?;
        }
        only(
            "num_waypoints",
            c.num_waypoints.is_some(),
            TaskKind::Waypoints,
        )?;
        only(
            "waypoint_radius",
            c.waypoint_radius.is_some(),
            TaskKind::Waypoints,
        )?;
        only("num_gates", c.num_gates.is_some(), TaskKind::Gates)?;
        only("gate_size", c.gate_size.is_some(), TaskKind::Gates)?;
        only("course_radius", c.course_radius.is_some(), TaskKind::Gates)?;
        let d = proprio_core::family::with_defaults(c, &DroneConfig::defaults_for(task))
            .map_err(|e| e.to_string())?;
        let target = d.target.unwrap_or([0.0, 0.0, 1.0]);
        for v in target {
            finite_in("target component", v, -4.0, 4.0)?;
        }
        if target[2] < 0.3 {
            return Err(format!(
                "target height must be at least 0.3 m, got {}",
                target[2]
            ));
        }
        let count = match task {
            TaskKind::Hover => 1,
            TaskKind::Waypoints => d.num_waypoints.unwrap_or(1),
            TaskKind::Gates => d.num_gates.unwrap_or(1),
        };
        if !(1..=MAX_POINTS as u32).contains(&count) {
            return Err(format!(
                "the number of waypoints or gates must be 1–{MAX_POINTS}, got {count}"
            ));
        }
        let waypoint_radius = finite_in(
            "waypoint_radius",
            d.waypoint_radius.unwrap_or(0.15),
            0.01,
            2.0,
        )?;
        let gate_size = finite_in("gate_size", d.gate_size.unwrap_or(0.5), 0.2, 3.0)?;
        let course_radius = finite_in("course_radius", d.course_radius.unwrap_or(1.5), 0.5, 4.0)?;
        Ok(Self {
            task,
            substeps,
            dt: 1.0 / c.physics_hz as f32,
            control_hz: c.control_hz,
            action: c.action,
            randomize: r,
            wind: c.wind,
            start: c.start,
            observe_motors: c.observe_motors,
            target,
            squared_reward: c.squared_reward,
            count,
            waypoint_radius,
            gate_size,
            course_radius,
        })
    }
}
