"""Ports and chains added to a running service, as the control plane checks them before the data plane sees them: a
port a request may not add is refused naming its field (a driver that reads files, a PCI device, a name taken, an
interface that is not there); a port the data plane opened is one later chains may name, numbered as the data plane
numbers it (after the lab's hosts); one it refused is forgotten."""

from __future__ import annotations

import pytest

from controlplane.errors import SpecError
from controlplane.spec.deployment import run_config
from controlplane.spec.live_additions import LiveAdditions
from controlplane.spec.models import ChainSpec, PortSpec, Spec

SPEC = Spec.model_validate(
    {
        "name": "served",
        "ports": [{"name": "p0", "device": "net_null_p0"}],
        "chains": [{"name": "c", "nfs": [{"name": "n", "type": "macswap", "core": 1}]}],
        "lab": {"hosts": [{"name": "client", "run": [{"command": "true"}]}]},
    }
)


@pytest.fixture
def additions():
    return LiveAdditions(SPEC, run_config(SPEC, None, None))


def refusal(additions: LiveAdditions, **port) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as refused:
        additions.port(PortSpec.model_validate(port))
    return refused.value.problems


@pytest.mark.parametrize(
    ("port", "field", "words"),
    [
        ({"name": "q", "device": "net_pcap_q,rx_pcap=/etc/shadow"}, "port.device", "net_pcap is not added live"),
        ({"name": "q", "device": "net_af_xdp_q,iface=lo"}, "port.device", "net_af_xdp is not added live"),
        ({"name": "q", "device": "net_af_packet_q,iface=tdm-nowhere"}, "port.device", "no interface tdm-nowhere"),
        ({"name": "q", "device": "net_mystery0"}, "port.device", "neither a PCI address"),
        ({"name": "q", "device": "0000:00:00.0"}, "port.device", "PCI"),
        ({"name": "p0", "device": "net_null_q"}, "port.name", "a port named 'p0' is in the service"),
        ({"name": "client", "device": "net_null_q"}, "port.name", "a port named 'client' is in the service"),
    ],
)
def test_a_port_a_request_may_not_add_is_refused_naming_its_field(additions, port, field, words):
    problems = refusal(additions, **port)
    assert problems[0][0] == field and words in problems[0][1], problems


def test_an_opened_port_is_one_later_chains_may_name_after_the_lab_hosts(additions):
    config = additions.port(PortSpec(name="q", device="net_null_q"))
    assert config == {"name": "q", "device": "net_null_q", "unhandled": "pass", "wire": False, "spec_path": "port"}
    chain = ChainSpec.model_validate(
        {"name": "d", "from": "q", "to": "p0", "nfs": [{"name": "m", "type": "macswap", "core": 1}]}
    )
    with pytest.raises(SpecError) as unknown:  # not opened yet: no chain may name it
        additions.chain(chain)
    assert unknown.value.problems[0][0] == "chain.from", unknown.value.problems
    # Asked twice before the answer: the second is refused (the data plane would open two).
    assert refusal(additions, name="q", device="net_null_q2")[0][0] == "port.name"
    additions.follow({"event": "change", "op": "add_port", "port": "q", "state": "applied"})
    # The data plane numbers its ports: the spec's (p0), the lab's hosts (client), then those added (q).
    assert [port["name"] for port in additions.running["ports"]] == ["p0", "client", "q"]
    added = additions.chain(chain)
    assert (added["from_port"], added["to_port"]) == (2, 0)


def test_a_port_the_data_plane_refused_is_forgotten(additions):
    additions.port(PortSpec(name="q", device="net_null_q"))
    additions.follow({"event": "change", "op": "add_port", "port": "q", "state": "refused", "errors": []})
    assert [port["name"] for port in additions.running["ports"]] == ["p0", "client"]
    assert additions.port(PortSpec(name="q", device="net_null_q"))["name"] == "q"  # may be asked again
