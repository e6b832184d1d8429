#!/usr/bin/env bash
# Runs CI's ThreadSanitizer step (Scripts/test-tsan.sh) N times in a row and reports each run:
#   Scripts/repeat-tsan.sh 10            # builds once, then 10 runs; logs in .build-tsan/repeat/
# Exits non-zero if any run failed. For hunting flakiness: a run that fails keeps its log.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
logs=.build-tsan/repeat
mkdir -p "$logs"
bash Scripts/ensure-dependencies.sh
swift build --build-tests --sanitize=thread --scratch-path .build-tsan >"$logs/build.log" 2>&1 || { echo "build failed: $logs/build.log"; exit 1; }
failed=0
for run in $(seq 1 "$runs"); do
    start=$(date +%s)
    if bash Scripts/test-tsan.sh --skip-build >"$logs/run-$run.log" 2>&1; then
        echo "run $run: passed in $(( $(date +%s) - start )) s"
        rm -f "$logs/run-$run.log"
    else
        failed=$((failed + 1))
        echo "run $run: FAILED in $(( $(date +%s) - start )) s — $logs/run-$run.log"
        grep -E '^✘ Test .*(recorded|failed)' "$logs/run-$run.log" | head -5 | sed 's/^/    /'
    fi
done
echo "$((runs - failed)) of $runs runs passed"
[ "$failed" -eq 0 ]
