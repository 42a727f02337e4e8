"""Where each packet's time went (run --profile): a chain's latency broken down by hop, the NF counters behind it,
and what differs between two results files. Reads run results and comparisons as --json writes them."""

from __future__ import annotations

from controlplane.errors import SpecError
from controlplane.machine.primitive_latencies import memory_latency_ns
from controlplane.results.time_explained import explain_process, memory_levels, switch_policy
from controlplane.terminal.tables import number, table

# How the hops of a breakdown are named for people: the wait before an NF, the time in its batch, the last wait.
PARTS = ("behind other work", "NF not running", "queued (split unknown)", "in NF")


def scheduler_breakdowns(document: dict, source: str) -> dict[str, list[dict]]:
    """Per scheduler, the results of its runs that carry breakdowns: one run's file gives one, a comparison one
    per scheduler with every profiled run. A file with none is bad input naming the flag that makes them."""
    if "schedulers" in document and isinstance(document["schedulers"], dict):
        runs = {name: entry.get("results") or [] for name, entry in document["schedulers"].items()}
    elif "chains" in document and "scheduler" in document:
        runs = {document["scheduler"]["name"]: [document]}
    else:
        raise SpecError(source, [("", "not a results file of ./tandem run --json or compare --json")])
    profiled = {
        name: [r for r in results if any(c.get("latency_breakdown") for c in r["chains"])]
        for name, results in runs.items()
    }
    profiled = {name: results for name, results in profiled.items() if results}
    if not profiled:
        raise SpecError(
            source, [("", "has no latency breakdown: run with --profile (./tandem run SPEC --profile --json FILE)")]
        )
    return profiled


def breakdowns_of(runs: list[dict], chain: str) -> list[dict]:
    """The latency breakdowns of one chain in the runs that have one."""
    return [
        c["latency_breakdown"]
        for results in runs
        for c in results["chains"]
        if c["name"] == chain and c.get("latency_breakdown")
    ]


def wire_into(results: dict, chain: str) -> tuple[str, float] | None:
    """The wire port a chain of the run takes its packets from, and the mean one-way delay of every frame it
    received (by the two hosts' clocks: a skew between them adds to it); None for a chain fed otherwise."""
    entry = next((c.get("from_port") for c in results["chains"] if c["name"] == chain), None)
    port = next((p for p in results.get("ports", []) if p["name"] == entry), None)
    delay = ((port or {}).get("wire") or {}).get("delay") or {}
    return (entry, delay["mean_ns"] / 1e3) if "mean_ns" in delay else None


def chain_parts(runs: list[dict], chain: str) -> tuple[dict[str, float], float, int]:
    """One chain's parts in µs per packet, over every run given (weighted by traced packets), its end-to-end
    latency and the traced packets: {"queue for fw1: behind other work": 1.2, "in fw1": 0.4, ..., "queue for the
    sink": 0.1}, in path order. A chain fed by a wire from another node starts with the wire (its frames' mean
    one-way delay), and its end to end counts from the other node's send."""
    parts: dict[str, float] = {}
    total_us, traced = 0.0, 0
    for results in runs:
        breakdown = next((c.get("latency_breakdown") for c in results["chains"] if c["name"] == chain), None)
        if not breakdown or not breakdown["traced_packets"]:
            continue
        weight = breakdown["traced_packets"]
        traced += weight

        def add(name: str, us: float, weight=weight) -> None:
            parts[name] = parts.get(name, 0.0) + us * weight

        if wire := wire_into(results, chain):
            add(f"the wire into {wire[0]} (one-way, every frame)", wire[1])
            total_us += wire[1] * weight
        for nf in breakdown["nfs"]:
            behind, idle = nf["queue_behind_other_work_us"], nf["queue_not_running_us"]
            add(f"queue for {nf['nf']}: {PARTS[0]}", behind)
            add(f"queue for {nf['nf']}: {PARTS[1]}", idle)
            add(f"queue for {nf['nf']}: {PARTS[2]}", max(0.0, nf["queue_us"] - behind - idle))  # not -0.0 from rounding
            add(f"{PARTS[3]} {nf['nf']}", nf["in_nf_us"])
        add("queue for the sink", breakdown["exit_queue_us"])
        total_us += breakdown["end_to_end_us"] * weight
    if not traced:
        return {}, 0.0, 0
    return {name: value / traced for name, value in parts.items()}, total_us / traced, traced


def chains_of(runs: dict[str, list[dict]]) -> list[str]:
    names: list[str] = []
    for results in runs.values():
        for run in results:
            names += [c["name"] for c in run["chains"] if c["name"] not in names]
    return names


