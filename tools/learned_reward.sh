#!/usr/bin/env bash
# RL from a learned progress reward alone, the whole documented pipeline
# (docs/reward-models.md): demonstrations with images → an in-domain CLIP →
# a progress model → PPO on the model's reward (no task reward) → the CLIP
# and the model refitted with that policy's frames and failed episodes → PPO
# again, ROUNDS times.
#   [PROPRIO=bin] [ROUNDS=1] [DEMOS=60] [TOTAL_STEPS=n] [CAMERAS=views]
#   [CLIP_FRAMES=n] [CLIP_STEPS=n] [SHAPING=progress|increase] [OFFSET=x] [WEIGHT=x]
#   [START=scratch|clone] [INIT=run] [CLONE_DEMOS=n] [NOISE=x] [EPOCHS=n]
#   [GAMMA=x] [GAE_LAMBDA=x] [METHOD=progress|vlm-rm|roboclip|preference] [PIPELINE=dir]
#   tools/learned_reward.sh TASK SEED OUT
# TASK is reach, push, pick, stack or instruct. The last round's run lands at OUT
# (`proprio eval --checkpoint OUT` measures the task's true success); the
# demonstrations, models and earlier rounds stay in OUT.pipeline/. A step
# whose output is there is not redone, so a cut-off pipeline resumes.
# instruct, 300k steps (the binary reward gained nothing from 1M): the
# reward model learns from the training instructions' demonstrations only
# (no mismatched-instruction negatives, a fifth of each batch scrambled),
# reading each instruction through its success caption and each view's
# similarity to it (--goals --similarity: the best reading of held-out
# instructions measured), on a CLIP fitted on 49,152 frames of every
# instruction's scenes (split "all": scenes captioned by their state, never
# an instruction's words; the pushes' success captions are rare), and PPO fine-tunes
# a clone (INIT, else tools/instruct_pipeline.sh's clone of 100
# demonstrations per instruction, 30 epochs) on the held-out instructions,
# which neither the clone nor the reward model has seen. One round only: a
# refit would learn the held-out instructions' frames. Its reward is
# weighted 0.01 (WEIGHT sets another): the recipe's PPO has no reward
# normaliser and clips each update's value move to 0.2, so at −1 a step
# (returns down to −78) its critic never reached the values in 300k steps.
# START=clone (ReWiND's recipe: a policy pretrained on demonstrations, then
# RL on the learned reward) makes reach, push, pick and stack start from a
# clone of CLONE_DEMOS of the scripted expert's demonstrations read as state
# (with DART noise NOISE; EPOCHS passes; the state standardised in its
# weights; the recipe's layers), PPO's critic warmed up on it first, at
# γ 0.99 and GAE λ 0.95 (GAMMA and GAE_LAMBDA set others). The
# defaults: push the reward model's own 60 demonstrations, 100 epochs; pick
# and stack 200 with noise 0.05, 250 epochs (60 clean ones clone a pick that
# succeeds 1% of the time). INIT names any run of the task's env instead.
# METHOD runs one of the seeds' rewards in the progress model's place, on
# the same CLIP and from the same start (one round): VLM-RM (goal −
# baseline projection, α 0.5, −1 a step), RoboCLIP (the last frame against
# one scripted demonstration filmed through the first camera) or
# preferences (a Bradley–Terry reward learned online, the CLIP labelling 100
# pairs by the goal caption every 50,000 steps). On instruct, whose goal
# differs per episode, every method reads a goals table (each instruction's
# success caption, the held-out ones included: a prompt per task, nothing
# fitted to it): VLM-RM's goal with the baseline "the gripper is far from
# the cubes", RoboCLIP's demonstration as a text (its paper allows one), the
# CLIP labeller's goal per segment, r_ψ reading the caption beside each
# frame. PIPELINE
# names the folder of the demonstrations, CLIP and clone (default
# OUT.pipeline), so that the methods share one seed's.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: tools/learned_reward.sh TASK SEED OUT (TASK: reach, push, pick, stack or instruct)" >&2; exit 2; }
task=$1 seed=$2 out=$3
[[ $seed =~ ^[0-9]+$ ]] || { echo "SEED must be a whole number, got '$seed'" >&2; exit 2; }
rounds=${ROUNDS:-1} method=${METHOD:-progress}
[[ $method =~ ^(progress|vlm-rm|roboclip|preference)$ ]] ||
  { echo "METHOD must be progress, vlm-rm, roboclip or preference, got '$method'" >&2; exit 2; }
