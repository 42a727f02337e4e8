"""The text report of one run: per chain, per NF and per scaling group, as `./tandem run` prints it."""

from __future__ import annotations

import json
import statistics
from collections import Counter

from controlplane.results.auto_report import auto_decision_lines, switch_cost_line
from controlplane.results.planning_report import placement_report
from controlplane.results.port_report import lab_report, ports_report
from controlplane.terminal.tables import count, number, table


def _os_value(os_counters: dict, name: str, scale: float = 1.0, digits: int = 0):
    return "n/a" if name not in os_counters else f"{os_counters[name] * scale:.{digits}f}"


def _of_capacity(group: dict) -> str:
    """' (of N a feeder can hold)', where the results say it (older ones do not)."""
    return f" (of {count(group['hold_capacity'])} a feeder can hold)" if "hold_capacity" in group else ""


def scaling_report(group: dict, chains: list[dict]) -> str:
    """A scaled NF: its decisions, and what moving flows between instances cost (held, dropped, reordered)."""
    reorders = [
        f"{chain['name']} {count(chain['flow_reorders'])}" for chain in chains if chain.get("flow_reorders") is not None
    ]
    lines = [
        f"scaling {group['nf']}: {len(group['instances'])} instances at most, "
        f"{group['in_use_at_end']} in use at the end; "
        f"{count(group['switches'])} changes made, {count(group['held_peak'])} packets held at most while flows moved"
        f"{_of_capacity(group)}, "
        f"{count(group['held_dropped'])} of them dropped; packets out of flow order: {', '.join(reorders)}"
    ]
    for event in group["events"]:
        took = event["took_effect_s"]
        made = f"made at {took:.2f} s" if took is not None else "not made before the end"
        lines.append(
            f"  {event['t_s']:5.2f} s: scale {event['change']} to {event['instances']} "
            f"({event['instance']} on core {event['core']}, "
            f"{made}): {event['reason']}"
        )
    return "\n".join(lines)


