// What every chunked-state shader shares (prepended by proprio-gpu after the
// family's constants, which define LEN, CHUNK and OUT_LEN, and before its
// code, which defines `Params`): the bindings, the command flags, the env's
// state as a private array, and its loads and stores.

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

var<private> s: array<f32, LEN>;

fn sidx(env: u32, f: u32) -> u32 {
    return (env / CHUNK) * CHUNK * LEN + f * CHUNK + env % CHUNK;
}

fn load(env: u32) {
    for (var f = 0u; f < LEN; f++) {
        s[f] = state[sidx(env, f)];
    }
}

fn load_staged(env: u32) {
    for (var f = 0u; f < LEN; f++) {
        s[f] = staged[env * LEN + f];
    }
}

fn store(env: u32) {
    for (var f = 0u; f < LEN; f++) {
        state[sidx(env, f)] = s[f];
    }
}
