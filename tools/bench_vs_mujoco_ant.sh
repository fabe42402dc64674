#!/usr/bin/env bash
# Side-by-side throughput: Proprio's manipulation/pick-cube-v0 (rapier3d, one
# world per env) vs Gymnasium's MuJoCo Ant-v5, same machine, same sitting,
# random actions, NUM_ENVS envs in total. One core (taskset -c 0) and all
# cores; Gymnasium's all-core figure is one process per core, each stepping
# its share of the envs in a SyncVectorEnv, run at the same time and summed.
#
#   tools/bench_vs_mujoco_ant.sh           # venv in /tmp/proprio-mujoco-venv
#   VENV=/path N=256 tools/bench_vs_mujoco_ant.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/proprio-mujoco-venv}
N=${N:-256}
ENV=${ENV:-manipulation/pick-cube-v0}
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "gymnasium[mujoco]==1.4.0"
fi
cargo build --quiet --locked
BIN=target/debug/proprio
cores=$(nproc)

proprio() { # $1 = taskset cpu list, $2 = threads
    taskset -c "$1" "$BIN" bench --env "$ENV" --num-envs "$N" --steps 200 --threads "$2" --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["env_steps_per_s"], d["physics_steps_per_s"])'
}
ant() { # $1 = cpu, $2 = envs
    taskset -c "$1" "$VENV/bin/python" tools/mujoco_ant_bench.py "$2" 200 |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["env_steps_per_s"], d["physics_steps_per_s"])'
}

read -r one_p one_pp < <(proprio 0 1)
read -r one_a one_ap < <(ant 0 "$N")
read -r all_p all_pp < <(proprio "0-$((cores - 1))" "$cores")
share=$((N / cores))
tmp=$(mktemp -d)
for c in $(seq 0 $((cores - 1))); do ant "$c" "$share" > "$tmp/$c" & done
wait
read -r all_a all_ap < <(cat "$tmp"/* | awk '{e += $1; p += $2} END {print e, p}')
echo "machine: $(lscpu | sed -n 's/^Model name: *//p') ($cores cores), $(date -u +%F)"
printf '%-6s %16s %16s %16s %16s %8s\n' cores "proprio env/s" "proprio phys/s" "Ant env/s" "Ant phys/s" "ratio"
printf '%-6s %16.0f %16.0f %16.0f %16.0f %8.2f\n' 1 "$one_p" "$one_pp" "$one_a" "$one_ap" "$(python3 -c "print($one_p/$one_a)")"
printf '%-6s %16.0f %16.0f %16.0f %16.0f %8.2f\n' "$cores" "$all_p" "$all_pp" "$all_a" "$all_ap" "$(python3 -c "print($all_p/$all_a)")"
