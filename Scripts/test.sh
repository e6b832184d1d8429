#!/usr/bin/env bash
# Runs the tests. Arguments go to `swift test`, e.g.
#   Scripts/test.sh --filter CurlewConformanceTests
#   Scripts/test-tsan.sh          # CI's ThreadSanitizer step (it calls this script)
#
# Swift Testing starts every test case at once unless told otherwise: some 300 cases, each with an
# engine of its own (a dispatch queue, or work for the one shared network thread). On a 2-core
# machine under ThreadSanitizer that burst stalled the whole process for 10-30 s (dozens of threads
# queued on the Swift runtime's metadata locks; the one network thread far behind) and tests with
# 30 s waits failed one run in five. At most 4 test cases per core run at once; it costs the plain
# suite nothing measurable. Set SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH to override.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-dependencies.sh
cores=$(nproc 2>/dev/null || echo 2)
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-$((4 * cores))}"
swift test "$@"