def run_report(results: dict) -> str:
    scheduler = results["scheduler"]
    options = ", ".join(f"{k}={v}" for k, v in scheduler["options"].items())
    lines = [
        f"{results['name']} under {scheduler['name']}{f' ({options})' if options else ''}: "
        f"{results['chains'][0]['window']['seconds']:.2f} s measured after {results['warmup_s']} s warm-up",
        "",
    ]
    chain_rows = []
    for chain in results["chains"]:
        latency = chain["latency_us"]
        chain_rows.append(
            [
                chain["name"],
                number(chain["window"]["offered_mpps"]),
                number(chain["window"]["delivered_mpps"]),
                number(chain["window"]["delivered_gbps"]),
                number(latency.get("p50"), 1),
                number(latency.get("p99"), 1),
                count(chain["dropped"]["total"]),
                count(chain["hop_errors"]),
            ]
        )
    lines.append(
        table(
            ["chain", "offered Mpps", "delivered Mpps", "Gbps", "p50 us", "p99 us", "dropped", "hop errors"], chain_rows
        )
    )
    lines.append("")
    nf_rows = []
    unavailable, ended = set(), {}
    for nf in results["nfs"]:
        window, os_counters = nf["window"], nf["os"]
        if os_counters.get("unavailable_reason"):
            ended[nf["name"]] = os_counters["unavailable_reason"]
        else:
            unavailable.update(os_counters.get("unavailable", []))
        nf_rows.append(
            [
                nf["name"],
                nf["type"],
                nf["core"],
                number(window["in_mpps"]),
                count(nf["packets_dropped"]),
                number(window["cycles_per_packet"], 0),
                number(window["busy_share"], 0, 100),
                _os_value(os_counters, "cpu_share", 100),
                _os_value(os_counters, "runnable_wait_share", 100),
                _os_value(os_counters, "voluntary_switches_per_s"),
                _os_value(os_counters, "involuntary_switches_per_s"),
                _os_value(os_counters, "migrations_per_s"),
            ]
        )
    lines.append(
        table(
            [
                "NF",
                "type",
                "core",
                "in Mpps",
                "dropped",
                "cyc/pkt",
                "busy %",
                "CPU %",
                "wait %",
                "vol cs/s",
                "invol cs/s",
                "migr/s",
            ],
            nf_rows,
            align_left=2,
        )
    )
    if unavailable:
        lines.append(f"(n/a: {', '.join(sorted(unavailable))} not available on this machine)")
    for name, reason in ended.items():
        lines.append(f"(n/a for NF {name}: OS counters are read from /proc at the window's end, and {reason})")
    for nf in results["nfs"]:
        if nf.get("report"):  # what the NF itself counted (validate_url's drops per pattern, count_url's top URLs, ...)
            lines.append(
                f"{nf['name']} ({nf['type']}): "
                + ", ".join(f"{key} {json.dumps(value)}" for key, value in nf["report"].items())
            )
        if earlier := nf.get("earlier_reports"):  # the instances before its last: their figures are in the JSON
            ended = Counter(report["ended"] for report in earlier)
            lines.append(
                f"{nf['name']}: the above is its last instance's; {len(earlier)} before it ended by "
                + ", ".join(f"{why} x{count}" for why, count in ended.items())
                + " (earlier_reports in the JSON)"
            )
    lines.append("")
    for chain in results["chains"]:
        places = {
            **chain["dropped"]["rings"],
            **chain["dropped"]["nfs"],
            **{f"{nf}:label-miss": n for nf, n in chain["dropped"].get("label_misses", {}).items()},
            "entry-backpressure": chain["dropped"].get("entry_backpressure", 0),
        }
        where = ", ".join(f"{name} {count(n)}" for name, n in places.items() if n) or "none"
        verdict = "exact" if chain["accounting_exact"] else "MISMATCH"
        copies = chain.get("copies") or {}
        forked = f" + {count(copies['forked'])} copies" if copies.get("forked") else ""
        merged = f" + {count(copies['merged'])} merged" if copies.get("merged") else ""
        lines.append(
            f"accounting {chain['name']}: {count(chain['generated'])} generated{forked} "
            f"= {count(chain['delivered'])} delivered"
            f" + {count(chain['dropped']['total'])} dropped{merged} "
            f"+ {count(chain['in_flight']['total'])} in flight: {verdict}"
            f" (drops at: {where}; wasted work: {count(chain.get('wasted_work', 0))} processed then dropped)"
        )
    for chain, interfaces in (results.get("kernel_interfaces") or {}).items():
        dropped = sum(c["rx_dropped"] + c["tx_dropped"] for c in interfaces.values() if c)
        links = [ring["kernel_link"] for ring in results["rings"] if ring["chain"] == chain and "kernel_link" in ring]
        lost, full, with_receiver = (
            sum(link.get(key, 0) for link in links)
            for key in ("lost_before_socket", "dropped_socket_full", "lost_with_receiver")
        )
        # A receiver killed (or restarted): what its socket held, and what came while no socket was there.
        dead = f", {count(with_receiver)} lost with a dead receiver" if with_receiver else ""
        lines.append(
            f"kernel links {chain}: {count(full)} dropped by full sockets, {count(lost)} lost before a socket{dead}; "
            f"the interfaces' own drop counters: {count(dropped)}"
        )
    if results.get("capture"):
        lines.append(
            f"capture: {count(results['capture']['packets'])} delivered packets written to {results['capture']['path']}"
        )
    if results.get("generator_build_cycles_per_packet"):
        lines.append(f"generator: {results['generator_build_cycles_per_packet']:.0f} cycles to build a frame")
    if results.get("cycle_costs"):
        lines.append(
            "cycle costs: "
            + ", ".join(
                f"{name} {cost['cycles_per_packet']:.0f} cyc/pkt ({cost['source']})"
                for name, cost in results["cycle_costs"].items()
            )
        )
    if results.get("switch_costs"):
        lines.append(switch_cost_line(results["switch_costs"]))
    report = scheduler.get("report", {})
    if "decisions" in report:  # auto: what it chose and why, then the chosen policy's own report
        lines += auto_decision_lines(report)
        report = report.get("policy_report", {})
    if "switches" in report:
        seconds = max(results["chains"][0]["window"]["seconds"] + results["warmup_s"], 1e-9)
        per_switch_us = report.get("controller_us_per_switch")
        # The switches' system calls run on the control core, which the generator and the sink share.
        control_share = (
            ""
            if per_switch_us is None
            else f" ({per_switch_us * report['switches'] / seconds / 1e4:.0f} % of the control core)"
        )
        lines.append(
            f"scheduler: {count(report['switches'])} switches (~{report['switches'] / seconds:,.0f}/s), "
            f"{number(per_switch_us, 1)} us in the process controller per switch{control_share}"
        )
        ended = {}
        for nf in report.get("nfs", {}).values():
            for reason, n in nf.get("yielded", {}).items():
                ended[reason] = ended.get(reason, 0) + n
        if (turns := sum(ended.values())) > 0:
            lines.append(
                "turns ended by: "
                + ", ".join(f"{reason.replace('_', ' ')} {100 * n / turns:.0f} %" for reason, n in ended.items())
            )
    if "weight_updates" in report:
        lines.append(
            f"scheduler: {count(report['weight_updates'])} weight updates, "
            f"{count(report['shares_writes'])} cpu.shares writes, "
            f"{count(report['wakeups'])} wake-ups, "
            f"{count(report['congestion_episodes'])} congestion episodes; cost {report['cost_mode']}"
        )
        lines.append(
            "cpu.shares (mean over the run): "
            + ", ".join(
                f"{name} {number(nf['shares_mean'], 0)} ({number(nf['arrival_mpps'])} Mpps "
                f"x {number(nf['cost_cycles'], 0)} cyc"
                f"{'' if nf['weight'] == 1 else ' x weight ' + number(nf['weight'])})"
                for name, nf in report["nfs"].items()
            )
        )
    if "order_tables" in report:
        lines.append(
            "bubble batches (initial -> final): "
            + ", ".join(f"{name} {nf['batch_initial']}->{nf['batch_final']}" for name, nf in report["nfs"].items())
        )
        loads = report["load"]
        if loads:
            per_core = {
                core: [sample["cores"].get(core, {}).get("utilisation", 0) for sample in loads]
                for core in loads[-1]["cores"]
            }
            lines.append(
                f"bubble load ({len(loads)} windows): "
                + ", ".join(
                    f"core {core} {number(100 * statistics.median(values), 0)} % median"
                    for core, values in per_core.items()
                )
            )
        for event in report["scale_events"][:5]:
            lines.append(
                f"bubble scale event at {event['t_s']:.2f} s: {event['worker']} "
                f"at {100 * event['utilisation']:.0f} %: {event['action']}"
            )
    for group in results.get("scaling") or []:
        lines.append(scaling_report(group, results["chains"]))
    if results.get("placement"):
        lines.append(placement_report(results["placement"]))
    if results.get("ports"):
        lines += ["", ports_report(results["ports"])]
    if results.get("lab"):
        lines += ["", lab_report(results["lab"])]
    pool = results["accounting"]
    if pool["pool_matches_in_flight"] is None:
        cut = ", ".join(
            f"{f['nf']} ({f['mbufs']} mbufs, worker {f['worker']})" for f in pool.get("interrupted_frees", [])
        )
        why = pool.get("pool_unchecked_because") or "a worker died while returning mbufs to the pool"
        lines.append(
            f"pool not checked: {why}{f' ({cut})' if cut else ''}; it shows {pool['pool_difference']:+d} mbufs against "
            "the packets in flight; the counters balance"
        )
    elif not pool["pool_matches_in_flight"]:
        lines.append(
            f"MISMATCH: {count(pool['mbufs_in_use'])} mbufs in use but {count(pool['in_flight'])} packets in flight"
        )
    for warning in results.get("warnings", []):
        lines.append(f"warning: {warning}")
    if results.get("error"):
        lines.append(f"error: {results['error']}")
    return "\n".join(lines)