[ "$method" = progress ] || [ "$rounds" -eq 1 ] || { echo "METHOD=$method runs one round" >&2; exit 2; }
# What each step pays: the progress read minus 1 (ReWiND's per-step reward
# turned into a cost, like the tasks' own "−1 per step": the env's success
# termination then ends the cost), or its increase (a potential difference).
shaping=${SHAPING:-progress} offset=${OFFSET:--1}
[[ $shaping =~ ^(progress|increase)$ ]] || { echo "SHAPING must be progress or increase, got '$shaping'" >&2; exit 2; }
[[ $offset =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || { echo "OFFSET must be a number, got '$offset'" >&2; exit 2; }
weight=${WEIGHT:-1}
[ "$task" = instruct ] && weight=${WEIGHT:-0.01}
[[ $weight =~ ^[0-9]*\.?[0-9]+$ && ! $weight =~ ^0*\.?0*$ ]] || { echo "WEIGHT must be a positive number, got '$weight'" >&2; exit 2; }
demos=${DEMOS:-60}
start=${START:-scratch}
[[ $start =~ ^(scratch|clone)$ ]] || { echo "START must be scratch or clone, got '$start'" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be 1 or more, got '$rounds'" >&2; exit 2; }
# The env config is the one the task's PPO recipe (tuned.json) sets, so the
# demonstrations, the reward model and the policy see the same env. Reach
# reads the two cameras on the gripper, which show it touch the ball (the
# front view shows the ball as a few pixels), through a CLIP fitted longer.
# Reach trains 500k steps, not its recipe's 300k: on the learned reward a
# seed was still rising at 300k (98 / 99 / 87%; 100 / 100 / 100% at 500k).
views=front,hand frames=8192 clip_steps=600 budget='' fit=() rl_config='' clip_config=''
# The CLIP's captions (envs/manipulation/src/captions.rs): the task's success
# and, for VLM-RM's baseline, the start.
goal='' baseline="the gripper is far from the red cube"
clone_demos=$demos noise=0 epochs=100 hidden='[64,64]'
case $task in
  reach) env=manipulation/reach-v0 config='' instruction="touch the green ball with the gripper"
    goal="the gripper touches the green ball" baseline="the gripper is far from the green ball"
    views=hand,hand-side frames=12288 clip_steps=1000 budget=500000 ;;
  push) env=manipulation/push-cube-v0 config='' instruction="push the red cube onto the green target"
    goal="the red cube is on the green target" ;;
  pick) env=manipulation/pick-cube-v0 config='{"control":"pd_ee_delta_pos","control_hz":10}'
    instruction="pick up the cube and hold it at the goal" goal="the gripper holds the red cube at the green ball"
    clone_demos=200 noise=0.05 epochs=250 hidden='[128,128]' ;;
  stack) env=manipulation/stack-cube-v0 config='{"control":"pd_ee_delta_pos_yaw","control_hz":10}'
    instruction="stack the red cube on the blue cube" goal="the red cube rests on the blue cube"
    clone_demos=200 noise=0.05 epochs=250 hidden='[128,128]' ;;
  instruct) env=manipulation/instruct-v0 config='{"control":"pd_ee_delta_pos_yaw"}' instruction=''
    rl_config='{"control":"pd_ee_delta_pos_yaw","split":"held_out"}' frames=49152 clip_steps=1000
    clip_config='{"control":"pd_ee_delta_pos_yaw","split":"all"}'
    budget=300000 fit=(--mismatch 0 --scramble 0.2 --steps 4000 --similarity)
    [ "$rounds" -eq 1 ] || { echo "instruct runs one round (a refit would learn the held-out instructions' frames)" >&2; exit 2; }
    baseline="the gripper is far from the cubes" ;;
  *) echo "unknown TASK '$task': reach, push, pick, stack or instruct" >&2; exit 2 ;;
esac
clone_demos=${CLONE_DEMOS:-$clone_demos} noise=${NOISE:-$noise} epochs=${EPOCHS:-$epochs}
[[ $clone_demos =~ ^[1-9][0-9]*$ && $epochs =~ ^[1-9][0-9]*$ ]] ||
  { echo "CLONE_DEMOS and EPOCHS must be 1 or more, got '$clone_demos' and '$epochs'" >&2; exit 2; }
