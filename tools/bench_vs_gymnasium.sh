#!/usr/bin/env bash
# Proprio vs Gymnasium on CartPole-v1, measured side by side in one sitting.
# Installs gymnasium into a throwaway venv (not kept), builds proprio with the
# same profile as the tests, and prints both figures and their ratios.
#   tools/bench_vs_gymnasium.sh [NUM_ENVS] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
num_envs=${1:-4096}
threads=${2:-$(nproc)}
venv=$(mktemp -d /tmp/proprio-gym-XXXX)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q gymnasium
cargo build -q -p proprio-cli
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%d)"
gym=$("$venv/bin/python" tools/gymnasium_cartpole_bench.py "$num_envs")
ours=$(target/debug/proprio bench --env classic/cartpole-v1 --num-envs "$num_envs" --steps 2000 --threads "$threads" --json)
ours1=$(target/debug/proprio bench --env classic/cartpole-v1 --num-envs "$num_envs" --steps 2000 --threads 1 --json)
python3 - "$gym" "$ours" "$ours1" <<'PY'
import json, sys
gym, ours, ours1 = (json.loads(a) for a in sys.argv[1:])
single, vector = gym["single_env_steps_per_s"], gym["vector_env_steps_per_s"]
print(f"gymnasium {gym['gymnasium']} (numpy {gym['numpy']})")
print(f"  single-env python loop         {single:>14,.0f} env-steps/s")
print(f"  numpy vector env ({gym['vector_num_envs']} envs)   {vector:>14,.0f} env-steps/s (1 thread)")
for o in (ours1, ours):
    print(f"proprio bench, {o['num_envs']} envs, {o['threads']} thread(s): {o['env_steps_per_s']:>14,.0f} env-steps/s"
          f" = {o['env_steps_per_s'] / single:,.0f}x single-env gymnasium, {o['env_steps_per_s'] / vector:.1f}x vector gymnasium")
PY
