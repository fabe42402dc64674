//! The GPU backend: [`DroneModel`] as a WGSL compute shader (`shader.wgsl`,
//! its constants generated from the Rust values), run by
//! [`proprio_gpu::ChunkedGpuKernel`]: one dispatch per control step for all
//! envs (physics substeps, rewards, resets of finished envs).

use crate::config::{ActionMode, Settings};
use crate::model::DroneModel;
use crate::params::{
    BODY_RADIUS, DRAG, GRAVITY, INERTIA, KF, KM, MASS, MAX_RATE, RATE_GAIN, RPM_TO_RAD,
    THRUST_TO_WEIGHT, hover_command, max_rpm, motor_xy,
};
use crate::state::Drone;
use crate::task;
use proprio_gpu::GpuModel;
use std::fmt::Write;

proprio_gpu::params! {
    /// The parameter block of `shader.wgsl`: a read-only storage buffer, not a
    /// uniform one (lavapipe inlines uniform values and recompiled the shader on
    /// every dispatch, 3× slower and leaking ~0.5 MB a step).
    struct Params {
        substeps: u32,
        task: u32,
        action_mode: u32,
        count: u32,
        control_hz: u32,
        squared: u32,
        motors_at: u32,
        dt: f32,
        waypoint_radius: f32,
        gate_size: f32,
        hover_command: f32,
        sq_position: f32,
        sq_distance: f32,
        sq_orientation: f32,
        sq_velocity: f32,
        sq_rate: f32,
        sq_action: f32,
        sq_constant: f32,
        sq_scale: f32,
        sq_bonus: f32,
        sq_termination: f32,
        sq_exit: f32,
        _pad0: f32,
        _pad1: f32,
    }
}

impl GpuModel for DroneModel {
    /// Info floats: distance, targets reached, then success and crash (`shader.wgsl`).
    const INFO_KEYS: &'static [&'static str] = &task::INFO_KEYS;
    const NAME: &'static str = "drones";

    /// The drone shader with its constants from the Rust values, so both backends use identical numbers.
    fn shader(&self) -> String {
        let scalars = [
            ("GRAVITY", GRAVITY),
            ("MASS", MASS),
            ("KF", KF),
            ("KM", KM),
            ("MIX_C", KM / KF),
            ("THRUST_TO_WEIGHT", THRUST_TO_WEIGHT),
            ("MAX_RATE", MAX_RATE),
            ("MAX_RPM", max_rpm()),
            ("MOTOR_D", motor_xy()[0][0]),
            ("RPM_TO_RAD", RPM_TO_RAD),
            ("BODY_RADIUS", BODY_RADIUS),
            ("ARENA", task::ARENA),
            ("FRAME_DEPTH", task::FRAME_DEPTH),
            ("FRAME_WIDTH", task::FRAME_WIDTH),
            ("HOVER_RADIUS", task::HOVER_RADIUS),
            ("HOVER_RATE", task::HOVER_RATE),
            ("HOVER_BONUS", task::HOVER_BONUS),
            ("CRASH_REWARD", task::CRASH_REWARD),
            ("POINT_BONUS", task::POINT_BONUS),
            ("PROGRESS_REWARD", task::PROGRESS_REWARD),
        ];
        let mut vectors = String::new();
        for (name, v) in [
            ("INERTIA", INERTIA),
            ("DRAG", DRAG),
            ("RATE_GAIN", RATE_GAIN),
        ] {
            let _ = writeln!(
                vectors,
                "const {name}: vec3<f32> = vec3<f32>({:?}, {:?}, {:?});",
                v[0], v[1], v[2]
            );
        }
        let fields = proprio_gpu::fields!(
            Drone:
            pos, vel, quat, omega, rpm, action, mass, inertia, kf, km, motor_alpha, wind, gust,
            gust_phase, gust_step, goal, hold, dist, points, gate_dir,
        );
        proprio_gpu::shader::<DroneModel>(
            &fields,
            &[],
            &scalars,
            &[Params::WGSL, &vectors, include_str!("shader.wgsl")],
        )
    }

    fn params(&self) -> Vec<u8> {
        let s: &Settings = self.settings();
        let r = s.squared_reward.unwrap_or_default();
        Params {
            squared: u32::from(s.squared_reward.is_some()),
            motors_at: if s.observe_motors {
                task::task_obs_dim(s.task) as u32
            } else {
                0
            },
            hover_command: hover_command(),
            sq_position: r.position,
            sq_distance: r.distance,
            sq_orientation: r.orientation,
            sq_velocity: r.velocity,
            sq_rate: r.rate,
            sq_action: r.action,
            sq_constant: r.constant,
            sq_scale: r.scale,
            sq_bonus: r.bonus,
            sq_termination: r.termination,
            sq_exit: r.exit,
            substeps: s.substeps,
            task: s.task as u32,
            action_mode: u32::from(s.action == ActionMode::ThrustRates),
            count: s.count,
            control_hz: s.control_hz,
            dt: s.dt,
            waypoint_radius: s.waypoint_radius,
            gate_size: s.gate_size,
            ..bytemuck::Zeroable::zeroed()
        }
        .bytes()
    }
}
