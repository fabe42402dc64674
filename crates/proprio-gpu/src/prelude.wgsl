// What every chunked-state shader shares (prepended by proprio-gpu after the
// constants LEN, CHUNK, OUT_LEN and INFO, and before the family's code): the
// bindings, the command flags, the env's state as a private array, its loads
// and stores, and the entry point. A family with SCRATCH > 0 declares its
// per-env workspace at binding 6 (SCRATCH floats per env, chunked). The family defines `Params` (starting
// with `num_envs` and `obs_dim` among its fields), and
//   fn control_step(i: u32) -> StepResult   one control step of env i (state in `s`)
//   fn observe(base: u32)                    the observation at outputs[base..]
//   fn write_info(at: u32)                   its first INFO − 2 info floats at outputs[at..]
// (the last two info floats are the step's success and crash).

// Storage, not uniform: lavapipe inlines uniform values and recompiles per dispatch.
@group(0) @binding(0) var<storage, read> P: Params;
// Chunked struct-of-arrays state.
@group(0) @binding(1) var<storage, read_write> state: array<f32>;
// The start of each env's next episode, LEN floats per env.
@group(0) @binding(2) var<storage, read> staged: array<f32>;
@group(0) @binding(3) var<storage, read> actions: array<f32>;
@group(0) @binding(4) var<storage, read> commands: array<u32>;
// [per-env results N×OUT_LEN | obs N×D | final obs N×D].
@group(0) @binding(5) var<storage, read_write> outputs: array<f32>;

const STEP: u32 = 1u;
const RESET: u32 = 2u;
const LAST: u32 = 4u;
const SAME_STEP: u32 = 8u;

// The first HOT fields of the env's state, copied in and out; the rest stay
// in the state buffer (`cold`, `set_cold`): big, rarely touched blocks would
// make every private access an if-ladder on lavapipe.
var<private> s: array<f32, HOT>;
// The env this invocation steps.
var<private> env_id: u32;

fn sidx(env: u32, f: u32) -> u32 {
    return (env / CHUNK) * CHUNK * LEN + f * CHUNK + env % CHUNK;
}

fn cold(f: u32) -> f32 {
    return state[sidx(env_id, f)];
}

fn set_cold(f: u32, v: f32) {
    state[sidx(env_id, f)] = v;
}

fn load(env: u32) {
    for (var f = 0u; f < HOT; f++) {
        s[f] = state[sidx(env, f)];
    }
}

fn load_staged(env: u32) {
    for (var f = 0u; f < HOT; f++) {
        s[f] = staged[env * LEN + f];
    }
    for (var f = HOT; f < LEN; f++) {
        state[sidx(env, f)] = staged[env * LEN + f];
    }
}

fn store(env: u32) {
    for (var f = 0u; f < HOT; f++) {
        state[sidx(env, f)] = s[f];
    }
}

// The outcome of one control step.
struct StepResult {
    reward: f32,
    terminated: bool,
    success: bool,
    crash: u32,
    // The model cut the episode short (a physics failure); time limits come from the commands.
    truncated: bool,
}

// One invocation per env: a reset to the staged start, or a step with its
// same-step autoreset; then the results, the info and the observation.
@compute @workgroup_size(CHUNK)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= P.num_envs) {
        return;
    }
    let cmd = commands[i];
    if (cmd == 0u) {
        return;
    }
    env_id = i;
    let d = P.obs_dim;
    let out = i * OUT_LEN;
    let now = out + 4u;
    let last = now + INFO;
    for (var k = 0u; k < OUT_LEN; k++) {
        outputs[out + k] = 0.0;
    }
    if ((cmd & RESET) != 0u) {
        load_staged(i);
    } else {
        load(i);
        let res = control_step(i);
        let truncated = res.truncated || (cmd & LAST) != 0u;
        outputs[out] = res.reward;
        outputs[out + 1u] = select(0.0, 1.0, res.terminated);
        outputs[out + 2u] = select(0.0, 1.0, truncated);
        outputs[now + INFO - 2u] = select(0.0, 1.0, res.success);
        outputs[now + INFO - 1u] = f32(res.crash);
        if ((cmd & SAME_STEP) != 0u && (res.terminated || truncated)) {
            observe(P.num_envs * (OUT_LEN + d) + i * d);
            outputs[out + 3u] = 1.0;
            write_info(last);
            outputs[last + INFO - 2u] = outputs[now + INFO - 2u];
            outputs[last + INFO - 1u] = outputs[now + INFO - 1u];
            load_staged(i);
        }
    }
    write_info(now);
    observe(P.num_envs * OUT_LEN + i * d);
    store(i);
}
