#!/usr/bin/env bash
# A/B of two checkouts of mjenv (e.g. main and a branch): the runtime benchmarks of this folder, run in
# checkout A, then in checkout B, ROUNDS times, in the same minutes (the machine drifts; compare medians).
#
#   bash benchmarks/ab_checkouts.sh A_DIR B_DIR [ROUNDS] [OUT]
#   QUICK=1 bash benchmarks/ab_checkouts.sh ...   # without the suite's VectorEnv rows (~2 min a round)
#
# Warm each checkout first (cd X && PYTHONPATH=. python -m mjenv warmup). Prints and appends to OUT (default
# ab_checkouts.log in the current folder) one labelled block per run.
set -u
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
ROUNDS=${3:-2}
OUT=$(realpath -m "${4:-ab_checkouts.log}")
run() {  # label, checkout, command...
    local label=$1 dir=$2
    shift 2
    echo "== $label $(basename "$dir") $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT"
    (cd "$dir" && env PYTHONPATH="$dir" MJENV_QUIET=1 "$@" 2>&1 | tail -n 30) | tee -a "$OUT"
}
for r in $(seq "$ROUNDS"); do
    for dir in "$A" "$B"; do
        run "round $r obs_dtype" "$dir" python -m benchmarks.obs_dtype --steps 200 --repeats 5
        if [ "${QUICK:-0}" != 1 ]; then
            run "round $r suite VectorEnv" "$dir" python -m benchmarks.suite --only VectorEnv \
                --out "$(dirname "$OUT")/ab_suite_$r" --no-progress
        fi
        run "round $r bench_fans" "$dir" python benchmarks/bench_fans.py
        run "round $r bench_env" "$dir" python benchmarks/bench_env.py --seconds 1
        run "round $r rule_agent" "$dir" python -m benchmarks.rule_agent --steps 100 --repeats 3 --strength-steps 0
    done
done
