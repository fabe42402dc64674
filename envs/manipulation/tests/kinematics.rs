//! `assets/robots/panda.urdf` against Franka's published kinematics, and the IK step.

use glam::{DQuat, DVec3};
use proprio_manipulation::{Chain, JointKind};
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4};

/// Franka's modified (Craig) DH table, joints 1–7 then the flange: (a, d, α).
const DH: [(f64, f64, f64); 8] = [
    (0.0, 0.333, 0.0),
    (0.0, 0.0, -FRAC_PI_2),
    (0.0, 0.316, FRAC_PI_2),
    (0.0825, 0.0, FRAC_PI_2),
    (-0.0825, 0.384, -FRAC_PI_2),
    (0.0, 0.0, FRAC_PI_2),
    (0.088, 0.0, FRAC_PI_2),
    (0.0, 0.107, 0.0),
];

type M4 = [[f64; 4]; 4];

fn matmul(a: &M4, b: &M4) -> M4 {
    let mut c = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            c[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

/// Flange pose by the DH table: Π RotX(α) TransX(a) RotZ(θ) TransZ(d), then the hand's −45° about z.
fn dh_hand(q: &[f64; 7]) -> M4 {
    let mut t: M4 = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    for (i, (a, d, alpha)) in DH.iter().enumerate() {
        let theta = if i < 7 { q[i] } else { -FRAC_PI_4 };
        let (sa, ca) = alpha.sin_cos();
        let (st, ct) = theta.sin_cos();
        let link: M4 = [
            [ct, -st, 0.0, *a],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0.0, 0.0, 0.0, 1.0],
        ];
        t = matmul(&t, &link);
    }
    t
}

fn configurations() -> Vec<[f64; 7]> {
    vec![
        [0.0, 0.0, 0.0, -0.0698, 0.0, 0.0, 0.0],
        [
            0.0,
            -FRAC_PI_4,
            0.0,
            -3.0 * FRAC_PI_4,
            0.0,
            FRAC_PI_2,
            FRAC_PI_4,
        ],
        [0.5, 0.3, -0.8, -1.9, 1.1, 2.0, -2.2],
        [-2.5, 1.5, 2.0, -0.5, -2.7, 0.3, 2.8],
        [1.2, -1.6, -2.8, -3.0, 2.0, 3.5, 0.7],
    ]
}

#[test]
fn urdf_matches_the_published_dh_parameters_to_a_micrometre() {
    let chain = Chain::from_urdf(
        proprio_manipulation::PANDA_URDF,
        "panda_link0",
        "panda_hand",
        DVec3::ZERO,
    )
    .unwrap();
    assert_eq!(chain.dof(), 7);
    for q in configurations() {
        let urdf = chain.forward(&q);
        let dh = dh_hand(&q);
        for i in 0..3 {
            assert!(
                (urdf.translation[i] - dh[i][3]).abs() < 1e-6,
                "q = {q:?}: position {} vs DH {:?}",
                urdf.translation,
                [dh[0][3], dh[1][3], dh[2][3]]
            );
            for (j, row) in [dh[i][0], dh[i][1], dh[i][2]].iter().enumerate() {
                assert!(
                    (urdf.matrix3.col(j)[i] - row).abs() < 1e-9,
                    "q = {q:?}: rotation ({i},{j})"
                );
            }
        }
    }
}

#[test]
fn known_poses_and_limits() {
    let chain = Chain::panda().unwrap();
    // Straight up (joint 4 at its upper limit, nearly 0): flange at (0.088, 0, 0.926), TCP 0.1034 m further down the flange axis.
    let zero = chain.forward(&[0.0; 7]);
    assert!(
        (zero.translation - DVec3::new(0.088, 0.0, 0.926 - 0.1034)).length() < 1e-9,
        "{}",
        zero.translation
    );
    // The usual "ready" pose points the gripper straight down, 0.487 m above the base.
    let ready = chain.forward(&configurations()[1]);
    assert!(
        (ready.translation - DVec3::new(0.3069, 0.0, 0.4869)).length() < 1e-3,
        "{}",
        ready.translation
    );
    assert!((ready.matrix3.z_axis - DVec3::NEG_Z).length() < 1e-9);
    let limits: Vec<(f64, f64)> = chain.actuated().map(|j| j.limits).collect();
    assert_eq!(limits[3], (-3.0718, -0.0698));
    assert_eq!(limits[5], (-0.0175, 3.7525));
    let efforts: Vec<f64> = chain.actuated().map(|j| j.effort).collect();
    assert_eq!(efforts, [87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0]);
    assert!(chain.actuated().all(|j| j.kind == JointKind::Revolute));
}

#[test]
fn the_jacobian_is_the_derivative_of_forward_kinematics() {
    let chain = Chain::panda().unwrap();
    let q = configurations()[2];
    let mut jac = [[0.0; 6]; 7];
    let tool = chain.jacobian(&q, &mut jac);
    let h = 1e-6;
    for k in 0..7 {
        let mut qh = q;
        qh[k] += h;
        let moved = chain.forward(&qh);
        let linear = (moved.translation - tool.translation) / h;
        let turn = DQuat::from_mat3(&moved.matrix3) * DQuat::from_mat3(&tool.matrix3).inverse();
        let angular = turn.to_scaled_axis() / h;
        for i in 0..3 {
            assert!(
                (linear[i] - jac[k][i]).abs() < 1e-5,
                "joint {k}, linear {i}"
            );
            assert!(
                (angular[i] - jac[k][3 + i]).abs() < 1e-5,
                "joint {k}, angular {i}"
            );
        }
    }
}

#[test]
fn ik_reaches_points_and_poses_within_a_millimetre() {
    let chain = Chain::panda().unwrap();
    let ready = configurations()[1];
    let down = chain.forward(&ready).matrix3;
    let targets = [
        DVec3::new(0.5, 0.2, 0.2),
        DVec3::new(0.4, -0.3, 0.05),
        DVec3::new(0.6, 0.0, 0.4),
        DVec3::new(0.3, 0.35, 0.1),
    ];
    for target in targets {
        for orientation in [None, Some(DQuat::from_mat3(&down))] {
            let mut q = ready;
            let mut error = f64::INFINITY;
            for _ in 0..200 {
                error = chain.ik_step(&mut q, target, orientation, 0.05);
            }
            let reached = chain.forward(&q);
            let miss = (reached.translation - target).length();
            assert!(
                miss < 1e-3,
                "{target} ({orientation:?}): {miss} m away, last error {error}"
            );
            if orientation.is_some() {
                assert!(
                    (reached.matrix3.z_axis - DVec3::NEG_Z).length() < 1e-2,
                    "gripper not pointing down"
                );
            }
            for (qk, joint) in q.iter().zip(chain.actuated()) {
                assert!(
                    (joint.limits.0..=joint.limits.1).contains(qk),
                    "{} outside its limits",
                    joint.name
                );
            }
        }
    }
}

#[test]
fn the_kernels_f32_kinematics_agree_with_the_reference_chain() {
    // The kernel physics carries its own f32 articulated body; the rapier
    // reference keeps this f64 chain, so each checks the other.
    let chain = Chain::panda().unwrap();
    let arm = proprio_manipulation::kernel::Arm::panda().unwrap();
    let base = DVec3::from(proprio_manipulation::BASE.map(f64::from));
    for q in configurations() {
        let mut joints = [0.0f32; 9];
        for (j, v) in joints.iter_mut().zip(q) {
            *j = v as f32;
        }
        let (tcp, hand) = arm.tcp(&arm.kinematics(&joints));
        let reference = chain.forward(&q);
        let off = (tcp.as_dvec3() - base - reference.translation).length();
        assert!(off < 2e-6, "q = {q:?}: TCPs {off} m apart");
        let relative = hand.as_dquat() * DQuat::from_mat3(&reference.matrix3).inverse();
        let turn = 2.0 * relative.xyz().length().atan2(relative.w.abs());
        assert!(turn < 1e-5, "q = {q:?}: orientations {turn} rad apart");
    }
}
