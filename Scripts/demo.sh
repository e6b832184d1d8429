#!/usr/bin/env bash
# The main job (until the benchmark runner lands): a release build of curlew-demo, which starts the
# embedded test server on 127.0.0.1 and runs transfers on each scheduler backend.
# Arguments go to curlew-demo, e.g. `Scripts/demo.sh --requests 5000 --concurrency 64`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-dependencies.sh
swift run -c release curlew-demo "$@"
