//! The scripted baseline: a cascaded geometric controller (position PD →
//! thrust vector → SO(3) attitude PD, Lee et al. 2010) acting on observations
//! only, through the motor mixer (or as thrust and rate setpoints).

use crate::config::{ActionMode, Settings, TaskKind};
use crate::dynamics::{V3, add, cross, dot, mix, mul, norm, scale, sub};
use crate::params::{GRAVITY, INERTIA, MASS, MAX_RATE, RATE_GAIN, THRUST_TO_WEIGHT, max_rpm};
use crate::task::obs_dim;
use proprio_core::{ActMode, Agent, Result};

/// Position gain, 1/s².
const KP: f32 = 6.0;
/// Velocity gain, 1/s.
const KD: f32 = 4.0;
/// Largest commanded horizontal acceleration, m/s².
const MAX_ACC_XY: f32 = 8.0;
/// Attitude gain, 1/s².
const KR: f32 = 100.0;
/// Body-rate damping gain, 1/s.
const KW: f32 = 16.0;
/// Cap of θ / sin θ near θ = π.
const MAX_LOG_GAIN: f32 = 30.0;
/// Position error along a gate's axis that sets the approach speed, m.
const GATE_LEAD: f32 = 0.8;
/// Farthest point beyond a gate the controller aims at, m.
const GATE_BEYOND: f32 = 0.6;

/// The cascaded controller for every drone task (flies at the current target).
pub struct Scripted {
    settings: Settings,
}

fn unit(v: V3) -> V3 {
    let n = norm(v);
    if n > 1e-6 {
        scale(v, 1.0 / n)
    } else {
        [0.0, 0.0, 1.0]
    }
}

impl Scripted {
    /// A controller for envs with `settings`.
    pub fn new(settings: Settings) -> Self {
        Self { settings }
    }

    /// The action for one observation.
    pub fn action(&self, obs: &[f32]) -> [f32; 4] {
        let mut e = [obs[0], obs[1], obs[2]];
        if self.settings.task == TaskKind::Gates {
            // Fly along the gate's axis: remove the lateral offset while
            // moving forward through the opening at a steady pace.
            let n = [obs[22], obs[23], obs[24]];
            let along = dot(e, n);
            let lateral = sub(e, scale(n, along));
            e = sub(lateral, scale(n, GATE_LEAD.min(GATE_BEYOND - along)));
        }
        let r = [
            [obs[3], obs[4], obs[5]],
            [obs[6], obs[7], obs[8]],
            [obs[9], obs[10], obs[11]],
        ];
        let v = [obs[12], obs[13], obs[14]];
        let w = [obs[15], obs[16], obs[17]];
        let mut acc = add(scale(e, -KP), scale(v, -KD));
        let horizontal = (acc[0] * acc[0] + acc[1] * acc[1]).sqrt();
        if horizontal > MAX_ACC_XY {
            acc[0] *= MAX_ACC_XY / horizontal;
            acc[1] *= MAX_ACC_XY / horizontal;
        }
        acc[2] = acc[2].clamp(-0.8 * GRAVITY, GRAVITY) + GRAVITY;
        let force = scale(acc, MASS);
        let body_z = [r[0][2], r[1][2], r[2][2]];
        let thrust = dot(force, body_z).max(0.0);
        let z_d = unit(force);
        let body_x = [r[0][0], r[1][0], r[2][0]];
        let y_d = unit(cross(z_d, body_x));
        let x_d = cross(y_d, z_d);
        let cols = [x_d, y_d, z_d];
        // M = R_dᵀ R − Rᵀ R_d; e_R = vee(M) / 2.
        let rd_t_r = |i: usize, j: usize| (0..3).map(|k| cols[i][k] * r[k][j]).sum::<f32>();
        let m = |i: usize, j: usize| rd_t_r(i, j) - rd_t_r(j, i);
        // vee(M)/2 is sin(θ)·axis; rescale to θ·axis so that an upside-down
        // start (θ near π) gets a strong correction instead of a vanishing one.
        let cos = (0.5 * (rd_t_r(0, 0) + rd_t_r(1, 1) + rd_t_r(2, 2) - 1.0)).clamp(-1.0, 1.0);
        let angle = cos.acos();
        let gain = if angle < 1e-3 {
            1.0
        } else {
            (angle / angle.sin()).min(MAX_LOG_GAIN)
        };
        let e_r = scale([0.5 * m(2, 1), 0.5 * m(0, 2), 0.5 * m(1, 0)], gain);
        // Wanted angular acceleration.
        let accel = add(scale(e_r, -KR), scale(w, -KW));
        match self.settings.action {
            ActionMode::Motors => {
                let torque = add(mul(INERTIA, accel), cross(w, mul(INERTIA, w)));
                mix(thrust, torque).map(|rpm| 2.0 * rpm / max_rpm() - 1.0)
            }
            ActionMode::ThrustRates => {
                // The on-board loop gives ω̇ ≈ RATE_GAIN (ω_set − ω).
                let full = THRUST_TO_WEIGHT * MASS * GRAVITY;
                let rates = add(w, mul(accel, RATE_GAIN.map(|g| 1.0 / g)));
                [
                    (2.0 * thrust / full - 1.0).clamp(-1.0, 1.0),
                    (rates[0] / MAX_RATE).clamp(-1.0, 1.0),
                    (rates[1] / MAX_RATE).clamp(-1.0, 1.0),
                    (rates[2] / MAX_RATE).clamp(-1.0, 1.0),
                ]
            }
        }
    }
}

impl Agent for Scripted {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], _: ActMode) -> Result<()> {
        let dim = obs_dim(&self.settings);
        for (o, a) in obs.chunks_exact(dim).zip(actions.chunks_exact_mut(4)) {
            a.copy_from_slice(&self.action(o));
        }
        Ok(())
    }
}
