#!/usr/bin/env bash
# Builds the API documentation of every library module with the Swift-DocC plugin and fails on any
# warning (a broken link, a misspelt parameter) or on a public symbol without a doc comment.
#   Scripts/docs.sh                  # every module; archives in .build/documentation/<Module>
#   Scripts/docs.sh Curlew           # one module
# DocC builds each module alone, so a doc comment links (``Symbol``) only to its own module's
# symbols and writes another module's as code (`TransferError`). DocC itself only reports coverage
# (--experimental-documentation-coverage: a table, and documentation-coverage.json beside the
# archive) and never fails on a missing comment; Scripts/missing-doc-comments.py reads the symbol
# graphs the plugin extracted and fails on a public symbol declared in the module's sources without a
# comment of its own (one inherited from a protocol of another module, such as Equatable's, does not
# count).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-dependencies.sh
if [ $# -gt 0 ]; then
    modules=("$@")
else
    modules=(CurlewTransport CurlewDispatch CurlewRunLoop CurlewSerialization CurlewOperations CurlewBatching Curlew
             CurlewTesting CurlewOpenAPI CurlewServiceLifecycle)
fi
output=.build/documentation
mkdir -p "$output"
for module in "${modules[@]}"; do
    echo "== $module"
    rm -rf "${output:?}/$module"
    swift package --disable-sandbox generate-documentation --target "$module" --warnings-as-errors \
        --experimental-documentation-coverage --coverage-summary-level brief \
        --output-path "$output/$module"
    graphs=$(ls -td .build/*/extracted-symbols/*/"$module" | head -n 1)
    python3 Scripts/missing-doc-comments.py "$graphs" "$module" "Sources/$module"
done
echo "== documentation in $output: every module built without warnings, every public symbol documented"
