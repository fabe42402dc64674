//! The GPU backend of the kernel physics: [`KernelModel`] as a WGSL compute
//! shader (`dynamics.wgsl`, `collide.wgsl`, `solver.wgsl`, then `task.wgsl`), its constants
//! and the arm's description generated here from the Rust values so the two
//! sides cannot drift apart, run by [`proprio_gpu::ChunkedGpuKernel`]: one
//! dispatch per control step with the substeps and the autoreset inside.

use super::arm::{Arm, BOXES, DOF, MAX_SPHERES};
use super::collide::MARGIN;
use super::physics::{BAUMGARTE, GRAVITY, ITERATIONS, MAX_CONTACTS, SLOP, cube_mass};
use super::state::{CUBE_FIELDS, CUBES, SLOTS, Sim, slot};
use super::{IK_DAMPING, KernelModel, SOLVER_STEPS};
use crate::config::{ControlMode, Settings, TaskKind};
use crate::controller::IK_ITERATIONS;
use crate::controller::{EE_BOUNDS, EE_STEP, EE_TURN, FINGER_RANGE, JOINT_STEP, YAW_LIMIT};
use crate::instruct::words::{PHRASINGS, TYPED};
use crate::instruct::{INSTRUCTION_TOKENS, Instruction, LIFT, Phrasing, SIDE_LINE};
use crate::panda::TOUCH;
use crate::panda::{CUBE_HALF, GRIP_FRICTION, TABLE_FRICTION, TABLE_HALF};
use crate::reward::{PICK_STAGES, SQUEEZE, STACK_STAGES};
use crate::task::{
    CUBE_SYMMETRIES, HAND_DOWN, PICK_RADIUS, PUSH_RADIUS, REACH_RADIUS, STACK_OFFSET, STILL,
    WORKSPACE, observed_tokens,
};
use proprio_core::Info;
use proprio_gpu::GpuModel;
use std::mem::offset_of;

/// Rows of instruction token ids the shader looks up: phrasing × template × cube × side or other cube.
const TOKEN_TABLE: usize = PHRASINGS * 3 * CUBES * CUBES * INSTRUCTION_TOKENS;

/// Every instruction's token ids over `cubes` cubes in every phrasing at row
/// `((phrasing · 3 + template − 1) · CUBES + cube) · CUBES + arg` (the
/// encoding's fields; zeros elsewhere, and for a typed text only its own instruction's row).
fn token_table(settings: &Settings) -> Vec<f32> {
    let mut table = vec![0.0; TOKEN_TABLE];
    let typed = settings.typed.map(|t| t.instruction);
    for instruction in Instruction::all(settings.cubes) {
        let [t, cube, arg, _] = instruction.encode().map(|v| v as usize);
        for phrasing in 0..PHRASINGS as Phrasing {
            if phrasing == TYPED && typed != Some(instruction) {
                continue;
            }
            let row = ((usize::from(phrasing) * 3 + t - 1) * CUBES + cube) * CUBES + arg;
            table[row * INSTRUCTION_TOKENS..(row + 1) * INSTRUCTION_TOKENS]
                .copy_from_slice(&observed_tokens(settings, instruction, phrasing));
        }
    }
    table
}

/// The arm as floats (per-joint blocks, then the shapes), with the offset of each block.
fn arm_floats(arm: &Arm) -> (Vec<f32>, Vec<(&'static str, usize)>) {
    let mut v: Vec<f32> = Vec::new();
    let mut offsets = Vec::new();
    let mut block = |name: &'static str, v: &mut Vec<f32>, f: &dyn Fn(usize) -> Vec<f32>| {
        offsets.push((name, v.len()));
        for j in 0..DOF {
            v.extend(f(j));
        }
    };
    block("A_PARENT", &mut v, &|j| {
        vec![arm.parent[j].map_or(-1.0, |p| p as f32)]
    });
    block("A_ORIGIN_ROT", &mut v, &|j| {
        arm.origin[j].0.to_array().to_vec()
    });
    block("A_ORIGIN_POS", &mut v, &|j| {
        arm.origin[j].1.to_array().to_vec()
    });
    block("A_AXIS", &mut v, &|j| arm.axis[j].to_array().to_vec());
    block("A_REVOLUTE", &mut v, &|j| {
        vec![f32::from(u8::from(arm.revolute[j]))]
    });
    block("A_MASS", &mut v, &|j| vec![arm.mass[j]]);
    block("A_COM", &mut v, &|j| arm.com[j].to_array().to_vec());
    block("A_INERTIA", &mut v, &|j| {
        arm.inertia[j].to_cols_array().to_vec()
    });
    block("A_LOW", &mut v, &|j| vec![arm.limits[j].0]);
    block("A_HIGH", &mut v, &|j| vec![arm.limits[j].1]);
    block("A_EFFORT", &mut v, &|j| vec![arm.effort[j]]);
    block("A_SPEED", &mut v, &|j| vec![arm.speed[j]]);
    block("A_KP", &mut v, &|j| vec![arm.gains[j].0]);
    block("A_KD", &mut v, &|j| vec![arm.gains[j].1]);
    block("A_ANCESTOR", &mut v, &|b| {
        (0..DOF)
            .map(|j| f32::from(u8::from(arm.ancestor[b][j])))
            .collect()
    });
    offsets.push(("A_BOX", v.len()));
    for b in &arm.boxes {
        v.push(b.body as f32);
        v.extend(b.centre.to_array());
        v.extend(b.rotation.to_array());
        v.extend(b.half.to_array());
    }
    offsets.push(("A_SPHERE", v.len()));
    for s in &arm.spheres {
        v.push(s.body as f32);
        v.extend(s.centre.to_array());
        v.push(s.radius);
    }
    offsets.push(("A_SPHERE_COUNT", v.len()));
    v.push(arm.sphere_count as f32);
    offsets.push(("A_HAND", v.len()));
    v.push(arm.hand.0 as f32);
    v.extend(arm.hand.1.to_array());
    v.extend(arm.hand.2.to_array());
    offsets.push(("A_LEN", v.len()));
    (v, offsets)
}

