#!/usr/bin/env bash
# Runs the transfer conformance suite and the operation, batch, manager and serializer suites under LeakSanitizer, one
# backend per run of the suites (default: all four, one after another; about 15 s each), and fails
# on any leak not suppressed in Scripts/leaks.supp.
#
# LeakSanitizer needs no instrumented build: its standalone runtime (gcc's liblsan, Debian's liblsan0)
# is preloaded into the ordinary debug test binary, replaces malloc, and at exit reports every block
# that nothing reachable points to any more (memory still pointed to by a global, such as libcurl's
# and OpenSSL's one-time tables, is not a leak and needs no suppression). Stacks come from frame
# pointers, which debug builds keep. The tests that measure memory are skipped (the sanitizer's
# allocator has its own overheads); exit tests' child processes are checked like the parent: every
# process writes its report to a file of its own (LSAN_OPTIONS log_path), because Swift Testing does
# not pass an exit test's standard error on, and the script prints every report that names a leak.
# A child must release what it made before it exits: LeakSanitizer cannot follow references that
# Swift stores with tag bits in the pointer (`Data`'s storage inside its representation enum, a weak
# reference's side table), so objects still alive at exit behind them are reported as leaks.
#   Scripts/leaks.sh                          # dispatch, dispatch-epoll, runloop-cfsocket, runloop-epoll
#   Scripts/leaks.sh runloop-epoll            # one backend
set -euo pipefail
cd "$(dirname "$0")/.."
backends=("$@")
[ ${#backends[@]} -eq 0 ] && backends=(dispatch dispatch-epoll runloop-cfsocket runloop-epoll)
bash Scripts/ensure-dependencies.sh
runtime=/usr/lib/x86_64-linux-gnu/liblsan.so.0
if [ ! -e "$runtime" ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq liblsan0 >/dev/null
fi
swift build --build-tests 2>&1 | grep -E "error|warning: |Compiling|Build complete" | tail -3
bin=$(swift build --show-bin-path)/CurlewPackageTests.xctest
cores=$(nproc 2>/dev/null || echo 2)
status=0
for backend in "${backends[@]}"; do
    log=$(mktemp)
    reports=$(mktemp -d)
    run=0
    CURLEW_BACKENDS="$backend" SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$((4 * cores)) \
        LSAN_OPTIONS="suppressions=$PWD/Scripts/leaks.supp:print_suppressions=1:report_objects=0:exitcode=23:log_path=$reports/lsan" \
        LD_PRELOAD="$runtime" \
        "$bin" --testing-library swift-testing \
        --filter 'CurlewConformanceTests|CurlewOperationsTests|CurlewBatchingTests|CurlewTests|CurlewSerializationTests' \
        --skip 'boundedMemory|SoakMemoryTests' >"$log" 2>&1 || run=$?
    summary=$(grep -aE "Test run with" "$log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g')
    leaking=$(grep -alr "ERROR: LeakSanitizer" "$reports" || true)
    if [ -n "$leaking" ]; then
        status=1
        echo "$backend: LeakSanitizer found leaks in $(echo "$leaking" | wc -l) process(es) ($summary; exit $run)"
        for report in $leaking; do
            echo "-- ${report##*/}"
            grep -aE "^(Direct|Indirect) leak|#[0-9]+ 0x|SUMMARY" "$report" | head -120
        done
    elif [ "$run" -ne 0 ]; then
        status=1
        echo "$backend: the tests failed (exit $run): $summary"
        grep -aE "✘" "$log" | sed 's/\x1b\[[0-9;]*m//g' | head -20
    else
        echo "$backend: no leak ($summary)"
        cat "$reports"/lsan.* 2>/dev/null | sed -n '/Suppressions used/,/^-*$/p' | head -20
    fi
    rm -rf "$log" "$reports"
done
exit "$status"
