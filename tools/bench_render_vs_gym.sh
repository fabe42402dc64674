#!/usr/bin/env bash
# Rendered frames per second per core, side by side on one machine: Proprio's
# batched renderer (256 envs, lavapipe without a GPU) against Gymnasium's own
# renderers (one env, `render()` as rgb_array): CartPole's pygame canvas
# (600x400, fixed) and MuJoCo Ant-v5's renderer (EGL; Mesa's llvmpipe without
# a GPU). Everything pinned to core 0 (`taskset -c 0`), so the figures are per core.
#
#   tools/bench_render_vs_gym.sh          # venv in /tmp/proprio-render-venv
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/proprio-render-venv}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "gymnasium[mujoco,classic-control]==1.4.0"
fi
cargo build --quiet --locked
BIN=target/debug/proprio

proprio() { # $1 = env, $2 = image size
    taskset -c 0 "$BIN" bench --env "$1" --num-envs 256 --obs rgb --image-size "$2" \
        --steps 20 --warmup 3 --threads 1 --json |
        python3 -c 'import json,sys; print(round(json.load(sys.stdin)["rendered_frames_per_s"]))'
}
gym() { # $@ = gym_render_bench.py arguments
    MUJOCO_GL=egl taskset -c 0 "$VENV/bin/python" tools/gym_render_bench.py "$@" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["frames_per_s"], 1))'
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), core 0 only, $(date -u '+%F %H:%M UTC')"
cartpole64=$(proprio classic/cartpole-v1 64)
cartpole512=$(proprio classic/cartpole-v1 512)
gym_cartpole=$(gym CartPole-v1 300)
pick64=$(proprio manipulation/pick-cube-v0 64)
pick128=$(proprio manipulation/pick-cube-v0 128)
ant64=$(gym Ant-v5 200 64 64)
ant128=$(gym Ant-v5 200 128 128)
ratio() { python3 -c "r = $1 / $2; print(f'{r:.2f}' if r < 10 else f'{r:.0f}')"; }
echo "Proprio classic/cartpole-v1 64x64:   $cartpole64 frames/s"
echo "Proprio classic/cartpole-v1 512x512: $cartpole512 frames/s"
echo "Gymnasium CartPole-v1 600x400:       $gym_cartpole frames/s"
echo "  ratio at 64x64 vs 600x400: $(ratio "$cartpole64" "$gym_cartpole")x; at 512x512 (a similar pixel count): $(ratio "$cartpole512" "$gym_cartpole")x"
echo "Proprio manipulation/pick-cube-v0 64x64:   $pick64 frames/s"
echo "Proprio manipulation/pick-cube-v0 128x128: $pick128 frames/s"
echo "Gymnasium MuJoCo Ant-v5 64x64:   $ant64 frames/s"
echo "Gymnasium MuJoCo Ant-v5 128x128: $ant128 frames/s"
echo "  ratio at 64x64: $(ratio "$pick64" "$ant64")x; at 128x128: $(ratio "$pick128" "$ant128")x"
