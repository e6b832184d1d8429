#!/usr/bin/env python3
"""Lists the public symbols of a module that have no doc comment of their own.

Usage: missing-doc-comments.py SYMBOL_GRAPH_DIR MODULE SOURCES_DIR

Reads the symbol graphs the documentation plugin extracted for MODULE (MODULE.symbols.json and the
MODULE@Other.symbols.json files of its extensions). A symbol counts when it is public or open and is
declared in a file under SOURCES_DIR; it is missing its documentation when it has no doc comment
written in MODULE (a comment inherited from a protocol of another module, such as `Equatable.==`,
does not count). Extension blocks themselves are skipped: their members are checked one by one.
Symbols the compiler makes (an enum's `init(rawValue:)`, `hashValue`) have no place in the sources
and are not counted. Prints one line per missing symbol and exits 1 if there is any.
"""
import glob
import json
import os
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    graph_dir, module, sources = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
    files = glob.glob(os.path.join(graph_dir, f"{module}.symbols.json")) + glob.glob(
        os.path.join(graph_dir, f"{module}@*.symbols.json"))
    if not files:
        print(f"no symbol graph for {module} in {graph_dir}", file=sys.stderr)
        return 2
    missing = set()
    for path in files:
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        for symbol in graph.get("symbols", []):
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            if symbol["kind"]["identifier"] == "swift.extension":
                continue
            uri = symbol.get("location", {}).get("uri", "")
            if not uri.startswith("file://") or not os.path.realpath(uri[len("file://"):]).startswith(sources + os.sep):
                continue
            comment = symbol.get("docComment") or {}
            written = comment.get("module") in (None, module) and any(
                line.get("text", "").strip() for line in comment.get("lines", []))
            if not written:
                where = os.path.relpath(uri[len("file://"):])
                line = symbol["location"]["position"]["line"] + 1
                missing.add(f"{where}:{line}: {'/'.join(symbol['pathComponents'])} has no doc comment")
    for entry in sorted(missing):
        print(entry)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
