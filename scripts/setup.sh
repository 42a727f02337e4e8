#!/usr/bin/env bash
# Installs what Tandem needs and is missing (Debian packages, Python environment), then builds the data plane.
# Idempotent: a second run only rebuilds what changed. Hugepages are reserved by each run and given back after.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

packages=(dpdk dpdk-dev libdpdk-dev meson ninja-build pkg-config g++ libgtest-dev nlohmann-json3-dev libboost-context-dev libssl-dev libhyperscan-dev libpcap-dev graphviz python3-venv)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then echo "setup: installing packages needs root (run with sudo)" >&2; exit 2; fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import yaml, pydantic, matplotlib, pytest, pytest_timeout, highspy, scipy, hypothesis, jsonschema' 2>/dev/null; then
  echo "setup: creating the Python environment in .venv"
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
fi

if [ ! -f build/build.ninja ]; then meson setup build --buildtype=release >/dev/null; fi
# Quiet when it builds; the compiler's messages in full when it does not (ninja prints them on stdout).
if ! build_log=$(ninja -C build 2>&1); then echo "$build_log" >&2; echo "setup: the build failed (above)" >&2; exit 1; fi
echo "setup: ready (./tandem nfs lists NF types and schedulers)"
