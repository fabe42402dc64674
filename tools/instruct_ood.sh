#!/usr/bin/env bash
# The out-of-distribution table of an instruction-following run
# (docs/instructions.md, RL4VLA's splits): its success on the training
# combinations, the held-out combinations, and the vision, semantic and
# position splits, EPISODES episodes each (seed 21), as one markdown row
# per run: overall success, then push / pick / put.
#   [PROPRIO=bin] [EPISODES=200] tools/instruct_ood.sh RUN…
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: tools/instruct_ood.sh RUN…" >&2; exit 2; }
episodes=${EPISODES:-200}
[[ $episodes =~ ^[1-9][0-9]*$ ]] || { echo "EPISODES must be a positive whole number, got '$episodes'" >&2; exit 2; }
if [ -z "${PROPRIO:-}" ]; then
  cargo build -q -p proprio-cli
  proprio=$(pwd)/target/debug/proprio
else
  proprio=$PROPRIO
fi
splits=(train held_out vision semantic position)
printf '| run |'; printf ' %s |' "${splits[@]}"; printf '\n|---|'; printf -- '---|%.0s' "${splits[@]}"; printf '\n'
for run in "$@"; do
  printf '| %s |' "$run"
  for split in "${splits[@]}"; do
    out=$("$proprio" eval --checkpoint "$run" --episodes "$episodes" --seed 21 --config "{\"split\":\"$split\"}")
    overall=$(grep -o 'success [0-9.]*%' <<<"$out" | head -1 | cut -d' ' -f2)
    rate() { grep -o "success_$1: [0-9.]*%" <<<"$out" | cut -d' ' -f2; }
    printf ' %s (%s / %s / %s) |' "$overall" "$(rate push)" "$(rate pick)" "$(rate put)"
  done
  printf '\n'
done
