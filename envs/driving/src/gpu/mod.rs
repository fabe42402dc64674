//! The GPU twin: [`DrivingModel`] as a WGSL compute shader (`world.wgsl`
//! then `task.wgsl`, their constants generated here from the Rust values so
//! the two sides cannot drift apart), run by [`proprio_gpu::ChunkedGpuKernel`]:
//! one dispatch per control step for all envs, traffic included.

use crate::config::{ActionMode, Settings};
use crate::state::{Car, MAX_OTHERS, MAX_SEGMENTS};
use crate::task;
use crate::{DrivingModel, controller, highway, params as p, parking, racing, road, traffic};
use proprio_gpu::GpuModel;
use std::fmt::Write;

proprio_gpu::params! {
    /// The parameter block of the shader (a read-only storage buffer, as the drones').
    struct Params {
        substeps: u32,
        task: u32,
        meta_actions: u32,
        kinematic: u32,
        time_limit: u32,
        _pad0: u32,
        dt: f32,
        speed_limit: f32,
        _pad1: f32,
        _pad2: f32,
    }
}

impl GpuModel for DrivingModel {
    /// Info floats: speed, progress, then success and crash (`task.wgsl`, `write_info`).
    const INFO_KEYS: &'static [&'static str] = &task::INFO_KEYS;
    const NAME: &'static str = "driving";

    /// The two shader files with their constants from the Rust values.
    fn shader(&self) -> String {
        let counts = [
            ("MAX_SEGMENTS", MAX_SEGMENTS),
            ("MAX_OTHERS", MAX_OTHERS),
            ("USERS", MAX_OTHERS + 1),
            ("META_LEVELS", controller::META_SPEEDS.len()),
            ("ROAD_FEATURES", task::ROAD_FEATURES),
            ("HIGHWAY_OBSERVED", highway::OBSERVED),
            ("PARKING_OBSERVED", parking::OBSERVED),
            ("O_X", traffic::field::X),
            ("O_Y", traffic::field::Y),
            ("O_YAW", traffic::field::YAW),
            ("O_SPEED", traffic::field::SPEED),
            ("O_S", traffic::field::S),
            ("O_D", traffic::field::D),
            ("O_DESIRED", traffic::field::DESIRED),
            ("O_TARGET_D", traffic::field::TARGET_D),
            ("O_TIMER", traffic::field::TIMER),
        ];
        let scalars = [
            ("GRAVITY", p::GRAVITY),
            ("MASS", p::MASS),
            ("INERTIA_Z", p::INERTIA_Z),
            ("LF", p::LF),
            ("LR", p::LR),
            ("WHEELBASE", p::WHEELBASE),
            ("LENGTH", p::LENGTH),
            ("WIDTH", p::WIDTH),
            ("MU", p::MU),
            ("CORNERING", p::CORNERING),
            ("MAGIC_C", p::MAGIC_C),
            ("MAX_STEER", p::MAX_STEER),
            ("MAX_STEER_RATE", p::MAX_STEER_RATE),
            ("MAX_DRIVE", p::MAX_DRIVE),
            ("POWER", p::POWER),
            ("MAX_BRAKE", p::MAX_BRAKE),
            ("MAX_REVERSE_DRIVE", p::MAX_REVERSE_DRIVE),
            ("MAX_REVERSE_SPEED", p::MAX_REVERSE_SPEED),
            ("MAX_SPEED", p::MAX_SPEED),
            ("AIR_DENSITY", p::AIR_DENSITY),
            ("DRAG_AREA", p::DRAG_AREA),
            ("ROLLING", p::ROLLING),
            ("BLEND_LOW", p::BLEND_LOW),
            ("BLEND_HIGH", p::BLEND_HIGH),
            ("LANE_WIDTH", p::LANE_WIDTH),
            ("IDM_ACC", p::IDM_ACC),
            ("IDM_BRAKE", p::IDM_BRAKE),
            ("IDM_ACC_LIMIT", p::IDM_ACC_LIMIT),
            ("IDM_TIME_GAP", p::IDM_TIME_GAP),
            ("IDM_MIN_GAP", p::IDM_MIN_GAP),
            ("IDM_DELTA", p::IDM_DELTA as f32),
            ("MOBIL_POLITENESS", p::MOBIL_POLITENESS),
            ("MOBIL_THRESHOLD", p::MOBIL_THRESHOLD),
            ("MOBIL_SAFE_BRAKE", p::MOBIL_SAFE_BRAKE),
            ("MOBIL_DELAY", p::MOBIL_DELAY),
            ("LANE_CHANGE_SPEED", p::LANE_CHANGE_SPEED),
            ("EGO_DESIRED", traffic::EGO_DESIRED),
            ("STRAIGHT", road::STRAIGHT),
            ("CROSS_TRACK_GAIN", controller::CROSS_TRACK_GAIN),
            ("SOFTENING", controller::SOFTENING),
            ("SPEED_GAIN", controller::SPEED_GAIN),
            ("TRAFFIC_PERIOD", task::TRAFFIC_PERIOD),
            ("CRASH_REWARD", task::CRASH_REWARD),
            ("EDGE_TOLERANCE", task::EDGE_TOLERANCE),
            ("COMFORT_MIN", task::COMFORT_ACCEL.0),
            ("COMFORT_MAX", task::COMFORT_ACCEL.1),
            ("COMFORT_LATERAL", task::COMFORT_LATERAL),
            ("RACING_SPEED", racing::REFERENCE_SPEED),
            ("RACING_TIME_COST", racing::TIME_COST),
            ("SUCCESS_SPEED", highway::SUCCESS_SPEED),
            ("HIGHWAY_RANGE", highway::RANGE),
            ("LOT_HALF_LENGTH", parking::half_length()),
            ("LOT_HALF_WIDTH", parking::half_width()),
            ("GOAL_DISTANCE", parking::GOAL_DISTANCE),
            ("GOAL_HEADING", parking::GOAL_HEADING),
            ("GOAL_SPEED", parking::GOAL_SPEED),
            ("HEADING_WEIGHT", parking::HEADING_WEIGHT),
            ("PARKING_SUCCESS_REWARD", parking::SUCCESS_REWARD),
            ("PARKING_CRASH_REWARD", parking::CRASH_REWARD),
        ];
        let table = |name: &str, values: &[f32]| {
            let mut f = format!(
                "fn {name}(i: u32) -> f32 {{\n    var t = array<f32, {}>(",
                values.len()
            );
            for (k, v) in values.iter().enumerate() {
                let _ = write!(f, "{}{v:?}", if k == 0 { "" } else { ", " });
            }
            f + ");\n    return t[i];\n}\n"
        };
        let tables =
            table("look_ahead", &task::LOOK_AHEAD) + &table("meta_speed", &controller::META_SPEEDS);
        let fields = proprio_gpu::fields!(
            Car:
            pos, yaw, vel, yaw_rate, steer, accel, lat_accel, action, target_d, target_speed,
            segments, num_segments, road_length, closed, lanes, seg, s, d, heading_error,
            progress, route, steps, speed_sum, goal, goal_error, others, num_others,
        );
        proprio_gpu::shader::<DrivingModel>(
            &fields,
            &counts,
            &scalars,
            &[
                Params::WGSL,
                &tables,
                include_str!("world.wgsl"),
                include_str!("task.wgsl"),
            ],
        )
    }

    fn params(&self) -> Vec<u8> {
        let s: &Settings = self.settings();
        Params {
            substeps: s.substeps,
            task: s.task as u32,
            meta_actions: u32::from(s.action == ActionMode::Meta),
            kinematic: u32::from(s.model == crate::vehicle::Model::Kinematic),
            time_limit: s.time_limit,
            dt: s.dt,
            speed_limit: s.speed_limit,
            ..bytemuck::Zeroable::zeroed()
        }
        .bytes()
    }
}