/// The three shader files with their constants from the Rust values.
fn shader_source(arm: &Arm) -> String {
    let fields = proprio_gpu::fields!(
        Sim:
        q, qd, cubes, goal, held, ee_position, ee_rotation, targets, grasp, instruction,
        drive_impulse, contact_impulse,
    );
    let (floats, offsets) = arm_floats(arm);
    let mut counts: Vec<(&str, usize)> = vec![
        ("DOF", DOF),
        ("CUBES", CUBES),
        ("CUBE_FIELDS", CUBE_FIELDS),
        ("SLOTS", SLOTS),
        ("BOXES", BOXES),
        ("MAX_SPHERES", MAX_SPHERES),
        ("MAX_CONTACTS", MAX_CONTACTS),
        ("ITERATIONS", ITERATIONS),
        ("IK_ITERATIONS", IK_ITERATIONS),
        ("SOLVER_STEPS", SOLVER_STEPS as usize),
        ("SLOT_CUBE_CUBE", slot::cube_cube(0, 1, 0)),
        ("SLOT_BOX_CUBE", slot::box_cube(0, 0, 0)),
        ("SLOT_BOX_TABLE", slot::box_table(0, 0)),
        ("TASK_REACH", TaskKind::Reach as usize),
        ("TASK_PUSH", TaskKind::PushCube as usize),
        ("TASK_PICK", TaskKind::PickCube as usize),
        ("TASK_STACK", TaskKind::StackCube as usize),
        ("TASK_INSTRUCT", TaskKind::Instruct as usize),
        ("INSTRUCTION_TOKENS", INSTRUCTION_TOKENS),
        ("TOKEN_TABLE", TOKEN_TABLE),
        ("CONTROL_JOINT_POS", ControlMode::PdJointPos as usize),
        ("CONTROL_JOINT_DELTA", ControlMode::PdJointDeltaPos as usize),
        ("CONTROL_EE_POS", ControlMode::PdEeDeltaPos as usize),
        ("CONTROL_EE_POSE", ControlMode::PdEeDeltaPose as usize),
        ("CONTROL_EE_POS_YAW", ControlMode::PdEeDeltaPosYaw as usize),
    ];
    counts.extend(offsets);
    let (mass, inertia) = cube_mass();
    let scalars = [
        ("GRAVITY", GRAVITY),
        ("BAUMGARTE", BAUMGARTE),
        ("SLOP", SLOP),
        ("MARGIN", MARGIN),
        ("CUBE_HALF", CUBE_HALF),
        ("CUBE_MASS", mass),
        ("CUBE_INERTIA", inertia),
        ("TABLE_X", TABLE_HALF[0]),
        ("TABLE_Y", TABLE_HALF[1]),
        ("TABLE_FRICTION", TABLE_FRICTION),
        ("GRIP_FRICTION", GRIP_FRICTION),
        ("TOUCH", TOUCH),
        ("TCP_Z", crate::panda::TCP_OFFSET.z as f32),
        ("EE_STEP", EE_STEP),
        ("EE_TURN", EE_TURN),
        ("YAW_LIMIT", YAW_LIMIT),
        ("JOINT_STEP", JOINT_STEP),
        ("FINGER_CLOSED", FINGER_RANGE.0),
        ("FINGER_OPEN", FINGER_RANGE.1),
        ("IK_DAMPING", IK_DAMPING),
        ("REACH_RADIUS", REACH_RADIUS),
        ("PUSH_RADIUS", PUSH_RADIUS),
        ("PICK_RADIUS", PICK_RADIUS),
        ("STACK_OFFSET", STACK_OFFSET),
        ("SIDE_LINE", SIDE_LINE),
        ("LIFT", LIFT),
        ("STILL", STILL),
        ("PICK_STAGES", PICK_STAGES),
        ("STACK_STAGES", STACK_STAGES),
        ("SQUEEZE", SQUEEZE),
    ];
    let [x, y, z, w] = HAND_DOWN.to_array();
    let symmetries: Vec<String> = CUBE_SYMMETRIES
        .iter()
        .map(|[x, y, z, w]| format!("vec4<f32>({x:?}, {y:?}, {z:?}, {w:?})"))
        .collect();
    let vectors = [
        ("EE_LOW", EE_BOUNDS.0),
        ("EE_HIGH", EE_BOUNDS.1),
        ("WORK_LOW", WORKSPACE.0),
        ("WORK_HIGH", WORKSPACE.1),
        ("BASE", crate::panda::BASE),
    ]
    .map(|(name, [x, y, z])| format!("const {name} = vec3<f32>({x:?}, {y:?}, {z:?});\n"));
    let header = format!(
        "const ARM_LEN: u32 = {}u;\nconst HAND_DOWN = vec4<f32>({x:?}, {y:?}, {z:?}, {w:?});\nconst CUBE_SYMMETRIES = array<vec4<f32>, 24>({});\n{}",
        floats.len(),
        symmetries.join(", "),
        vectors.concat()
    );
    proprio_gpu::shader::<KernelModel>(
        &fields,
        &counts,
        &scalars,
        &[
            &header,
            include_str!("dynamics.wgsl"),
            include_str!("collide.wgsl"),
            include_str!("solver.wgsl"),
            include_str!("task.wgsl"),
        ],
    )
}

