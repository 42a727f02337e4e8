"""Text tables of run and comparison results, and a description of the machine they came from."""
from __future__ import annotations

import csv
import io
import json

import os
import platform
import statistics

from controlplane.robust_estimate import SPREAD_WARNING


def machine_description() -> str:
    model = "unknown CPU"
    virtual = False
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name") and model == "unknown CPU":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags") and " hypervisor" in line:
                    virtual = True
    except OSError:
        pass
    kind = "VM" if virtual else "host"
    return f"{os.cpu_count()} vCPU {kind}, {model}, Linux {platform.release()}"


def table(headers: list[str], rows: list[list], align_left: int = 1) -> str:
    """A plain aligned table; the first `align_left` columns are left-aligned, the rest right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for index, row in enumerate(cells):
        parts = [c.ljust(w) if i < align_left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(parts).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def count(n: int | float) -> str:
    return f"{int(n):,}"


def number(value, digits: int = 2, scale: float = 1.0) -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}"


def _os_value(os_counters: dict, name: str, scale: float = 1.0, digits: int = 0):
    return "n/a" if name not in os_counters else f"{os_counters[name] * scale:.{digits}f}"


def _of_capacity(group: dict) -> str:
    """' (of N a feeder can hold)', where the results say it (older ones do not)."""
    return f" (of {count(group['hold_capacity'])} a feeder can hold)" if "hold_capacity" in group else ""


def scaling_report(group: dict, chains: list[dict]) -> str:
    """A scaled NF: its decisions, and what moving flows between instances cost (held, dropped, reordered)."""
    reorders = [f"{chain['name']} {count(chain['flow_reorders'])}" for chain in chains if chain.get("flow_reorders") is not None]
    lines = [f"scaling {group['nf']}: {len(group['instances'])} instances at most, {group['in_use_at_end']} in use at the end; "
             f"{count(group['switches'])} changes made, {count(group['held_peak'])} packets held at most while flows moved"
             f"{_of_capacity(group)}, "
             f"{count(group['held_dropped'])} of them dropped; packets out of flow order: {', '.join(reorders)}"]
    for event in group["events"]:
        took = event["took_effect_s"]
        made = f"made at {took:.2f} s" if took is not None else "not made before the end"
        lines.append(f"  {event['t_s']:5.2f} s: scale {event['change']} to {event['instances']} ({event['instance']} on core {event['core']}, "
                     f"{made}): {event['reason']}")
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
        chain_rows.append([
            chain["name"],
            number(chain["window"]["offered_mpps"]),
            number(chain["window"]["delivered_mpps"]),
            number(chain["window"]["delivered_gbps"]),
            number(latency.get("p50"), 1),
            number(latency.get("p99"), 1),
            count(chain["dropped"]["total"]),
            count(chain["hop_errors"]),
        ])
    lines.append(table(["chain", "offered Mpps", "delivered Mpps", "Gbps", "p50 us", "p99 us", "dropped", "hop errors"], chain_rows))
    lines.append("")
    nf_rows = []
    unavailable, ended = set(), {}
    for nf in results["nfs"]:
        window, os_counters = nf["window"], nf["os"]
        if os_counters.get("unavailable_reason"):
            ended[nf["name"]] = os_counters["unavailable_reason"]
        else:
            unavailable.update(os_counters.get("unavailable", []))
        nf_rows.append([
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
        ])
    lines.append(table(
        ["NF", "type", "core", "in Mpps", "dropped", "cyc/pkt", "busy %", "CPU %", "wait %", "vol cs/s", "invol cs/s", "migr/s"],
        nf_rows, align_left=2,
    ))
    if unavailable:
        lines.append(f"(n/a: {', '.join(sorted(unavailable))} not available on this machine)")
    for name, reason in ended.items():
        lines.append(f"(n/a for NF {name}: OS counters are read from /proc at the window's end, and {reason})")
    for nf in results["nfs"]:
        if nf.get("report"):  # what the NF itself counted (validate_url's drops per pattern, count_url's top URLs, ...)
            lines.append(f"{nf['name']} ({nf['type']}): " + ", ".join(f"{key} {json.dumps(value)}" for key, value in nf["report"].items()))
    lines.append("")
    for chain in results["chains"]:
        places = {**chain["dropped"]["rings"], **chain["dropped"]["nfs"],
                  **{f"{nf}:label-miss": n for nf, n in chain["dropped"].get("label_misses", {}).items()},
                  "entry-backpressure": chain["dropped"].get("entry_backpressure", 0)}
        where = ", ".join(f"{name} {count(n)}" for name, n in places.items() if n) or "none"
        verdict = "exact" if chain["accounting_exact"] else "MISMATCH"
        copies = chain.get("copies") or {}
        forked = f" + {count(copies['forked'])} copies" if copies.get("forked") else ""
        merged = f" + {count(copies['merged'])} merged" if copies.get("merged") else ""
        lines.append(
            f"accounting {chain['name']}: {count(chain['generated'])} generated{forked} = {count(chain['delivered'])} delivered"
            f" + {count(chain['dropped']['total'])} dropped{merged} + {count(chain['in_flight']['total'])} in flight: {verdict}"
            f" (drops at: {where}; wasted work: {count(chain.get('wasted_work', 0))} processed then dropped)"
        )
    for chain, interfaces in (results.get("kernel_interfaces") or {}).items():
        dropped = sum(c["rx_dropped"] + c["tx_dropped"] for c in interfaces.values() if c)
        lost = sum(ring["kernel_link"].get("lost_before_socket", 0) for ring in results["rings"]
                   if ring["chain"] == chain and "kernel_link" in ring)
        full = sum(ring["kernel_link"].get("dropped_socket_full", 0) for ring in results["rings"]
                   if ring["chain"] == chain and "kernel_link" in ring)
        lines.append(f"kernel links {chain}: {count(full)} dropped by full sockets, {count(lost)} lost before a socket; "
                     f"the interfaces' own drop counters: {count(dropped)}")
    if results.get("capture"):
        lines.append(f"capture: {count(results['capture']['packets'])} delivered packets written to {results['capture']['path']}")
    if results.get("generator_build_cycles_per_packet"):
        lines.append(f"generator: {results['generator_build_cycles_per_packet']:.0f} cycles to build a frame")
    if results.get("cycle_costs"):
        lines.append("cycle costs: " + ", ".join(
            f"{name} {cost['cycles_per_packet']:.0f} cyc/pkt ({cost['source']})" for name, cost in results["cycle_costs"].items()))
    report = scheduler.get("report", {})
    if "switches" in report:
        seconds = max(results["chains"][0]["window"]["seconds"] + results["warmup_s"], 1e-9)
        per_switch_us = report.get("controller_us_per_switch")
        # The switches' system calls run on the control core, which the generator and the sink share.
        control_share = "" if per_switch_us is None else \
            f" ({per_switch_us * report['switches'] / seconds / 1e4:.0f} % of the control core)"
        lines.append(f"scheduler: {count(report['switches'])} switches (~{report['switches'] / seconds:,.0f}/s), "
                     f"{number(per_switch_us, 1)} us in the process controller per switch{control_share}")
        ended = {}
        for nf in report.get("nfs", {}).values():
            for reason, n in nf.get("yielded", {}).items():
                ended[reason] = ended.get(reason, 0) + n
        if (turns := sum(ended.values())) > 0:
            lines.append("turns ended by: " + ", ".join(
                f"{reason.replace('_', ' ')} {100 * n / turns:.0f} %" for reason, n in ended.items()))
    if "weight_updates" in report:
        lines.append(
            f"scheduler: {count(report['weight_updates'])} weight updates, {count(report['shares_writes'])} cpu.shares writes, "
            f"{count(report['wakeups'])} wake-ups, {count(report['congestion_episodes'])} congestion episodes; cost {report['cost_mode']}")
        lines.append("cpu.shares (mean over the run): " + ", ".join(
            f"{name} {number(nf['shares_mean'], 0)} ({number(nf['arrival_mpps'])} Mpps x {number(nf['cost_cycles'], 0)} cyc"
            f"{'' if nf['weight'] == 1 else ' x weight ' + number(nf['weight'])})" for name, nf in report["nfs"].items()))
    if "order_tables" in report:
        lines.append("bubble batches (initial -> final): " + ", ".join(
            f"{name} {nf['batch_initial']}->{nf['batch_final']}" for name, nf in report["nfs"].items()))
        loads = report["load"]
        if loads:
            per_core = {core: [sample["cores"].get(core, {}).get("utilisation", 0) for sample in loads] for core in loads[-1]["cores"]}
            lines.append(f"bubble load ({len(loads)} windows): " + ", ".join(
                f"core {core} {number(100 * statistics.median(values), 0)} % median" for core, values in per_core.items()))
        for event in report["scale_events"][:5]:
            lines.append(f"bubble scale event at {event['t_s']:.2f} s: {event['worker']} at {100 * event['utilisation']:.0f} %: {event['action']}")
    for group in results.get("scaling") or []:
        lines.append(scaling_report(group, results["chains"]))
    if results.get("placement"):
        lines.append(placement_report(results["placement"]))
    pool = results["accounting"]
    if pool["pool_matches_in_flight"] is None:
        cut = ", ".join(f"{f['nf']} ({f['mbufs']} mbufs, worker {f['worker']})" for f in pool.get("interrupted_frees", []))
        why = pool.get("pool_unchecked_because") or "a worker died while returning mbufs to the pool"
        lines.append(f"pool not checked: {why}{f' ({cut})' if cut else ''}; it shows {pool['pool_difference']:+d} mbufs against "
                     "the packets in flight; the counters balance")
    elif not pool["pool_matches_in_flight"]:
        lines.append(f"MISMATCH: {count(pool['mbufs_in_use'])} mbufs in use but {count(pool['in_flight'])} packets in flight")
    for warning in results.get("warnings", []):
        lines.append(f"warning: {warning}")
    if results.get("error"):
        lines.append(f"error: {results['error']}")
    return "\n".join(lines)


def run_summary(results: dict) -> dict:
    """The numbers a comparison puts side by side, from one run's results."""
    chains = results["chains"]
    latencies = [c["latency_us"] for c in chains if c["latency_us"].get("samples")]
    workers = results["workers"]

    def switches(w):
        os_counters = w["os"]
        if "voluntary_switches_per_s" not in os_counters:
            return None
        return os_counters["voluntary_switches_per_s"] + os_counters.get("involuntary_switches_per_s", 0)

    per_worker = [switches(w) for w in workers]
    return {
        "delivered_mpps": sum(c["window"]["delivered_mpps"] for c in chains),
        "offered_mpps": sum(c["window"]["offered_mpps"] for c in chains),
        # The worst chain's latency: a scheduler that starves one chain must not hide behind another.
        "p50_us": max((l["p50"] for l in latencies), default=None),
        "p99_us": max((l["p99"] for l in latencies), default=None),
        "dropped": sum(c["dropped"]["total"] for c in chains),
        "context_switches_per_s": None if None in per_worker else sum(per_worker),
        "accounting_exact": all(c["accounting_exact"] for c in chains) and results["accounting"]["exact"],
        "hop_errors": sum(c["hop_errors"] for c in chains),
        # What the chains' first NFs pay a packet: they take every frame fresh from the control core, so this
        # shows what the host's memory system costs in this run (the benchmarks tell the VM's modes apart by it).
        "entry_nf_cycles_per_packet": _entry_nf_cost(results),
        "compute_bound_mpps": compute_bound_mpps(results),
    }


