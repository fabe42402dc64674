#!/usr/bin/env bash
# Multi-turn learning (issue 38), every run single-threaded and as many at a
# time as the machine has cores, so a lent 16-core device runs them all at once:
#
#   twenty-questions: ArCHer, multi-turn GRPO and token-level PPO on
#     language/twenty-questions-v0 (16 objects, 6 turns, no turn cost),
#     seeds 1-3, each for STEPS_<ALGO> env steps or TIME_S seconds;
#   ufo: GRPO on 2-digit addition (its tuned recipe) trained with "try again"
#     episodes (5 turns) and with single-turn episodes in the same 5-turn
#     layout, then both checkpoints evaluated with 5 turns: success within
#     k turns and the share of repeated wrong answers;
#   recipes: the tuned 2 × 2 jigsaw and addition GRPO recipes, which must
#     still learn now that the sequence policy reads tokens causally, and the
#     3 × 3 jigsaw's recipe (8 minibatch steps per batch, entropy 0.05),
#     seeds 1 and 2.
#
#   tools/multi_turn.sh prepare                # here: .gpu/proprio.xz (and the loaders)
#   tools/multi_turn.sh twenty-questions|ufo|recipes|all   # there, or here
#
# On the device tool: carry [".gpu", ".gl"], command `bash tools/multi_turn.sh all`,
# timeout_s 580; TIME_S (default 480) bounds every run, so every run leaves a
# curve and a checkpoint in $OUT. STEPS_ARCHER, STEPS_GRPO, STEPS_PPO and STEPS_UFO
# override the budgets; SEEDS the seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/device_gl.sh
. tools/device_gl.sh
TIME_S=${TIME_S:-480}
SEEDS=${SEEDS:-"1 2 3"}
STEPS_ARCHER=${STEPS_ARCHER:-200000}
STEPS_GRPO=${STEPS_GRPO:-3000000}
STEPS_PPO=${STEPS_PPO:-3000000}
STEPS_UFO=${STEPS_UFO:-1000000}
QUESTIONS='language/twenty-questions-v0'
NO_COST='{"turn_cost":0}'
ARCHER="--set num_envs=64 --set batch_size=128 --set eval_every=10000 --set log_every=4096"
GROUP="--set groups=64 --set ent_coef=0.01 --set learning_rate=0.001 --set eval_every=100000"
PPO="--set groups=512 --set ent_coef=0.01 --set learning_rate=0.001 --set eval_every=100000"

# train NAME ARGS…: one run into $OUTDIR/NAME, stopped after TIME_S (its rows and the
# checkpoint of its last evaluation stay).
train() {
    local name=$1
    shift
    timeout -s INT "$TIME_S" "$BIN" train --threads 1 --out "$OUTDIR/$name" "$@" \
        > "$OUTDIR/$name.log" 2>&1 || true
}

twenty_questions() {
    for seed in $SEEDS; do
        # shellcheck disable=SC2086
        train "archer-$seed" --algo archer --env "$QUESTIONS" --config "$NO_COST" --seed "$seed" \
            --total-steps "$STEPS_ARCHER" $ARCHER &
        # shellcheck disable=SC2086
        train "grpo-$seed" --algo grpo --env "$QUESTIONS" --config "$NO_COST" --seed "$seed" \
            --total-steps "$STEPS_GRPO" $GROUP &
        # shellcheck disable=SC2086
        train "ppo-$seed" --algo ppo --env "$QUESTIONS" --config "$NO_COST" --seed "$seed" \
            --total-steps "$STEPS_PPO" $PPO &
    done
}

ufo() {
    train ufo-try-again --algo grpo --env language/arithmetic-v0 --config '{"max_turns":5}' \
        --seed 1 --total-steps "$STEPS_UFO" --set eval_every=100000 &
    train ufo-single-turn --algo grpo --env language/arithmetic-v0 \
        --config '{"max_turns":5,"try_again":false}' --seed 1 --total-steps "$STEPS_UFO" \
        --set eval_every=100000 &
}

recipes() {
    train jigsaw-2x2 --algo grpo --env language/jigsaw-v0 --seed 1 &
    train arithmetic --algo grpo --env language/arithmetic-v0 --seed 1 &
    for seed in 1 2; do
        train "jigsaw-3x3-$seed" --algo grpo --env language/jigsaw-v0 \
            --config '{"rows":3,"cols":3}' --seed "$seed" --total-steps 6000000 \
            --set num_minibatches=8 --set ent_coef=0.05 --set eval_every=100000 &
    done
}

# Both UFO checkpoints answering with 5 turns and "try again", on the same 1000 problems.
ufo_eval() {
    for run in ufo-try-again ufo-single-turn; do
        if [ -d "$OUTDIR/$run" ]; then
            "$BIN" eval --checkpoint "$OUTDIR/$run" --episodes 1000 --seed 777 \
                --config '{"max_turns":5,"try_again":true}' > "$OUTDIR/$run.eval" 2>&1 || true
            echo "== $run"
            cat "$OUTDIR/$run.eval"
        fi
    done
}

# The last evaluation of every run, one line each.
summary() {
    for log in "$OUTDIR"/*/metrics.jsonl; do
        python3 - "$log" << 'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
evals = [r for r in rows if "eval_success" in r]
last = evals[-1] if evals else {}
print(json.dumps({"run": sys.argv[1].split("/")[-2], "steps": rows[-1]["global_step"] if rows else 0,
                  "time_s": round(rows[-1]["time_s"], 1) if rows else 0,
                  "eval_success": last.get("eval_success"), "eval_turns": last.get("eval_turns")}))
PY
    done
}

case "${1:-}" in
prepare)
    device_proprio_prepare
    ;;
twenty-questions | ufo | recipes | all)
    device_proprio_load
    case "$1" in
    twenty-questions) twenty_questions ;;
    ufo) ufo ;;
    recipes) recipes ;;
    all) twenty_questions; ufo; recipes ;;
    esac
    wait
    case "$1" in ufo | all) ufo_eval ;; esac
    summary
    # A device call brings back few files: the rows, logs and evaluations in one archive.
    if [ -n "${OUT:-}" ]; then
        (cd "$OUTDIR" && tar czf /tmp/runs.tgz --exclude='*.bpk' --exclude='replay.json' ./*)
        find "$OUTDIR" -mindepth 1 -delete
        mv /tmp/runs.tgz "$OUTDIR/"
    fi
    ;;
*)
    echo "usage: $0 prepare|twenty-questions|ufo|recipes|all" >&2
    exit 2
    ;;
esac
