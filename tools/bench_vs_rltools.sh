#!/usr/bin/env bash
# Learning to Fly side by side: RLtools' own TD3 hover trainer (arplaboratory/
# learning-to-fly, its rl_tools submodule) against `proprio train --algo td3`
# shaped the same way, each on one core of this machine, one after the other.
#
#   L2F=/path/to/learning-to-fly bash tools/bench_vs_rltools.sh [SEED]
#
# GENERIC=1 also times RLtools' build without a BLAS (about 5 minutes here).
# L2F is a checkout of github.com/arplaboratory/learning-to-fly with
# external/rl_tools at the commit it pins (3a612e2). Needs g++ and
# libopenblas-dev (their Ubuntu build; without it RLtools falls back to its
# generic, unvectorised matrix products). Builds with their release flags
# (-O3 -ffast-math -march=native), no CMake needed.
set -euo pipefail
: "${L2F:?set L2F to a learning-to-fly checkout}"
SEED=${1:-1}
PROPRIO=${PROPRIO:-target/debug/proprio}
OUT=${OUT:-$(mktemp -d)}
FLAGS=(-std=c++17 -O3 -DNDEBUG -ffast-math -march=native -mtune=native -DRL_TOOLS_RELEASE
  -include cassert -I"$L2F/include" -I"$L2F/external/rl_tools/include" -I"$L2F/src")
BLAS=(-DRL_TOOLS_BACKEND_ENABLE_OPENBLAS -I/usr/include/x86_64-linux-gnu/openblas-pthread -lopenblas)
if [ -n "${GENERIC:-}" ]; then
  g++ "${FLAGS[@]}" -DLEARNING_TO_FLY_IN_SECONDS_BENCHMARK "$L2F/src/training.cpp" -o "$OUT/l2f_generic" 2>/dev/null
fi
g++ "${FLAGS[@]}" -DLEARNING_TO_FLY_IN_SECONDS_BENCHMARK "$L2F/src/training.cpp" "${BLAS[@]}" -o "$OUT/l2f_openblas" 2>/dev/null
g++ "${FLAGS[@]}" "$L2F/src/training.cpp" "${BLAS[@]}" -o "$OUT/l2f_headless" 2>/dev/null
cargo build --locked -p proprio-cli >/dev/null 2>&1
for bin in l2f_openblas ${GENERIC:+l2f_generic}; do
  echo "$bin: $(cd "$OUT" && OPENBLAS_NUM_THREADS=1 taskset -c 0 "./$bin" | grep 'Training took')"
done
# The headless trainer (validation, checkpoints) prints its training episodes' mean length.
(cd "$OUT" && OPENBLAS_NUM_THREADS=1 taskset -c 0 ./l2f_headless | grep -E '^Step: 300000 \(|Training took' | sed 's/^/l2f_headless: /')
# Ours: 64-64 tanh TD3, batch 256, one critic step per 10 env steps and one actor
# step per 20 (10 envs, policy_frequency 2), Learning to Fly's initial reward
# (the tuned recipe's curriculum and starts switched off).
start=$(date +%s.%N)
taskset -c 0 "$PROPRIO" train --env drones/hover-v0 --algo td3 --seed "$SEED" --threads 1 \
  --out "$OUT/proprio" --total-steps 300000 --set num_envs=10 --set 'hidden=[64,64]' \
  --set activation='"tanh"' --set learning_rate=0.001 --set learning_starts=15000 \
  --set buffer_size=300000 --set eval_every=300000 --set eval_episodes=32 \
  --set reward_curriculum=null --config '{"squared_reward": {}, "start": {}}' >/dev/null 2>&1
end=$(date +%s.%N)
echo "proprio td3: $(echo "$end - $start" | bc) s wall-clock, $(grep eval_success "$OUT/proprio/metrics.jsonl" | tail -1)"
# Ours, the tuned recipe (tuned.json: their reward curriculum, their starts at heading 0):
# the training clock at the first evaluation (32 episodes) at or above 95% hover success.
taskset -c 0 "$PROPRIO" train --env drones/hover-v0 --algo td3 --seed "$SEED" --threads 1 \
  --out "$OUT/tuned" >/dev/null 2>&1
python3 - "$OUT/tuned/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
first = next((r for r in rows if r.get("eval_success", 0) >= 0.95), None)
print("proprio td3 tuned: first >= 95%:",
      f"{first['global_step']} steps, {first['time_s']:.1f} s" if first else "never")
PY