def nf_counters(runs: list[dict]) -> list[list]:
    """Per NF, the counters behind its parts (the first run's): cycles a packet, busy and CPU share, the CPU time's
    split between user space and the kernel (SCC's Table 4: a kernel-I/O NF lives in system calls), switches a
    packet (voluntary + involuntary, per packet the NF received)."""
    rows = []
    for nf in runs[0]["nfs"]:
        os_counters = nf.get("os") or {}
        in_pps = nf["window"]["in_mpps"] * 1e6
        switches = [os_counters.get(k) for k in ("voluntary_switches_per_s", "involuntary_switches_per_s")]
        per_packet = sum(switches) / in_pps if None not in switches and in_pps else None
        user, system = os_counters.get("user_share"), os_counters.get("system_share")
        kernel_part = (
            system / (user + system) if user is not None and system is not None and user + system > 0 else None
        )
        rows.append(
            [
                nf["name"],
                number(nf["window"].get("cycles_per_packet"), 0),
                number(nf["window"].get("busy_share"), 0, 100),
                number(os_counters.get("cpu_share"), 0, 100),
                number(kernel_part, 0, 100),
                number(per_packet, 3),
            ]
        )
    return rows


def explain(document: dict, source: str, primitives: dict | None = None) -> str:
    """The breakdown of every chain under every scheduler in a results file; with this machine's `primitives`
    (primitive_latencies.cached()), how much of each NF's time its perf counters explain (SCC's Table 3)."""
    runs = scheduler_breakdowns(document, source)
    lines = []
    for scheduler, results in runs.items():
        for chain in chains_of({scheduler: results}):
            parts, total, traced = chain_parts(results, chain)
            if not traced:
                continue
            wire = wire_into(results[0], chain)
            lines.append(
                f"chain {chain} under {scheduler}: {total:.1f} us per packet end to end"
                + (f" from the other node's send over the wire into {wire[0]}" if wire else "")
                + f" ({traced:,} traced packets in {len(results)} run{'s' if len(results) > 1 else ''})"
            )
            rows = [
                [name, number(us, 2), f"{us / total:.0%}" if total else "-"] for name, us in parts.items() if us > 0.005
            ]
            lines.append(table(["where the time went", "us/packet", "share"], rows))
            unknown = sum(
                nf["queue_split_unknown"] for breakdown in breakdowns_of(results, chain) for nf in breakdown["nfs"]
            )
            untraced = sum(breakdown["untraced_hops"] for breakdown in breakdowns_of(results, chain))
            if unknown:
                lines.append(
                    f"({unknown:,} waits longer than the NF's remembered batches reach back: their split is unknown)"
                )
            if untraced:
                lines.append(
                    f"({untraced:,} hops in parallel branches are not traced: their time is in the queue after them)"
                )
            lines.append("")
        lines.append(f"NF counters under {scheduler} (first run):")
        lines.append(
            table(["NF", "cyc/pkt", "busy %", "CPU %", "kernel % of CPU", "switches/pkt"], nf_counters(results))
        )
        lines += perf_counter_lines(results[0])
        lines += table3_lines(results[0], primitives)
        lines.append("")
    return "\n".join(lines).rstrip()


def explain_difference(first: dict, second: dict, first_source: str, second_source: str, largest: int = 6) -> str:
    """What differs between two results files, chain by chain: the parts that moved most, in µs per packet, and the
    NF counters behind them. With several schedulers in a file, the first is taken (compare files: name one with
    explain's --scheduler)."""
    a_runs, b_runs = scheduler_breakdowns(first, first_source), scheduler_breakdowns(second, second_source)
    (a_name, a), (b_name, b) = next(iter(a_runs.items())), next(iter(b_runs.items()))
    lines = []
    for chain in [c for c in chains_of({a_name: a}) if c in chains_of({b_name: b})]:
        a_parts, a_total, _ = chain_parts(a, chain)
        b_parts, b_total, _ = chain_parts(b, chain)
        lines.append(
            f"chain {chain}: {b_name} {b_total:.1f} us vs {a_name} {a_total:.1f} us per packet "
            f"({b_total - a_total:+.1f} us)"
        )
        deltas = sorted(
            ((name, b_parts.get(name, 0.0) - a_parts.get(name, 0.0)) for name in {*a_parts, *b_parts}),
            key=lambda item: -abs(item[1]),
        )
        for name, delta in deltas[:largest]:
            if abs(delta) >= 0.01:
                lines.append(f"  {delta:+.2f} us {name}")
        lines.append("")
    a_nfs = {row[0]: row for row in nf_counters(a)}
    rows = [
        [
            row[0],
            f"{a_nfs[row[0]][1]} -> {row[1]}",
            f"{a_nfs[row[0]][3]} -> {row[3]}",
            f"{a_nfs[row[0]][4]} -> {row[4]}",
        ]
        for row in nf_counters(b)
        if row[0] in a_nfs
    ]
    lines.append(f"NF counters, {a_name} -> {b_name}:")
    lines.append(table(["NF", "cyc/pkt", "CPU %", "switches/pkt"], rows))
    return "\n".join(lines)


def select_scheduler(document: dict, scheduler: str | None, source: str) -> dict:
    """A comparison narrowed to one scheduler (explain --scheduler); a run's file as it is."""
    if scheduler is None or "schedulers" not in document:
        return document
    if scheduler not in document["schedulers"]:
        raise SpecError(
            source, [("--scheduler", f"no runs of {scheduler!r} here (there are: {', '.join(document['schedulers'])})")]
        )
    return dict(document, schedulers={scheduler: document["schedulers"][scheduler]})


