"""Ports and labs in a spec: each mistake a user can make gets its own message naming the field (exit status 2 from
the CLI), and a good lab spec becomes the run description the data plane and the lab's machinery expect."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from controlplane.errors import SpecError
from controlplane.machine.vxlan_links import interface_name
from controlplane.spec.deployment import run_config
from controlplane.spec.loading import spec_from_document
from controlplane.spec.ports import DPDK_PCI_DRIVERS

LAB = yaml.safe_load((REPO / "examples" / "lab-firewalls.yaml").read_text())


def problems(document: dict) -> dict[str, str]:
    try:
        spec_from_document(document, REPO / "examples" / "spec.yaml")
    except SpecError as error:
        return dict(error.problems)
    return {}


def edited(change) -> dict:
    document = copy.deepcopy(LAB)
    change(document)
    return document


def test_the_example_lab_is_valid_and_becomes_ports_and_a_lab():
    spec = spec_from_document(copy.deepcopy(LAB), REPO / "examples" / "lab-firewalls.yaml")
    config = run_config(spec)
    assert [port["name"] for port in config["ports"]] == ["client", "server"]
    assert config["ports"][0]["device"].startswith("net_af_packet_lab0,iface=tdl0,")
    assert [(c.get("from_port"), c.get("to_port")) for c in config["chains"]] == [(0, 1), (1, 0)]
    assert config["duration"] == 0 and config["warmup"] == 0  # a lab runs until its clients are done
    hosts = config["lab"]["hosts"]
    assert [host["address"] for host in hosts] == ["198.18.0.1/24", "198.18.0.2/24"]
    assert (
        hosts[0]["run"][1]["spec_path"] == "lab.hosts[0].run[1]"
        and hosts[1]["serve"][0]["command"] == "iperf3 --server"
    )
    assert config["lab"]["directory"] == str((REPO / "examples").resolve())


def test_a_spec_without_ports_keeps_its_five_seconds():
    document = edited(
        lambda d: (d.pop("lab"), [c.pop("from") for c in d["chains"]], [c.pop("to") for c in d["chains"]])
    )
    spec = spec_from_document(document, REPO / "examples" / "spec.yaml")
    assert spec.duration == 5.0 and run_config(spec)["duration"] == 5.0


@pytest.mark.parametrize(
    "change, field, words",
    [
        (lambda d: d["chains"][0].update({"to": "nowhere"}), "chains[0].to", "no port or lab host is named 'nowhere'"),
        (lambda d: d["chains"][0].update({"from": "nobody"}), "chains[0].from", "no port or lab host is named"),
        (
            lambda d: d["chains"][1].update({"from": "client"}),
            "chains[0].from",
            "port 'client' also feeds to-client: give each chain the source prefixes",
        ),
        (
            lambda d: d["chains"][0].update({"from": {"port": "client", "source": ["198.18.300.0/24"]}}),
            "chains[0].from.source[0]",
            "not an IPv4 or IPv6 prefix",
        ),
        (
            lambda d: d["chains"][0].update({"traffic": {"rate": "1 Mpps"}}),
            "chains[0].traffic.rate",
            "takes its traffic from its port",
        ),
        (lambda d: d["lab"]["hosts"][1].update({"serve": []}), "lab.hosts[1]", "has no command"),
        (
            lambda d: d["lab"]["hosts"][0]["run"].append("teleport {server}"),
            "lab.hosts[0].run[2].command",
            "teleport is not installed on this machine",
        ),
        (
            lambda d: d["lab"]["hosts"][0]["run"].append("ping {mars}"),
            "lab.hosts[0].run[2].command",
            "{mars} names no host of the lab",
        ),
        (lambda d: d["lab"]["hosts"][1].update({"name": "client"}), "lab.hosts[1].name", "duplicate lab host"),
        (
            lambda d: d["lab"]["hosts"][0].update({"address": "198.18.0.7"}),
            "lab.hosts[0].address",
            "with its prefix length",
        ),
        (
            lambda d: d.update({"ports": [{"name": "client", "device": "net_null0"}]}),
            "lab.hosts[0].name",
            "a port is named",
        ),
        (lambda d: d["lab"].update({"directory": "no/such/folder"}), "lab.directory", "no such folder"),
        (
            lambda d: d["lab"]["hosts"][0].update({"run": []}) or d["lab"]["hosts"][0].update({"serve": ["sleep 1"]}),
            "lab.hosts",
            "no host runs a client",
        ),
    ],
)
def test_each_mistake_is_named(change, field, words):
    found = problems(edited(change))
    assert field in found, found
    assert words in found[field], found[field]


def test_devices_are_checked_on_this_machine():
    def with_ports(*devices):
        return edited(lambda d: d.update({"ports": [{"name": f"p{i}", "device": x} for i, x in enumerate(devices)]}))

    found = problems(with_ports("net_af_packet0,iface=tdm-no-such", "0000:ff:1f.7", "eth0", "net_af_xdp0", "net_null0"))
    assert "there is no interface tdm-no-such" in found["ports[0].device"]
    assert "no PCI device 0000:ff:1f.7" in found["ports[1].device"]
    assert "neither a PCI address" in found["ports[2].device"]
    assert "needs the interface it attaches to" in found["ports[3].device"]
    assert "ports[4].device" not in found  # net_null needs nothing of the machine
    assert "unexpected" not in str(found)


@pytest.mark.skipif(shutil.which("nft") is None, reason="nftables is missing")
def test_a_kernel_chain_takes_traffic_from_a_port():
    # Its entry and exit are the data plane's packet sockets on its veths, fed by the port's Rx stage as a ring is.
    found = problems(edited(lambda d: d["chains"][0].update({"io": "kernel"})))
    assert not [field for field in found if field.startswith("chains[0]")], found


def _pci_device_on_a_kernel_driver() -> tuple[str, str] | None:
    """A PCI device of this machine bound to a kernel driver (a VM's virtio devices, a host's NICs), and its driver."""
    for device in sorted(Path("/sys/bus/pci/devices").glob("*")):
        driver = device / "driver"
        if driver.exists() and driver.resolve().name not in DPDK_PCI_DRIVERS:
            return device.name, driver.resolve().name
    return None


@pytest.mark.skipif(_pci_device_on_a_kernel_driver() is None, reason="no PCI device on a kernel driver here")
def test_a_pci_device_on_a_kernel_driver_is_refused_saying_how_to_bind_it():
    address, driver = _pci_device_on_a_kernel_driver()
    found = problems(edited(lambda d: d.update({"ports": [{"name": "nic", "device": address}]})))
    assert f"PCI device {address} is bound to {driver}, not to a DPDK driver" in found["ports[0].device"]
    assert f"dpdk-devbind.py --bind=vfio-pci {address}" in found["ports[0].device"]


def test_a_vxlan_ports_interface_name_fits_the_kernels_fifteen_characters_and_stays_apart():
    assert interface_name("east") == "tdx-east" and interface_name("a" * 11) == "tdx-" + "a" * 11
    long_names = [interface_name(name) for name in ("shop.frontend.wire1", "shop.frontend.wire2")]
    assert all(len(name) <= 15 for name in long_names) and long_names[0] != long_names[1]
