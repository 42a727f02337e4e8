"""Chains between DPDK ports instead of the generator and the sink (net_pcap devices here: a capture in, captures
out): two SFCs on one port told apart by source subnet, frames no chain handles passed across untouched, a run
without a duration that forwards until SIGTERM and then drains, and a device DPDK cannot open refused naming the
field. Wireshark's dissector (tshark) reads what went in and what came out."""

from __future__ import annotations

import json
import shutil
import signal
import struct
import time

import pytest

from conftest import background, requires_root, tandem
from fuzz.write_seeds import checksum, ethernet, udp
from integration.test_tagged_frames import tshark_fields, write_pcap

pytestmark = [requires_root, pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is missing")]

SPEC = """\
name: two-sfcs-on-a-port
DURATION
scheduler: coop
ports:
  - {name: in, device: "net_pcap_in,rx_pcap=IN,INFINITE tx_pcap=UNUSED"}
  - {name: out-a, device: "net_pcap_a,tx_pcap=OUT_A"}
  - {name: out-b, device: "net_pcap_b,tx_pcap=OUT_B"}
chains:
  - name: a
    from: {port: in, source: [198.18.1.0/24]}
    to: out-a
    nfs: [{name: check-a, type: checkip, core: 1}]
  - name: b
    from: {port: in, source: [198.18.2.0/24]}
    to: out-b
    nfs: [{name: check-b, type: checkip, core: 1}, {name: ttl, type: ttl, core: 1}]
"""
ARP = bytes.fromhex("0001080006040001" + "020000000001" + "c6120101" + "000000000000" + "c6120102")


def from_source(subnet: int, host: int) -> bytes:
    """A UDP frame from 198.18.<subnet>.<host> to 198.18.0.1."""
    payload = udp(b"tandem")
    header = bytearray(
        struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, 17, 0,
                    bytes([198, 18, subnet, host]), bytes([198, 18, 0, 1]))
    )  # fmt: skip
    struct.pack_into("!H", header, 10, checksum(bytes(header)))
    return ethernet(bytes(header) + payload)


def spec_text(tmp_path, duration: str = "duration: 1", infinite: bool = False) -> str:
    return (
        SPEC.replace("DURATION", duration)
        .replace("INFINITE ", "infinite_rx=1," if infinite else "")
        .replace("UNUSED", str(tmp_path / "unused.pcap"))
        .replace("IN", str(tmp_path / "in.pcap"))
        .replace("OUT_A", str(tmp_path / "a.pcap"))
        .replace("OUT_B", str(tmp_path / "b.pcap"))
    )


def test_two_sfcs_on_one_port_are_told_apart_by_source_and_the_rest_crosses_untouched(
    write_spec, tmp_path, machine_before
):
    frames = [from_source(1, 10), from_source(2, 20), ethernet(ARP, 0x0806), from_source(3, 30), from_source(1, 11)]
    write_pcap(tmp_path / "in.pcap", frames)
    out = tmp_path / "results.json"
    result = tandem("run", str(write_spec(spec_text(tmp_path))), "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    chains = {chain["name"]: chain for chain in results["chains"]}
    assert (chains["a"]["generated"], chains["a"]["delivered"]) == (2, 2)
    assert (chains["b"]["generated"], chains["b"]["delivered"]) == (1, 1)
    ports = {port["name"]: port for port in results["ports"]}
    # The ARP frame and the frame from a subnet no chain takes cross to chain a's port untouched.
    assert (ports["in"]["received"], ports["in"]["to_chains"], ports["in"]["passed"]) == (5, 3, 2)
    assert ports["out-a"]["transmitted"] == 4 and ports["out-b"]["transmitted"] == 1
    assert results["accounting"]["exact"] and all(port["exact"] for port in ports.values())
    # As Wireshark reads them: a's port got its two frames and the two passed ones (those at once, the chain's after
    # its NF: the order between the two ways is not kept); b's frame one hop lower.
    fields = ["ip.src", "arp.src.proto_ipv4"]
    sources = [row["ip.src"] or row["arp.src.proto_ipv4"] for row in tshark_fields(tmp_path / "a.pcap", fields)]
    assert sorted(sources) == ["198.18.1.1", "198.18.1.10", "198.18.1.11", "198.18.3.30"]
    assert tshark_fields(tmp_path / "b.pcap", ["ip.src", "ip.ttl"]) == [{"ip.src": "198.18.2.20", "ip.ttl": "63"}]


def test_a_port_run_without_a_duration_forwards_until_sigterm_then_drains(write_spec, tmp_path, machine_before):
    write_pcap(tmp_path / "in.pcap", [from_source(1, 10), from_source(2, 20)])
    out = tmp_path / "results.json"
    spec = write_spec(spec_text(tmp_path, duration="", infinite=True))
    with background("run", str(spec), "--json", str(out)) as process:
        for line in process.stderr:  # the first progress line: the traffic flows
            if " Mpps " in line:
                break
        time.sleep(1)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    results = json.loads(out.read_text())
    chains = {chain["name"]: chain for chain in results["chains"]}
    assert chains["a"]["delivered"] > 0 and chains["b"]["delivered"] > 0
    # Drained: nothing left inside, every packet received is delivered or dropped somewhere named.
    assert results["accounting"]["exact"] and results["accounting"]["in_flight"] == 0
    assert all(port["exact"] for port in results["ports"])


def test_a_device_dpdk_cannot_open_is_refused_naming_the_field(write_spec, tmp_path, machine_before):
    write_pcap(tmp_path / "in.pcap", [from_source(1, 10)])
    text = spec_text(tmp_path).replace("net_pcap_a,tx_pcap=", "net_pcap_a,no_such_option=")
    result = tandem("run", str(write_spec(text)), "--quiet")
    assert result.returncode == 2, result.stderr
    assert "ports[1].device" in result.stderr and "DPDK cannot create this device" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "device, words",
    [
        ("net_af_packet0,iface=tdm-nosuch", "there is no interface tdm-nosuch"),
        ("0000:ff:1f.7", "no PCI device 0000:ff:1f.7"),
        ("eth0", "neither a PCI address"),
    ],
)
def test_bad_devices_are_refused_before_the_run(write_spec, tmp_path, device, words):
    write_pcap(tmp_path / "in.pcap", [from_source(1, 10)])
    text = spec_text(tmp_path).replace(f"net_pcap_b,tx_pcap={tmp_path / 'b.pcap'}", device)
    result = tandem("validate", str(write_spec(text)))
    assert result.returncode == 2 and "ports[2].device" in result.stderr and words in result.stderr, result.stderr
