//! The config of every driving task (serde, with defaults) and its validated form.

use crate::vehicle::Model;
use proprio_core::check::{finite_in, substeps, whole_in};
use serde::{Deserialize, Serialize};

/// What the action means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionMode {
    /// `[steer, pedal]` in [−1, 1]²: steer +1 full right, pedal +1 full throttle, −1 brake (reverse when stopped).
    #[default]
    Continuous,
    /// highway-env's meta-actions: 0 lane left, 1 idle, 2 lane right, 3 faster, 4 slower,
    /// carried out by a lane-and-speed controller.
    Meta,
}

/// Which driving task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// Follow a winding road in the right lane at the speed limit.
    LaneKeep = 0,
    /// Lap a closed track as fast as possible within its limits.
    Racing = 1,
    /// Park in a bay of a lot among parked cars.
    Parking = 2,
    /// Drive fast on a multi-lane road in IDM/MOBIL traffic without crashing.
    Highway = 3,
}

impl TaskKind {
    /// The task's name in its id (`driving/NAME-v0`).
    pub fn name(self) -> &'static str {
        match self {
            Self::LaneKeep => "lane-keep",
            Self::Racing => "racing",
            Self::Parking => "parking",
            Self::Highway => "highway",
        }
    }
}

/// Config keys of `driving/*` (task-specific keys are rejected by the other tasks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrivingConfig {
    /// Physics integration rate, Hz.
    pub physics_hz: u32,
    /// Control rate (env steps per second), Hz; must divide `physics_hz` (default 10; highway 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_hz: Option<u32>,
    /// Vehicle model.
    pub model: Model,
    /// Meaning of the action (default: continuous; highway: meta).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<ActionMode>,
    /// lane-keep, highway: lanes of the road.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes: Option<u32>,
    /// lane-keep, highway: speed limit, m/s (speeding is penalised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_limit: Option<f32>,
    /// lane-keep: length of the route to complete, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route_length: Option<f32>,
    /// lane-keep, highway: largest road curvature, 1/m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_curvature: Option<f32>,
    /// racing: corners of the track.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corners: Option<u32>,
    /// racing: mean radius of the track, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub track_radius: Option<f32>,
    /// racing: laps to complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub laps: Option<u32>,
    /// highway: other cars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic: Option<u32>,
    /// highway: traffic density (1 = a car every 60 m of lane on average).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density: Option<f32>,
    /// parking: fraction of the other bays holding a parked car.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<f32>,
}

impl Default for DrivingConfig {
    fn default() -> Self {
        Self {
            physics_hz: 100,
            control_hz: None,
            model: Model::Dynamic,
            action: None,
            lanes: None,
            speed_limit: None,
            route_length: None,
            max_curvature: None,
            corners: None,
            track_radius: None,
            laps: None,
            traffic: None,
            density: None,
            occupancy: None,
        }
    }
}

impl DrivingConfig {
    /// The defaults with the task's own keys filled in (what `proprio info` shows).
    pub fn defaults_for(task: TaskKind) -> Self {
        let mut c = Self {
            control_hz: Some(10),
            ..Self::default()
        };
        match task {
            TaskKind::LaneKeep => {
                c.action = Some(ActionMode::Continuous);
                c.lanes = Some(2);
                c.speed_limit = Some(20.0);
                c.route_length = Some(800.0);
                c.max_curvature = Some(1.0 / 60.0);
            }
            TaskKind::Racing => {
                c.action = Some(ActionMode::Continuous);
                c.corners = Some(8);
                c.track_radius = Some(90.0);
                c.laps = Some(1);
            }
            TaskKind::Parking => {
                c.action = Some(ActionMode::Continuous);
                c.occupancy = Some(0.4);
            }
            TaskKind::Highway => {
                // Decisions every half second, as highway-env's 1 Hz policies
                // (its meta-actions need a moment to take effect).
                c.control_hz = Some(2);
                c.action = Some(ActionMode::Meta);
                c.lanes = Some(4);
                c.speed_limit = Some(30.0);
                c.max_curvature = Some(1.0 / 800.0);
                c.traffic = Some(20);
                c.density = Some(1.0);
            }
        }
        c
    }
}

/// A validated config with every task key resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The task.
    pub task: TaskKind,
    /// Physics steps per control step.
    pub substeps: u32,
    /// Physics step, s.
    pub dt: f32,
    /// Vehicle model.
    pub model: Model,
    /// Meaning of the action.
    pub action: ActionMode,
    /// Lanes of the road (2 on a race track, 1 in a parking lot).
    pub lanes: u32,
    /// Speed limit, m/s.
    pub speed_limit: f32,
    /// Route length, m (lane-keep).
    pub route_length: f32,
    /// Largest road curvature, 1/m.
    pub max_curvature: f32,
    /// Track corners (racing).
    pub corners: u32,
    /// Track radius, m (racing).
    pub track_radius: f32,
    /// Laps (racing).
    pub laps: u32,
    /// Other cars (highway).
    pub traffic: u32,
    /// Traffic density (highway).
    pub density: f32,
    /// Occupied fraction of the other bays (parking).
    pub occupancy: f32,
    /// Control steps after which the env is truncated (0: none), for success at the time limit.
    pub time_limit: u32,
}

