#!/usr/bin/env bash
# CI's ThreadSanitizer step: the conformance, operation, batch, lesson and manager suites, then the 5,000-operation
# stress suite in a process of its own (so it cannot starve the behaviour tests, nor they it). The state machines'
# suites are left to the plain step (Scripts/test.sh): they are values tested without threads, so there is no race
# to find, and their "impossible events trap" cases are some 30 exit tests, each child a whole ThreadSanitizer
# process that crashes on purpose (22 of them take 9.5 s even without the sanitizer): load on both cores beside the
# timing-sensitive tests, for nothing.
# Arguments go to both `swift test` runs, e.g. `Scripts/test-tsan.sh --skip-build`.
set -euo pipefail
cd "$(dirname "$0")/.."
tsan=(--sanitize=thread --scratch-path .build-tsan)
bash Scripts/test.sh "${tsan[@]}" --filter 'CurlewConformanceTests|CurlewOperationsTests|CurlewBatchingTests|CurlewLessonsTests|CurlewTests' --skip 'StressTests|StateMachineTests' "$@"
bash Scripts/test.sh "${tsan[@]}" --filter 'StressTests' "$@"
