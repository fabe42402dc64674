//! The manipulation tasks' registry entries: what each says of its reward and its end.

use proprio_core::EnvEntry;

/// `manipulation/reach-v0`.
pub const REACH: EnvEntry = EnvEntry {
    id: "manipulation/reach-v0",
    description: "Move the Panda's tool centre point to a random goal in the air.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(50),
    physics_steps_per_step: 3,
    reward: "1 - tanh(5 d) - 1 per step (d: TCP to goal, m); +1 on success; with dense_reward: false, 1 on success, else 0 (binary)",
    termination: "terminated on success (TCP within 2.5 cm of the goal); truncated after 50 steps (2.5 s) or on a physics blow-up (info blow_up: 1 non-finite, 2 left the workspace)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/push-cube-v0`.
pub const PUSH_CUBE: EnvEntry = EnvEntry {
    id: "manipulation/push-cube-v0",
    description: "Push a 4 cm cube across the table into a goal region 20 cm away.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(100),
    physics_steps_per_step: 3,
    reward: "(reach + 2 place) / 3 - 1 per step, reach = 1 - tanh(5 |TCP - point behind the cube|), place = 1 - tanh(5 |cube - goal|_xy); +1 on success; with dense_reward: false, 1 on success, else 0 (binary)",
    termination: "terminated on success (cube centre within 10 cm of the goal, on the table); truncated after 100 steps (5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/pick-cube-v0`.
pub const PICK_CUBE: EnvEntry = EnvEntry {
    id: "manipulation/pick-cube-v0",
    description: "Grasp a 4 cm cube and hold it still at a random goal up to 30 cm above the table.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(100),
    physics_steps_per_step: 3,
    reward: "ManiSkill3's PickCube stages: (reach + grasped + grasped place + placed static) / 5 - 1 per step, reach = 1 - tanh(5 |TCP - cube|), grasped = both fingers touch and squeeze the cube, place = 1 - tanh(5 |cube - goal|), placed = grasped within 2.5 cm of the goal, static = 1 - tanh(5 |arm joint velocities|); 0 while the success condition holds, +1 on success; with dense_reward: false, 1 on success, else 0 (binary)",
    termination: "terminated on success (held within 2.5 cm of the goal, arm still, for 0.25 s); truncated after 100 steps (5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/stack-cube-v0`.
pub const STACK_CUBE: EnvEntry = EnvEntry {
    id: "manipulation/stack-cube-v0",
    description: "Put cube A on cube B and let go; A must stay there for 1 s.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(150),
    physics_steps_per_step: 3,
    reward: "ManiSkill3's StackCube stages: stage / 8 - 1 per step, stage = 2 reach before the grasp, 4 + place while A is grasped, 6 + (opening + rest) / 2 once A is on B; reach = 1 - tanh(5 |TCP - A|), place = 1 - tanh(5 |A - top of B|), opening = finger opening / widest (1 once released), rest = 1 - tanh(10 |v_A| + |w_A|); 0 while the success condition holds, +1 on success; with dense_reward: false, 1 on success, else 0 (binary)",
    termination: "terminated on success (A on B, released and still, for 1 s); truncated after 150 steps (7.5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/instruct-v0`.
pub const INSTRUCT: EnvEntry = EnvEntry {
    id: "manipulation/instruct-v0",
    description: "Follow an instruction about 3 or 4 coloured cubes: push one to a side of the table, pick one up, or put one on another.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(150),
    physics_steps_per_step: 3,
    reward: "1 on success, else 0 (binary); with dense_reward: true, the instructed task's stages as in push-cube, pick-cube (goal 10 cm above the cube's start) and stack-cube, - 1 per step, +1 on success",
    termination: "terminated on success (push: the cube on the table 15 cm or more beyond the centre towards the named side; pick up: grasped with its bottom 5 cm above the table for 0.25 s; put on: on the other cube, released and still, for 1 s); truncated after 150 steps (7.5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// How every task of the family reads its actions.
const ACTION_HANDLING: &str = "each component is clipped to [-1, 1]; the meaning depends on the `control` config key (pd_joint_pos, pd_joint_delta_pos, pd_ee_delta_pos, pd_ee_delta_pose, pd_ee_delta_pos_yaw); the last component closes (-1) or opens (+1) the gripper";
