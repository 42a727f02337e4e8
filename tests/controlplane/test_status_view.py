"""`ctl status` says what the service lost so far, or that it lost nothing, and a change's dip only against a rate."""

from __future__ import annotations

from controlplane.cli.status_view import change_line, status_text
from controlplane.launch.control_api import Status


def service(**changes) -> Status:
    status = {
        "name": "lab",
        "scheduler": "coop",
        "phase": "measure",
        "t_s": 12.0,
        "chains": [{"name": "to-server", "generated": 1000, "delivered": 990, "entry_backpressure": 0}],
        "nfs": [{"name": "fw1", "chain": "to-server", "pid": 7, "core": 1, "packets_in": 995, "packets_dropped": 5}],
    }
    return Status.model_validate(status | changes)


def test_a_service_that_lost_nothing_says_so_though_its_firewall_denied_packets():
    shown = status_text(service())
    # fw1's 5 drops are its rules' denies: its own decisions, in the NF table, not losses.
    assert shown.endswith(
        "lost so far: nothing (no full ring dropped a packet, nothing shed at an entry, no NF crashed)"
    )


def test_each_loss_is_named_by_its_place():
    chains = [{"name": "to-server", "generated": 1000, "delivered": 900, "entry_backpressure": 40}]
    nfs = [
        {"name": "fw1", "chain": "to-server", "packets_in": 960, "packets_dropped": 0, "restarts": 2},
        {"name": "fw2", "chain": "to-server", "packets_in": 950, "packets_dropped": 0, "down": True},
    ]
    shown = status_text(service(chains=chains, nfs=nfs, drops_by_ring={"to-server:fw1->fw2": 12}))
    last = shown.splitlines()[-1]
    assert last.startswith("lost so far: full rings dropped 12 (to-server:fw1->fw2 12); 40 shed at the chains' entries")
    assert "NFs crashed: fw1 (restarted 2x), fw2 (down)" in last, last


def test_before_the_first_report_there_is_nothing_to_say_of_losses():
    assert "lost so far" not in status_text(service(chains=[], nfs=[]))


def test_a_change_after_no_delivery_has_no_dip_to_measure():
    # As after a switch back from a scheduler under which the traffic had stalled: nothing delivered before it.
    change = {
        "op": "set_scheduler",
        "scheduler": "coop",
        "state": "applied",
        "t_requested": 69.22,
        "ring_drops_during": 0,
    }
    stalled = change_line(change | {"cost": {"deficit_ms": None, "latency_max_during_us": 18924536.0}})
    assert stalled.endswith("no delivery before it to measure a dip against, latency max 18924536 us"), stalled
    measured = change_line(
        change | {"cost": {"deficit_ms": 4.25, "latency_max_during_us": 900.0, "latency_max_before_us": 300.0}}
    )
    assert "delivery short by 4.2 ms of its rate, latency max 900 us (before: 300)" in measured, measured
