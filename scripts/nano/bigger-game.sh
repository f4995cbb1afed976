#!/usr/bin/env bash
# Lesson 6 on a bigger game, on a GPU, in one command (docs/nano.md, "A bigger game for a GPU"):
# pretrain a bigger nano on a large compact-Wordle pool with the WebGPU backend, then measure the
# lesson on it: held-out wins before and after the warm-up, after GRPO, and for the SFT control
# that spends GRPO's time on more warm-up (scripts/nano/wordle-measure.ts, one process, both arms).
#
#   scripts/nano/bigger-game.sh OUT_DIR
#
# Writes OUT_DIR/model (the model folder, with pretraining.json), OUT_DIR/pretrain.log,
# OUT_DIR/measure.md (the table and the JSON line) and OUT_DIR/measure.log. The defaults fit about
# nine minutes on one fast GPU; every setting can be changed from the environment:
#   POOL (2315: every Wordle answer), LAYERS (6), HIDDEN (256), INTERMEDIATE (768), HEADS (4),
#   KV_HEADS (2), BATCH (64 rows per step), ROW (256 tokens per row), LR (2e-3), MAX_STEPS (4000),
#   PRETRAIN_MINUTES (5, corpus making included; the learning rate decays over the last quarter of
#   the time or of MAX_STEPS, whichever comes first), GRPO_MINUTES (1.25; the control gets as long),
#   BACKEND (webgpu), RUN (the command that runs a TypeScript script: "npx tsx"), BUNDLE (a folder
#   made by scripts/nano/bundle-bigger-game.sh: run its plain-Node files instead, no npm install needed).
# QUICK=1 runs the same pipeline at a toy size (a 2-layer model, a 600-word pool, a few steps) in
# about a minute, to check a machine before spending the real run on it.
set -euo pipefail
out=${1:?usage: scripts/nano/bigger-game.sh OUT_DIR}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
RUN=${RUN:-npx tsx}
BACKEND=${BACKEND:-webgpu}
pretrain=scripts/nano/pretrain.ts
measure=scripts/nano/wordle-measure.ts
if [ -n "${BUNDLE:-}" ]; then
  RUN=node
  pretrain=$BUNDLE/pretrain.js
  measure=$BUNDLE/wordle-measure.js
fi
if [ "${QUICK:-0}" = 1 ]; then
  pretrain_args=(--pool-size 600 --layers 2 --hidden 32 --intermediate 64 --heads 2 --kv-heads 1 --batch-size 8 --row-length 64 --word-lists 200 --games 200 --fits 200 --reverse 50 --max-steps 5 --log-every 1)
  measure_args=(--quick --eval-tasks 4 --sft-steps 2 --grpo-steps 2 --tasks-per-step 2 --group-size 2)
else
  pretrain_args=(--pool-size "${POOL:-2315}" --layers "${LAYERS:-6}" --hidden "${HIDDEN:-256}" --intermediate "${INTERMEDIATE:-768}" --heads "${HEADS:-4}" --kv-heads "${KV_HEADS:-2}"
    --batch-size "${BATCH:-64}" --row-length "${ROW:-256}" --lr "${LR:-2e-3}" --max-steps "${MAX_STEPS:-4000}" --minutes "${PRETRAIN_MINUTES:-5}" --decay-by-time --require-gpu --save-every 250 --log-every 25)
  measure_args=(--minutes "${GRPO_MINUTES:-1.25}")
fi
echo "== pretraining ($(date -u +%H:%M:%S)): ${pretrain_args[*]}"
$RUN "$pretrain" --backend "$BACKEND" "${pretrain_args[@]}" --out "$out/model" 2>&1 | tee "$out/pretrain.log"
echo "== lesson 6 on it ($(date -u +%H:%M:%S)): ${measure_args[*]}"
$RUN "$measure" --model "$out/model" --backend "$BACKEND" "${measure_args[@]}" 2> >(tee "$out/measure.log" >&2) | tee "$out/measure.md"
echo "== done ($(date -u +%H:%M:%S))"
