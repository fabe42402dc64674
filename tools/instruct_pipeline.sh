#!/usr/bin/env bash
# Instruction following on manipulation/instruct-v0, the whole documented
# pipeline (docs/instructions.md): the scripted expert's demonstrations
# (DART noise) → a clone → ROUNDS DAgger rounds (the last clone acts, the
# expert labels every state it visits, the dataset grows, a clone is trained
# on all of it again) → RL from the best clone on the binary reward: PPO with
# its critic warmed up (RL=grpo: the group learner; PPO measured ahead on
# every seed, docs/benchmarks.md, "Out of distribution …").
#   [PROPRIO=bin] [ROUNDS=0] [DEMOS=500] [DAGGER=50] [EPOCHS=50] [STOP=clone] [RL=ppo|grpo]
#   [OBS=state|rgb+state] [CAMERA=front]
#   tools/instruct_pipeline.sh SEED OUT
# The env config and networks are the tuned bc, grpo and ppo recipes'
# (tuned.json); OBS=rgb+state runs it from pixels (CAMERA's 64 px images,
# the actor blind to the cubes) on their rgb+state recipes. A pixel file of
# 500 per instruction is 6 GB (pixels kept as bytes); its clone trains
# 13-18 times slower than the state one (docs/benchmarks.md, "From pixels").
# No round is the default: from a clone of 300 demonstrations per
# instruction whose reader bound, a round measured worse on every seed
# tried (docs/benchmarks.md, "Every seed bound"); with ROUNDS=n the best
# of the n + 1 clones goes on.
# The final run lands at OUT (with STOP=clone, a copy of the best clone:
# the one with the highest success on the training instructions, seed 11);
# the demonstrations, clones, their scores and rounds stay in
# OUT.pipeline/. A step whose output is there is not redone, so a cut-off
# pipeline resumes.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tools/instruct_pipeline.sh SEED OUT" >&2; exit 2; }
seed=$1 out=$2
[[ $seed =~ ^[0-9]+$ ]] || { echo "SEED must be a whole number, got '$seed'" >&2; exit 2; }
rounds=${ROUNDS:-0} demos=${DEMOS:-500} dagger=${DAGGER:-50} epochs=${EPOCHS:-50} stop=${STOP:-} rl=${RL:-ppo}
obs=${OBS:-state} camera=${CAMERA:-front}
for n in "$rounds" "$demos" "$dagger" "$epochs"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "ROUNDS, DEMOS, DAGGER and EPOCHS are whole numbers, got '$n'" >&2; exit 2; }
done
[[ $stop =~ ^(|clone)$ ]] || { echo "STOP is empty or clone, got '$stop'" >&2; exit 2; }
[[ $rl =~ ^(ppo|grpo)$ ]] || { echo "RL is ppo or grpo, got '$rl'" >&2; exit 2; }
[[ $obs =~ ^(state|rgb\+state)$ ]] || { echo "OBS is state or rgb+state, got '$obs'" >&2; exit 2; }
# What the policy observes, for the steps that make a new one (a DAgger
# round and evaluation read it from the run).
view=(--obs "$obs")
if [ "$obs" = rgb+state ]; then view+=(--camera "$camera"); fi
[ -e "$out" ] && { echo "$out already exists; choose a new directory" >&2; exit 1; }
if [ -z "${PROPRIO:-}" ]; then
  cargo build -q -p proprio-cli
  proprio=$(pwd)/target/debug/proprio
else
  proprio=$PROPRIO
fi
env=manipulation/instruct-v0 held_out='{"split":"held_out"}'
work=$out.pipeline
mkdir -p "$work"

# step OUTPUT command…: runs the command with --out OUTPUT.partial (its
# output to OUTPUT.log), then renames it, so that an output present is a
# finished one.
step() {
  local target=$1; shift
  if [ -e "$target" ]; then echo "have $target"; return; fi
  rm -rf "$target.partial"
  echo "+ ${*@Q} --out ${target@Q}"
  "$@" --out "$target.partial" | tee "$target.log"
  mv "$target.partial" "$target"
}

# clone DEMOS OUT: behaviour cloning for EPOCHS passes over the file's rows.
clone() {
  local rows
  rows=$(grep -o '([0-9]* rows)' "$1.log" | tr -dc 0-9)
  step "$2" "$proprio" train --algo bc --env "$env" "${view[@]}" --set "demos=$1" \
    --total-steps $((epochs * rows)) --eval-config "$held_out" --seed "$seed" --threads 1
}

data=$work/demos0
step "$data" "$proprio" demos --env "$env" "${view[@]}" --per-instruction "$demos" --noise 0.05 --seed "$seed"
clone "$data" "$work/clone0"
for ((round = 1; round <= rounds; round++)); do
  step "$work/demos$round" "$proprio" demos --dagger "$work/clone$((round - 1))" --aggregate "$data" \
    --per-instruction "$dagger" --seed $((1000 * seed + round))
  data=$work/demos$round
  clone "$data" "$work/clone$round"
done
# DAgger's guarantee is for the best of its policies, not the last (a
# round can undo a clone that was already good): each clone is scored on
# the training instructions, on evaluation seed 11 (the reported figures
# use 21), and the best goes on.
best='' best_rate=-1
for ((round = 0; round <= rounds; round++)); do
  score=$work/clone$round.score
  if [ ! -e "$score" ]; then
    "$proprio" eval --checkpoint "$work/clone$round" --episodes 300 --seed 11 \
      --config '{"split":"train"}' >"$score.partial"
    mv "$score.partial" "$score"
  fi
  rate=$(grep -o 'success [0-9.]*%' "$score" | head -n 1 | tr -dc 0-9.)
  echo "clone$round: $rate% on the training instructions (evaluation seed 11)"
  if awk -v r="$rate" -v b="$best_rate" 'BEGIN { exit !(r > b) }'; then
    best=$work/clone$round best_rate=$rate
  fi
done
echo "the best clone: $best"
if [ "$stop" = clone ]; then
  rm -rf "$out.partial"
  cp -r "$best" "$out.partial"
  mv "$out.partial" "$out"
else
  step "$out" "$proprio" train --algo "$rl" --env "$env" "${view[@]}" --init "$best" \
    --eval-config "$held_out" --seed "$seed" --threads 1
fi
for split in train held_out; do
  "$proprio" eval --checkpoint "$out" --episodes 300 --seed 21 --config "{\"split\":\"$split\"}"
done
