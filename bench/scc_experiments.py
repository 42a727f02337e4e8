"""SCC experiments (issue 19): kernel-I/O chains of routers with one frame or many per system call, under the default
CFS and SCC's batch CFS, back to back and through a bridge, beside the same chains as DPDK NFs.

  capacity  what one router carries over our veths, per system-call mode (the rate the others run at follows it)
  fig8      one router: latency percentiles per frames per system call (mux 1..256) and as a DPDK NF (SCC Fig. 4/8)
  fig9      chains of 1..8 routers through a Linux bridge: cfs vs scc (batch CFS, nice -1 and -19) (SCC Fig. 9; OVS
            needs its kernel module, which this VM's kernel lacks)
  fig10     back-to-back chains of 1..8: cfs, scc without mux, scc with mux 2/16/32 (SCC Fig. 10), and Table 8
  dpdk      the same chains as DPDK NFs under Tandem's schedulers, at the same rate
  mixed     chains of 3, 5 and 8 routers that mix DPDK and kernel-I/O NFs (the middle router the other kind), beside
            the same chains of one kind, at the same rate

Usage (as root): .venv/bin/python bench/scc_experiments.py [--only NAME] [--repeat 3] [--duration 3] [--rate PPS]
Writes bench/results/scc-<name>.json.gz, .md and .png. Runs alternate between the modes, repeat by repeat, so a slow
spell of this VM falls on all of them; each figure is the median over the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import tandem  # noqa: E402
from bench.experiment_support import RESULTS, fmt, read_result, save_result  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402

ROUTER = "ttl"  # SCC's routers decrement the TTL and forward; ttl does that (and fixes the checksum)
PERCENTILES = ("p5", "p25", "p50", "p75", "p99")
MUXES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
LENGTHS = list(range(1, 9))


def chain_spec(length: int, rate_pps: float, duration: float, io: dict | None) -> dict:
    """`length` routers on core 1, as kernel-I/O NFs (`io`: {mux, link}) or as DPDK NFs (io None). A chain that mixes
    them: `io` also says the chain's kind (`chain`: kernel by default) and the middle router's (`middle`)."""
    chain = {"name": "routers", "nfs": [{"name": f"r{k + 1}", "type": ROUTER, "core": 1} for k in range(length)]}
    if io is not None:
        io = dict(io)
        middle = io.pop("middle", None)
        chain.update(io=io.pop("chain", "kernel"), **io)
        if middle is not None:
            chain["nfs"][length // 2]["io"] = middle
    return {
        "name": f"routers-{length}",
        "duration": duration,
        "warmup": 0.5,
        "traffic": {"size": 64, "flows": 16, "rate": rate_pps},
        "scheduler": "cfs",
        "chains": [chain],
    }


def one_run(spec: dict, scheduler: str | dict, duration: float) -> dict:
    """One run's figures: latency percentiles, rates, accounting, the NFs' CPU and wait shares, the scheduler's
    report."""
    if isinstance(scheduler, dict):  # a scheduler with options for this run
        spec = dict(spec, scheduler=scheduler)
        scheduler = scheduler["name"]
    outcome = tandem.run(spec, scheduler, duration)
    if outcome.results is None:
        print(f"  {spec['name']} under {scheduler}: failed: {outcome.error}", file=sys.stderr, flush=True)
        return {"failed": outcome.error}
    results = outcome.results.as_json()
    chain = results["chains"][0]
    latency = chain["latency_us"]
    shares = [(nf["os"].get("cpu_share"), nf["os"].get("runnable_wait_share")) for nf in results["nfs"]]
    return {
        "offered_mpps": chain["window"]["offered_mpps"],
        "delivered_mpps": chain["window"]["delivered_mpps"],
        "exact": chain["accounting_exact"],
        "dropped": chain["dropped"]["total"],
        "generated": chain["generated"],
        **{p: latency.get(p) for p in PERCENTILES},
        "nf_shares": shares,
        "scheduler_report": results["scheduler"].get("report", {}),
    }


def run_modes(modes: dict[str, tuple], lengths: list[int], repeat: int, duration: float) -> dict:
    """Each mode ({name: (io or None, scheduler)}) at each chain length, repeat times, alternating. Returns
    {mode: {length: [run, ...]}}."""
    runs: dict[str, dict[int, list]] = {mode: {length: [] for length in lengths} for mode in modes}
    for r in range(repeat):
        for length in lengths:
            for mode, (io, scheduler, rate) in modes.items():
                print(f"repeat {r + 1}/{repeat}: {length} router(s), {mode}", file=sys.stderr, flush=True)
                runs[mode][length].append(one_run(chain_spec(length, rate, duration, io), scheduler, duration))
    return runs


def median_of(runs: list[dict], field: str) -> float | None:
    values = [run[field] for run in runs if run.get(field) is not None]
    return statistics.median(values) if values else None


def exact_text(runs: dict) -> str:
    flags = [run.get("exact") for by_length in runs.values() for group in by_length.values() for run in group]
    return f"{sum(1 for f in flags if f)}/{len(flags)} runs exact"


def schedule_shares(runs: list[dict]) -> tuple[float | None, float | None]:
    """SCC's Wait/RunTime and SchedContention/RunTime of a chain (Table 5/8): time its NFs were not runnable, and
    runnable but not running, over the time they ran, summed over the NFs (medians over the runs)."""
    waits, contentions = [], []
    for run in runs:
        shares = [s for s in run.get("nf_shares", []) if s[0] is not None and s[1] is not None]
        ran = sum(cpu for cpu, _ in shares)
        if not shares or ran <= 0:
            continue
        contentions.append(sum(wait for _, wait in shares) / ran)
        # A busy poller is never asleep: its share off the CPU and off the run queue is 0 up to the counters' rounding.
        waits.append(max(0.0, sum(1 - cpu - wait for cpu, wait in shares) / ran))
    return (statistics.median(waits) if waits else None, statistics.median(contentions) if contentions else None)


def linear_fit(runs_by_length: dict[int, list]) -> tuple[float | None, float | None]:
    """Per-NF latency (slope) and intercept of a line through the median p50s, from 2 NFs on as the paper fits."""
    import numpy

    points = [(length, median_of(group, "p50")) for length, group in runs_by_length.items() if length >= 2]
    points = [(x, y) for x, y in points if y is not None]
    if len(points) < 2:
        return None, None
    slope, intercept = numpy.polyfit([x for x, _ in points], [y for _, y in points], 1)
    return float(slope), float(intercept)


def capacity(repeat: int, duration: float) -> dict:
    """One router as fast as the generator sends: what each system-call mode carries here."""
    modes = {f"mux {m}": ({"mux": m, "link": "b2b"}, "cfs", "max") for m in (1, 32)}
    modes["DPDK (cfs)"] = (None, "cfs", "max")
    runs = run_modes(modes, [1], repeat, duration)
    rows = [
        [mode, fmt(median_of(by_length[1], "offered_mpps")), fmt(median_of(by_length[1], "delivered_mpps"))]
        for mode, by_length in runs.items()
    ]
    text = (
        f"SCC capacity: one {ROUTER} router on core 1, generator as fast as it can send, "
        f"median of {repeat} x {duration} s "
        f"({exact_text(runs)})\n{machine_description()}\n\n" + table(["mode", "offered Mpps", "delivered Mpps"], rows)
    )
    save_result("scc-capacity", runs, text)
    return runs


def fig8(repeat: int, duration: float, rate: float) -> None:
    modes = {f"mux {m}": ({"mux": m, "link": "b2b"}, "cfs", rate) for m in MUXES}
    modes["DPDK rtc"] = (None, "rtc", rate)
    modes["DPDK coop"] = (None, "coop", rate)
    runs = run_modes(modes, [1], repeat, duration)
    rows = []
    for mode, by_length in runs.items():
        group = by_length[1]
        p25, p75 = median_of(group, "p25"), median_of(group, "p75")
        rows.append(
            [
                mode,
                fmt(median_of(group, "delivered_mpps")),
                *[fmt(median_of(group, p), 1) for p in PERCENTILES],
                fmt(p75 - p25 if p25 is not None and p75 is not None else None, 1),
            ]
        )
    text = (
        f"SCC Fig. 4/8: one {ROUTER} router (b2b veths, cfs) at {rate / 1e6:.2f} Mpps of 64 B frames: "
        "latency in µs per "
        f"frames per system call (mux 1 = recvfrom/sendto per frame), and the same NF on DPDK rings; medians of "
        f"{repeat} x {duration} s ({exact_text(runs)})\n{machine_description()}\n\n"
        + table(["mode", "Mpps", *PERCENTILES, "IQR"], rows)
    )
    save_result("scc-fig8", runs, text)
    plot_boxes(
        runs,
        f"One router at {rate / 1e6:.2f} Mpps: latency per system-call batch (box p25-p75, whiskers p5-p99)\n"
        f"{machine_description()}",
        RESULTS / "scc-fig8.png",
    )


def latency_cell(p25: float | None, p50: float | None, p75: float | None) -> str:
    """p50 (p75 - p25): one decimal below 10 µs (a DPDK chain's), whole µs above."""
    if p50 is None or p25 is None or p75 is None:
        return "failed"
    digits = 1 if p50 < 10 else 0
    return f"{p50:.{digits}f} ({p75 - p25:.{digits}f})"


def chains_figure(
    name: str, title: str, modes: dict, repeat: int, duration: float, lengths: list[int] = LENGTHS
) -> None:
    runs = run_modes(modes, lengths, repeat, duration)
    render_chains(name, title, runs, repeat, duration)


def render_chains(name: str, title: str, runs: dict, repeat: int, duration: float) -> None:
    """The tables (and plot) of a chains figure from its runs ({mode: {length: [run]}})."""
    runs = {mode: {int(length): group for length, group in by_length.items()} for mode, by_length in runs.items()}
    lengths = sorted(next(iter(runs.values())))
    header = ["mode", *[f"{n} NF p50 (IQR)" for n in lengths], "µs per NF", "intercept"]
    rows = []
    for mode, by_length in runs.items():
        cells = []
        for length in lengths:
            cells.append(latency_cell(*(median_of(by_length[length], p) for p in ("p25", "p50", "p75"))))
        slope, intercept = linear_fit(by_length)
        rows.append([mode, *cells, fmt(slope, 1), fmt(intercept, 1)])
    contention_rows = []
    for mode, by_length in runs.items():
        cells = []
        for length in lengths:
            wait, contention = schedule_shares(by_length[length])
            cells.append(f"{fmt(wait, 1)} / {fmt(contention, 2)}")
        contention_rows.append([mode, *cells])
    delivered_rows = [
        [mode, *[fmt(median_of(by_length[n], "delivered_mpps"), 3) for n in lengths]]
        for mode, by_length in runs.items()
    ]
    text = (
        f"{title}; medians of {repeat} x {duration} s ({exact_text(runs)})\n{machine_description()}\n\n"
        "End-to-end latency p50 in µs (p75 - p25 in brackets) per chain length, "
        "and the line through the medians from 2 NFs on:\n\n"
        + table(header, rows)
        + "\n\nWait/RunTime / SchedContention/RunTime of the chain (SCC Tables 5 and 8; "
        "/proc schedstat of every NF):\n\n"
        + table(["mode", *[f"{n} NF" for n in lengths]], contention_rows)
        + "\n\nDelivered Mpps:\n\n"
        + table(["mode", *[f"{n} NF" for n in lengths]], delivered_rows)
    )
    save_result(name, runs, text)
    plot_lines(runs, f"{title}\n{machine_description()}", RESULTS / f"{name}.png")


TITLES = {
    "scc-fig9": "SCC Fig. 9: chains of {router} routers through a Linux bridge, one core, "
    "{rate:.3f} Mpps (OVS's kernel datapath is not in this VM's kernel)",
    "scc-fig10": "SCC Fig. 10: back-to-back chains of {router} routers, one core, {rate:.3f} Mpps",
    "scc-dpdk": "Kernel-I/O and DPDK chains of {router} routers side by side, one core, {rate:.3f} Mpps",
    "scc-mixed": "Chains of {router} routers that mix DPDK and kernel-I/O NFs (the middle router the other kind), "
    "one core, {rate:.3f} Mpps",
}


def chains_title(name: str, rate: float) -> str:
    return TITLES[name].format(router=ROUTER, rate=rate / 1e6)


def render_saved(repeat: int, duration: float) -> None:
    """Renders the chains figures again from their saved runs (bench/results/scc-*.json.gz), without running
    anything."""
    for name in TITLES:
        if (RESULTS / f"{name}.json.gz").exists() or (RESULTS / f"{name}.json").exists():
            runs = read_result(name)
            rate = (
                median_of([run for group in next(iter(runs.values())).values() for run in group], "offered_mpps") or 0
            )
            render_chains(name, chains_title(name, rate * 1e6), runs, repeat, duration)


def fig9(repeat: int, duration: float, rate: float) -> None:
    bridge = {"mux": 1, "link": "bridge"}
    modes = {
        "cfs": (bridge, "cfs", rate),
        "scc batch nice -1": (bridge, {"name": "scc", "options": {"nice": -1}}, rate),
        "scc batch nice -19": (bridge, {"name": "scc", "options": {"nice": -19}}, rate),
    }
    chains_figure("scc-fig9", chains_title("scc-fig9", rate), modes, repeat, duration)


def fig10(repeat: int, duration: float, rate: float) -> None:
    modes = {"cfs": ({"mux": 1, "link": "b2b"}, "cfs", rate), "scc": ({"mux": 1, "link": "b2b"}, "scc", rate)}
    for mux in (2, 16, 32):
        modes[f"scc + mux {mux}"] = ({"mux": mux, "link": "b2b"}, "scc", rate)
    chains_figure("scc-fig10", chains_title("scc-fig10", rate), modes, repeat, duration)


def dpdk(repeat: int, duration: float, rate: float) -> None:
    modes = {"kernel scc + mux 32": ({"mux": 32, "link": "b2b"}, "scc", rate)}
    for scheduler in ("cfs", "coop", "unis", "bubble", "rtc"):
        modes[f"DPDK {scheduler}"] = (None, scheduler, rate)
    chains_figure("scc-dpdk", chains_title("scc-dpdk", rate), modes, repeat, duration)


def mixed(repeat: int, duration: float, rate: float) -> None:
    kernel = {"mux": 32, "link": "b2b"}
    modes = {
        "kernel, scc + mux 32": (kernel, "scc", rate),
        "kernel + 1 DPDK, scc + mux 32": (dict(kernel, middle="dpdk"), "scc", rate),
        "kernel + 1 DPDK, cfs + mux 32": (dict(kernel, middle="dpdk"), "cfs", rate),
        "DPDK, cfs": (None, "cfs", rate),
        "DPDK + 1 kernel, cfs + mux 32": ({"chain": "dpdk", "mux": 32, "middle": "kernel"}, "cfs", rate),
    }
    chains_figure("scc-mixed", chains_title("scc-mixed", rate), modes, repeat, duration, lengths=[3, 5, 8])


def plot_boxes(runs: dict, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = []
    for mode, by_length in runs.items():
        group = by_length[1]
        values = {p: median_of(group, p) for p in PERCENTILES}
        if None in values.values():
            continue
        stats.append(
            {
                "label": mode,
                "whislo": values["p5"],
                "q1": values["p25"],
                "med": values["p50"],
                "q3": values["p75"],
                "whishi": values["p99"],
                "fliers": [],
            }
        )
    figure, axes = plt.subplots(figsize=(10, 4.5))
    axes.bxp(stats, showfliers=False)
    axes.set_yscale("log")
    axes.set_ylabel("latency (µs)")
    axes.set_title(title, fontsize=9)
    plt.setp(axes.get_xticklabels(), rotation=30, ha="right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def plot_lines(runs: dict, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for mode, by_length in runs.items():
        lengths = [n for n in by_length if median_of(by_length[n], "p50") is not None]
        p50 = [median_of(by_length[n], "p50") for n in lengths]
        low = [median_of(by_length[n], "p25") for n in lengths]
        high = [median_of(by_length[n], "p75") for n in lengths]
        axes.plot(lengths, p50, marker="o", label=mode)
        axes.fill_between(lengths, low, high, alpha=0.2)
    axes.set_yscale("log")
    axes.set_xlabel("routers in the chain")
    axes.set_ylabel("latency p50 (µs), band p25-p75")
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["capacity", "fig8", "fig9", "fig10", "dpdk", "mixed"])
    parser.add_argument(
        "--render", action="store_true", help="redo the chains figures' tables and plots from their saved runs"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument(
        "--rate",
        type=float,
        default=None,
        help="frames per second for the latency figures; default: 60 %% of what one router carries (fig8) "
        "and 40 %% of it shared by 8 routers (the chains: a bridge costs each hop ~30 %% more)",
    )
    args = parser.parse_args()
    if args.render:
        render_saved(args.repeat, args.duration)
        return 0
    one_router_pps = args.rate
    if args.only in (None, "capacity") or one_router_pps is None:
        runs = capacity(args.repeat, args.duration)
        carried = [
            median_of(by_length[1], "delivered_mpps") for mode, by_length in runs.items() if mode.startswith("mux")
        ]
        one_router_pps = one_router_pps or 0.6 * min(c for c in carried if c) * 1e6
    chain_pps = args.rate or one_router_pps / 0.6 * 0.4 / 8
    if args.only in (None, "fig8"):
        fig8(args.repeat, args.duration, one_router_pps)
    if args.only in (None, "fig9"):
        fig9(args.repeat, args.duration, chain_pps)
    if args.only in (None, "fig10"):
        fig10(args.repeat, args.duration, chain_pps)
    if args.only in (None, "dpdk"):
        dpdk(args.repeat, args.duration, chain_pps)
    if args.only in (None, "mixed"):
        mixed(args.repeat, args.duration, chain_pps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
