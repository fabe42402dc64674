//! The Panda and the cubes in rapier3d behave believably: the arm holds and
//! tracks poses where the URDF kinematics put it, the IK controller reaches
//! commanded points, cubes rest without drifting and can be squeezed without
//! sinking into the fingers.

use glam::Vec3;
use proprio_manipulation::{
    ArmController, CUBE_HALF, Chain, ControlMode, READY, Template, World, task::WORKSPACE,
};

/// 60 Hz physics, as the envs use by default.
const DT: f32 = 1.0 / 60.0;

fn rest() -> [f32; 9] {
    let mut q = [0.04; 9];
    q[..7].copy_from_slice(&READY);
    q
}

fn run(world: &mut World, seconds: f32) {
    for _ in 0..(seconds / DT).round() as usize {
        world.step();
    }
}

/// Each of the first `targets.len()` joints within `tol` of its target.
fn assert_joints_near(q: &[f32], targets: &[f32], tol: f32) {
    for (k, (q, target)) in q.iter().zip(targets).enumerate() {
        assert!((q - target).abs() < tol, "joint {k}: {q} vs {target}");
    }
}

#[test]
fn the_arm_holds_its_rest_pose_and_the_hand_is_where_the_kinematics_put_it() {
    let scene = Template::new(0, DT).unwrap();
    let parts = scene.parts();
    let chain = Chain::panda().unwrap();
    let mut world = World::from_physics(scene.start(&rest(), &[]));
    run(&mut world, 2.0);
    let (q, qd) = world.physics().joints(parts);
    assert_joints_near(&q, &READY, 2e-3);
    for (k, v) in qd.iter().enumerate().take(7) {
        assert!(v.abs() < 1e-3, "joint {k} still moves at {v} rad/s");
    }
    for targets in [
        [0.6, -0.2, 0.3, -1.8, 0.4, 1.9, -0.5, 0.0, 0.0],
        [-0.9, 0.4, -0.3, -2.2, -0.4, 2.4, 1.2, 0.03, 0.03],
    ] {
        world.physics_mut().set_targets(parts, &targets);
        run(&mut world, 1.5);
        let (q, _) = world.physics().joints(parts);
        assert_joints_near(&q, &targets, 5e-3);
        let q64: Vec<f64> = q[..7].iter().map(|v| f64::from(*v)).collect();
        let predicted =
            chain.forward(&q64).translation.as_vec3() + Vec3::from(proprio_manipulation::BASE);
        let (tcp, _) = world.physics().tcp(parts);
        let miss = (tcp - predicted).length();
        assert!(
            miss < 1e-3,
            "simulated TCP {tcp} vs kinematics {predicted}: {miss} m"
        );
    }
}

/// Drives `pd_ee_delta_pos` towards `goal` as a policy would: each step asks for the remaining error.
fn servo(
    world: &mut World,
    scene: &Template,
    controller: &ArmController,
    goal: Vec3,
    gripper: f32,
    steps: usize,
) -> Vec3 {
    let parts = scene.parts();
    let (q, _) = world.physics().joints(parts);
    let tcp = world.physics().tcp(parts);
    let mut state = controller.start(&q, tcp);
    for _ in 0..steps {
        let (q, _) = world.physics().joints(parts);
        let (tcp, _) = world.physics().tcp(parts);
        let step = ((goal - tcp) / proprio_manipulation::EE_STEP)
            .clamp(Vec3::splat(-1.0), Vec3::splat(1.0));
        let targets = controller.apply(
            ControlMode::PdEeDeltaPos,
            &[step.x, step.y, step.z, gripper],
            &q,
            tcp,
            3.0 / 60.0,
            &mut state,
        );
        world.physics_mut().set_targets(parts, &targets);
        for _ in 0..3 {
            world.step();
        }
    }
    world.physics().tcp(parts).0
}

