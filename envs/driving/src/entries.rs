//! The driving tasks' registry entries: what each says of its reward and its end.

use proprio_core::EnvEntry;

/// `driving/lane-keep-v0`.
pub const LANE_KEEP: EnvEntry = EnvEntry {
    id: "driving/lane-keep-v0",
    description: "Follow a winding two-lane road in the right lane at the speed limit until an 800 m route is done.",
    reward_range: (-1.0, 1.2),
    max_episode_steps: Some(600),
    physics_steps_per_step: 10,
    reward: "CaRL: metres gained along the route / (speed limit x step time), times soft-penalty factors for speeding, distance from the lane centre and discomfort; -1 on leaving the road",
    termination: "terminated when the route is done (success) or a wheel runs 0.3 m past the road edge; truncated after 600 steps (60 s)",
    action_handling: ACTION_HANDLING,
};

/// `driving/racing-v0`.
pub const RACING: EnvEntry = EnvEntry {
    id: "driving/racing-v0",
    description: "Lap a random closed track, 8 m wide, as fast as possible without leaving it.",
    reward_range: (-1.0, 2.4),
    max_episode_steps: Some(1200),
    physics_steps_per_step: 10,
    reward: "metres gained along the track / (20 m/s x step time) - 1 per second (the clock: faster laps pay more); -1 on leaving the track",
    termination: "terminated when the laps are done (success) or a wheel runs 0.3 m past the track's edge; truncated after 1200 steps (120 s)",
    action_handling: ACTION_HANDLING,
};

/// `driving/parking-v0`.
pub const PARKING: EnvEntry = EnvEntry {
    id: "driving/parking-v0",
    description: "Park nose-in in a goal bay of a lot among parked cars (goal-conditioned observation).",
    reward_range: (-10.0, 11.0),
    max_episode_steps: Some(300),
    physics_steps_per_step: 10,
    reward: "the goal error (distance + 2 m/rad x heading error) removed this step; +10 on success; -10 on a collision or leaving the lot",
    termination: "terminated on success (within 0.3 m and 10 degrees of the bay's pose, below 0.5 m/s), a collision or leaving the lot; truncated after 300 steps (30 s)",
    action_handling: ACTION_HANDLING,
};

/// `driving/highway-v0`.
pub const HIGHWAY: EnvEntry = EnvEntry {
    id: "driving/highway-v0",
    description: "Drive fast on a four-lane road among 20 IDM/MOBIL cars without crashing (highway-env's highway).",
    reward_range: (-1.0, 1.2),
    max_episode_steps: Some(80),
    physics_steps_per_step: 50,
    reward: "CaRL: metres gained along the road / (speed limit x step time), times soft-penalty factors for speeding, distance from a lane centre and discomfort; -1 on a collision or leaving the road",
    termination: "terminated on a collision or leaving the road; truncated after 80 steps (40 s at 2 decisions a second); success = crash-free to the time limit at a mean speed of 20 m/s or more",
    action_handling: ACTION_HANDLING,
};

/// How every task of the family reads its actions.
const ACTION_HANDLING: &str = "action=\"continuous\": [steer, pedal], each clipped to [-1, 1] (steer +1 full right; pedal +1 full throttle, -1 brake, reverse once stopped); action=\"meta\": 0 lane left, 1 idle, 2 lane right, 3 faster, 4 slower";
