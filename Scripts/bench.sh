#!/usr/bin/env bash
# The main job: Curlew's two scheduler backends against URLSession, AsyncHTTPClient, a C curl loop, wrk
# and the two designs the AFNetworking articles reject, in one run. Installs what it needs when it can
# (libcurl's headers; nginx-light and wrk, optional), builds the Benchmarks package in release mode and
# runs curlew-bench; arguments go to it, e.g.
#   Scripts/bench.sh --quick
#   Scripts/bench.sh --clients curl-c,curlew-dispatch,curlew-runloop --scenarios get-small
#   Scripts/bench.sh --help
#   Scripts/bench.sh counts     # instructions and system calls per request (installs valgrind, strace)
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/ensure-dependencies.sh

# nginx serves the load (without it the runner starts its embedded server); wrk shows the server's ceiling;
# go builds the go-net-http peer (Go's standard library client).
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
missing=()
have nginx || missing+=(nginx)
have wrk || missing+=(wrk)
have go || missing+=(go)
if [ "${1:-}" = counts ]; then
    have valgrind || missing+=(valgrind)
    have strace || missing+=(strace)
fi
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    can_install=no
    if command -v apt-get >/dev/null 2>&1; then
        if [ "$(id -u)" -eq 0 ]; then
            can_install=yes
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo"
            can_install=yes
        fi
    fi
    if [ "$can_install" = yes ]; then
        packages=()
        for tool in "${missing[@]}"; do
            case "$tool" in
                nginx) packages+=(nginx-light) ;;
                go) packages+=(golang-go) ;;
                *) packages+=("$tool") ;;
            esac
        done
        echo "Installing ${packages[*]} …" >&2
        $sudo apt-get update -qq >&2 || true
        if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null; then
            # Some releases have no nginx-light: take nginx; then whatever installs on its own.
            for package in "${packages[@]/nginx-light/nginx}"; do
                DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$package" >/dev/null \
                    || echo "warning: could not install $package" >&2
            done
        fi
    else
        echo "note: ${missing[*]} not installed and cannot be installed here (needs apt-get and root or" \
             "password-less sudo); continuing without them." >&2
    fi
    have nginx || echo "note: no nginx: the benchmark uses its embedded server (CurlewTestServer) instead." >&2
    have wrk || echo "note: no wrk: the table has no ceiling row." >&2
    have go || echo "note: no go: the table has no go-net-http row." >&2
fi

echo "Building the benchmarks (release; the first build compiles SwiftNIO, BoringSSL and AsyncHTTPClient:" \
     "several minutes) …" >&2
swift build -c release --package-path Benchmarks >&2  # stdout stays the report
if have go; then
    (cd Benchmarks/go-client && GOFLAGS=-mod=mod go build -o ../.build/release/bench-go .) >&2
fi
exec Benchmarks/.build/release/curlew-bench "$@"