def breakdown_bars(document: dict, source: str) -> dict[str, tuple[dict[str, float], float]]:
    """What plot.plot_breakdown draws: per scheduler (and chain, where there are several) its parts and total."""
    runs = scheduler_breakdowns(document, source)
    several_chains = len(chains_of(runs)) > 1
    bars = {}
    for scheduler, results in runs.items():
        for chain in chains_of({scheduler: results}):
            parts, total, traced = chain_parts(results, chain)
            if traced:
                bars[f"{scheduler} {chain}" if several_chains else scheduler] = (parts, total)
    return bars


# The perf_event_open counters explain shows per packet, in this order, with their column titles.
PERF_COLUMNS = (
    ("context_switches", "switches"),
    ("cpu_migrations", "migrations"),
    ("page_faults", "faults"),
    ("syscalls", "syscalls"),
    ("task_clock_ns", "task ns"),
    ("cycles", "cycles"),
    ("instructions", "instr"),
    ("l1d_read_misses", "L1d miss"),
    ("llc_read_misses", "LLC miss"),
    ("dtlb_read_misses", "dTLB miss"),
)


def perf_counter_lines(results: dict) -> list[str]:
    """The perf_counters probe's counts per packet for each NF process, and which counters this machine refused."""
    probe = (results.get("profile") or {}).get("perf_counters")
    if not probe or not probe.get("workers"):
        return []
    rows, refused = [], {}
    for worker in probe["workers"]:
        counters = worker["counters"]
        row = [worker["worker"]]
        for name, _ in PERF_COLUMNS:
            per_packet = counters[name]["per_packet"] if name in counters else None
            # Three significant digits: a poll-mode NF makes a system call every few thousand packets, not none.
            row.append("n/a" if name not in counters else "-" if per_packet is None else f"{per_packet:.3g}")
        row.append(number(worker.get("wait_over_run"), 2))
        rows.append(row)
        for name, reason in worker["unsupported"].items():
            refused.setdefault(reason, set()).add(name)
    lines = [
        "",
        f"per packet, from perf_event_open over {probe['window_seconds']:.2f} s (first run):",
        table(["process", *[title for _, title in PERF_COLUMNS], "wait/run"], rows),
    ]
    for reason, names in refused.items():
        lines.append(f"(n/a: {', '.join(sorted(names))}: {reason})")
    return lines


def kernel_io_nfs(results: dict) -> set[str]:
    """A run's kernel-I/O NFs (results before each NF said its `io`: every NF of a chain with kernel links)."""
    if all("io" in nf for nf in results.get("nfs", [])):
        return {nf["name"] for nf in results.get("nfs", []) if nf["io"] == "kernel"}
    kernel_chains = {ring["chain"] for ring in results.get("rings", []) if "kernel_link" in ring}
    return {nf for chain in results["chains"] if chain["name"] in kernel_chains for nf in chain["nfs"]}


def table3_lines(results: dict, primitives: dict | None) -> list[str]:
    """Per NF process, the CPU time a packet cost it against what its counters times this machine's primitive
    latencies explain (time_explained.py), and the share left unexplained."""
    probe = (results.get("profile") or {}).get("perf_counters")
    if not probe or not probe.get("workers"):
        return []
    if primitives is None:
        return [
            "",
            "(how much of each NF's time its counters explain needs this machine's primitive latencies: "
            "`./tandem primitives` measures and caches them)",
        ]
    memory = memory_levels(lambda size, stride: memory_latency_ns(primitives, size, stride))
    policy = switch_policy(results["scheduler"])
    kernel = kernel_io_nfs(results)
    rows, missing = [], set()
    for worker in probe["workers"]:
        explained = explain_process(
            worker["counters"], primitives["results"], policy, worker["worker"] in kernel, memory
        )
        missing.update(explained["missing"])
        terms = explained["terms"]
        rows.append(
            [
                worker["worker"],
                number(explained["measured_ns"], 0),
                *[
                    number(terms[name], 1) if name in terms else "n/a" if name in explained["missing"] else "-"
                    for name in TABLE3_TERMS
                ],
                number(explained["explained_ns"], 0),
                "n/a" if explained["unexplained_share"] is None else f"{explained['unexplained_share']:.0%}",
            ]
        )
    switches = f"{policy} switches" if policy else "switches not charged: the results do not say the scheduler's policy"
    lines = [
        "",
        f"ns of CPU per packet explained by counters x primitive latencies ({switches}; SCC Table 3):",
        table(["process", "CPU ns/pkt", *TABLE3_TITLES, "explained", "unexplained"], rows),
    ]
    if missing:
        lines.append(
            f"(n/a: {', '.join(sorted(missing))}: a counter this machine does not give, or a latency not measured)"
        )
    return lines


TABLE3_TERMS = (
    "context switches x switch latency",
    "system calls x call latency",
    "packets x a packet socket's receive and send",
    "L1d misses served by the caches x cache latency",
    "LLC misses x memory latency",
    "dTLB misses x page walk",
)
TABLE3_TITLES = ("switches", "syscalls", "packet I/O", "L1d miss", "LLC miss", "dTLB miss")
