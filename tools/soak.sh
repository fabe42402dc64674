#!/usr/bin/env bash
# Soak test: steps one env of each family (CPU threads, and the drones' GPU
# kernel) with random actions and autoreset for 10^8 env steps or
# SOAK_SECONDS (default 3600) each, whichever comes first. `proprio soak`
# fails on any non-finite observation or reward and on resident-memory growth
# over 1% after the warm-up (SOAK_WARMUP seconds, default 120, at most a tenth
# of the steps: the allocator's pools settle in the first minutes of a
# contact-rich world). Prints one JSON line per run and a Markdown table.
#
#   tools/soak.sh                      # the full soak (up to 1 h per run)
#   SOAK_SECONDS=120 tools/soak.sh     # a shorter one
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SOAK_SECONDS:-3600}
steps=${SOAK_STEPS:-100000000}
warmup=${SOAK_WARMUP:-120}
out=${SOAK_OUT:-target/soak.jsonl}
cargo build --locked -q
: > "$out"
runs=(
  "classic/cartpole-v1 4096 cpu"
  "drones/hover-v0 4096 cpu"
  "drones/gates-v0 4096 gpu"
  "manipulation/pick-cube-v0 256 cpu"
  "language/arithmetic-v0 1024 cpu"
)
status=0
for run in "${runs[@]}"; do
  read -r env n backend <<<"$run"
  if ! target/debug/proprio soak --env "$env" --num-envs "$n" --backend "$backend" \
      --max-env-steps "$steps" --max-seconds "$seconds" --warmup-seconds "$warmup" >>"$out"; then
    status=1
  fi
  tail -n 1 "$out"
done
echo
echo "| env | backend | envs | env steps | seconds | episodes | RSS after warm-up | RSS peak | growth |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
python3 - "$out" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    mb = lambda b: f"{b / 1e6:.1f} MB"
    print(f"| {r['env']} | {r['backend']} | {r['num_envs']} | {r['env_steps']:,} | {r['seconds']:.0f} | "
          f"{r['episodes']:,} | {mb(r['rss_baseline_bytes'])} | {mb(r['rss_peak_bytes'])} | {r['rss_growth_percent']:.2f}% |")
PY
exit $status