def compute_bound_mpps(results: dict) -> float | None:
    """The compute-only bound (issue 20): what the NF cores could deliver if they did nothing but the NFs' work,
    at this run's measured cycles a packet. Per core, the cycles a delivered packet costs there (each NF's cycles
    a packet times the packets it took in per delivered one); the busiest core bounds the total. None where a cost
    or the clock is unknown, or nothing was delivered."""
    delivered = sum(c["window"]["delivered_mpps"] for c in results["chains"])
    hz = results.get("tsc_hz")
    if not delivered or not hz:
        return None
    per_core: dict[int, float] = {}
    for nf in results["nfs"]:
        cost = nf["window"].get("cycles_per_packet")
        if cost is None:
            return None
        per_core[nf["core"]] = per_core.get(nf["core"], 0.0) + cost * nf["window"]["in_mpps"] / delivered
    busiest = max(per_core.values(), default=0.0)
    return hz / busiest / 1e6 if busiest else None


def _entry_nf_cost(results: dict) -> float | None:
    names = {chain["nfs"][0] for chain in results["chains"] if chain.get("nfs")}
    costs = [nf["window"].get("cycles_per_packet") for nf in results["nfs"] if nf["name"] in names]
    costs = [c for c in costs if c]
    return statistics.mean(costs) if costs else None