#[test]
fn the_ik_controller_brings_the_hand_within_5_mm_of_a_commanded_point() {
    let scene = Template::new(0, DT).unwrap();
    let controller = ArmController::panda().unwrap();
    let mut world = World::from_physics(scene.start(&rest(), &[]));
    let (_, start_rotation) = world.physics().tcp(scene.parts());
    for goal in [
        Vec3::new(0.0, 0.0, 0.2),
        Vec3::new(0.1, -0.2, 0.05),
        Vec3::new(-0.25, 0.25, 0.4),
        Vec3::new(0.05, 0.15, 0.1),
    ] {
        let reached = servo(&mut world, &scene, &controller, goal, 1.0, 40);
        let miss = (reached - goal).length();
        assert!(miss < 5e-3, "asked for {goal}, reached {reached}: {miss} m");
        let (_, rotation) = world.physics().tcp(scene.parts());
        assert!(
            rotation.angle_between(start_rotation) < 0.02,
            "pd_ee_delta_pos keeps the hand's orientation"
        );
    }
}

#[test]
fn a_cube_dropped_on_the_table_comes_to_rest_and_stays() {
    let scene = Template::new(1, DT).unwrap();
    let parts = scene.parts();
    let start = Vec3::new(0.05, -0.05, 0.15);
    let mut world = World::from_physics(scene.start(&rest(), &[(start, 0.3)]));
    run(&mut world, 1.5);
    let settled = world.physics().cube(parts, 0);
    assert!(
        (settled.position.z - CUBE_HALF).abs() < 1e-3,
        "rests on the table: z = {}",
        settled.position.z
    );
    assert!(
        (settled.position - start).with_z(0.0).length() < 0.01,
        "lands below where it fell"
    );
    assert!(settled.linvel.length() < 1e-3 && settled.angvel.length() < 1e-2);
    run(&mut world, 5.0);
    let later = world.physics().cube(parts, 0);
    let drift = (later.position - settled.position).length();
    assert!(drift < 2e-4, "drifted {drift} m in 5 s");
    assert!(later.rotation.angle_between(settled.rotation) < 1e-3);
    let (low, high) = (Vec3::from(WORKSPACE.0), Vec3::from(WORKSPACE.1));
    assert!(later.position.cmpge(low).all() && later.position.cmple(high).all());
}

#[test]
fn closed_fingers_hold_a_cube_without_sinking_into_it() {
    let scene = Template::new(1, DT).unwrap();
    let parts = scene.parts();
    let controller = ArmController::panda().unwrap();
    let cube = Vec3::new(0.0, 0.0, CUBE_HALF);
    // The cube turned to face the fingers (the hand's yaw at rest is 45°).
    let (_, hand) = scene.start(&rest(), &[(cube, 0.0)]).tcp(parts);
    let yaw = (hand * Vec3::X).y.atan2((hand * Vec3::X).x);
    let mut world = World::from_physics(scene.start(&rest(), &[(cube, yaw)]));
    // Above the cube, down to it open, then closed: (height, gripper, steps).
    for (height, gripper, steps) in [(0.08, 1.0, 30), (0.005, 1.0, 30), (0.005, -1.0, 20)] {
        let target = cube + Vec3::new(0.0, 0.0, height);
        servo(&mut world, &scene, &controller, target, gripper, steps);
    }
    let (q, _) = world.physics().joints(parts);
    let gap = q[7] + q[8];
    assert!(world.physics().grasped(parts, 0));
    assert!(
        (gap - 2.0 * CUBE_HALF).abs() < 3e-3,
        "fingers {gap} m apart on a {} m cube",
        2.0 * CUBE_HALF
    );
    // Lift 15 cm: the cube comes along.
    let held = servo(
        &mut world,
        &scene,
        &controller,
        cube + Vec3::new(0.0, 0.0, 0.155),
        -1.0,
        40,
    );
    let lifted = world.physics().cube(parts, 0).position;
    assert!(world.physics().grasped(parts, 0), "still held");
    assert!(lifted.z > 0.14, "cube at {lifted}, hand at {held}");
}
