#!/usr/bin/env bash
# Builds one Kubernetes release's control plane (kube-apiserver, kube-controller-manager, kube-scheduler), kubelet
# and kubectl, and kwok (fake nodes, with its node stages), from the Go module proxy into a cache kept across runs
# (Debian packages none of them; the tests need a real API server to apply the manifests to, real kubelets to run
# the DaemonSet's pods, and the operator's scale test nodes by the hundred). Prints the folder.
# Usage: scripts/kubernetes-binaries.sh [CACHE]   (default /var/cache/tandem/kubernetes-$VERSION)
set -euo pipefail
version=1.33.13
kwok_version=0.8.0
cache="${1:-/var/cache/tandem/kubernetes-v$version}"
commands=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
kube_ready() { for command in "${commands[@]}"; do [ -x "$cache/$command" ] || return 1; done; }
kwok_ready() { [ -x "$cache/kwok" ] && [ -f "$cache/kwok-stages/node-initialize.yaml" ] && [ -f "$cache/kwok-stages/node-heartbeat.yaml" ]; }
if kube_ready && kwok_ready; then
  echo "$cache"
  exit 0
fi
command -v go >/dev/null || { echo "kubernetes-binaries: needs Go (go.dev/dl)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! kwok_ready; then
  # kwok's own module builds with `go install`; its node stages (a node made Ready, then kept alive by heartbeats)
  # are files of that module, kept beside it.
  GOBIN="$work/kwok-bin" go install "sigs.k8s.io/kwok/cmd/kwok@v$kwok_version" >&2
  stages="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$kwok_version/kustomize/stage/node"
  mkdir -p "$cache/kwok-stages"
  cp "$stages/fast/node-initialize.yaml" "$stages/heartbeat/node-heartbeat.yaml" "$cache/kwok-stages/"
  mv "$work/kwok-bin/kwok" "$cache/kwok"
fi
if kube_ready; then
  echo "$cache"
  exit 0
fi

# `go install k8s.io/kubernetes/cmd/...@v1.33.13` is refused: the module replaces its 31 staging modules with
# folders of its own repository. A module of our own that requires it and points each staging module at its
# published v0.33.13 builds the same code.
staging=$(curl -fsS "https://proxy.golang.org/k8s.io/kubernetes/@v/v$version.mod" | awk '$2 == "=>" && $3 ~ /^\.\/staging/ {print $1}')
[ -n "$staging" ] || { echo "kubernetes-binaries: cannot read k8s.io/kubernetes v$version's go.mod" >&2; exit 1; }
{
  printf 'module tandem.invalid/kubernetes-binaries\n\ngo 1.24\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$version"
  for module in $staging; do printf '\t%s => %s v0.%s\n' "$module" "$module" "${version#1.}"; done
  printf ')\n'
} > "$work/go.mod"
{
  printf '//go:build tools\n\npackage tools\n\nimport (\n'
  for command in "${commands[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$command"; done
  printf ')\n'
} > "$work/tools.go"
cd "$work"
GOFLAGS=-mod=mod go mod tidy >&2
mkdir -p "$cache.partial"
# kubectl reads the server's version: without it set at link time, it reports v0.0.0 and refuses to parse it.
GOFLAGS=-mod=mod go build -trimpath -o "$cache.partial/" \
  -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)" \
  "${commands[@]/#/k8s.io/kubernetes/cmd/}" >&2
mkdir -p "$cache"
for command in "${commands[@]}"; do mv "$cache.partial/$command" "$cache/"; done
rmdir "$cache.partial"
echo "$cache"