[[ $noise =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "NOISE must be a number, got '$noise'" >&2; exit 2; }
# PPO's discount and GAE λ, where they are not the task recipe's (tuned.json).
# From a clone they are γ 0.99 and λ 0.95: a reward paid every step needs a
# horizon as long as the task (50 steps); at the recipe's γ 0.8 (5 steps) a
# pose the model reads at once beats a push whose progress comes later
# (push from clones, seeds 4-6: 98 / 92 / 95% at 0.99; seeds 1-3: 7 / 97 /
# 30% at 0.8, docs/benchmarks.md).
declare -A ppo_default=()
{ [ "$start" = clone ] || [ -n "${INIT:-}" ]; } && [ "$task" != instruct ] && ppo_default=([GAMMA]=0.99 [GAE_LAMBDA]=0.95)
ppo_set=()
for knob in GAMMA GAE_LAMBDA; do
  value=${!knob:-${ppo_default[$knob]:-}}
  [ -z "$value" ] && continue
  [[ $value =~ ^(0(\.[0-9]+)?|1(\.0*)?)$ ]] || { echo "$knob must be a number in [0, 1], got '$value'" >&2; exit 2; }
  ppo_set+=(--set "${knob,,}=$value")
done
[ -e "$out" ] && { echo "$out already exists; choose a new directory" >&2; exit 1; }
if [ -z "${PROPRIO:-}" ]; then
  cargo build -q -p proprio-cli
  proprio=$(pwd)/target/debug/proprio
else
  proprio=$PROPRIO
fi
work=${PIPELINE:-$out.pipeline}
mkdir -p "$work"
cameras=${CAMERAS:-$views}
clip_frames=${CLIP_FRAMES:-$frames} clip_steps=${CLIP_STEPS:-$clip_steps}
steps=() config_args=()
[ -n "$config" ] && config_args=(--config "$config")
budget=${TOTAL_STEPS:-$budget}
[ -n "$budget" ] && steps=(--total-steps "$budget")

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

# instruct's goals table: each of its 21 instructions with its success caption
# (envs/manipulation/src/captions.rs).
goals() {
  echo '[goals]'
  local c o side
  for c in red green blue; do
    for side in front back left right; do echo "\"push the $c cube to the $side\" = \"the $c cube is at the $side\""; done
    echo "\"pick up the $c cube\" = \"the gripper holds the $c cube up\""
    for o in red green blue; do
      [ "$o" = "$c" ] || echo "\"put the $c cube on the $o cube\" = \"the $c cube rests on the $o cube\""
    done
  done
}
# instruct's progress model reads each instruction through its caption.
if [ "$task" = instruct ]; then
  goals >"$work/goals.toml"
  fit+=(--goals "$work/goals.toml")
fi
if [ "$method" = progress ]; then
  step "$work/train.demos" "$proprio" demos --env "$env" "${config_args[@]}" --obs rgb+state \
    --camera "$cameras" --per-instruction "$demos" --seed "$seed"
fi
clip_args=("${config_args[@]}")
[ -n "$clip_config" ] && clip_args=(--config "$clip_config")
step "$work/clip" "$proprio" reward-model fit-clip --env "$env" "${clip_args[@]}" \
  --camera "$cameras" --scripted 0.5 --frames "$clip_frames" --steps "$clip_steps" --seed "$seed"
# The RL env: the task's own, or for instruct the held-out instructions,
# from a clone of the training ones.
rl_args=("${config_args[@]}")
if [ "$task" = instruct ]; then
  init=${INIT:-$work/clone}
  if [ -z "${INIT:-}" ] && [ ! -e "$init" ]; then
    PROPRIO=$proprio STOP=clone DEMOS=100 EPOCHS=30 "$(dirname "$0")/instruct_pipeline.sh" "$seed" "$init"
  fi
  rl_args=(--config "$rl_config" --eval-config '{"split":"held_out"}' --init "$init")
elif [ -n "${INIT:-}" ] || [ "$start" = clone ]; then
  init=${INIT:-$work/clone}
  if [ -z "${INIT:-}" ]; then
    step "$work/clone.demos" "$proprio" demos --env "$env" "${config_args[@]}" --obs state \
      --per-instruction "$clone_demos" --noise "$noise" --seed "$seed"
    rows=$(grep -o '([0-9]* rows)' "$work/clone.demos.log" | tr -dc 0-9)
    step "$init" "$proprio" train --algo bc --env "$env" "${config_args[@]}" \
      --set "demos=$work/clone.demos" --set standardize_state=true --set "hidden=$hidden" \
      --total-steps $((epochs * rows)) --seed "$seed" --threads 1
  fi
  # The clone reads the state raw (standardised in its weights): PPO keeps
  # its reward normaliser but not the observation one.
  rl_args+=(--init "$init" --set normalize_obs=false --set standardize_state=true --set critic_warmup=10)
fi
policies=() clip=$work/clip
if [ "$method" != progress ]; then
  reward=$work/$method.toml
  case $method in
    vlm-rm) printf 'kind = "vlm-rm"\nmodel = "%s"\nbaseline = "%s"\nalpha = 0.5\ncamera = "%s"\noffset = -1\nweight = %s\n' \
      "$(realpath "$clip")" "$baseline" "$cameras" "$weight" >"$reward"
      if [ "$task" = instruct ]; then goals >>"$reward"; else printf 'goal = "%s"\n' "$goal" >>"$reward"; fi ;;
    roboclip) if [ "$task" = instruct ]; then
        printf 'kind = "roboclip"\nmodel = "%s"\npooling = "last"\ncamera = "%s"\nweight = %s\n' \
          "$(realpath "$clip")" "$cameras" "$weight" >"$reward"
        goals >>"$reward"
      else
      view=${cameras%%,*}
      step "$work/demo.gif" "$proprio" record --env "$env" "${config_args[@]}" --policy scripted --camera "$view" \
        --image-size 64 --no-overlay --seed "$seed"
      printf 'kind = "roboclip"\nmodel = "%s"\ndemo = "%s"\npooling = "last"\ncamera = "%s"\n' \
        "$(realpath "$clip")" "$(realpath "$work/demo.gif")" "$view" >"$reward"
      fi ;;
    # 100 pairs every 50,000 steps: each refit passes over every label so
    # far, and the default's 100 rounds of 5,000 steps grew too slow to run.
    preference) printf 'kind = "preference"\nmodel = "%s"\nlabeller = "clip"\ncamera = "%s"\nqueries = 100\nquery_every = 50000\nweight = %s\n' \
      "$(realpath "$clip")" "$cameras" "$weight" >"$reward"
      if [ "$task" = instruct ]; then goals >>"$reward"; else printf 'goal = "%s"\n' "$goal" >>"$reward"; fi ;;
  esac
  step "$out" "$proprio" train --env "$env" "${rl_args[@]}" --reward "$reward" \
    --seed "$seed" --threads 1 "${steps[@]}" "${ppo_set[@]}"
