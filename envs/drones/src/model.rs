//! [`DroneModel`]: one drone task's physics and rules on one [`Drone`];
//! [`proprio_core::ChunkedKernel`] runs N of them on CPU threads, `gpu/shader.wgsl` on a GPU.

use crate::config::Settings;
use crate::state::Drone;
use crate::task::{self, INFO_KEYS};
use proprio_core::chunked::write_info;
use proprio_core::{ChunkedModel, EnvRng, Family, Info, ResetOptions, Result, Scene, Stepped};

/// One drone task's physics and rules on a [`Drone`].
pub struct DroneModel {
    settings: Settings,
}

impl DroneModel {
    /// The model of envs with `settings`.
    pub fn new(settings: Settings) -> Self {
        Self { settings }
    }

    /// The validated settings of the envs.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
}

impl ChunkedModel for DroneModel {
    type State = Drone;

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Drone> {
        crate::Drones::no_options(options)?;
        Ok(task::draw(&self.settings, rng))
    }

    fn check(&self, state: &Drone) -> std::result::Result<(), String> {
        state.check()
    }

    fn step(&self, d: &mut Drone, action: &[f32], info: &mut Info) -> Stepped {
        let out = task::control_step(
            d,
            [action[0], action[1], action[2], action[3]],
            &self.settings,
        );
        let ended = Some((out.success, out.crash as u8));
        write_info(info, &INFO_KEYS, &[d.dist, d.goal], ended);
        out.stepped()
    }

    fn start_info(&self, d: &Drone, info: &mut Info) {
        write_info(info, &INFO_KEYS, &[d.dist, d.goal], None);
    }

    fn observe(&self, d: &Drone, obs: &mut [f32]) {
        task::observe(d, &self.settings, obs);
    }

    fn scene(&self, d: &Drone, scene: &mut Scene) {
        crate::visuals::scene(d, &self.settings, scene);
    }
}
