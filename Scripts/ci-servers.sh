#!/usr/bin/env bash
# Installs the servers some tests run for themselves (Debian packages): nginx (on Unix sockets),
# tinyproxy (an HTTP proxy) and microsocks (a SOCKS5 proxy). The tests start and stop them, on
# 127.0.0.1 and in temporary directories, with generated configurations; nothing is left running.
# Without them those tests skip, saying why; with CURLEW_REQUIRE_EXTERNAL_SERVERS=1 (which .ci/run
# sets) a missing one fails them.
#
# The packages' own services are not started: a policy-rc.d that refuses every start is put in place
# for the install when the machine has none (the Debian default site would listen on port 80 of
# every interface), and removed afterwards. Safe to run again: it installs only what is missing.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
packages=()
have nginx || packages+=(nginx-light)
have tinyproxy || packages+=(tinyproxy)
have microsocks || packages+=(microsocks)
[ ${#packages[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: please install ${packages[*]} (Debian package names)" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt=(apt-get -o DPkg::Lock::Timeout=300)

policy=/usr/sbin/policy-rc.d
added_policy=no
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# Added by Curlew'"'"'s Scripts/ci-servers.sh for the length of an install.\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    added_policy=yes
fi
remove_policy() { if [ "$added_policy" = yes ]; then $sudo rm -f "$policy"; fi; }
trap remove_policy EXIT

echo "Installing ${packages[*]} …" >&2
$sudo "${apt[@]}" update -qq
if ! DEBIAN_FRONTEND=noninteractive $sudo "${apt[@]}" install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; then
    # A release without nginx-light: take nginx.
    DEBIAN_FRONTEND=noninteractive $sudo "${apt[@]}" install -y -qq --no-install-recommends "${packages[@]/nginx-light/nginx}" >/dev/null
fi
for tool in nginx tinyproxy microsocks; do
    have "$tool" || { echo "error: $tool is still missing after the install" >&2; exit 1; }
done
