#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then the C++ unit tests (meson), the fuzz targets for a bounded
# time, and the Python and integration tests (pytest). Needs root: integration runs reserve hugepages and set
# real-time policies.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash scripts/setup.sh
echo "== C++ unit tests (meson test)"
meson test -C build --print-errorlogs
echo "== fuzzing the packet parsers, the deployment parser and the wire trailer under ASan and UBSan (scripts/fuzz.sh)"
bash scripts/fuzz.sh 30
echo "== kube-apiserver, kubectl and kwok for the Kubernetes tests (built once, then cached: scripts/kubernetes-binaries.sh)"
scripts/kubernetes-binaries.sh
echo "== the Tandem image's Debian base for the cluster test (built once, then cached: scripts/tandem-image.sh)"
scripts/tandem-image.sh --base >/dev/null
echo "== control plane and integration tests (pytest)"
exec .venv/bin/python -m pytest tests -q --timeout=300 -p no:cacheprovider
