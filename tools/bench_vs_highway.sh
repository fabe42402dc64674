#!/usr/bin/env bash
# Side-by-side driving throughput, same machine, same sitting, random actions:
# Proprio's driving/highway-v0 and parking-v0 (NUM_ENVS envs on every core)
# vs EnvPool's C++ ports of highway-env (Highway-v0, Parking-v0, same envs and
# threads) and highway-env itself (highway-fast-v0, parking-v0: one env, one
# core). Env steps differ in length (Proprio's highway decides every 0.5 s,
# EnvPool's and highway-env's every 1 s), so simulated seconds per wall
# second are printed too, and the highway is also run with Proprio set to
# EnvPool's rates (1 decision per s, 24 other cars, the most it holds).
#
#   tools/bench_vs_highway.sh            # venv in /tmp/proprio-highway-venv
#   VENV=/path N=1024 tools/bench_vs_highway.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/proprio-highway-venv}
N=${N:-1024}
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet envpool==1.2.5 highway-env==1.12.1
fi
cargo build --quiet --locked
BIN=target/debug/proprio
cores=$(nproc)
json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["env_steps_per_s"], d.get("sim_seconds_per_s", 0))'; }
proprio() { # $1 = env, $2 = seconds per env step, $3 = config
    "$BIN" bench --env "$1" --num-envs "$N" --steps 300 --threads "$cores" --config "$3" --json |
        python3 -c "import json,sys; d=json.load(sys.stdin); print(d['env_steps_per_s'], d['env_steps_per_s'] * $2)"
}
peer() { "$VENV/bin/python" tools/highway_bench.py "$@" | json; }

read -r p_hw p_hw_s < <(proprio driving/highway-v0 0.5 '{}')
read -r p_hw1 p_hw1_s < <(proprio driving/highway-v0 1.0 '{"control_hz": 1, "physics_hz": 50, "traffic": 24, "max_episode_steps": 40}')
read -r p_pk p_pk_s < <(proprio driving/parking-v0 0.1 '{}')
read -r e_hw e_hw_s < <(peer envpool Highway-v0 "$N" "$cores" 30)
read -r e_hf e_hf_s < <(peer envpool HighwayFast-v0 "$N" "$cores" 30)
read -r e_pk e_pk_s < <(peer envpool Parking-v0 "$N" "$cores" 100)
read -r h_hw h_hw_s < <(peer highway-env highway-fast-v0 20)
read -r h_pk h_pk_s < <(peer highway-env parking-v0 20)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p') ($cores cores), $(date -u +%F), $N envs"
printf '%-44s %14s %14s\n' run "env steps/s" "sim s / s"
row() { printf '%-44s %14.0f %14.0f\n' "$1" "$2" "$3"; }
row "proprio driving/highway-v0 (0.5 s steps)" "$p_hw" "$p_hw_s"
row "proprio driving/highway-v0 at 1 s, 24 cars" "$p_hw1" "$p_hw1_s"
row "envpool Highway-v0 (1 s steps, 50 cars)" "$e_hw" "$e_hw_s"
row "envpool HighwayFast-v0 (1 s steps, 20 cars)" "$e_hf" "$e_hf_s"
row "highway-env highway-fast-v0 (1 env, 1 core)" "$h_hw" "$h_hw_s"
row "proprio driving/parking-v0 (0.1 s steps)" "$p_pk" "$p_pk_s"
row "envpool Parking-v0 (0.2 s steps)" "$e_pk" "$e_pk_s"
row "highway-env parking-v0 (1 env, 1 core)" "$h_pk" "$h_pk_s"
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
echo "highway, proprio / envpool: env steps $(ratio "$p_hw1" "$e_hw") (same 1 s steps), simulated time $(ratio "$p_hw_s" "$e_hw_s") (defaults); vs HighwayFast $(ratio "$p_hw1" "$e_hf")"
echo "parking, proprio / envpool: env steps $(ratio "$p_pk" "$e_pk"), simulated time $(ratio "$p_pk_s" "$e_pk_s")"
