#!/usr/bin/env bash
# Interleaved runtime A/B of two checkouts (e.g. main and a branch), each with its own warm in-tree cache:
# every benchmark runs in checkout A, then in checkout B, ROUNDS times, in the same minutes.
#
#   bash benchmarks/lab/ab_checkouts.sh /path/to/main /path/to/branch [ROUNDS] [OUT]
#   QUICK=1 bash benchmarks/lab/ab_checkouts.sh ...   # without the suite run (~2 min a round instead of ~9)
#
# Warm each checkout first (cd X && PYTHONPATH=. python -m mjenv warmup && PYTHONPATH=. python -m agents.warmup).
# Prints and appends to OUT (default /tmp/ab_checkouts.log) one labelled block per run; compare medians, and
# check that the digests of benchmarks/lab/ab_link_only.py agree. See docs/performance-log.md ("Cold start", eighth round, cold7).
set -u
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
ROUNDS=${3:-2}
OUT=${4:-/tmp/ab_checkouts.log}
BENCH=$(cd "$(dirname "$0")" && pwd)  # this checkout's benchmark scripts, run against each checkout's mjenv
run() {  # label, checkout, command...
    local label=$1 dir=$2
    shift 2
    echo "== $label $(basename "$dir") $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT"
    (cd "$dir" && env PYTHONPATH="$dir" MJENV_QUIET=1 "$@" 2>&1 | tail -n 30) | tee -a "$OUT"
}
for r in $(seq "$ROUNDS"); do
    for dir in "$A" "$B"; do
        run "round $r ab_link_only" "$dir" python "$BENCH/ab_link_only.py"
        run "round $r ab_hand_kernels" "$dir" python "$BENCH/ab_hand_kernels.py"
        run "round $r obs_dtype" "$dir" python -m benchmarks.obs_dtype --steps 200 --repeats 5
        if [ "${QUICK:-0}" != 1 ]; then
            run "round $r suite VectorEnv" "$dir" python -m benchmarks.suite --only VectorEnv --out /tmp/ab_suite --no-progress
        fi
        run "round $r bench_fans" "$dir" python benchmarks/bench_fans.py
        run "round $r bench_env" "$dir" python benchmarks/bench_env.py --seconds 1
        run "round $r rule_agent" "$dir" python -m benchmarks.rule_agent --steps 100 --repeats 3 --strength-steps 0
    done
done