def median_of(values):
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def comparison_bound(comparison: dict) -> tuple[float | None, str]:
    """The comparison's compute-only bound and whose runs it comes from: rtc's (the least disturbed NF costs) where
    it ran, otherwise every scheduler's runs; the median of the runs' bounds."""
    rtc_runs = comparison["schedulers"].get("rtc", {}).get("runs") or []
    source, runs = ("rtc's runs", rtc_runs) if rtc_runs else ("every run", [r for e in comparison["schedulers"].values() for r in e["runs"]])
    return median_of([r.get("compute_bound_mpps") for r in runs]), source


def comparison_report(comparison: dict) -> str:
    rows = []
    ceiling = (comparison["schedulers"].get("rtc", {}).get("median") or {}).get("delivered_mpps")
    bound, bound_source = comparison_bound(comparison)
    best_rtc = (comparison.get("ceilings") or {}).get("best_rtc") or {}
    for name, entry in comparison["schedulers"].items():
        median = entry["median"]
        if not median:
            rows.append([name, "failed", "", "", "", "", "", "", "", entry.get("error", "")])
            continue
        ratio = f"{median['delivered_mpps'] / ceiling:.1%}" if ceiling else "n/a"
        of_best_rtc = f"{median['delivered_mpps'] / best_rtc['mpps']:.1%}" if best_rtc.get("mpps") else "n/a"
        of_bound = f"{median['delivered_mpps'] / bound:.1%}" if bound else "n/a"
        runs = entry["runs"]
        rows.append([
            name,
            number(median["delivered_mpps"], 3),
            ratio,
            of_best_rtc,
            of_bound,
            number(median["p50_us"], 1),
            number(median["p99_us"], 1),
            count(median["dropped"]),
            "n/a" if median["context_switches_per_s"] is None else count(median["context_switches_per_s"]),
            f"{sum(r['accounting_exact'] for r in runs)}/{len(runs)} exact",
        ])
    header = (
        f"{comparison['spec_name']}: median of {comparison['repeat']} runs of {comparison['duration_s']} s each "
        f"on {comparison['machine']}\n"
        f"vs rtc: against rtc's median (batches of the spec's burst); vs best rtc: against the best of rtc over batches "
        + (f"{min(map(int, best_rtc['by_batch']))}...{max(map(int, best_rtc['by_batch']))}, {best_rtc['mpps']:.2f} Mpps at batch {best_rtc['batch']} (one run each)"
           if best_rtc.get("mpps") else f"32...1024 ({best_rtc.get('unavailable') or 'not run'})")
        + "; vs bound: against the compute-only bound, "
        + (f"{bound:.2f} Mpps (core cycles / the NFs' cycles a packet on the busiest core, from {bound_source})" if bound
           else "unknown (no run measured every NF's cycles a packet)")
    )
    body = table(["scheduler", "Mpps", "vs rtc", "vs best rtc", "vs bound", "p50 us", "p99 us", "dropped", "cs/s", "accounting"], rows)
    return header + "\n\n" + body


