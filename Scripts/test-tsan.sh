#!/usr/bin/env bash
# CI's ThreadSanitizer step: the conformance, operation, batch, lesson and manager suites, then the 5,000-operation
# stress suite in a process of its own (so it cannot starve the behaviour tests, nor they it).
# Arguments go to both `swift test` runs, e.g. `Scripts/test-tsan.sh --skip-build`.
set -euo pipefail
cd "$(dirname "$0")/.."
tsan=(--sanitize=thread --scratch-path .build-tsan)
bash Scripts/test.sh "${tsan[@]}" --filter 'CurlewConformanceTests|CurlewOperationsTests|CurlewBatchingTests|CurlewLessonsTests|CurlewTests' --skip 'StressTests' "$@"
bash Scripts/test.sh "${tsan[@]}" --filter 'StressTests' "$@"
