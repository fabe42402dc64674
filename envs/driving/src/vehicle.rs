//! The car: a dynamic bicycle model with simplified magic-formula tyres,
//! blended into a kinematic bicycle at parking speeds (where slip angles are
//! singular), steering-rate and power limits, brakes, drag and rolling
//! resistance. One physics step at a time, in place on a [`Car`].

use crate::params::{
    AIR_DENSITY, BLEND_HIGH, BLEND_LOW, CORNERING, DRAG_AREA, GRAVITY, INERTIA_Z, LF, LR, MAGIC_C,
    MASS, MAX_BRAKE, MAX_DRIVE, MAX_REVERSE_DRIVE, MAX_REVERSE_SPEED, MAX_SPEED, MAX_STEER,
    MAX_STEER_RATE, MU, POWER, ROLLING, WHEELBASE,
};
use crate::state::Car;
use serde::{Deserialize, Serialize};

/// Which equations move the car.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// Dynamic bicycle with tyre forces above 5 m/s, kinematic below 3 m/s, blended between.
    #[default]
    Dynamic,
    /// Kinematic bicycle at every speed (no slip: the car goes where its wheels point).
    Kinematic,
}

/// Lateral force of one axle carrying `load` N at slip angle `alpha` (rad):
/// the magic formula with B·C matched to the cornering stiffness and E = 0.
pub fn tyre_force(alpha: f32, load: f32) -> f32 {
    let b = CORNERING / MAGIC_C;
    MU * load * (MAGIC_C * (b * alpha).atan()).sin()
}

/// Static axle loads `[front, rear]`, N.
pub fn axle_loads() -> [f32; 2] {
    let weight = MASS * GRAVITY;
    [weight * LR / WHEELBASE, weight * LF / WHEELBASE]
}

/// The longitudinal acceleration asked for by pedal `pedal` ∈ [−1, 1] at
/// forward speed `v`: drive towards the pedal's direction, brake against the
/// motion. Returns the acceleration and whether it opposes the motion (and
/// so may stop the car but never reverse it).
fn pedal_accel(pedal: f32, v: f32) -> (f32, bool) {
    if (v > 0.0 && pedal < 0.0) || (v < 0.0 && pedal > 0.0) {
        return (pedal * MAX_BRAKE, true);
    }
    if pedal >= 0.0 {
        let limit = MAX_DRIVE.min(POWER / (MASS * v.max(1.0)));
        let a = pedal * limit;
        (if v >= MAX_SPEED { a.min(0.0) } else { a }, pedal == 0.0)
    } else {
        let a = pedal * MAX_REVERSE_DRIVE;
        (
            if v <= -MAX_REVERSE_SPEED {
                a.max(0.0)
            } else {
                a
            },
            false,
        )
    }
}

/// Drag and rolling resistance at forward speed `v`, m/s² (opposes the motion).
pub fn resistance(v: f32) -> f32 {
    let drag = 0.5 * AIR_DENSITY * DRAG_AREA / MASS;
    if v == 0.0 {
        return 0.0;
    }
    -v.signum() * (ROLLING * GRAVITY + drag * v * v)
}