else
  for ((round = 0; round < rounds; round++)); do
    # A refit round refits the CLIP too, a quarter of its frames from the last
    # round's learner under their true captions: on push the head refitted
    # alone still read that learner's hand-at-the-target frames as progress.
    if ((round > 0)); then
      clip=$work/clip$round
      step "$clip" "$proprio" reward-model fit-clip --env "$env" "${config_args[@]}" \
        --camera "$cameras" --scripted 0.5 --checkpoint "${policies[-1]}" --policy-share 0.25 \
        --frames "$clip_frames" --steps "$clip_steps" --seed "$seed"
    fi
    model=$work/progress$round
    named=()
    [ -n "$instruction" ] && named=(--instruction "$instruction")
    step "$model" "$proprio" reward-model fit-progress --demos "$work/train.demos" --clip "$clip" \
      "${named[@]}" "${fit[@]}" --seed "$seed" "${policies[@]}"
    printf 'kind = "progress"\nmodel = "%s"\ncamera = "%s"\nshaping = "%s"\noffset = %s\nweight = %s\n' \
      "$(realpath "$model")" "$cameras" "$shaping" "$offset" "$weight" >"$work/reward$round.toml"
    run=$work/rl$round
    [ $((round + 1)) -eq "$rounds" ] && run=$out
    step "$run" "$proprio" train --env "$env" "${rl_args[@]}" --reward "$work/reward$round.toml" \
      --seed "$seed" --threads 1 "${steps[@]}" "${ppo_set[@]}"
    policies+=(--policy "$run")
  done
fi
"$proprio" eval --checkpoint "$out" --episodes 100 --seed 21 --json
