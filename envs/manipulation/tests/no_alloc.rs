//! Everything a manipulation step does besides rapier's own `step` — the
//! controller and its IK, motor targets, reward, success, blow-up checks,
//! observation and info — allocates nothing. (rapier 0.36's multibody solver
//! allocates small workspaces inside every physics step; see docs/envs.md.)

use glam::Vec3;
use proprio_core::Info;
use proprio_manipulation::instruct::Instruction;
use proprio_manipulation::rapier::{self, Rapier};
use proprio_manipulation::task::{self, TaskState};
use proprio_manipulation::{
    ArmController, ControlMode, ManipConfig, READY, Settings, TaskKind, Template,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Allocations made by this thread: the test harness's own threads (which
    /// report a finished test while the next one measures) are not counted.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations made so far by the calling thread.
fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // A thread being torn down has no counter left; it is not a test's.
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_work_around_the_physics_step_allocates_nothing() {
    for (kind, control) in [
        (TaskKind::PickCube, ControlMode::PdEeDeltaPose),
        (TaskKind::StackCube, ControlMode::PdJointDeltaPos),
        (TaskKind::PushCube, ControlMode::PdEeDeltaPos),
        (TaskKind::Instruct, ControlMode::PdEeDeltaPosYaw),
    ] {
        let config = ManipConfig {
            control: Some(control),
            ..ManipConfig::default()
        };
        let settings = Settings::new(kind, &config).unwrap();
        let scene = Template::new(settings.cubes, settings.dt).unwrap();
        let parts = scene.parts();
        let controller = ArmController::panda().unwrap();
        let mut q = [0.04; 9];
        q[..7].copy_from_slice(&READY);
        let cubes = [
            (Vec3::new(0.0, 0.0, 0.02), 0.2),
            (Vec3::new(0.1, 0.1, 0.02), 0.0),
            (Vec3::new(-0.1, 0.1, 0.02), 0.5),
        ];
        let mut world =
            proprio_manipulation::World::from_physics(scene.start(&q, &cubes[..settings.cubes]));
        let tcp = world.physics().tcp(parts);
        let mut state = TaskState {
            goal: [0.0, 0.1, 0.2],
            held: 0,
            control: controller.start(&q, tcp),
            instruction: (kind == TaskKind::Instruct)
                .then_some(Instruction::PutOn { cube: 2, on: 0 }),
            phrasing: 0,
        };
        let mut obs = vec![0.0; task::obs_dim(&settings)];
        let mut info = Info::default();
        let action = vec![0.2; control.action_dim()];
        let mut around = 0;
        for step in 0..40 {
            let before = allocations();
            let (q, _) = world.physics().joints(parts);
            let (tcp, _) = world.physics().tcp(parts);
            let targets = controller.apply(
                control,
                &action,
                &q,
                tcp,
                settings.dt * settings.substeps as f32,
                &mut state.control,
            );
            world.physics_mut().set_targets(parts, &targets);
            let after_control = allocations();
            // The env's step: controller, physics substeps (rapier may allocate) and checks.
            let out = rapier::control_step(
                &settings,
                parts,
                &controller,
                &mut world,
                &mut state,
                &action,
            );
            let mid = allocations();
            task::observe(&settings, &Rapier(world.physics(), parts), &state, &mut obs);
            task::write_info(
                &mut info,
                &settings,
                &Rapier(world.physics(), parts),
                &state,
                Some(&out),
            );
            let end = allocations();
            if step >= 2 {
                around += (after_control - before) + (end - mid);
            }
        }
        assert_eq!(
            around, 0,
            "{kind:?} with {control:?}: allocations outside rapier's step"
        );
    }
}

#[test]
fn a_kernel_physics_step_allocates_nothing_at_all() {
    use proprio_core::ChunkedModel;
    use proprio_manipulation::Physics;
    use proprio_manipulation::kernel::KernelModel;
    for (kind, control) in [
        (TaskKind::StackCube, ControlMode::PdEeDeltaPose),
        (TaskKind::PushCube, ControlMode::PdJointPos),
    ] {
        let config = ManipConfig {
            physics: Physics::Kernel,
            control: Some(control),
            ..ManipConfig::default()
        };
        let model = KernelModel::new(Settings::new(kind, &config).unwrap()).unwrap();
        let mut sim = model
            .draw(&mut proprio_core::episode_rng(0, 0, 0), Default::default())
            .unwrap();
        let mut obs = vec![0.0; task::obs_dim(model.settings())];
        let mut info = Info::default();
        let action = vec![0.2; control.action_dim()];
        model.step(&mut sim, &action, &mut info);
        model.observe(&sim, &mut obs);
        let before = allocations();
        for _ in 0..40 {
            model.step(&mut sim, &action, &mut info);
            model.observe(&sim, &mut obs);
        }
        let during = allocations() - before;
        assert_eq!(during, 0, "{kind:?} with {control:?}: the kernel allocated");
    }
}
