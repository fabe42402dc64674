//! One drone's state (`Drone`), and the chunked struct-of-arrays layout both backends store N of them in.
//!
//! Envs are grouped in chunks of [`CHUNK`]; inside a chunk, each of the
//! [`LEN`] scalar fields of [`Drone`] is a run of `CHUNK` consecutive floats.
//! A CPU thread owns whole chunks (one contiguous slice), and a GPU workgroup
//! of `CHUNK` threads reads each field with one coalesced load.

use crate::config::MAX_POINTS;
use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

/// Everything about one drone episode: rigid body, motors, randomised parameters, wind and task progress.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
pub struct Drone {
    /// Position in the world frame (z up), m.
    pub pos: [f32; 3],
    /// Velocity in the world frame, m/s.
    pub vel: [f32; 3],
    /// Attitude, body to world, as a unit quaternion `[w, x, y, z]`.
    pub quat: [f32; 4],
    /// Body rates in the body frame (x forward, y left, z up), rad/s.
    pub omega: [f32; 3],
    /// Motor speeds, rpm.
    pub rpm: [f32; 4],
    /// The previous action (clipped to [−1, 1]).
    pub action: [f32; 4],
    /// Mass of this episode, kg.
    pub mass: f32,
    /// Principal moments of inertia of this episode, kg·m².
    pub inertia: [f32; 3],
    /// Thrust coefficient of this episode, N/rpm².
    pub kf: f32,
    /// Reaction-torque coefficient of this episode, N·m/rpm².
    pub km: f32,
    /// Motor lag per physics step, `1 − exp(−dt/τ)`.
    pub motor_alpha: f32,
    /// Constant wind, m/s.
    pub wind: [f32; 3],
    /// Gust amplitude (wind = `wind + gust · sin(phase)`), m/s.
    pub gust: [f32; 3],
    /// `[sin, cos]` of the gust phase.
    pub gust_phase: [f32; 2],
    /// `[sin, cos]` of the gust phase advance per physics step.
    pub gust_step: [f32; 2],
    /// Index of the current target in `points` (waypoints visited, gates passed).
    pub goal: f32,
    /// Control steps in a row inside the hover success region.
    pub hold: f32,
    /// Distance to the current target after the previous step, m.
    pub dist: f32,
    /// Targets: the hover point, the waypoints or the gate centres, m.
    pub points: [[f32; 3]; MAX_POINTS],
    /// Gates only: `[cos, sin]` of the heading the gate is flown through.
    pub gate_dir: [[f32; 2]; MAX_POINTS],
}

/// Number of `f32` fields of a [`Drone`].
pub const LEN: usize = std::mem::size_of::<Drone>() / 4;

/// Envs per chunk of the struct-of-arrays layout (and GPU workgroup size).
pub use proprio_core::chunked::CHUNK;

impl Drone {
    /// Rejects states no episode can reach: non-finite values, a quaternion far from unit length.
    pub fn check(&self) -> Result<(), String> {
        if let Some(f) = proprio_core::chunked::fields(self)
            .iter()
            .position(|v| !v.is_finite())
        {
            return Err(format!("field {f} of the drone state is not finite"));
        }
        let q = self.quat;
        let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        if (norm - 1.0).abs() > 1e-3 {
            return Err(format!("quat must have unit length, got length {norm}"));
        }
        if self.mass <= 0.0 || self.inertia.iter().any(|i| *i <= 0.0) || self.kf <= 0.0 {
            return Err("mass, inertia and kf must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.motor_alpha) {
            return Err("motor_alpha must be in [0, 1]".into());
        }
        if self.goal < 0.0 || self.goal > MAX_POINTS as f32 || self.goal.fract() != 0.0 {
            return Err(format!("goal must be a whole number in 0..={MAX_POINTS}"));
        }
        Ok(())
    }
}