impl GpuModel for KernelModel {
    const INFO: usize = 8;
    const NAME: &'static str = "manipulation";
    /// Everything but the contact impulses, which the shader reads and writes in place.
    const HOT: usize = offset_of!(Sim, contact_impulse) / 4;
    /// The contact rows of one step (81 floats each, `solver.wgsl`).
    const SCRATCH: usize = MAX_CONTACTS * 81;

    fn shader(&self) -> String {
        shader_source(self.arm())
    }

    fn params(&self) -> Vec<u8> {
        let s = self.settings();
        let hold = |task| crate::reward::task_hold_steps(task, s.control_hz);
        // num_envs and obs_dim first: the kernel fills them.
        let header = [
            0,
            0,
            s.substeps,
            s.task as u32,
            s.control as u32,
            s.cubes as u32,
            u32::from(s.goal_in_state),
            hold(s.task),
        ];
        let mut bytes: Vec<u8> = bytemuck::cast_slice(&header).to_vec();
        let h = s.dt / SOLVER_STEPS as f32;
        let instruct = s.task == TaskKind::Instruct;
        bytes.extend(bytemuck::cast_slice(&[
            h.to_bits(),
            u32::from(s.cube_symmetry),
            hold(TaskKind::PickCube),
            hold(TaskKind::StackCube),
            u32::from(!s.dense_reward),
            0,
            0,
            0,
        ]));
        bytes.extend(bytemuck::cast_slice(&arm_floats(self.arm()).0));
        let tokens = if instruct {
            token_table(s)
        } else {
            vec![0.0; TOKEN_TABLE]
        };
        bytes.extend(bytemuck::cast_slice(&tokens));
        bytes
    }

    /// `values`: distance, grasped (−1: not reported), the instruction's
    /// encoding (3) and the cube count, success, blow-up (`task.wgsl`);
    /// the keys and their order as `task::write_info`.
    fn write_info(info: &mut Info, values: &[f32], stepped: bool) {
        info.clear();
        info.set("distance", f64::from(values[0]));
        if values[1] >= 0.0 {
            info.set("grasped", f64::from(values[1]));
        }
        let cubes = values[5] as usize;
        let instruction = Instruction::decode([values[2], values[3], values[4], 0.0], cubes);
        if let Some(instruction) = instruction {
            crate::task::write_instruction(info, instruction, cubes);
        }
        if stepped {
            info.set("success", f64::from(values[6]));
            info.set("blow_up", f64::from(values[7]));
            if let Some(instruction) = instruction {
                info.set(instruction.success_key(), f64::from(values[6]));
            }
        }
    }
}
