#!/usr/bin/env bash
# Side-by-side drone physics throughput: Proprio's drones/hover-v0 vs crazyflow
# (JAX, CPU), same machine, same sitting, 4096 envs, 500 Hz physics, 100 Hz
# motor-speed commands drawn at random. One core (taskset -c 0) and all cores.
#
#   tools/bench_vs_crazyflow.sh            # venv in /tmp/proprio-crazyflow-venv
#   VENV=/path tools/bench_vs_crazyflow.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/proprio-crazyflow-venv}
N=${N:-4096}
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet crazyflow==0.4.0
fi
cargo build --quiet --locked
BIN=target/debug/proprio
cores=$(nproc)

proprio() { # $1 = taskset cpu list, $2 = threads
    taskset -c "$1" "$BIN" bench --env drones/hover-v0 --num-envs "$N" --steps 400 --threads "$2" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["physics_steps_per_s"])'
}
ROOT=$PWD
crazyflow() { # $1 = taskset cpu list, $2 = extra XLA flags (run elsewhere: MuJoCo writes a log file in the cwd)
    (cd "$(mktemp -d)" && XLA_FLAGS="$2" taskset -c "$1" "$VENV/bin/python" "$ROOT/tools/crazyflow_bench.py" "$N" 200 2>/dev/null) |
        tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["physics_steps_per_s"])'
}

one_p=$(proprio 0 1)
one_c=$(crazyflow 0 "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
all_p=$(proprio "0-$((cores - 1))" "$cores")
all_c=$(crazyflow "0-$((cores - 1))" "")
echo "machine: $(lscpu | sed -n 's/^Model name: *//p') ($cores cores), $(date -u +%F)"
printf '%-10s %18s %18s %8s\n' cores "proprio phys/s" "crazyflow phys/s" ratio
printf '%-10s %18.0f %18.0f %8.2f\n' 1 "$one_p" "$one_c" "$(python3 -c "print($one_p/$one_c)")"
printf '%-10s %18.0f %18.0f %8.2f\n' "$cores" "$all_p" "$all_c" "$(python3 -c "print($all_p/$all_c)")"
