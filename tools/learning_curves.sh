#!/usr/bin/env bash
# Trains the reference learning curves (5 seeds each) and draws them into docs/img/.
#   [PROPRIO=bin] tools/learning_curves.sh [cartpole-ppo|pendulum-ppo|pendulum-sac|lane-keep-ppo|racing-ppo|highway-ppo|all] [PARALLEL]
# Runs go to runs/curves/<task>/seed-N (refused if present: delete them to redo).
# PARALLEL runs at a time (default 1; 2 on a 2-core machine halves the wall time
# but each run then reports a lower SPS).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
parallel=${2:-1}
# PROPRIO=path runs a copy of the binary (so rebuilding meanwhile changes nothing).
proprio=${PROPRIO:-target/debug/proprio}
[ -n "${PROPRIO:-}" ] || cargo build -q -p proprio-cli
mkdir -p docs/img

sweep() { # name env algo steps extra-args...
  local name=$1 env=$2 algo=$3 steps=$4; shift 4
  local dirs=()
  for seed in 1 2 3 4 5; do
    local dir=runs/curves/$name/seed-$seed
    dirs+=("$dir")
    [ -e "$dir" ] && continue
    echo "$proprio train --env $env --algo $algo --seed $seed --total-steps $steps --threads 1 --out $dir $*"
    "$proprio" train --env "$env" --algo "$algo" --seed "$seed" --total-steps "$steps" --threads 1 --out "$dir" "$@" &
    while [ "$(jobs -r | wc -l)" -ge "$parallel" ]; do wait -n; done
  done
  wait
  "$proprio" plot "${dirs[@]}" --out "docs/img/$name.png" --force
  python3 - "$name" "${dirs[@]}" <<'PY'
import json, sys
name, dirs = sys.argv[1], sys.argv[2:]
for d in dirs:
    rows = [json.loads(l) for l in open(f"{d}/metrics.jsonl")]
    evals = [(r["global_step"], r["eval_return"]) for r in rows if "eval_return" in r]
    print(f"{name} {d}: final eval {evals[-1][1]:.1f} at {evals[-1][0]} steps, "
          f"wall {rows[-1]['time_s']:.1f} s, {rows[-1]['sps']:.0f} env-steps/s")
PY
}

case $what in
  cartpole-ppo|all) sweep cartpole-ppo classic/cartpole-v1 ppo 200000 ;;&
  pendulum-ppo|all) sweep pendulum-ppo classic/pendulum-v1 ppo 500000 ;;&
  pendulum-sac|all) sweep pendulum-sac classic/pendulum-v1 sac 25000 ;;&
  lane-keep-ppo|all) sweep lane-keep-ppo driving/lane-keep-v0 ppo 500000 ;;&
  racing-ppo|all) sweep racing-ppo driving/racing-v0 ppo 500000 ;;&
  highway-ppo|all) sweep highway-ppo driving/highway-v0 ppo 1000000 ;;
esac
