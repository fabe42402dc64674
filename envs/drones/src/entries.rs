//! The drone tasks' registry entries: what each says of its reward and its end.

use proprio_core::EnvEntry;

/// `drones/hover-v0`.
pub const HOVER: EnvEntry = EnvEntry {
    id: "drones/hover-v0",
    description: "Reach and hold a point with a Crazyflie 2.x from a random position, velocity and attitude.",
    reward_range: (-10.0, 2.0),
    max_episode_steps: Some(500),
    physics_steps_per_step: 5,
    reward: "1 - (|p - target| + 0.2 (1 - R_zz) + 0.05 |v| + 0.02 |omega|), floored at -1, + 1 inside the success region (0.1 m, 0.2 rad/s); -10 on a crash; with `squared_reward`, Learning to Fly's weighted squared costs (docs/envs.md)",
    termination: "terminated on touching the ground or leaving the 10 m arena; truncated after 500 steps (5 s); success = within 0.1 m and 0.2 rad/s for the last second",
    action_handling: ACTION_HANDLING,
};

/// `drones/waypoints-v0`.
pub const WAYPOINTS: EnvEntry = EnvEntry {
    id: "drones/waypoints-v0",
    description: "Visit a random sequence of points in order with a Crazyflie 2.x.",
    reward_range: (-10.0, 60.0),
    max_episode_steps: Some(1000),
    physics_steps_per_step: 5,
    reward: "10 x metres of progress towards the current point + 10 per point visited - 0.01 |omega|; -10 on a crash",
    termination: "terminated when every point is visited (success) or on a crash; truncated after 1000 steps (10 s)",
    action_handling: ACTION_HANDLING,
};

/// `drones/gates-v0`.
pub const GATES: EnvEntry = EnvEntry {
    id: "drones/gates-v0",
    description: "Fly a Crazyflie 2.x through a random circular course of square gates in order.",
    reward_range: (-10.0, 60.0),
    max_episode_steps: Some(1000),
    physics_steps_per_step: 5,
    reward: "10 x metres of progress towards the current gate + 10 per gate passed - 0.01 |omega|; -10 on a crash",
    termination: "terminated when every gate is passed (success), or on touching a gate frame, the ground or the arena wall; truncated after 1000 steps (10 s)",
    action_handling: ACTION_HANDLING,
};

/// How every task of the family reads its actions.
const ACTION_HANDLING: &str = "each component is clipped to [-1, 1]; action=\"motors\": motor speed commands (-1 stopped, +1 full), action=\"thrust_rates\": collective thrust and body rates";
