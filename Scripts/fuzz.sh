#!/usr/bin/env bash
# Fuzzes Curlew's parsers and planners with libFuzzer: the response-head parser, the redirect planner, the
# resume planner, the form encoder and the property-list, XML and JSON response serializers (Fuzz/, a package of its own). Builds the targets with
# `-sanitize=fuzzer,address` (linked with lld: gold fails on these links) and runs each for the given number of seconds (default 60), keeping its
# corpus in Fuzz/corpus/<target> (seeded from Fuzz/seeds/<target>). A crash leaves its input in
# Fuzz/crashes/ and fails the script; turn each into a regression test.
#   Scripts/fuzz.sh          # 60 s per target (CI)
#   Scripts/fuzz.sh 600      # ten minutes per target
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bash Scripts/ensure-dependencies.sh
# A failed build must fail the script: the fuzzers of an earlier build would otherwise run instead.
if ! build_log=$(swift build --package-path Fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld 2>&1); then
    echo "$build_log" | grep -v "^\[" | tail -40
    echo "Scripts/fuzz.sh: the fuzz targets did not build"
    exit 1
fi
echo "$build_log" | grep -v "^\[" || true
bin=$(swift build --package-path Fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --show-bin-path)
mkdir -p Fuzz/crashes
failed=0
for target in fuzz-response-head fuzz-redirect-planner fuzz-resume-planner fuzz-form-encoder fuzz-property-list fuzz-xml fuzz-json; do
    corpus="Fuzz/corpus/$target"
    mkdir -p "$corpus"
    seeds=()
    [ -d "Fuzz/seeds/$target" ] && seeds=("Fuzz/seeds/$target")
    log=$(mktemp)
    if "$bin/$target" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="Fuzz/crashes/$target-" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$log" 2>&1; then
        runs=$(grep -a "stat::number_of_executed_units" "$log" | awk '{print $2}')
        echo "$target: ${runs:-?} executions in ${seconds} s, no crash"
    else
        failed=1
        echo "$target: FAILED (see below); the input is in Fuzz/crashes/"
        tail -30 "$log"
    fi
    rm -f "$log"
done
exit "$failed"
