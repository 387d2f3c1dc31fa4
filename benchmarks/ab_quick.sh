#!/usr/bin/env bash
# A shorter interleaved runtime A/B of two checkouts than ab_checkouts.sh (no suite run): the hand kernels, the
# batch scorer and the VectorEnv (ab_link_only.py, with its output digest), the three batch hand kernels alone
# (ab_hand_kernels.py), float32/uint8 observations (obs_dtype) and the rule agent at every seat, ROUNDS times in
# A then B; then bench_fans (batch scorer, compat) and bench_env (raw_env) twice each. About 6 min for 3 rounds.
#
#   bash benchmarks/ab_quick.sh /path/to/A /path/to/B [ROUNDS]
#
# Warm each checkout first (cd X && PYTHONPATH=. python -m mjenv warmup && PYTHONPATH=. python -m agents.warmup);
# compare medians, and check that the digests of ab_link_only.py agree (docs/performance.md, "Cold start").
set -u
A=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
ROUNDS=${3:-3}
BENCH=$(cd "$(dirname "$0")" && pwd)  # this checkout's scripts, run against each checkout's mjenv
for r in $(seq "$ROUNDS"); do
    for d in "$A" "$B"; do
        echo "== round $r $d"
        cd "$d" || exit 1
        PYTHONPATH=$d MJENV_QUIET=1 python "$BENCH/ab_link_only.py" 2>&1 | tail -n 3
        PYTHONPATH=$d MJENV_QUIET=1 python "$BENCH/ab_hand_kernels.py" 2>&1 | tail -n 1
        PYTHONPATH=$d MJENV_QUIET=1 python -m benchmarks.obs_dtype --steps 200 --repeats 5 2>&1 | tail -n 3
        PYTHONPATH=$d MJENV_QUIET=1 python -m benchmarks.rule_agent --steps 100 --repeats 5 --strength-steps 0 \
            --kernel-steps 0 2>&1 | grep "decisions/s"
    done
done
for r in 1 2; do
    for d in "$A" "$B"; do
        echo "== bench_fans/env round $r $d"
        cd "$d" || exit 1
        PYTHONPATH=$d MJENV_QUIET=1 python benchmarks/bench_fans.py 2>&1 | grep -E "batch_hands_per_s|interleaved"
        PYTHONPATH=$d MJENV_QUIET=1 python benchmarks/bench_env.py --seconds 2 2>&1 | grep -E "raw_env|from Python"
    done
done
