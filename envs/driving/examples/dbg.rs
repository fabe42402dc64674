use proprio_core::{Registry, VecOptions};
fn main() {
    let mut reg = Registry::new();
    proprio_driving::register(&mut reg);
    let id = std::env::args().nth(1).unwrap();
    let watch: usize = std::env::args()
        .nth(2)
        .map_or(usize::MAX, |s| s.parse().unwrap());
    let n = 20;
    let mut env = reg
        .make_vec(&id, n, &serde_json::Value::Null, VecOptions::default())
        .unwrap();
    let mut ctl = reg.controller(&id, env.spec()).unwrap();
    env.reset(Some(1), None).unwrap();
    let adim = env.spec().action_space.flat_dim();
    let d = env.spec().observation_space.flat_dim();
    let mut actions = vec![0.0; n * adim];
    let mut done = vec![false; n];
    for t in 0..1200 {
        ctl.act(&env.batch().obs, &mut actions);
        if watch < n {
            let o = &env.batch().obs[watch * d..watch * d + d];
            println!(
                "t {t} obs {:?} act {:?}",
                o.iter()
                    .map(|v| (v * 100.0).round() / 100.0)
                    .collect::<Vec<_>>(),
                &actions[watch * adim..watch * adim + adim]
            );
        }
        env.step(&actions).unwrap();
        for i in 0..n {
            let b = env.batch();
            if !done[i] && (b.terminated[i] || b.truncated[i]) {
                done[i] = true;
                let info = if b.has_final[i] {
                    &b.final_infos[i]
                } else {
                    &b.infos[i]
                };
                println!(
                    "env {i} t {t} crash {:?} success {:?} speed {:?} progress {:?}",
                    info.get("crash"),
                    info.get("success"),
                    info.get("speed"),
                    info.get("progress")
                );
            }
        }
        if done.iter().all(|d| *d) {
            break;
        }
    }
}