/// One physics step of `dt` s with steering command `steer_cmd` ∈ [−1, 1]
/// (+1 full right, as CarRacing and a keyboard's D) and pedal `pedal` ∈ [−1, 1].
pub fn step(c: &mut Car, steer_cmd: f32, pedal: f32, model: Model, dt: f32) {
    let target = -steer_cmd * MAX_STEER;
    let max_change = MAX_STEER_RATE * dt;
    c.steer =
        (c.steer + (target - c.steer).clamp(-max_change, max_change)).clamp(-MAX_STEER, MAX_STEER);
    let delta = c.steer;
    let [vx, vy] = c.vel;
    let r = c.yaw_rate;
    let (drive, opposing) = pedal_accel(pedal, vx);
    let ax = drive + resistance(vx);
    let mut vx_new = vx + ax * dt;
    // The longitudinal acceleration, computed rather than differenced (a
    // difference of speeds over dt would amplify their rounding a hundredfold).
    let mut accel = ax;
    if opposing || drive == 0.0 {
        // Brakes and resistance stop the car; they never start it moving.
        vx_new = if vx > 0.0 {
            vx_new.max(0.0)
        } else if vx < 0.0 {
            vx_new.min(0.0)
        } else {
            0.0
        };
        if vx_new == 0.0 {
            accel = -vx / dt;
        }
    }
    // Kinematic bicycle about the centre of gravity: no slip at either axle.
    let tan = delta.tan();
    let kin = [
        vx_new,
        vx_new * LR * tan / WHEELBASE,
        vx_new * tan / WHEELBASE,
    ];
    let w = match model {
        Model::Kinematic => 0.0,
        Model::Dynamic => ((vx - BLEND_LOW) / (BLEND_HIGH - BLEND_LOW)).clamp(0.0, 1.0),
    };
    let mut next = kin;
    if w > 0.0 {
        let [load_f, load_r] = axle_loads();
        let alpha_f = delta - ((vy + LF * r) / vx).atan();
        let alpha_r = -((vy - LR * r) / vx).atan();
        let fy_f = tyre_force(alpha_f, load_f);
        let fy_r = tyre_force(alpha_r, load_r);
        let (sd, cd) = delta.sin_cos();
        let dvx = ax - fy_f * sd / MASS + vy * r;
        let dvy = (fy_f * cd + fy_r) / MASS - vx * r;
        let dr = (LF * fy_f * cd - LR * fy_r) / INERTIA_Z;
        let dynamic = [vx + dvx * dt, vy + dvy * dt, r + dr * dt];
        for (n, (k, d)) in next.iter_mut().zip(kin.iter().zip(dynamic)) {
            *n = w * d + (1.0 - w) * k;
        }
        accel = w * dvx + (1.0 - w) * accel;
    }
    c.vel = [next[0], next[1]];
    c.yaw_rate = next[2];
    // The heading halfway through the step: a constant turn moves the car
    // along the chord of its arc, so circles close instead of spiralling out.
    let (sy, cy) = (c.yaw + 0.5 * next[2] * dt).sin_cos();
    c.pos[0] += (next[0] * cy - next[1] * sy) * dt;
    c.pos[1] += (next[0] * sy + next[1] * cy) * dt;
    c.yaw = crate::road::wrap(c.yaw + next[2] * dt);
    c.accel = accel;
    c.lat_accel = next[0] * next[2];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::MAX_STEER;
    use bytemuck::Zeroable;

    const DT: f32 = 0.01;

    /// Drives with the wheels held at `delta` (left positive), the pedal
    /// holding `speed`, for `seconds`; returns the positions.
    fn circle(model: Model, delta: f32, speed: f32, seconds: f32) -> (Car, Vec<[f32; 2]>) {
        let mut c = Car::zeroed();
        c.vel = [speed, 0.0];
        c.steer = delta;
        let mut path = Vec::new();
        for _ in 0..(seconds / DT) as usize {
            let pedal = (0.5 * (speed - c.vel[0])).clamp(-1.0, 1.0);
            step(&mut c, -delta / MAX_STEER, pedal, model, DT);
            path.push(c.pos);
        }
        (c, path)
    }

    /// Centre and radius of the circle through three points.
    fn circumcircle(a: [f32; 2], b: [f32; 2], c: [f32; 2]) -> ([f32; 2], f32) {
        let d = 2.0 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]));
        let n = |p: [f32; 2]| p[0] * p[0] + p[1] * p[1];
        let ux = (n(a) * (b[1] - c[1]) + n(b) * (c[1] - a[1]) + n(c) * (a[1] - b[1])) / d;
        let uy = (n(a) * (c[0] - b[0]) + n(b) * (a[0] - c[0]) + n(c) * (b[0] - a[0])) / d;
        ([ux, uy], (a[0] - ux).hypot(a[1] - uy))
    }

    #[test]
    fn a_kinematic_car_at_constant_steer_traces_the_bicycle_circle() {
        let delta: f32 = 0.3;
        // The turn centre lies on the rear axle's line; the centre of gravity is LR ahead of it.
        let rear = WHEELBASE / delta.tan();
        let predicted = rear.hypot(LR);
        let (_, path) = circle(Model::Kinematic, delta, 2.5, 20.0);
        let n = path.len();
        let (centre, radius) = circumcircle(path[n / 4], path[n / 2], path[3 * n / 4]);
        assert!(
            (radius - predicted).abs() < 0.01,
            "radius {radius}, bicycle model {predicted}"
        );
        for p in &path {
            let r = (p[0] - centre[0]).hypot(p[1] - centre[1]);
            assert!(
                (r - predicted).abs() < 0.02,
                "a point {r} m from the centre"
            );
        }
    }

    #[test]
    fn a_dynamic_car_in_the_linear_range_turns_on_the_neutral_steer_radius() {
        // Equal normalised cornering stiffness front and rear: the understeer
        // gradient W_f/C_f - W_r/C_r is zero, so R = L / tan(delta) at any speed.
        let delta: f32 = 0.03;
        let (c, path) = circle(Model::Dynamic, delta, 15.0, 30.0);
        let n = path.len();
        let (_, radius) = circumcircle(path[n / 2], path[3 * n / 4], path[n - 1]);
        let predicted = WHEELBASE / delta.tan();
        assert!(
            (radius / predicted - 1.0).abs() < 0.02,
            "radius {radius}, linear theory {predicted}"
        );
        let lateral = c.vel[0] * c.yaw_rate;
        assert!(
            (lateral - 15.0 * 15.0 / predicted).abs() < 0.1,
            "steady a_y {lateral}"
        );
    }

    #[test]
    fn full_lock_at_speed_saturates_the_tyres_instead_of_turning_tighter() {
        let (c, path) = circle(Model::Dynamic, MAX_STEER, 20.0, 8.0);
        let n = path.len();
        let (_, radius) = circumcircle(path[n / 2], path[3 * n / 4], path[n - 1]);
        let lateral = c.vel[0] * c.yaw_rate;
        assert!(
            lateral <= 1.05 * MU * crate::params::GRAVITY,
            "a_y {lateral} beyond grip"
        );
        assert!(
            radius > 3.0 * WHEELBASE / MAX_STEER.tan(),
            "radius {radius}: no understeer at the limit"
        );
    }

    #[test]
    fn braking_from_20_m_s_stops_in_the_distance_the_model_predicts() {
        let mut c = Car::zeroed();
        c.vel = [20.0, 0.0];
        let mut steps = 0;
        while c.vel[0] > 0.0 && steps < 1000 {
            step(&mut c, 0.0, -1.0, Model::Dynamic, DT);
            steps += 1;
        }
        // v' = -a - k v^2 integrates to d = ln(1 + k v0^2 / a) / (2k).
        let a = MAX_BRAKE + ROLLING * GRAVITY;
        let k = 0.5 * AIR_DENSITY * DRAG_AREA / MASS;
        let predicted = (1.0 + k * 400.0 / a).ln() / (2.0 * k);
        assert!(
            (c.pos[0] / predicted - 1.0).abs() < 0.015,
            "stopped after {} m, predicted {predicted}",
            c.pos[0]
        );
        assert_eq!(c.vel[0], 0.0, "braking stops the car and never reverses it");
        assert_eq!(c.pos[1], 0.0);
        let stopped = c.pos[0];
        step(&mut c, 0.0, 0.0, Model::Dynamic, DT);
        assert_eq!(
            (c.vel[0], c.pos[0]),
            (0.0, stopped),
            "a stopped car without pedal stays put"
        );
    }

    #[test]
    fn a_held_brake_pedal_reverses_a_stopped_car_up_to_the_reverse_limit() {
        let mut c = Car::zeroed();
        for _ in 0..1000 {
            step(&mut c, 0.0, -1.0, Model::Dynamic, DT);
        }
        assert!(
            (c.vel[0] + MAX_REVERSE_SPEED).abs() < 0.05,
            "reverse speed {}",
            c.vel[0]
        );
        assert!(c.pos[0] < -20.0);
    }

    #[test]
    fn the_power_limit_caps_acceleration_at_speed() {
        let mut c = Car::zeroed();
        let mut at = [0.0f32; 2];
        for (k, v) in [10.0, 40.0].iter().enumerate() {
            c.vel = [*v, 0.0];
            step(&mut c, 0.0, 1.0, Model::Dynamic, DT);
            at[k] = c.accel;
        }
        assert!((at[0] - (MAX_DRIVE + resistance(10.0))).abs() < 0.01);
        let power_limited = POWER / (MASS * 40.0) + resistance(40.0);
        assert!(
            (at[1] - power_limited).abs() < 0.01,
            "{} vs {power_limited}",
            at[1]
        );
    }

    #[test]
    fn steering_follows_its_command_at_the_rate_limit() {
        let mut c = Car::zeroed();
        c.vel = [10.0, 0.0];
        step(&mut c, -1.0, 0.0, Model::Dynamic, DT);
        assert!((c.steer - MAX_STEER_RATE * DT).abs() < 1e-6);
        for _ in 0..200 {
            step(&mut c, 1.0, 0.0, Model::Dynamic, DT);
        }
        assert_eq!(c.steer, -MAX_STEER);
    }
}
