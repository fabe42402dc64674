//! The Panda as a rapier3d multibody: PD motors hold and track poses, and the
//! simulated hand is where the URDF kinematics put it.

use proprio_manipulation::{ArmWorld, Chain, READY};

fn settle(arm: &mut ArmWorld, seconds: f32) {
    for _ in 0..(seconds * 500.0) as usize {
        arm.step();
    }
}

#[test]
fn the_arm_holds_its_rest_pose_against_gravity() {
    let mut arm = ArmWorld::new().unwrap();
    settle(&mut arm, 2.0);
    let q = arm.positions();
    for k in 0..7 {
        assert!(
            (q[k] - READY[k]).abs() < 0.01,
            "joint {k}: {} vs {}",
            q[k],
            READY[k]
        );
    }
    assert!(
        (q[7] - 0.04).abs() < 5e-4 && (q[8] - 0.04).abs() < 5e-4,
        "fingers {:?}",
        &q[7..]
    );
}

#[test]
fn the_simulated_hand_is_where_the_kinematics_put_it() {
    let chain = Chain::panda().unwrap();
    let mut arm = ArmWorld::new().unwrap();
    for targets in [
        [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.04, 0.04],
        [0.6, -0.2, 0.3, -1.8, 0.4, 1.9, -0.5, 0.0, 0.0],
    ] {
        arm.set_targets(&targets);
        settle(&mut arm, 1.5);
        let q = arm.positions();
        for k in 0..7 {
            assert!(
                (q[k] - targets[k]).abs() < 0.03,
                "joint {k}: {} vs {}",
                q[k],
                targets[k]
            );
        }
        let miss = (arm.tcp() - arm.tcp_by_kinematics(&chain)).length();
        assert!(
            miss < 1e-3,
            "simulated TCP {} vs kinematics {}: {miss} m",
            arm.tcp(),
            arm.tcp_by_kinematics(&chain)
        );
        assert!(arm.tcp().z > 0.0, "above the table");
    }
    let q = arm.positions();
    assert!(q[7] < 2e-3 && q[8] < 2e-3, "fingers closed: {:?}", &q[7..]);
}
