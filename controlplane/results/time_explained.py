"""SCC's Table 3 for one NF process: how much of the CPU time it spent per packet its counters explain, counter times
the primitive latency it stands for (context switches, system calls, and where the machine counts them, cache and
TLB misses), and what share is left unexplained (the NF's own work and what nothing counts)."""

from __future__ import annotations

KERNEL_POLICIES = ("cfs", "batch", "rr", "fifo")  # the rows of the cached Table 2 (./tandem primitives)


def switch_policy(scheduler: dict) -> str | None:
    """The kernel policy a run's NF processes switched under, as its scheduler module says in its own report (coop
    on FIFO by default, unis by its backend, nfvnice and scc by their options); None for results written before the
    modules said it, whose switches are then left unexplained rather than charged a guessed policy's latency."""
    report = scheduler.get("report") or {}
    report = report.get("policy_report", report)  # auto's: the module it chose says it
    policy = report.get("policy")
    return policy if policy in KERNEL_POLICIES else None


def _median(measurement: dict | None) -> float | None:
    return measurement.get("median_ns") if measurement and "median_ns" in measurement else None


def explain_process(
    counters: dict, primitives: dict, policy: str | None, kernel_io: bool, memory: dict[str, float | None]
) -> dict:
    """`counters`: the perf_counters probe's per-packet counts of one process ({name: {"per_packet": x}});
    `primitives`: tandem-primitives' results; `memory`: {"cache", "memory", "page_walk"} latencies in ns.
    Returns {"measured_ns", "terms": {name: ns}, "explained_ns", "unexplained_share", "missing": [...]}: ns per packet;
    a term whose counter or latency this machine lacks is listed in `missing`, never counted as 0."""

    def per_packet(name: str) -> float | None:
        entry = counters.get(name)
        return entry.get("per_packet") if entry else None

    terms, missing = {}, []

    def term(name: str, count: float | None, latency_ns: float | None) -> None:
        if count is None or latency_ns is None:
            missing.append(name)
        else:
            terms[name] = count * latency_ns

    term(
        "context switches x switch latency",
        per_packet("context_switches"),
        _median(primitives["context_switch"].get(policy)),
    )
    calls = primitives["syscall"]
    # Every call enters and leaves the kernel: a null call's cost each (a poll-mode NF's calls are yields and futex
    # waits, little more).
    term("system calls x call latency", per_packet("syscalls"), _median(calls.get("getppid")))
    if kernel_io:
        # A kernel-I/O NF also has the kernel move each packet in and out, however many frames a call carries (a
        # frame sent through sendmmsg costs what one through sendto does here): a packet socket's receive and send.
        send, receive = _median(calls.get("sendto_packet")), _median(calls.get("recvfrom_packet"))
        term(
            "packets x a packet socket's receive and send",
            1.0,
            send + receive if send is not None and receive is not None else None,
        )
    l1_misses, llc_misses = per_packet("l1d_read_misses"), per_packet("llc_read_misses")
    beyond_l1 = l1_misses - llc_misses if l1_misses is not None and llc_misses is not None else None
    term("L1d misses served by the caches x cache latency", beyond_l1, memory.get("cache"))
    term("LLC misses x memory latency", llc_misses, memory.get("memory"))
    term("dTLB misses x page walk", per_packet("dtlb_read_misses"), memory.get("page_walk"))
    measured = per_packet("task_clock_ns")
    explained = sum(terms.values())
    return {
        "measured_ns": measured,
        "terms": terms,
        "explained_ns": explained,
        "unexplained_share": 1 - explained / measured if measured else None,
        "missing": missing,
    }


def memory_levels(latency_at) -> dict[str, float | None]:
    """The latencies the miss terms use, from the pointer chase (`latency_at(bytes, stride)`): a cache hit beyond L1
    (a 256 KiB working set), memory (256 MiB), and a page walk: a chase one line a page over 256 MiB touches 4 MiB of
    lines (cached) on 65,536 pages, so beyond a line-strided chase over 4 MiB its loads pay the TLB misses."""
    cache, memory = latency_at(256 << 10, 64), latency_at(256 << 20, 64)
    paged, same_lines_cached = latency_at(256 << 20, 4096), latency_at(4 << 20, 64)
    page_walk = max(paged - same_lines_cached, 0.0) if paged is not None and same_lines_cached is not None else None
    return {"cache": cache, "memory": memory, "page_walk": page_walk}
