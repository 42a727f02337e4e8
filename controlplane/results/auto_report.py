"""What `auto` decided in a run, as the run report shows it: the switch costs its model charged, the policy it chose
and why, the model's predictions for every candidate, and each later decision (a live switch, or a policy it would
choose on a restart)."""

from __future__ import annotations

from controlplane.terminal.tables import table


def _figure(value: float | None, scale: float = 1.0, digits: int = 3) -> str:
    return "-" if value is None else f"{value / scale:.{digits}g}"


def policy_name(entry: dict) -> str:
    """A decision's or a prediction's policy; per_core with each core's ("per_core (core 1 unis, core 2 rtc)")."""
    cores = entry.get("core_policies") or {}
    if not cores:
        return entry["policy"]
    return f"{entry['policy']} (" + ", ".join(f"core {core} {policy}" for core, policy in cores.items()) + ")"


def prediction_table(decision: dict) -> str:
    """The model's predictions behind one decision, a row per candidate; the chosen one marked."""
    rows = []
    for p in decision["predictions"]:
        mark = "*" if p["policy"] == decision["policy"] else ""
        if not p["feasible"]:
            rows.append([p["policy"] + mark, "-", "-", "-", "-", "cannot run here: " + p["infeasible_because"]])
            continue
        rows.append(
            [
                policy_name(p) + mark,
                _figure(p["throughput_pps"], 1e6),
                _figure(p["latency_us"]),
                _figure(p["jain"]),
                f"{100 * p['cpu_share']:.0f} %",
                "",
            ]
        )
    headers = ["policy", "predicted Mpps", "turn (us)", "Jain", "CPU", ""]
    if not any(row[-1] for row in rows):  # every candidate could run: no column of reasons
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    return table(headers, rows)


def auto_decision_lines(report: dict) -> list[str]:
    decisions = report.get("decisions") or []
    lines = [f"auto ({report['objective']}): runs {policy_name(report)}"]
    if report.get("slo_p99_us"):
        lines[0] += f", SLO p99 {report['slo_p99_us']:g} us"
    if not decisions:
        return lines
    start = decisions[0]
    lines.append(f"auto at the start: {policy_name(start)}: {start['reason']}")
    lines.append(prediction_table(start))
    for event in decisions[1:]:
        rates = ", ".join(f"{pps / 1e6:.3g}" for pps in event.get("offered_pps", []))
        if event.get("applied"):
            # Within a layout the modules swap in microseconds; across layouts the run re-lays the NFs out (its
            # `changes` say how long the entries were held).
            how = "re-laying the NFs out" if event.get("relayout") else f"in {event['switch_us']:.0f} us"
            lines.append(
                f"auto at {event['t_s']:.2f} s (offered {rates} Mpps): switched {event['from']} -> "
                f"{policy_name(event)} {how}: {event['reason']}"
            )
        else:
            lines.append(
                f"auto at {event['t_s']:.2f} s (offered {rates} Mpps): would choose {event['policy']} "
                f"({event['reason']}); not applied: {event['why_not']}"
            )
    return lines


def switch_cost_line(sources: dict) -> str:
    """Each switch cost the model charged and where it came from (controlplane/machine/switch_costs.py)."""
    parts = []
    for option, source in sources.items():
        value = f"{source['ns']:,.0f} ns" if "ns" in source else f"default ({source['why']})"
        parts.append(
            f"{option.removesuffix('_ns').replace('_', ' ')} {value}"
            + (f" ({source['source']})" if "ns" in source else "")
        )
    return "auto's switch costs: " + ", ".join(parts)
