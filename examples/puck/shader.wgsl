// The puck's GPU twin: the same semi-implicit Euler steps, reward and
// success as `family.rs`, one invocation per env. proprio-gpu prepends the
// constants (LEN, CHUNK, F_*, MASS, ...), the `Params` block declared in
// `family.rs` and its prelude.

fn success() -> bool {
    return abs(s[F_X] - s[F_GOAL]) < RADIUS && abs(s[F_V]) < STILL;
}

fn control_step(env: u32) -> StepResult {
    let a = clamp(actions[env], -1.0, 1.0);
    s[F_PUSH] = a;
    for (var k = 0u; k < P.substeps; k++) {
        let force = PUSH * a - P.friction * s[F_V];
        s[F_V] = s[F_V] + P.dt * (force / MASS);
        s[F_X] = s[F_X] + P.dt * s[F_V];
    }
    let done = success();
    let reward = select(-abs(s[F_X] - s[F_GOAL]), 1.0, done);
    return StepResult(reward, done, done, 0u, false);
}

fn observe(base: u32) {
    outputs[base] = s[F_X];
    outputs[base + 1u] = s[F_V];
    outputs[base + 2u] = s[F_GOAL] - s[F_X];
}

fn write_info(at: u32) {
    outputs[at] = abs(s[F_X] - s[F_GOAL]);
}
