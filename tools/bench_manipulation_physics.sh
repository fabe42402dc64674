#!/usr/bin/env bash
# Side-by-side throughput of the two manipulation physics, same machine, same
# sitting: `proprio bench --num-envs 4096` with physics "rapier" and "kernel"
# on every task, each pair run ROUNDS times in turn (A B A B …); prints the
# median env steps/s of each and their ratio. With BEFORE=<an older proprio
# binary>, the kernel physics of that binary against this tree's instead.
#
#   tools/bench_manipulation_physics.sh               # all cores, 4096 envs, 3 rounds
#   N=1024 ROUNDS=5 THREADS=1 tools/bench_manipulation_physics.sh
#   BEFORE=/tmp/old/proprio TASKS="pick-cube stack-cube" tools/bench_manipulation_physics.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-4096}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-$(nproc)}
TASKS=${TASKS:-"reach push-cube pick-cube stack-cube"}
cargo build --quiet --locked
BIN=target/debug/proprio

rate() { # $1 = task, $2 = physics, $3 = timed steps, $4 = binary
    "${4:-$BIN}" bench --env "manipulation/$1-v0" --num-envs "$N" --steps "$3" --warmup 5 \
        --threads "$THREADS" --config "{\"physics\": \"$2\"}" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["env_steps_per_s"])'
}
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "machine: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores, $THREADS threads), $(date -u '+%F %H:%M UTC'), $N envs, random actions"
if [[ -n "${BEFORE:-}" ]]; then
    printf '%-11s %14s %14s %7s\n' task "kernel before" "kernel now" ratio
else
    printf '%-11s %14s %14s %7s\n' task rapier kernel ratio
fi
for task in $TASKS; do
    r=() k=()
    for _ in $(seq "$ROUNDS"); do
        if [[ -n "${BEFORE:-}" ]]; then
            r+=("$(rate "$task" kernel 200 "$BEFORE")")
        else
            r+=("$(rate "$task" rapier 40)")
        fi
        k+=("$(rate "$task" kernel 200)")
    done
    mr=$(printf '%s\n' "${r[@]}" | median)
    mk=$(printf '%s\n' "${k[@]}" | median)
    printf '%-11s %14.0f %14.0f %6.2fx\n' "$task" "$mr" "$mk" "$(python3 -c "print($mk / $mr)")"
done