CSV_COLUMNS = ["scheduler", "run", "delivered_mpps", "vs_rtc", "offered_mpps", "p50_us", "p99_us", "dropped",
               "context_switches_per_s", "accounting_exact", "hop_errors", "error"]


def comparison_csv(comparison: dict) -> str:
    """One row per run and scheduler, the table's columns unrounded: what a spreadsheet or pandas loads. vs_rtc
    divides by the rtc run of the same round (compare runs the schedulers round-robin, so the two ran back to
    back); a cell the run could not measure is empty, and a scheduler whose runs failed gets a row with its error."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    rtc_runs = comparison["schedulers"].get("rtc", {}).get("runs", [])
    for name, entry in comparison["schedulers"].items():
        for index, run in enumerate(entry["runs"]):
            ceiling = rtc_runs[index]["delivered_mpps"] if index < len(rtc_runs) else None
            vs_rtc = run["delivered_mpps"] / ceiling if ceiling else None
            writer.writerow([name, index + 1, run["delivered_mpps"], vs_rtc, run["offered_mpps"], run["p50_us"], run["p99_us"],
                             run["dropped"], run["context_switches_per_s"], run["accounting_exact"], run.get("hop_errors"), ""])
        if entry.get("error"):
            writer.writerow([name, len(entry["runs"]) + 1] + [None] * (len(CSV_COLUMNS) - 3) + [entry["error"]])
    return out.getvalue()


def placement_report(solution: dict, config: dict | None = None) -> str:
    if solution.get("objective_kind") == "fewest_cores":
        crossing = solution["crossing_edges"]
        goal = (f"fewest cores (μNF-MC): {len(solution['cores_used'])} of {len(solution['core_utilisation'])} carry every chain at its "
                f"rate; edges between cores: {', '.join(f'{a}->{b}' for a, b in crossing) or 'none'}")
    else:
        goal = f"objective {solution['objective'] / 1e6:.3f} weighted Mpps"
    lines = [f"placement by {solution['solver']}: {goal}; "
             f"accepted {', '.join(solution['accepted']) or 'none'}" + (f"; rejected {', '.join(solution['rejected'])}" if solution["rejected"] else "")]
    shares = {nf: share for entry in (solution.get("rate_shares") or {}).values() for nf, share in entry["nfs"].items()}
    rows = [[name, core, f"{solution['planned_rate_pps'][name] / 1e6:.3f}"] + ([f"{shares[name]:.0%}"] if shares else [])
            for name, core in solution["placement"].items()]
    lines.append(table(["NF", "core", "planned Mpps"] + (["share of chain"] if shares else []), rows))
    for chain, entry in (solution.get("rate_shares") or {}).items():
        lines.append(f"  {chain}'s shares: {entry['source']}")
    lines.append("cores: " + ", ".join(f"{core} {100 * u:.0f} % busy" for core, u in solution["core_utilisation"].items())
                 + "; chains: " + ", ".join(f"{chain} {pps / 1e6:.3f} Mpps" for chain, pps in solution["throughput_pps"].items()))
    return "\n".join(lines)


def _spread_cell(cost: dict) -> str:
    if cost.get("spread") is None:
        return "-"  # given in the spec, or measured in one round: no spread to show
    flag = " !" if cost["spread"] > SPREAD_WARNING else ""
    return f"±{cost['spread']:.0%}{flag}"


def profile_report(document: dict) -> str:
    """The cycle estimates of a spec's NFs and the switch latency of each process-controller backend."""
    rows = []
    for name, cost in document["cycle_costs"].items():
        sizes = cost.get("per_size_cycles") or {}
        rows.append([
            name,
            number(cost["cycles_per_packet"], 0),
            _spread_cell(cost),
            number(cost.get("ns_per_packet"), 1),
            number(cost.get("cycles_inside_nf"), 0),
            "yes (mean of 64-1500 B)" if cost.get("size_dependent") else ("no" if sizes else "-"),
            " ".join(f"{size}B:{value:.0f}" for size, value in sorted(sizes.items(), key=lambda item: int(item[0]))) or "-",
            f"{cost['source']} {cost['measured_at'][:10]}" if cost.get("measured_at") else cost["source"],
        ])
    lines = [f"cycle estimates ({document['machine']}): probe batches through each NF alone on its core, ring I/O included;",
             "median of interleaved rounds, spread = how far the middle 80 % of the rounds' estimates reach from it", "",
             table(["NF", "cyc/pkt", "spread", "ns/pkt", "inside NF", "size-dependent", "per size", "source"], rows)]
    if any((cost.get("spread") or 0) > SPREAD_WARNING for cost in document["cycle_costs"].values()):
        lines += ["", f"! spread above ±{SPREAD_WARNING:.0%}: the machine was noisy while it was measured; "
                  "`./tandem profile --refresh SPEC` measures again"]
    latency = document.get("switch_latency")
    if latency:
        rows = []
        for backend, entry in latency.items():
            if not entry.get("supported"):
                rows.append([backend, "unsupported here", "", "", entry.get("reason", "")])
            elif entry.get("error"):
                rows.append([backend, "failed", "", "", entry["error"]])
            else:
                visible, call = entry.get("visible_us") or {}, entry.get("call_us") or {}
                missed = entry.get("not_seen_within_50ms", 0)
                rows.append([backend, number(visible.get("p50"), 1), number(visible.get("p90"), 1), number(call.get("p50"), 1),
                             f"{missed} of {entry['rounds']} switches not seen within 50 ms" if missed else ""])
        lines += ["", f"process-controller switch latency on core {document['switch_latency_core']} (two idle NFs, call until the other runs):", "",
                  table(["backend", "p50 us", "p90 us", "call p50 us", "note"], rows)]
    return "\n".join(lines)
