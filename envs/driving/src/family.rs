//! [`Driving`]: the family's one [`Family`] impl — its entries, config,
//! spaces, model, scripted agent, key names and GPU twin.

use crate::config::{ActionMode, DrivingConfig, Settings, TaskKind};
use crate::entries::{HIGHWAY, LANE_KEEP, PARKING, RACING};
use crate::model::DrivingModel;
use crate::scripted::Scripted;
use crate::task;
use proprio_core::{Agent, EnvEntry, Family, Result, Space, Teleop};

/// The driving family.
pub struct Driving;

impl Family for Driving {
    type Config = DrivingConfig;
    type Task = TaskKind;
    type Settings = Settings;
    type Model = DrivingModel;
    const CRATE: &'static str = "proprio-driving";
    const NOUN: &'static str = "driving";
    const START_HINT: &'static str = " (configure the task with its config keys)";
    #[cfg(feature = "gpu")]
    const GPU: Option<proprio_core::family::GpuVecEnv<DrivingModel>> =
        Some(proprio_gpu::vec_env::<DrivingModel>);

    fn entries() -> Vec<(EnvEntry, TaskKind)> {
        vec![
            (LANE_KEEP, TaskKind::LaneKeep),
            (RACING, TaskKind::Racing),
            (PARKING, TaskKind::Parking),
            (HIGHWAY, TaskKind::Highway),
        ]
    }

    fn defaults(task: TaskKind) -> DrivingConfig {
        DrivingConfig::defaults_for(task)
    }

    fn settings(task: TaskKind, c: &DrivingConfig, limit: Option<u64>) -> Result<Settings, String> {
        Settings::new(task, c, limit)
    }

    fn spaces(task: TaskKind, settings: &Settings) -> (Space, Space) {
        let observation = Space::uniform_box(task::obs_dim(task), f32::NEG_INFINITY, f32::INFINITY);
        let action = match settings.action {
            ActionMode::Continuous => Space::uniform_box(2, -1.0, 1.0),
            ActionMode::Meta => Space::Discrete { n: 5, start: 0 },
        };
        (observation, action)
    }

    fn substeps(settings: &Settings) -> u32 {
        settings.substeps
    }

    fn model(settings: Settings) -> proprio_core::Result<DrivingModel> {
        Ok(DrivingModel::new(settings))
    }

    fn scripted(settings: Settings) -> proprio_core::Result<Box<dyn Agent + Send>> {
        Ok(Box::new(Scripted::new(settings)))
    }

    fn teleop(settings: &Settings) -> Teleop {
        match settings.action {
            ActionMode::Continuous => Teleop {
                labels: vec!["steer (D right)", "pedal (W throttle, S brake/reverse)"],
                ..Teleop::default()
            },
            // Meta-action 1 is "idle".
            ActionMode::Meta => Teleop {
                rest: 1,
                ..Teleop::default()
            },
        }
    }
}
