#!/usr/bin/env bash
# Env steps/s of a training run with pixel observations and a VLM-RM reward
# (the tiny fixture CLIP, 30 px): PPO on CartPole, one env thread.
#   tools/bench_frame_source.sh [PROPRIO_BINARY] [IMAGE_SIZE]
# IMAGE_SIZE 30 (the default) is the CLIP's own input size, so observations
# and reward share one view; 64 gives them two. Compare two builds by
# running it with each binary; docs/benchmarks.md has the figures.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$here/target/debug/proprio}"
size="${2:-30}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/vlm.toml" <<TOML
kind = "vlm-rm"
model = "$here/assets/clip-tiny"
goal = "a pole balanced upright"
baseline = "a pole"
alpha = 0.5
camera = "default"
TOML
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$work}"
"$bin" train --env classic/cartpole-v1 --obs rgb --image-size "$size" --reward "$work/vlm.toml" \
  --total-steps 16384 --set num_envs=16 --set num_steps=64 --set eval_episodes=2 --set eval_every=0 \
  --threads 1 --seed 1 --out "$work/run" 2>/dev/null >/dev/null
python3 - "$work/run/metrics.jsonl" <<'PY'
import json, sys
last = json.loads(open(sys.argv[1]).readlines()[-1])
print(f"env steps/s {last['sps']:.0f}  reward render {last['reward_render_ms']:.3f} ms/batch  "
      f"embed {last['reward_embed_ms']:.3f} ms/batch  wall {last['time_s']:.2f} s")
PY