impl Settings {
    /// Checks `config` for `task`; the message names the bad key.
    pub fn new(task: TaskKind, c: &DrivingConfig, time_limit: Option<u64>) -> Result<Self, String> {
        let control_hz = c
            .control_hz
            .or(DrivingConfig::defaults_for(task).control_hz)
            .unwrap_or(10);
        let substeps = substeps(c.physics_hz, control_hz)?;
        if !(1..=64).contains(&substeps) || !(50..=1000).contains(&c.physics_hz) {
            return Err("physics_hz must be 50–1000 and physics_hz / control_hz 1–64".into());
        }
        let owners: [(&str, bool, &[TaskKind]); 11] = [
            (
                "action",
                c.action == Some(ActionMode::Meta),
                &[TaskKind::Highway],
            ),
            (
                "lanes",
                c.lanes.is_some(),
                &[TaskKind::LaneKeep, TaskKind::Highway],
            ),
            (
                "speed_limit",
                c.speed_limit.is_some(),
                &[TaskKind::LaneKeep, TaskKind::Highway],
            ),
            (
                "route_length",
                c.route_length.is_some(),
                &[TaskKind::LaneKeep],
            ),
            (
                "max_curvature",
                c.max_curvature.is_some(),
                &[TaskKind::LaneKeep, TaskKind::Highway],
            ),
            ("corners", c.corners.is_some(), &[TaskKind::Racing]),
            (
                "track_radius",
                c.track_radius.is_some(),
                &[TaskKind::Racing],
            ),
            ("laps", c.laps.is_some(), &[TaskKind::Racing]),
            ("traffic", c.traffic.is_some(), &[TaskKind::Highway]),
            ("density", c.density.is_some(), &[TaskKind::Highway]),
            ("occupancy", c.occupancy.is_some(), &[TaskKind::Parking]),
        ];
        for (key, set, tasks) in owners {
            if set && !tasks.contains(&task) {
                let names: Vec<&str> = tasks.iter().map(|t| t.name()).collect();
                let value = if key == "action" { " = \"meta\"" } else { "" };
                return Err(format!(
                    "{key}{value} is a key of driving/{} only",
                    names.join(", driving/")
                ));
            }
        }
        let d = proprio_core::family::with_defaults(c, &DrivingConfig::defaults_for(task))
            .map_err(|e| e.to_string())?;
        let lanes = match task {
            TaskKind::Racing => 2,
            TaskKind::Parking => 1,
            _ => d.lanes.unwrap_or(2),
        };
        whole_in("lanes", lanes, 1, 8)?;
        let speed_limit = finite_in("speed_limit", d.speed_limit.unwrap_or(30.0), 5.0, 45.0)?;
        let route_length = finite_in(
            "route_length",
            d.route_length.unwrap_or(800.0),
            50.0,
            3000.0,
        )?;
        let max_curvature = finite_in(
            "max_curvature",
            d.max_curvature.unwrap_or(0.0),
            0.0,
            1.0 / 30.0,
        )?;
        let corners = whole_in("corners", d.corners.unwrap_or(8), 3, 8)?;
        let track_radius = finite_in("track_radius", d.track_radius.unwrap_or(90.0), 50.0, 300.0)?;
        let laps = whole_in("laps", d.laps.unwrap_or(1), 1, 10)?;
        let traffic = whole_in(
            "traffic",
            d.traffic.unwrap_or(0),
            0,
            crate::state::MAX_OTHERS as u32,
        )?;
        let density = finite_in("density", d.density.unwrap_or(1.0), 0.1, 3.0)?;
        let occupancy = finite_in("occupancy", d.occupancy.unwrap_or(0.0), 0.0, 1.0)?;
        Ok(Self {
            task,
            substeps,
            dt: 1.0 / c.physics_hz as f32,
            model: c.model,
            action: d.action.unwrap_or_default(),
            lanes,
            speed_limit,
            route_length,
            max_curvature,
            corners,
            track_radius,
            laps,
            traffic,
            density,
            occupancy,
            time_limit: time_limit.map_or(0, |t| t.min(u64::from(u32::MAX)) as u32),
        })
    }

    /// Seconds per control step.
    pub fn step_seconds(&self) -> f32 {
        self.substeps as f32 * self.dt
    }
}
