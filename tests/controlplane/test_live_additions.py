"""Ports and chains added to a running service, as the control plane checks them before the data plane sees them: a
port a request may not add is refused naming its field (a driver that reads files, a PCI device, a name taken, an
interface that is not there); a port the data plane opened is one later chains may name, numbered as the data plane
numbers it (after the lab's hosts); one it refused is forgotten."""

from __future__ import annotations

import pytest

from controlplane.errors import SpecError
from controlplane.planning import profile
from controlplane.spec.deployment import run_config
from controlplane.spec.live_additions import LiveAdditions
from controlplane.spec.models import ChainSpec, Spec
from controlplane.spec.port_models import PortSpec

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


VXLAN = {"vni": 4242, "remote": "198.18.0.2"}


@pytest.mark.parametrize(
    ("vxlan", "field", "words"),
    [
        (VXLAN | {"namespace": "tdw-nowhere"}, "port.vxlan.namespace", "no network namespace tdw-nowhere"),
        (VXLAN | {"local": "2001:db8::1"}, "port.vxlan.local", "not of one IP version"),
    ],
)
def test_a_vxlan_tandem_could_not_make_is_refused_naming_its_field(additions, vxlan, field, words):
    problems = refusal(additions, name="q", vxlan=vxlan)
    assert problems[0][0] == field and words in problems[0][1], problems


def test_a_vxlan_port_is_a_wire_on_the_interface_tandem_makes_and_its_vni_is_its_own(additions):
    config = additions.port(PortSpec.model_validate({"name": "q", "vxlan": VXLAN}))
    assert config["wire"] and config["vxlan"] == VXLAN | {
        "local": None,
        "dstport": 4789,
        "namespace": None,
        "interface": "tdx-q",
        "mtu": 1520,  # a full packet and the wire's trailer
    }
    assert config["device"].startswith("net_af_packet_vx") and ",iface=tdx-q," in config["device"]
    additions.follow({"event": "change", "op": "add_port", "port": "q", "state": "applied"})
    problems = refusal(additions, name="r", vxlan=VXLAN | {"remote": "198.18.0.3"})
    assert problems == [("port.vxlan.vni", "VNI 4242 on UDP port 4789 is port 'q''s")], problems
    assert additions.port(PortSpec.model_validate({"name": "r", "vxlan": VXLAN | {"dstport": 4790}}))["wire"]


def test_a_port_whose_link_was_not_made_is_forgotten(additions):
    additions.port(PortSpec.model_validate({"name": "q", "vxlan": VXLAN}))
    additions.forget("q")
    assert additions.port(PortSpec.model_validate({"name": "q", "vxlan": VXLAN}))["name"] == "q"


@pytest.mark.parametrize(
    ("port", "words"),
    [
        ({"name": "q"}, "exactly one of them"),
        ({"name": "q", "device": "net_null_q", "vxlan": VXLAN}, "exactly one of them"),
        ({"name": "q", "vxlan": VXLAN | {"remote": "224.0.0.1"}}, "not one node's address"),
        ({"name": "q", "vxlan": VXLAN | {"remote": "node-b"}}, "not an IPv4 or IPv6 address"),
        ({"name": "q", "vxlan": VXLAN | {"vni": 1 << 24}}, "less than or equal to 16777215"),
        ({"name": "q", "vxlan": VXLAN | {"namespace": ".."}}, "should match pattern"),
    ],
)
def test_a_vxlan_port_the_spec_cannot_mean_is_refused_as_it_is_read(port, words):
    with pytest.raises(ValueError, match=words):
        PortSpec.model_validate(port)


def test_an_added_chains_nf_takes_its_cost_from_a_running_twin_else_from_the_profilers_cache(tmp_path, monkeypatch):
    # The cache as the profiler writes it, on this machine and build; the running NF `n` has a cost of its own.
    monkeypatch.setattr(profile, "CACHE_PATH", tmp_path / "cycle-costs.json")
    running = run_config(SPEC, None, None)
    running["chains"][0]["nfs"][0]["cost_cycles"] = 120.0
    additions = LiveAdditions(SPEC, running, known_costs=profile.cached_costs)
    nfs = [
        {"name": "twin", "type": "macswap", "core": 1},
        {"name": "known", "type": "counter", "core": 1},
        {"name": "unknown", "type": "ttl", "core": 1},
    ]
    request = ChainSpec.model_validate({"name": "d", "nfs": nfs})
    before = additions.chain(request)
    assert "cost_cycles" not in before["nfs"][1]  # the cache is empty
    profile.save_cache({profile.cost_key(before["nfs"][1], {"chains": [before]}): {"cycles_per_packet": 310.0}})
    costs = {nf["name"]: (nf.get("cost_cycles"), nf.get("cost_source")) for nf in additions.chain(request)["nfs"]}
    assert costs["twin"] == (120.0, "as NF n")
    assert costs["known"] == (310.0, "measured before (the profiler's cache)")
    assert costs["unknown"] == (None, None)  # the data plane refuses it where its scheduler needs costs
