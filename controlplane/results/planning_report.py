"""Text reports of planning: a placement's cores and rates, and each NF's measured cost profile."""

from __future__ import annotations

from controlplane.results.robust_estimate import SPREAD_WARNING
from controlplane.terminal.tables import number, table


def placement_report(solution: dict, config: dict | None = None) -> str:
    if solution.get("objective_kind") == "fewest_cores":
        crossing = solution["crossing_edges"]
        goal = (
            "fewest cores (μNF-MC): "
            f"{len(solution['cores_used'])} of {len(solution['core_utilisation'])} carry every chain "
            f"at its rate; edges between cores: {', '.join(f'{a}->{b}' for a, b in crossing) or 'none'}"
        )
    else:
        goal = f"objective {solution['objective'] / 1e6:.3f} weighted Mpps"
    if "optimality_gap" in solution:
        goal += (
            f"; {solution['stopped']} after {solution['solve_seconds']:.1f} s, within "
            f"{solution['optimality_gap']:.2%} of the best possible ({solution['method']})"
        )
    lines = [
        f"placement by {solution['solver']}: {goal}; "
        f"accepted {', '.join(solution['accepted']) or 'none'}"
        + (f"; rejected {', '.join(solution['rejected'])}" if solution["rejected"] else "")
    ]
    shares = {nf: share for entry in (solution.get("rate_shares") or {}).values() for nf, share in entry["nfs"].items()}
    rows = [
        [name, core, f"{solution['planned_rate_pps'][name] / 1e6:.3f}"] + ([f"{shares[name]:.0%}"] if shares else [])
        for name, core in solution["placement"].items()
    ]
    lines.append(table(["NF", "core", "planned Mpps"] + (["share of chain"] if shares else []), rows))
    for chain, entry in (solution.get("rate_shares") or {}).items():
        lines.append(f"  {chain}'s shares: {entry['source']}")
    lines.append(
        "cores: "
        + ", ".join(f"{core} {100 * u:.0f} % busy" for core, u in solution["core_utilisation"].items())
        + "; chains: "
        + ", ".join(f"{chain} {pps / 1e6:.3f} Mpps" for chain, pps in solution["throughput_pps"].items())
    )
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
        rows.append(
            [
                name,
                number(cost["cycles_per_packet"], 0),
                _spread_cell(cost),
                number(cost.get("ns_per_packet"), 1),
                number(cost.get("cycles_inside_nf"), 0),
                "yes (mean of 64-1500 B)" if cost.get("size_dependent") else ("no" if sizes else "-"),
                " ".join(f"{size}B:{value:.0f}" for size, value in sorted(sizes.items(), key=lambda item: int(item[0])))
                or "-",
                f"{cost['source']} {cost['measured_at'][:10]}" if cost.get("measured_at") else cost["source"],
            ]
        )
    lines = [
        f"cycle estimates ({document['machine']}): probe batches through each NF alone on its core, ring I/O included;",
        "median of interleaved rounds, spread = how far the middle 80 % of the rounds' estimates reach from it",
        "",
        table(["NF", "cyc/pkt", "spread", "ns/pkt", "inside NF", "size-dependent", "per size", "source"], rows),
    ]
    if any((cost.get("spread") or 0) > SPREAD_WARNING for cost in document["cycle_costs"].values()):
        lines += [
            "",
            f"! spread above ±{SPREAD_WARNING:.0%}: the machine was noisy while it was measured; "
            "`./tandem profile --refresh SPEC` measures again",
        ]
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
                rows.append(
                    [
                        backend,
                        number(visible.get("p50"), 1),
                        number(visible.get("p90"), 1),
                        number(call.get("p50"), 1),
                        f"{missed} of {entry['rounds']} switches not seen within 50 ms" if missed else "",
                    ]
                )
        lines += [
            "",
            f"process-controller switch latency on core {document['switch_latency_core']} (two idle NFs, "
            "call until the other runs):",
            "",
            table(["backend", "p50 us", "p90 us", "call p50 us", "note"], rows),
        ]
    return "\n".join(lines)
