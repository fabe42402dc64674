use proprio_core::{VecEnv, VecOptions, Registry, AutoresetMode};
fn main() {
    let task = std::env::args().nth(1).unwrap();
    let verbose: usize = std::env::args().nth(2).map_or(usize::MAX, |s| s.parse().unwrap());
    let mut reg = Registry::new();
    proprio_manipulation::register(&mut reg);
    let id = format!("manipulation/{task}-v0");
    let mut env = reg.make_vec(&id, 1, &proprio_core::serde_json::from_str(&std::env::var("CFG").unwrap_or("null".into())).unwrap(), VecOptions { autoreset: AutoresetMode::Disabled, ..Default::default() }).unwrap();
    let spec = env.spec().clone();
    let mut ctl = reg.controller(&id, &spec).unwrap();
    let adim = spec.action_space.flat_dim();
    let mut fails = 0;
    for ep in 0..100u64 {
        env.reset(Some(ep), None).unwrap();
        let mut trace = vec![];
        loop {
            let obs = env.batch().obs.clone();
            let mut a = vec![0.0; adim];
            ctl.act(&obs, &mut a);
            env.step(&a).unwrap();
            let b = env.batch();
            let o = &b.obs;
            let hq = glam::Quat::from_xyzw(o[21],o[22],o[23],o[24]); let cq = glam::Quat::from_xyzw(o[29],o[30],o[31],o[32]); let hx = hq * glam::Vec3::X; let cx = cq * glam::Vec3::X;
            trace.push(format!("yaw h {:.1} c {:.1} | tcp {:.3},{:.3},{:.3} open {:.3} obj {:.3},{:.3},{:.3} g {} a {:?} d {:.3}", hx.y.atan2(hx.x).to_degrees(), cx.y.atan2(cx.x).to_degrees(), o[18],o[19],o[20],o[25],o[26],o[27],o[28], b.infos[0].get("grasped").unwrap_or(0.0), a.iter().map(|x| (x*100.0).round()/100.0).collect::<Vec<_>>(), b.infos[0].get("distance").unwrap()));
            if b.terminated[0] || b.truncated[0] {
                if b.infos[0].get("success") != Some(1.0) { fails += 1; println!("episode {ep} failed: {:?}", b.infos[0]); } if ep as usize == verbose { for t in &trace { println!("  {t}"); } }
                break;
            }
        }
    }
    println!("{fails} failures");
}
