#!/usr/bin/env bash
# Builds the Examples package (a package of its own, so `swift test` on the library never builds it) —
# with every Swift block of the README and the DocC articles compiled as its `snippets` target — and
# runs its test target, which runs every example in a process of its own and checks what it printed:
# each example starts the embedded test server on 127.0.0.1, so nothing leaves the machine.
#   Scripts/examples.sh                                   # build, then test every example
#   swift run --package-path Examples trace-backends      # run one example and read it
#
# The examples build in the library's own build folder (--scratch-path .build), so they reuse every
# module the library's build has compiled — SwiftNIO and BoringSSL for the test server, Curlew itself —
# and after Scripts/test.sh only the examples are compiled (about a minute on two cores instead of 4–11).
# SwiftPM keeps one package's state there at a time: the library's next build re-reads its own and
# recompiles a test-only dependency or two. CURLEW_EXAMPLES_SCRATCH=Examples/.build builds apart.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-dependencies.sh
scratch="${CURLEW_EXAMPLES_SCRATCH:-.build}"
# The README's and the DocC articles' Swift blocks, as the `snippets` target: they must compile.
python3 Scripts/snippets.py
swift build --package-path Examples --scratch-path "$scratch" --build-tests
swift test --package-path Examples --scratch-path "$scratch" --skip-build "$@"
