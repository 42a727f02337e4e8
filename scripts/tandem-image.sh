#!/usr/bin/env bash
# Builds the container images a containerd Kubernetes node (CRI namespace k8s.io) runs Tandem from, as OCI archives
# for `ctr -n k8s.io images import`: localhost/tandem:dev (tandem.tar) and the sandbox image localhost/pause:tandem
# (pause.tar), built here so that a node needs no registry. Prints the folder holding them.
# localhost/tandem:dev is Debian bookworm (debootstrap minbase) with Tandem in /opt/tandem: the checkout's tracked
# files, the data plane's executables from build/, and a Python environment from requirements.lock.
# The base (Debian and the Python environment) is cached under /var/cache/tandem/images, named by what makes it,
# so that a rebuild after a code change only adds the checkout and build/: seconds, not minutes.
# Needs root, debootstrap, podman, gcc (static libc) and a built data plane (scripts/setup.sh).
# Usage: scripts/tandem-image.sh [OUT]   (default /var/cache/tandem/images/out-<commit>)
#        scripts/tandem-image.sh --base   (only the cached base: scripts/test.sh makes it before the tests)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
suite=bookworm
mirror=http://deb.debian.org/debian
cache=/var/cache/tandem/images
# Bump when the base is made differently with the same packages and lock, so that the cached one is not reused.
base_recipe=2
# The data plane's executables: the control plane runs tandem-manager (spec/catalog.py, launch/runner.py), which
# starts tandem-worker, and tandem-primitives (machine/primitive_latencies.py); port-costs and tandem-graph-eval are
# the benchmarks' and the planner's tools.
executables=(build/tandem-manager build/tandem-worker build/tandem-primitives build/port-costs build/tandem-graph-eval)
# The sandbox image's source is the Kubernetes release the nodes run (scripts/kubernetes-binaries.sh).
kubernetes_version=1.33.13

log() { echo "tandem-image: $*" >&2; }
fail() { log "$*"; exit 1; }
step_started=${EPOCHREALTIME/[.,]/}
step_done() {
  local now=${EPOCHREALTIME/[.,]/}
  local tenths=$(( (now - step_started + 50000) / 100000 ))
  log "$1 $((tenths / 10)).$((tenths % 10)) s"
  step_started=$now
}

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts)"
for command in debootstrap podman gcc git dpkg; do
  command -v "$command" >/dev/null || fail "needs $command"
done
for executable in "${executables[@]}"; do
  [ -x "$executable" ] || fail "$executable is missing: build the data plane first (scripts/setup.sh)"
done
base_only=false
if [ "${1:-}" = --base ]; then base_only=true; shift; fi
out="${1:-$cache/out-$(git rev-parse --short HEAD)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)}"

mkdir -p "$cache"
# The work folder is inside the cache, on its file system, so that the finished base moves into place in one rename:
# an interrupted build leaves no half base behind.
work=$(mktemp -d "$cache/.work.XXXXXX")
# podman 4.3 keeps a blob cache in /var/lib/containers/cache whatever its --root: removed after, if made by this run.
podman_made=
if [ ! -e /var/lib/containers ]; then podman_made=/var/lib/containers
elif [ ! -e /var/lib/containers/cache ]; then podman_made=/var/lib/containers/cache; fi
cleanup() {
  # A chroot's /proc (ours, or debootstrap's when it was killed) must be gone before the folder is removed: deepest
  # first; rm stays on this file system whatever is left.
  grep -o " $work/[^ ]*" /proc/self/mounts | sort -r | while read -r mount; do umount "$mount" || umount -l "$mount"; done || true
  rm -rf --one-file-system "$work"
  if [ -n "$podman_made" ]; then rm -rf "$podman_made"; fi
}
trap cleanup EXIT

# Packages: the Python runtime, the tools the control plane runs (ip, bridge, ps, pgrep), DPDK's drivers (EAL loads
# them from its pmds folder, which ldd does not see), and the owner of every library the executables link to, so
# that the list follows the build. Debian 12 is usrmerged: a /lib path may be known to dpkg as /usr/lib, or the
# other way round.
ldd "${executables[@]}" | grep -q 'not found' && fail "the executables' libraries are not all installed here: $(ldd "${executables[@]}" | grep 'not found' | sort -u | tr -s ' \t\n' ' ')"
owners() {
  { dpkg -S "$1" 2>/dev/null || dpkg -S "/usr$1" 2>/dev/null || dpkg -S "${1#/usr}" 2>/dev/null; } \
    | grep -v '^diversion' | sed 's/: \/.*//' | tr ',' '\n' | sed 's/^ *//; s/:.*//' || true
}
# The DPDK drivers the data plane asks EAL for by name (mempools and virtual devices: grep net_ in dataplane/ and
# controlplane/), which no executable links to.
drivers=(librte-mempool-stack23 librte-mempool-ring23 librte-bus-vdev23 librte-net-ring23 librte-net-null23
  librte-net-af-packet23 librte-net-af-xdp23 librte-net-tap23 librte-net-pcap23 librte-net-memif23)
packages=(python3 python3-venv iproute2 procps dpdk "${drivers[@]}")
for library in $(ldd "${executables[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
  owner=$(owners "$library")
  [ -n "$owner" ] || fail "no Debian package owns $library"
  packages+=($owner)
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)

key=$( { printf '%s\n' "$base_recipe" "$suite" "$mirror" "${packages[@]}"; cat requirements.lock; } | sha256sum | cut -c1-16)
base="$cache/base-$key.tar"
if [ -f "$base" ]; then
  log "base $base (cached)"
