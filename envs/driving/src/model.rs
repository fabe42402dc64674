//! [`DrivingModel`]: one driving task's physics and rules on one [`Car`];
//! [`proprio_core::ChunkedKernel`] runs N of them on CPU threads, `gpu/` on a GPU.

use crate::config::Settings;
use crate::state::Car;
use crate::{task, visuals};
use proprio_core::chunked::write_info;
use proprio_core::{ChunkedModel, EnvRng, Family, Info, ResetOptions, Result, Scene, Stepped};

/// One task's physics and rules on a [`Car`], for [`ChunkedKernel`].
pub struct DrivingModel {
    settings: Settings,
}

impl DrivingModel {
    /// The model of envs with `settings`.
    pub fn new(settings: Settings) -> Self {
        Self { settings }
    }

    /// The validated settings of the envs.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
}

impl ChunkedModel for DrivingModel {
    type State = Car;

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Car> {
        crate::Driving::no_options(options)?;
        Ok(task::draw(&self.settings, rng))
    }

    fn check(&self, state: &Car) -> std::result::Result<(), String> {
        state.check()
    }

    fn step(&self, state: &mut Car, action: &[f32], info: &mut Info) -> Stepped {
        let out = task::control_step(state, action, &self.settings);
        let metrics = [state.speed(), state.progress];
        write_info(
            info,
            &task::INFO_KEYS,
            &metrics,
            Some((out.success, out.crash as u8)),
        );
        out.stepped()
    }

    fn start_info(&self, state: &Car, info: &mut Info) {
        write_info(
            info,
            &task::INFO_KEYS,
            &[state.speed(), state.progress],
            None,
        );
    }

    fn observe(&self, state: &Car, obs: &mut [f32]) {
        task::observe(state, &self.settings, obs);
    }

    fn scene(&self, state: &Car, scene: &mut Scene) {
        visuals::scene(state, &self.settings, scene);
    }
}
