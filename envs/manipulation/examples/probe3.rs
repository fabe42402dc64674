use glam::Vec3;
use proprio_manipulation::*;
fn main() {
    let scene = Scene::new(1, 0.01).unwrap();
    let p = scene.parts();
    let ctl = Controller::panda().unwrap();
    let mut q = [0.0; 9];
    q[..7].copy_from_slice(&READY);
    q[7] = 0.04; q[8] = 0.04;
    // put the TCP at (0,0,0.02) pointing down with IK
    let phys = scene.start(&q, &[(Vec3::new(0.0, 0.0, 0.02), 0.0)]);
    let (tcp, rot) = phys.tcp(p);
    let mut st = ctl.start(&q, (tcp, rot));
    let mut w = World::from_physics(phys);
    let yaw = (rot * Vec3::X).y.atan2((rot * Vec3::X).x);
    println!("hand yaw {}", yaw.to_degrees());
    for i in 0..60 {
        let (qq, _) = w.physics().joints(p);
        let (tcp, _) = w.physics().tcp(p);
        let want = Vec3::new(0.0, 0.0, 0.02);
        let d = ((want - tcp) * 0.6 / 0.1).clamp(Vec3::splat(-1.0), Vec3::splat(1.0));
        let g = if i < 40 { 1.0 } else { -1.0 };
        let t = ctl.apply(ControlMode::PdEeDeltaPos, &[d.x, d.y, d.z, g], &qq, tcp, &mut st);
        w.physics_mut().set_targets(p, &t);
        for _ in 0..5 { w.step(); }
        let c = w.physics().cube(p, 0);
        if i % 4 == 3 { println!("{i} tcp {:.4} open {:.4} cube {:.4} rot {:?} grasped {} {:?}", tcp, qq[7] + qq[8], c.position, c.rotation.to_euler(glam::EulerRot::XYZ), w.physics().grasped(p, 0), w.physics().debug_contacts(p)); }
    }
}
