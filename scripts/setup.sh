#!/usr/bin/env bash
# Installs what Tandem needs and is missing (Debian packages, Python environment), then builds the data plane.
# Idempotent: a second run only rebuilds what changed. Hugepages are reserved by each run and given back after.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

# Each step says how long it took, so a slow setup shows where the time went. EPOCHREALTIME (bash 5) is seconds
# with microseconds; its separator follows the locale.
step_started=${EPOCHREALTIME/[.,]/}
step_done() {
  local now=${EPOCHREALTIME/[.,]/}
  local tenths=$(( (now - step_started + 50000) / 100000 ))
  echo "setup: $1 $((tenths / 10)).$((tenths % 10)) s"
  step_started=$now
}

# Servers the tests start themselves, on ports and directories of their own: prometheus (the metrics integration
# test), Open vSwitch (kernel-I/O chains with link: ovs or ovs-userspace, started privately for each run), etcd
# (the store of the Kubernetes API server the CRD tests apply manifests to) and containerd (each kubelet node's
# runtime in the cluster test).
servers=(prometheus openvswitch-switch etcd-server containerd)
# The reference implementations tests hold Tandem's packets against: Wireshark's dissectors (tshark) and nftables.
references=(tshark nftables)
# openssl makes the service-account key of the Kubernetes API server the CRD tests start (scripts/test.sh builds
# the server itself: scripts/kubernetes-binaries.sh); the cluster test's kubelet nodes run containers with runc and
# the CNI plugins (loopback), and scripts/tandem-image.sh builds the Tandem image with debootstrap and podman.
kubernetes_tools=(openssl runc containernetworking-plugins debootstrap podman)
# The real clients and servers of lab specs and of their tests (iperf3, ping, curl in the hosts' namespaces), and
# ethtool, with which a lab turns off its veths' offloads.
lab_tools=(iperf3 iputils-ping curl ethtool)
# The fuzz targets' compiler and its libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer (scripts/fuzz.sh).
fuzzing=(clang libclang-rt-14-dev)
packages=(dpdk dpdk-dev libdpdk-dev meson ninja-build pkg-config g++ libgtest-dev nlohmann-json3-dev libboost-context-dev libssl-dev libhyperscan-dev libmodsecurity-dev modsecurity-crs libpcap-dev graphviz python3-venv clang-format "${references[@]}" "${lab_tools[@]}" "${fuzzing[@]}" "${kubernetes_tools[@]}" "${servers[@]}")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then echo "setup: installing packages needs root (run with sudo)" >&2; exit 2; fi
  apt-get update -q
  others=() missing_servers=()
  for package in "${missing[@]}"; do
    if [[ " ${servers[*]} " == *" $package "* ]]; then missing_servers+=("$package"); else others+=("$package"); fi
  done
  if [ ${#others[@]} -gt 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${others[@]}"; fi
  if [ ${#missing_servers[@]} -gt 0 ]; then
    # Installing a server package enables and starts a system instance (systemd or sysvinit; not in a container
    # whose policy-rc.d forbids it), and prometheus recommends a node exporter that does the same on :9100. A
    # resident server would take cycles from the cores being measured and hold its port or its datapath. So: no
    # recommends, and every instance the install started is stopped and disabled.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing_servers[@]}"
    for package in "${missing_servers[@]}"; do
      server=${package%-server}  # etcd-server's service is etcd
      if [ -d /run/systemd/system ]; then
        systemctl disable --now --quiet "$server.service" || true
      elif command -v invoke-rc.d >/dev/null; then
        invoke-rc.d "$server" stop >/dev/null 2>&1 || true
        update-rc.d "$server" disable >/dev/null 2>&1 || true
      fi
    done
  fi
fi
step_done "Debian packages"

# Python packages are pinned with hashes in requirements.lock (the ranges are in requirements.txt). The environment
# is complete when every pinned version is installed, the packages import, and the lock it was installed from (its
# checksum, kept in .venv) is this one; otherwise the lock is installed into it, which moves any pin that changed.
lock_sha256=$(sha256sum requirements.lock | cut -d' ' -f1)
environment_complete() {
  [ -x .venv/bin/python ] && [ "$(cat .venv/.tandem-lock-sha256 2>/dev/null)" = "$lock_sha256" ] &&
    .venv/bin/python - requirements.lock 2>/dev/null <<'EOF'
import importlib.metadata, re, sys
import yaml, pydantic, matplotlib, pytest, pytest_timeout, highspy, scipy, hypothesis, jsonschema, prometheus_client, ruff
for line in open(sys.argv[1]):
    pin = re.match(r"([A-Za-z0-9._-]+)==([^\s\\;]+)", line)
    if pin and importlib.metadata.version(pin[1]) != pin[2]:
        sys.exit(1)
EOF
}
if ! environment_complete; then
  if [ -x .venv/bin/python ]; then echo "setup: installing requirements.lock into .venv"
  else echo "setup: creating the Python environment in .venv"; python3 -m venv .venv; fi
  rm -f .venv/.tandem-lock-sha256
  # --require-hashes: pip checks every download against the lock's hashes (it would anyway, hashes being present;
  # said here so that a lock without them is refused, not installed unchecked).
  .venv/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements.lock
  echo "$lock_sha256" > .venv/.tandem-lock-sha256
fi
# The Python API (`from tandem import run`, tandem.py) for scripts anywhere that run with .venv/bin/python.
site_packages=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ "$(cat "$site_packages/tandem.pth" 2>/dev/null)" = "$here" ] || echo "$here" > "$site_packages/tandem.pth"
step_done "Python environment"

# Quiet when it configures and builds; meson's and the compiler's messages in full when not (both print them on
# stdout): a DPDK other than 22.11, for one, is refused by meson.build with the version it found and where.
if [ ! -f build/build.ninja ] && ! configure_log=$(meson setup build --buildtype=release 2>&1); then
  echo "$configure_log" >&2; echo "setup: configuring the build failed (above)" >&2; exit 1
fi
if ! build_log=$(ninja -C build 2>&1); then echo "$build_log" >&2; echo "setup: the build failed (above)" >&2; exit 1; fi
step_done "build"
echo "setup: ready (./tandem nfs lists NF types and schedulers)"
