#!/usr/bin/env bash
# Installs what Curlew needs on a fresh Debian or Ubuntu machine that has the Swift toolchain:
# libcurl's development files (headers and pkg-config file), and libxml2, which FoundationXML (the
# XML response serializer) loads at run time (the Swift toolchain lists it among its own
# dependencies; a minimal image may still lack it). Safe to run again: it installs only what is missing.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
    echo "error: the Swift toolchain (swift) is not on PATH; install Swift 6 first: https://swift.org/install" >&2
    exit 1
fi

missing=()
for package in libcurl4-openssl-dev libxml2; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: please install libcurl's development files and libxml2 (${missing[*]} on Debian)" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "Installing ${missing[*]} …" >&2
# Wait up to five minutes for another apt or dpkg (an unattended upgrade, a parallel install) to let go
# of its lock, instead of failing at once.
$sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >/dev/null