else
  log "making base $base: debootstrap $suite with ${#packages[@]} packages, then the Python environment"
  root="$work/base"
  debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" "$suite" "$root" "$mirror" >&2
  step_done "debootstrap"
  # pip downloads the lock's wheels from the chroot: it needs a /proc and the host's resolver, proxy and trust store
  # (a TLS-inspecting proxy's CA is trusted by the host only); none of them stays in the image.
  rm -f "$root/etc/resolv.conf"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  cp requirements.lock "$root/tmp/requirements.lock"
  host_ca="${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
  pip_cert=()
  if [ -f "$host_ca" ]; then cp -L "$host_ca" "$root/tmp/host-ca.crt"; pip_cert=(--cert /tmp/host-ca.crt); fi
  pip_env=()
  for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_DEFAULT_TIMEOUT https_proxy HTTPS_PROXY http_proxy HTTP_PROXY no_proxy NO_PROXY; do
    if [ -n "${!name:-}" ]; then pip_env+=("$name=${!name}"); fi
  done
  mount -t proc proc "$root/proc"
  in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
  in_root python3 -m venv /opt/tandem/.venv
  # No pip cache: it would only make the image bigger.
  in_root "${pip_env[@]}" /opt/tandem/.venv/bin/pip install --require-hashes --disable-pip-version-check \
    --no-cache-dir -q "${pip_cert[@]}" -r /tmp/requirements.lock >&2
  umount "$root/proc"
  step_done "Python environment"
  # The container runtime mounts its own resolv.conf; apt's downloads and lists are not needed to run.
  : > "$root/etc/resolv.conf"
  rm -f "$root/tmp/requirements.lock" "$root/tmp/host-ca.crt"
  in_root apt-get clean
  # The operator's Deployment runs as 65532 (non-root, the distroless convention): a user of that number, whose home
  # is the pod's scratch folder, gives it a name and a home (kopf asks the user's name; without a passwd entry, it
  # fails).
  in_root groupadd --gid 65532 tandem
  in_root useradd --uid 65532 --gid 65532 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin tandem
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/debconf/*-old
  # The runtime makes /dev, /proc and /sys; debootstrap's device nodes stay out of the image.
  tar -C "$root" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$work/base.tar" .
  mv "$work/base.tar" "$base"
  # One base is kept: the one this checkout makes (an older one is another lock's or recipe's, ~700 MB).
  find "$cache" -maxdepth 1 -name 'base-*.tar' ! -name "base-$key.tar" -delete
  rm -rf --one-file-system "$root"
  step_done "base archive"
fi

if $base_only; then
  echo "$base"
  exit 0
fi

# The Tandem layer: the checkout's tracked files (as CI has them; a tracked file deleted here is left out) and the
# executables, appended to a copy of the base (GNU tar appends to an uncompressed archive; nothing is unpacked).
cp "$base" "$work/tandem-rootfs.tar"
{
  git ls-files -z | while IFS= read -r -d '' path; do
    if [ -e "$path" ] || [ -L "$path" ]; then printf '%s\0' "$path"; fi
  done
  printf '%s\0' "${executables[@]}"
} | tar -rf "$work/tandem-rootfs.tar" --null --no-recursion -T - --owner=0 --group=0 --numeric-owner \
    --transform 's,^,./opt/tandem/,S'
step_done "Tandem layer"

# Building pause, the sandbox's one process, as its Makefile does: static, -Os, its version from the Makefile's TAG
# and the release.
pause_source="$(command -v go >/dev/null && go env GOMODCACHE || echo "${GOMODCACHE:-$HOME/go/pkg/mod}")/k8s.io/kubernetes@v$kubernetes_version/build/pause"
if [ ! -f "$pause_source/linux/pause.c" ]; then
  command -v go >/dev/null || fail "needs Go to fetch pause.c (k8s.io/kubernetes@v$kubernetes_version)"
  (cd "$work" && go mod download "k8s.io/kubernetes@v$kubernetes_version" >&2)
fi
pause_tag=$(sed -n 's/^TAG ?= *//p' "$pause_source/Makefile")
mkdir "$work/pause-root"
gcc -Os -Wall -Werror -static -DVERSION="v$pause_tag-v$kubernetes_version" -o "$work/pause-root/pause" "$pause_source/linux/pause.c"
tar -C "$work/pause-root" --owner=0 --group=0 --numeric-owner -cf "$work/pause-rootfs.tar" ./pause
step_done "pause"

# podman makes the images and writes the archives from storage of its own, removed with the work folder: nothing
# is left in /var/lib/containers. TMPDIR is where it stages image copies (by default /var/tmp).
mkdir "$work/tmp"
podman_() {
  TMPDIR="$work/tmp" podman --root "$work/storage" --runroot "$work/run" --tmpdir "$work/libpod" \
    --storage-driver vfs --cgroup-manager cgroupfs --events-backend none "$@"
}
podman_ import --quiet --change 'WORKDIR /opt/tandem' "$work/tandem-rootfs.tar" localhost/tandem:dev >/dev/null
podman_ save --quiet --format oci-archive -o "$work/tandem.tar" localhost/tandem:dev
# The upstream pause image runs as 65535, the nobody of no base image.
podman_ import --quiet --change 'ENTRYPOINT ["/pause"]' --change 'USER 65535:65535' "$work/pause-rootfs.tar" \
  localhost/pause:tandem >/dev/null
podman_ save --quiet --format oci-archive -o "$work/pause.tar" localhost/pause:tandem
step_done "images"

mkdir -p "$out"
mv "$work/tandem.tar" "$work/pause.tar" "$out/"
log "$out/tandem.tar $(du -h "$out/tandem.tar" | cut -f1), $out/pause.tar $(du -h "$out/pause.tar" | cut -f1)"
echo "$out"
