#!/usr/bin/env bash
# Runs the tests. Arguments go to `swift test`, e.g.
#   Scripts/test.sh --filter CurlewConformanceTests
#   Scripts/test.sh --sanitize=thread --scratch-path .build-tsan --filter 'CurlewConformanceTests|CurlewLessonsTests'
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-dependencies.sh
swift test "$@"
