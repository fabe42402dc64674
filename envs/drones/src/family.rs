//! [`Drones`]: the family's one [`Family`] impl — its entries, config,
//! spaces, model, scripted agent, key names and GPU twin.

use crate::config::{ActionMode, DroneConfig, Settings, TaskKind};
use crate::entries::{GATES, HOVER, WAYPOINTS};
use crate::model::DroneModel;
use crate::scripted::Scripted;
use crate::task;
use proprio_core::{Agent, EnvEntry, Family, Result, Space, Teleop};

/// The drone family.
pub struct Drones;

impl Family for Drones {
    type Config = DroneConfig;
    type Task = TaskKind;
    type Settings = Settings;
    type Model = DroneModel;
    const CRATE: &'static str = "proprio-drones";
    const NOUN: &'static str = "drone";
    const START_HINT: &'static str = " (configure the start with the `start` config key)";
    #[cfg(feature = "gpu")]
    const GPU: Option<proprio_core::family::GpuVecEnv<DroneModel>> =
        Some(proprio_gpu::vec_env::<DroneModel>);

    fn entries() -> Vec<(EnvEntry, TaskKind)> {
        vec![
            (HOVER, TaskKind::Hover),
            (WAYPOINTS, TaskKind::Waypoints),
            (GATES, TaskKind::Gates),
        ]
    }

    fn defaults(task: TaskKind) -> DroneConfig {
        DroneConfig::defaults_for(task)
    }

    fn settings(task: TaskKind, config: &DroneConfig, _: Option<u64>) -> Result<Settings, String> {
        Settings::new(task, config)
    }

    fn spaces(_: TaskKind, settings: &Settings) -> (Space, Space) {
        let dim = task::obs_dim(settings);
        let mut low = vec![f32::NEG_INFINITY; dim];
        let mut high = vec![f32::INFINITY; dim];
        let motors = task::task_obs_dim(settings.task)..dim;
        for i in (3..12).chain(18..22).chain(motors) {
            (low[i], high[i]) = (-1.0, 1.0);
        }
        (Space::Box { low, high }, Space::uniform_box(4, -1.0, 1.0))
    }

    fn substeps(settings: &Settings) -> u32 {
        settings.substeps
    }

    fn model(settings: Settings) -> proprio_core::Result<DroneModel> {
        Ok(DroneModel::new(settings))
    }

    fn scripted(settings: Settings) -> proprio_core::Result<Box<dyn Agent + Send>> {
        Ok(Box::new(Scripted::new(settings)))
    }

    fn teleop(settings: &Settings) -> Teleop {
        match settings.action {
            // A game pad's layout: A/D roll, S/W thrust, Q/E yaw, J/L pitch.
            ActionMode::ThrustRates => Teleop {
                labels: vec!["thrust", "roll rate", "pitch rate", "yaw rate"],
                slots: vec![1, 0, 3, 2],
                ..Teleop::default()
            },
            ActionMode::Motors => Teleop {
                labels: vec!["motor 1", "motor 2", "motor 3", "motor 4"],
                ..Teleop::default()
            },
        }
    }
}
