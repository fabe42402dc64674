//! The default car: a mid-size saloon (CommonRoad's vehicle 2, a BMW 320i)
//! and the traffic models' constants (highway-env's IDM and MOBIL). Each
//! number's source is in `docs/envs.md`.

/// Gravity, m/s².
pub const GRAVITY: f32 = 9.81;
/// Mass, kg (CommonRoad vehicle 2).
pub const MASS: f32 = 1093.0;
/// Yaw moment of inertia, kg·m² (CommonRoad vehicle 2).
pub const INERTIA_Z: f32 = 1791.0;
/// Centre of gravity to front axle, m (CommonRoad vehicle 2).
pub const LF: f32 = 1.156;
/// Centre of gravity to rear axle, m (CommonRoad vehicle 2).
pub const LR: f32 = 1.422;
/// Wheelbase, m.
pub const WHEELBASE: f32 = LF + LR;
/// Body length, m (CommonRoad vehicle 2).
pub const LENGTH: f32 = 4.508;
/// Body width, m (CommonRoad vehicle 2).
pub const WIDTH: f32 = 1.610;
/// Tyre–road friction coefficient (CommonRoad vehicle 2).
pub const MU: f32 = 1.048;
/// Normalised cornering stiffness, 1/rad: axle force slope per newton of load (CommonRoad vehicle 2).
pub const CORNERING: f32 = 20.89;
/// Shape factor C of the simplified magic formula for lateral force (Pacejka's typical 1.3).
pub const MAGIC_C: f32 = 1.3;
/// Largest road-wheel steering angle, rad (35°, a typical saloon's lock).
pub const MAX_STEER: f32 = 0.61;
/// Largest steering rate at the road wheels, rad/s (full lock to lock in about 2 s).
pub const MAX_STEER_RATE: f32 = 0.7;
/// Largest traction-limited drive acceleration, m/s² (0–100 km/h in about 7 s).
pub const MAX_DRIVE: f32 = 4.0;
/// Engine power at the wheels, W (135 kW, the 320i's rating).
pub const POWER: f32 = 135_000.0;
/// Largest braking deceleration, m/s² (ABS braking on dry asphalt, about 0.9 g).
pub const MAX_BRAKE: f32 = 9.0;
/// Largest reverse acceleration, m/s².
pub const MAX_REVERSE_DRIVE: f32 = 2.0;
/// Fastest reverse speed, m/s.
pub const MAX_REVERSE_SPEED: f32 = 5.0;
/// Top speed, m/s (about 180 km/h, limited).
pub const MAX_SPEED: f32 = 50.0;
/// Air density, kg/m³.
pub const AIR_DENSITY: f32 = 1.2;
/// Drag area C_d·A, m² (C_d 0.29 on 2.2 m² of frontal area).
pub const DRAG_AREA: f32 = 0.64;
/// Rolling-resistance coefficient (car tyres on asphalt).
pub const ROLLING: f32 = 0.012;
/// Below this speed, m/s, the kinematic model alone moves the car (slip angles are singular at rest).
pub const BLEND_LOW: f32 = 3.0;
/// Above this speed, m/s, the dynamic model alone moves the car.
pub const BLEND_HIGH: f32 = 5.0;
/// Lane width, m (highway-env's `StraightLane.DEFAULT_WIDTH`).
pub const LANE_WIDTH: f32 = 4.0;

/// IDM's acceleration `a`, m/s² (highway-env `COMFORT_ACC_MAX`).
pub const IDM_ACC: f32 = 3.0;
/// IDM's comfortable braking `b`, m/s² (highway-env `-COMFORT_ACC_MIN`).
pub const IDM_BRAKE: f32 = 5.0;
/// IDM's hard limit on |acceleration|, m/s² (highway-env `ACC_MAX`).
pub const IDM_ACC_LIMIT: f32 = 6.0;
/// IDM's safe time gap `T`, s (highway-env `TIME_WANTED`).
pub const IDM_TIME_GAP: f32 = 1.5;
/// IDM's jam distance `s0`, centre to centre, m (highway-env `DISTANCE_WANTED` = 5 m + a car length).
pub const IDM_MIN_GAP: f32 = 10.0;
/// IDM's acceleration exponent δ (highway-env `DELTA`).
pub const IDM_DELTA: i32 = 4;
/// MOBIL's politeness p (highway-env `POLITENESS`).
pub const MOBIL_POLITENESS: f32 = 0.0;
/// MOBIL's acceleration gain threshold, m/s² (highway-env `LANE_CHANGE_MIN_ACC_GAIN`).
pub const MOBIL_THRESHOLD: f32 = 0.2;
/// MOBIL's largest braking imposed on the new follower, m/s² (highway-env `LANE_CHANGE_MAX_BRAKING_IMPOSED`).
pub const MOBIL_SAFE_BRAKE: f32 = 2.0;
/// Seconds between two lane-change decisions of a traffic car (highway-env `LANE_CHANGE_DELAY`).
pub const MOBIL_DELAY: f32 = 1.0;
/// Lateral speed of a lane change, m/s (a change takes about 2.5 s).
pub const LANE_CHANGE_SPEED: f32 = 1.6;
