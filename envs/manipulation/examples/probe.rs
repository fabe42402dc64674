use glam::Vec3;
use proprio_manipulation::*;
use std::time::Instant;
fn main() {
    for hz in [100.0f32, 200.0, 250.0, 500.0] {
        let scene = Scene::new(2, 1.0 / hz).unwrap();
        let p = scene.parts();
        let mut q = [0.0; 9];
        q[..7].copy_from_slice(&READY);
        q[7] = 0.04; q[8] = 0.04;
        let start = scene.start(&q, &[(Vec3::new(0.0, 0.0, 0.02), 0.3), (Vec3::new(0.1, 0.1, 0.02), 0.0)]);
        let mut w = World::from_physics(start);
        let t = Instant::now();
        let n = (hz * 4.0) as usize;
        let mut q2 = q;
        for i in 0..n {
            if i == n / 4 { q2[0] = 0.5; q2[1] = -0.3; q2[3] = -2.0; w.set_targets(p, &q2); }
            w.step();
        }
        let el = t.elapsed().as_secs_f64();
        let (qq, _) = w.joints(p);
        let c = w.cube(p, 0);
        println!("{hz} Hz: {:.0} steps/s; q err {:?}; tcp {:?} cube {:?} v {:?} blew {}", n as f64 / el,
            qq.iter().zip(q2).map(|(a,b)| a-b).collect::<Vec<_>>(), w.tcp(p).0, c.position, c.linvel, w.blew_up());
    }
}
