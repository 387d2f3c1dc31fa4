#!/usr/bin/env bash
# Issue 25's ablation: each change alone and all together, from the shipped baseline, at an equal training-time
# budget (BUDGET seconds of collection and updates per run, the runs' `seconds` counter), two runs at a time with
# 1 Numba + 1 torch thread each (so both see the same machine), then every result and the start itself on the
# same 1,000 walls of seed EVAL_SEED (1v3 duplicate against agents.rule:make, greedy), never used for selection.
# PAR=1 runs them one at a time (and evaluates with one thread), leaving the other core to another job.
#   BUDGET=900 EVAL_SEED=2027 bash lab/scripts/ablate_strength.sh [OUT]       (docs/training.md, "Ablations")
set -euo pipefail
BUDGET=${BUDGET:-900}
PAR=${PAR:-2}
EVAL_SEED=${EVAL_SEED:-2027}
OUT=${1:-runs/ablate}
START=${START:-agents/zoo/mlp-2026-12-01.safetensors}
# the planes runs start from a BC planes network (train.bc --arch planes --blocks 2 --channels 32 --with-features,
# docs/training.md "Networks"); not committed (0.4 MB, made in a few minutes): give its path
PLANES=${PLANES:-runs/nn_sizes/planes_c32_b2_f.safetensors}
mkdir -p "$OUT"
common=(--time-budget-s "$BUDGET" --updates 100000 --no-anneal-lr --threads 1 --torch-threads 1
        --eval-every 0 --save-every 10 --seed 25 --no-progress --value-warmup 0)
run() {  # name, extra settings...
  local name=$1; shift
  local init=(--init-from "$START")
  [[ " $* " == *" --init-from "* ]] && init=()
  python -m train.ppo --run-dir "$OUT/$name" "${init[@]}" "${common[@]}" "$@" > "$OUT/$name.log" 2>&1
}
declare -A RUNS=(
  [control]=""
  [oracle]="--critic oracle --value-warmup 10"
  [entropy]="--ent-coef 0.01 --lr 3e-3"
  [ratings]="--opponents rule pool --pool-ratings --pool-every 10"
  [planes]="--init-from $PLANES --value-warmup 20"
  [planes-lr-warmup]="--init-from $PLANES --value-warmup 10 --lr-warmup 50 --lr 1e-3"
  [all]="--critic oracle --value-warmup 10 --ent-coef 0.01 --lr 3e-3 --opponents rule pool --pool-ratings --pool-every 10"
)
ORDER=(${ORDER:-control oracle entropy ratings all})
for ((i = 0; i < ${#ORDER[@]}; i += PAR)); do
  for name in "${ORDER[@]:i:PAR}"; do
    # shellcheck disable=SC2086
    run "$name" ${RUNS[$name]} &
  done
  wait
done
evaluate() {  # name, checkpoint
  python -m mjenv eval --agent "$1=agents.nn:make" --agent-opt "$1.checkpoint=$2" --agent-opt "$1.greedy=true" \
    --agent rule=agents.rule:make --seating 1v3 --walls 1000 --seed "$EVAL_SEED" --threads "$PAR" \
    --json "$OUT/eval_$1.json" > "$OUT/eval_$1.md"
}
evaluate start "$START"
[[ " ${ORDER[*]} " == *" planes"* ]] && evaluate planes-start "$PLANES"
for name in "${ORDER[@]}"; do
  evaluate "$name" "$OUT/$name/policy.safetensors"
done
python - "$OUT" "${ORDER[@]}" <<'PY'
import csv, json, sys
out, names = sys.argv[1], sys.argv[2:]
print("| run | updates | decisions | training s | vs rule, points per hand [95% CI] |")
print("| --- | --- | --- | --- | --- |")
import os
starts = ["start"] + (["planes-start"] if os.path.exists(f"{out}/eval_planes-start.json") else [])
for n in [*starts, *names]:
    a = json.load(open(f"{out}/eval_{n}.json"))["agents"][n]["points_per_hand"]
    if n in starts:
        u = d = s = "-"
    else:
        rows = list(csv.DictReader(open(f"{out}/{n}/progress.csv")))
        u, d, s = rows[-1]["update"], f"{int(rows[-1]['decisions']):,}", f"{float(rows[-1]['seconds']):.0f}"
    print(f"| {n} | {u} | {d} | {s} | {a['mean']:+.2f} [{a['ci95'][0]:+.2f}, {a['ci95'][1]:+.2f}] |")
PY
