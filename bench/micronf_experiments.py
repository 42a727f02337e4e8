"""μNF experiments (the paper's Tables I/II and Figs. 7-10) on Tandem's graphs: the cycles an SFC of VNFs spends per
packet chained as they are against composed (Tables I/II), pipelined prefetching at distances 0-32 (Fig. 7), a line
of four μNFs against a two-way parallel group after the first (Fig. 8), latency against path length 4-6 (Fig. 9),
the last two at per-μNF costs 100-700 cycles, and lines of 1-8 TTL decrementers on one core, each scheduler
against run-to-completion (Fig. 10), with μNF-MC's fewest cores for each line at a target rate (--target-mpps,
solved on --mc-cores hypothetical cores from the ttl μNF's measured batch model; each placement also run where
this machine has the cores it uses), the composed SFC with auto-scaling at full rate (Fig. 11: the bottleneck
found, the throughput after scaling it out; spare instances on the --cores after the first) and a scale-out timeline
(examples/scale-out.yaml, plotted).

Usage (as root): .venv/bin/python bench/micronf_experiments.py [--repeat 3] [--duration 1] [--rate 100] [--cores 1,2]
                 [--only table1|fig7|fig8|fig9|fig10|fig10-cores|fig11|scale-timeline] [--target-mpps 14.88,4,1]
                 [--mc-cores 16] [--fig11-scheduler cfs]
Writes bench/results/micronf-<fig>.json.gz and .md. Every number is a median over --repeat runs, runs interleaved.
Figs. 8 and 9 take the run's own latency summary (every 16th packet sampled at the sink); their μNFs are `cost`
NFs run under rtc (no scheduler between them). With one NF core (our 2 vCPU VM) the branches share it and cannot
overlap; with --cores listing two or more, the parallel group's branches go on separate cores where the machine
has them. Fig. 7 offers as much as the generator makes to two macswap μNFs (on the first two --cores, else both
on one) and reports throughput and the first μNF's cycles per packet, which includes its dequeue of packets the
generator wrote on the control core.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.experiment_support import RESULTS, chain_mpps, exact, interleaved_variants, ratio, save_result, share_text  # noqa: E402
from controlplane.machine.cores import usable_cores  # noqa: E402
from controlplane.machine.description import machine_description  # noqa: E402
from controlplane.planning.batch_model import batch_models  # noqa: E402
from controlplane.planning.placement import PlacedNf, PlacementError, solve  # noqa: E402
from controlplane.results.plot import plot_scaling  # noqa: E402
from controlplane.sfc.compose import Composition, composed_chain  # noqa: E402
from controlplane.sfc.spec_or_request import compose_request  # noqa: E402
from controlplane.spec.deployment import run_config  # noqa: E402
from controlplane.spec.loading import load_spec, spec_from_document  # noqa: E402
from controlplane.spec.models import Spec  # noqa: E402
from controlplane.terminal.tables import table  # noqa: E402
from tandem import run as tandem_run  # noqa: E402

COSTS = [100, 300, 500, 700]  # cycles per packet of each μNF (the paper's range)
PREFETCH = [0, 1, 2, 4, 8, 16, 32]  # up to half the batch, as the paper
PREFETCH_BURST = 64


def node(name: str, cycles: int, core: int) -> dict:
    return {"name": name, "type": "cost", "core": core, "args": {"cycles": cycles}}


def spec(name: str, nodes: list[dict], edges: list[tuple[str, str]] | None, rate_kpps: float) -> Spec:
    chain = (
        {"name": "c", "graph": {"nodes": nodes, "edges": [{"from": a, "to": b} for a, b in edges]}}
        if edges
        else {"name": "c", "nfs": nodes}
    )
    return Spec.model_validate(
        {
            "name": name,
            "warmup": 0.3,
            "traffic": {"rate": f"{rate_kpps} kpps", "size": 64, "flows": 64},
            "scheduler": "rtc",
            "chains": [chain],
        }
    )


def latency(comparison: dict, variant: str, key: str) -> float | None:
    values = [r["chains"][0]["latency_us"].get(key) for r in comparison["schedulers"][variant]["results"]]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value: float | None, digits: int = 2) -> str:
    return "failed" if value is None else f"{value:.{digits}f}"


def first_nf_cycles(comparison: dict, variant: str) -> float | None:
    values = [r["nfs"][0]["window"]["cycles_per_packet"] for r in comparison["schedulers"][variant]["results"]]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def per_packet_cycles(comparison: dict, variant: str) -> dict[str, float]:
    """Per μNF type, the median over runs of its NFs' cycles inside process() per packet that entered the chain
    (the paper's per-element cycles), and "overall"."""
    by_run = []
    for result in comparison["schedulers"][variant]["results"]:
        entered = result["nfs"][0]["packets_in"]  # the entry μNF, the same in both graphs
        totals: dict[str, float] = {}
        for nf in result["nfs"]:
            totals[nf["type"]] = totals.get(nf["type"], 0.0) + nf["busy_cycles"] / entered
        totals["overall"] = sum(totals.values())
        by_run.append(totals)
    return {key: statistics.median(run.get(key, 0.0) for run in by_run) for key in by_run[0]} if by_run else {}


def table1(repeat: int, duration: float) -> None:
    """examples/web-sfc.yaml (Edge Firewall -> Monitoring -> Application Firewall, HTTP traffic) chained as its VNFs
    are (each one checks the IP header and classifies HTTP for itself) against composed, under rtc."""
    request = HERE.parent / "examples" / "web-sfc.yaml"
    composed_spec, composition = compose_request(request)
    document = composed_spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    as_chained = Composition(composition.unmerged, composition.unmerged)
    core = composed_spec.chains[0].graph.nodes[0].core
    chained_spec = spec_from_document(
        dict(document, name="web-sfc-chained", chains=[composed_chain("web-sfc", as_chained, [core])]), request
    )
    # At the generator's full rate every μNF works on full batches: below it, a graph with fewer μNFs comes round
    # its loop sooner and takes smaller batches, whose fixed costs then weigh on every packet (measured: at 1 Mpps
    # the composed graph's firewall and validator cost 18-24 % more a packet than the same μNFs chained).
    variants = {
        name: (spec.model_copy(update={"traffic": spec.traffic.model_copy(update={"rate": "max"})}), "rtc")
        for name, spec in (("chained", chained_spec), ("composed", composed_spec))
    }
    comparison = interleaved_variants(variants, repeat, duration)
    chained, composed = per_packet_cycles(comparison, "chained"), per_packet_cycles(comparison, "composed")
    rows = [
        [
            kind,
            fmt(chained.get(kind), 1),
            fmt(composed.get(kind), 1),
            share_text(1 - composed.get(kind, 0) / chained[kind]) if chained.get(kind) else "n/a",
            share_text(chained[kind] / chained["overall"]) if kind != "overall" else "-",
        ]
        for kind in [k for k in chained if k != "overall"] + ["overall"]
    ]
    text = (
        f"Tables I/II: {request.name} (Edge Firewall -> Monitoring -> Application Firewall), "
        "HTTP at the generator's full rate, "
        "rtc on one core; cycles inside each μNF type per packet entering the chain, "
        f"median of {repeat} runs of {duration} s ({machine_description()})\n"
        f"merged by the composer: {', '.join(m.removed for m in composition.merges)}\n\n"
        + table(["μNF type", "chained", "composed", "saved", "weight when chained"], rows, align_left=1)
        + f"\n\n{exact(comparison)}"
    )
    save_result("micronf-table1", comparison, text)


def fig10(repeat: int, duration: float, cores: list[int], schedulers: list[str]) -> None:
    """Lines of 1-8 TTL decrementers on one core at the generator's full rate: each scheduler against rtc."""
    variants = {}
    for length in range(1, 9):
        nodes = [{"name": f"ttl{i}", "type": "ttl", "core": cores[0]} for i in range(1, length + 1)]
        spec = Spec.model_validate(
            {
                "name": f"fig10-{length}",
                "warmup": 0.3,
                "traffic": {"rate": "max", "size": 64, "flows": 64},
                "chains": [{"name": "c", "nfs": nodes}],
            }
        )
        for scheduler in schedulers:
            variants[f"{scheduler}-{length}"] = (spec, scheduler)
    comparison = interleaved_variants(variants, repeat, duration)
    rows = [
        [str(length)] + [fmt(chain_mpps(comparison, f"{scheduler}-{length}", "c"), 3) for scheduler in schedulers]
        for length in range(1, 9)
    ]
    text = (
        f"Fig. 10: lines of 1-8 ttl μNFs on core {cores[0]}, 64 B at the generator's full rate; delivered Mpps, "
        f"median of {repeat} runs of {duration} s ({machine_description()})\n\n"
        + table(["μNFs"] + schedulers, rows, align_left=1)
        + f"\n\n{exact(comparison)}"
    )
    save_result("micronf-fig10", comparison, text)


def fig10_cores(repeat: int, duration: float, targets_mpps: list[float], mc_cores: int) -> None:
    """μNF-MC: the fewest cores that carry a line of 1-8 ttl μNFs at each target rate, consecutive μNFs clustered,
    from the ttl μNF's batch model; a placement is run too where this machine has every core it uses."""
    one = Spec.model_validate(
        {
            "name": "fig10-model",
            "traffic": {"rate": "max", "size": 64, "flows": 64},
            "chains": [{"name": "c", "nfs": [{"name": "ttl", "type": "ttl", "core": 1}]}],
        }
    )
    config = run_config(one)
    model = batch_models(config, "bench fig10-cores")["ttl"]
    upper = config["burst"]
    cores = list(range(1, mc_cores + 1))
    machine = usable_cores() - {config["control_core"]}
    rows, document, variants = [], {"targets_mpps": targets_mpps, "model": model, "burst": upper, "lines": {}}, {}
    for target in targets_mpps:
        for length in range(1, 9):
            names = [f"ttl{i}" for i in range(1, length + 1)]
            nfs = [
                PlacedNf(
                    name=n,
                    chain="c",
                    rate_pps=target * 1e6,
                    weight=1.0,
                    k_cycles=model["k_cycles"],
                    c_cycles=model["c_cycles"],
                )
                for n in names
            ]
            key = f"{target}-{length}"
            try:
                solution = solve(
                    nfs,
                    cores,
                    model["tsc_hz"],
                    upper,
                    objective="fewest_cores",
                    edges=[(a, b, 1.0) for a, b in zip(names, names[1:], strict=False)],
                )
            except PlacementError as error:
                document["lines"][key] = {"error": str(error)}
                rows.append([f"{target}", str(length), "infeasible", "-", "-"])
                continue
            # Each core's μNFs, the cores in the line's order (a cluster is a run of consecutive μNFs).
            clusters = sorted(
                ([n for n in names if solution["placement"][n] == core] for core in solution["cores_used"]),
                key=lambda cluster: names.index(cluster[0]),
            )
            document["lines"][key] = {
                "cores_used": solution["cores_used"],
                "clusters": clusters,
                "core_utilisation": {c: solution["core_utilisation"][c] for c in solution["cores_used"]},
            }
            runnable = set(solution["cores_used"]) <= machine
            if runnable:
                spec = Spec.model_validate(
                    {
                        "name": f"fig10-mc-{key}",
                        "warmup": 0.3,
                        "traffic": {"rate": f"{target} Mpps", "size": 64, "flows": 64},
                        "chains": [
                            {
                                "name": "c",
                                "nfs": [{"name": n, "type": "ttl", "core": solution["placement"][n]} for n in names],
                            }
                        ],
                    }
                )
                variants[f"mc-{key}"] = (spec, "coop")  # a cluster shares its core cooperatively
            rows.append(
                [
                    f"{target}",
                    str(length),
                    str(len(clusters)),
                    " | ".join(",".join(c) for c in clusters),
                    "run below" if runnable else f"needs cores {solution['cores_used']}",
                ]
            )
    text = (
        f"Fig. 10, μNF-MC: fewest cores for a line of 1-8 ttl μNFs at each target rate (64 B), consecutive μNFs "
        f"clustered; HiGHS over {mc_cores} cores from ttl's batch model (k = {model['k_cycles']:.1f} cycles/packet, "
        f"c = {model['c_cycles']:.0f} cycles/batch at burst {upper}, {model['source']}; {machine_description()})\n\n"
        + table(["target Mpps", "μNFs", "cores", "clusters (one per core)", "on this machine"], rows, align_left=5)
    )
    if variants:
        comparison = interleaved_variants(variants, repeat, duration)
        document["runs"] = comparison
        text += (
            "\n\nThe placements this machine can hold, run at their target rate under coop (delivered Mpps, median of "
            f"{repeat} runs of {duration} s):\n\n"
            + table(
                ["variant (target-length)", "delivered Mpps"],
                [[name, fmt(chain_mpps(comparison, name, "c"), 3)] for name in variants],
                align_left=1,
            )
            + f"\n\n{exact(comparison)}"
        )
    save_result("micronf-fig10-cores", document, text)


def input_drops(result: dict, nf: str) -> int:
    """Packets dropped at the rings into an NF and its instances (rings are named CHAIN:FROM->TO)."""
    into = {nf} | {f"{nf}.{k}" for k in range(2, 9)}
    return sum(
        ring["dropped_full"]
        for ring in result["rings"]
        if "->" in ring["name"] and ring["name"].split("->")[-1] in into
    )


def first_scale_out(result: dict) -> str | None:
    """The NF of a run's first scale-out: the bottleneck the autoscaler found."""
    outs = [
        (event["t_s"], group["nf"])
        for group in result.get("scaling") or []
        for event in group["events"]
        if event["change"] == "out"
    ]
    return min(outs)[1] if outs else None


def fig11(repeat: int, duration: float, cores: list[int], scheduler: str) -> None:
    """The composed SFC (examples/web-sfc.yaml) at the generator's full rate, as composed and with `sfc.scale`: the
    μNF each finds the bottleneck (most drops at its input; the costliest per packet), the scale-out decisions, and
    the throughput after them. Its scale-outs happen in a 2.5 s warm-up, so the measured window shows where they led.
    Spare instances go on --cores after the first where the machine has them, else on the first."""
    request_path = HERE.parent / "examples" / "web-sfc.yaml"
    request = yaml.safe_load(request_path.read_text())
    request["sfc"]["core"] = cores[0]
    request["traffic"]["rate"] = "max"
    request["warmup"] = 2.5
    scaled = copy.deepcopy(request)
    scaled["sfc"]["scale"] = {"max_instances": 2, **({"cores": cores[1:2]} if len(cores) > 1 else {})}
    specs = {
        name: compose_request(request_path, document)[0]
        for name, document in (("composed", request), ("scaled", scaled))
    }
    comparison = interleaved_variants({name: (spec, scheduler) for name, spec in specs.items()}, repeat, duration)
    composed_runs = comparison["schedulers"]["composed"]["results"]
    scaled_runs = comparison["schedulers"]["scaled"]["results"]
    names = [nf["name"] for nf in composed_runs[0]["nfs"]] if composed_runs else []
    rows = []
    for nf in names:
        drops = statistics.median(input_drops(r, nf) for r in composed_runs)
        cycles = [
            n["busy_cycles"] / n["packets_in"]
            for r in composed_runs
            for n in r["nfs"]
            if n["name"] == nf and n["packets_in"]
        ]
        first_outs = sum(first_scale_out(r) == nf for r in scaled_runs)
        outs = sum(
            1
            for r in scaled_runs
            for g in r["scaling"] or []
            if g["nf"] == nf
            for e in g["events"]
            if e["change"] == "out"
        )
        rows.append(
            [
                nf,
                f"{drops:,.0f}",
                fmt(statistics.median(cycles), 0) if cycles else "n/a",
                f"{first_outs}/{len(scaled_runs)}",
                f"{outs}",
            ]
        )
    before, after = chain_mpps(comparison, "composed", "web-sfc"), chain_mpps(comparison, "scaled", "web-sfc")
    where = f"cores {cores[1:2]}" if len(cores) > 1 else f"core {cores[0]} too (no other NF core given)"
    text = (
        f"Fig. 11: {request_path.name} composed, HTTP at the generator's full rate under {scheduler}, "
        f"μNFs on core {cores[0]}, "
        f"spare instances on {where}; median of {repeat} runs of {duration} s after a 2.5 s warm-up "
        f"({machine_description()})\n\n"
        + table(
            ["μNF", "input drops (composed)", "cycles/packet", "scaled out first", "scale-outs, all runs"],
            rows,
            align_left=1,
        )
        + f"\n\ndelivered Mpps: composed {fmt(before)}, with sfc.scale {fmt(after)} "
        f"({ratio(after, before)} of composed)\n" + f"{exact(comparison)}; flows reordered: "
        f"{sum(r['chains'][0].get('flow_reorders') or 0 for r in scaled_runs)}, "
        + f"held packets dropped: {sum(g['held_dropped'] for r in scaled_runs for g in r['scaling'] or [])}"
    )
    save_result("micronf-fig11" if scheduler == "cfs" else f"micronf-fig11-{scheduler}", comparison, text)


def scale_timeline() -> None:
    """examples/scale-out.yaml once: the offered rate steps up, drops appear at the classifier, its second instance
    starts, drops stop; the rate falls and the instance is parked again. Plotted from the run's scaling timeline."""
    spec = load_spec(HERE.parent / "examples" / "scale-out.yaml")
    outcome = tandem_run(spec)
    results = outcome.results.as_json()
    [group] = results["scaling"]
    plot_scaling(results, str(RESULTS / "micronf-scale-timeline.png"))
    lines = [
        f"  {e['t_s']:.2f} s: scale {e['change']} to {e['instances']} ({e['instance']} on core {e['core']}), made at "
        f"{e['took_effect_s']:.2f} s: {e['reason']}"
        for e in group["events"]
    ]

    def mean_rate(key: str, start: float, end: float) -> float:
        values = [s[key] for s in group["timeline"] if start <= s["t_s"] < end]
        return statistics.mean(values) / 1e6 if values else float("nan")

    out = next((e for e in group["events"] if e["change"] == "out"), None)
    summary = ""
    if out:
        made = out["took_effect_s"]
        summary = (
            "\nat the step, before the second instance: drops "
            f"{mean_rate('dropped_pps', made - 0.2, made):.3f} Mpps, taken "
            f"{mean_rate('processed_pps', made - 0.2, made):.3f} Mpps; over 0.6 s from 0.05 s after it was made: drops "
            f"{mean_rate('dropped_pps', made + 0.05, made + 0.65):.3f} Mpps, taken "
            f"{mean_rate('processed_pps', made + 0.05, made + 0.65):.3f} Mpps"
        )
    text = (
        f"Scale-out timeline: examples/scale-out.yaml under {spec.scheduler.name}, "
        "classify at 1.2 µs a packet on core 1 with rx and "
        f"tx ({machine_description()})\n"
        + "\n".join(lines)
        + summary
        + f"\nheld at most {group['held_peak']:,} packets while flows moved, {group['held_dropped']} dropped; "
        "flows reordered: " + f"{results['chains'][0]['flow_reorders']}; "
        f"accounting {'exact' if results['accounting']['exact'] else 'NOT exact'}"
    )
    save_result("micronf-scale-timeline", results, text)


def fig7(repeat: int, duration: float, cores: list[int]) -> None:
    """Two macswap μNFs at the generator's full rate, prefetching k packets ahead."""
    second = cores[1] if len(cores) > 1 else cores[0]
    variants = {}
    for k in PREFETCH:
        nodes = [
            {"name": "swap1", "type": "macswap", "core": cores[0]},
            {"name": "swap2", "type": "macswap", "core": second},
        ]
        variants[f"k={k}"] = (
            Spec.model_validate(
                {
                    "name": f"fig7-k{k}",
                    "warmup": 0.3,
                    "burst": PREFETCH_BURST,
                    "prefetch": k,
                    "traffic": {"rate": "max", "size": 64, "flows": 64},
                    "scheduler": "rtc",
                    "chains": [{"name": "c", "nfs": nodes}],
                }
            ),
            "rtc",
        )
    comparison = interleaved_variants(variants, repeat, duration)
    base_mpps, base_cycles = chain_mpps(comparison, "k=0", "c"), first_nf_cycles(comparison, "k=0")
    rows = []
    for k in PREFETCH:
        throughput, cycles = chain_mpps(comparison, f"k={k}", "c"), first_nf_cycles(comparison, f"k={k}")
        rows.append(
            [str(k), fmt(throughput, 3), ratio(throughput, base_mpps), fmt(cycles, 1), ratio(cycles, base_cycles)]
        )
    text = (
        f"Fig. 7: pipelined prefetching, two macswap μNFs under rtc on cores {cores[0]} and {second}, batches of "
        f"{PREFETCH_BURST}, 64 B at the generator's full rate; median of {repeat} runs of {duration} s "
        f"({machine_description()})\n\n"
        + table(["prefetch k", "Mpps", "vs k=0", "swap1 cycles/pkt", "vs k=0"], rows, align_left=1)
        + f"\n\n{exact(comparison)}"
    )
    save_result("micronf-fig7", comparison, text)


def fig8(repeat: int, duration: float, rate: float, cores: list[int]) -> None:
    """A line n1 -> n2 -> n3 -> n4 against n1 forking to n2 and n3, which re-join at n4 (two branches)."""
    branch_cores = (cores * 2)[1:3] if len(cores) > 1 else [cores[0], cores[0]]
    variants = {}
    for cycles in COSTS:
        line = [node(f"n{i}", cycles, cores[0]) for i in range(1, 5)]
        parallel = [
            node("n1", cycles, cores[0]),
            node("n2", cycles, branch_cores[0]),
            node("n3", cycles, branch_cores[1]),
            node("n4", cycles, cores[0]),
        ]
        variants[f"line-{cycles}"] = (spec(f"fig8-line-{cycles}", line, None, rate), "rtc")
        variants[f"parallel-{cycles}"] = (
            spec(f"fig8-parallel-{cycles}", parallel, [("n1", "n2"), ("n1", "n3"), ("n2", "n4"), ("n3", "n4")], rate),
            "rtc",
        )
    comparison = interleaved_variants(variants, repeat, duration)
    rows = []
    for cycles in COSTS:
        row = [str(cycles)]
        for shape in ("line", "parallel"):
            name = f"{shape}-{cycles}"
            row += [
                fmt(latency(comparison, name, "mean")),
                fmt(latency(comparison, name, "p50")),
                f"{fmt(latency(comparison, name, 'p5'))}-{fmt(latency(comparison, name, 'p95'))}",
            ]
        rows.append(row)
    text = (
        f"Fig. 8: a line of four μNFs vs a two-way parallel group after the first, rtc, {rate} kpps of 64 B, "
        f"NF cores {cores} (branches on {branch_cores}); latency in us, median of {repeat} runs of {duration} s "
        f"({machine_description()})\n\n"
        + table(
            ["cycles/μNF", "line mean", "line p50", "line p5-p95", "parallel mean", "parallel p50", "parallel p5-p95"],
            rows,
            align_left=1,
        )
        + f"\n\n{exact(comparison)}"
    )
    save_result("micronf-fig8", comparison, text)


def fig9(repeat: int, duration: float, rate: float, cores: list[int]) -> None:
    """Lines of 4, 5 and 6 μNFs on one core."""
    lengths = [4, 5, 6]
    variants = {
        f"{length}-{cycles}": (
            spec(
                f"fig9-{length}-{cycles}", [node(f"n{i}", cycles, cores[0]) for i in range(1, length + 1)], None, rate
            ),
            "rtc",
        )
        for cycles in COSTS
        for length in lengths
    }
    comparison = interleaved_variants(variants, repeat, duration)
    rows = [
        [str(cycles)]
        + [
            f"{fmt(latency(comparison, f'{length}-{cycles}', 'mean'))} / "
            f"{fmt(latency(comparison, f'{length}-{cycles}', 'p50'))}"
            for length in lengths
        ]
        for cycles in COSTS
    ]
    text = (
        f"Fig. 9: latency (mean / p50, us) against path length, lines of cost μNFs under rtc on core {cores[0]}, "
        f"{rate} kpps of 64 B; median of {repeat} runs of {duration} s ({machine_description()})\n\n"
        + table(["cycles/μNF"] + [f"{length} μNFs" for length in lengths], rows, align_left=1)
        + f"\n\n{exact(comparison)}"
    )
    save_result("micronf-fig9", comparison, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument(
        "--rate", type=float, default=100.0, help="offered kpps: far below what the longest chain processes"
    )
    parser.add_argument("--cores", default="1", help="NF cores, comma-separated; the first runs the line")
    parser.add_argument(
        "--only", choices=["table1", "fig7", "fig8", "fig9", "fig10", "fig10-cores", "fig11", "scale-timeline"]
    )
    parser.add_argument("--fig11-scheduler", default="cfs", help="fig11: the scheduler of both variants")
    parser.add_argument(
        "--target-mpps",
        default="14.88,4,1",
        help="fig10-cores: the rates each line must carry, comma-separated (14.88: 10 GbE at 64 B)",
    )
    parser.add_argument("--mc-cores", type=int, default=16, help="fig10-cores: the cores the solver may use")
    parser.add_argument("--schedulers", default="rtc,coop,bubble", help="fig10: the schedulers to run the lines under")
    args = parser.parse_args()
    cores = [int(c) for c in args.cores.split(",")]
    RESULTS.mkdir(exist_ok=True)
    if args.only in (None, "table1"):
        table1(args.repeat, args.duration)
    if args.only in (None, "fig7"):
        fig7(args.repeat, args.duration, cores)
    if args.only in (None, "fig8"):
        fig8(args.repeat, args.duration, args.rate, cores)
    if args.only in (None, "fig9"):
        fig9(args.repeat, args.duration, args.rate, cores)
    if args.only in (None, "fig10"):
        fig10(args.repeat, args.duration, cores, args.schedulers.split(","))
    if args.only in (None, "fig10-cores"):
        fig10_cores(args.repeat, args.duration, [float(t) for t in args.target_mpps.split(",")], args.mc_cores)
    if args.only in (None, "fig11"):
        fig11(args.repeat, args.duration, cores, args.fig11_scheduler)
    if args.only in (None, "scale-timeline"):
        scale_timeline()
    return 0


if __name__ == "__main__":
    sys.exit(main())
