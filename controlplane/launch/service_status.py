"""What a running service says about itself: the live figures its data plane reports every 250 ms, made into the
`status` the control API answers (chains, NFs with their process and core, ports, the scheduler), with rates over the
last report's interval."""

from __future__ import annotations

import threading


def bound_of_percentile(now: dict | None, before: dict | None, share: float) -> float | None:
    """The latency histogram's bound (us) under which `share` of the packets sampled since the last report fell (all
    since the start, without one): live metrics keep cumulative buckets, so the last interval is their difference.
    None where no packet was sampled in it (an idle chain, a removed one): not the whole run's, shown as the last."""
    if not now or not now.get("count"):
        return None
    counts, total = now["counts"], now["count"]
    if before and before.get("count") is not None:
        if before["count"] >= now["count"]:
            return None
        counts = [a - b for a, b in zip(counts, before["counts"], strict=True)]
        total = now["count"] - before["count"]
    for bound, cumulative in zip(now["bounds_us"], counts, strict=True):
        if cumulative >= share * total:
            return bound
    return None


def _rate(now: dict, before: dict | None, key: str, seconds: float) -> float | None:
    if before is None or seconds <= 0:
        return None
    return (now[key] - before[key]) / seconds / 1e6


class ServiceStatus:
    """Follows the manager's events (started, progress with live metrics) and answers `status` from any thread."""

    def __init__(self, config: dict):
        self._lock = threading.Lock()
        self._config = config
        self._workers: dict[str, dict] = {}  # by worker name: pid, core, NFs
        self._now: dict | None = None
        self._before: dict | None = None
        self._t = 0.0
        self._phase = "starting"
        self._scheduler = config["scheduler"]
        self._changes: list[dict] = []
        self._restarts: dict[str, int] = {}  # by NF: times its process was started again after it died
        self._down: set[str] = set()  # NFs whose process died and is not back yet
        self._removed: set[str] = set()  # chains removed from the service

    def follow(self, event: dict) -> None:
        kind = event.get("event")
        with self._lock:
            if kind == "started":
                self._workers = {worker["name"]: worker for worker in event["workers"]}
            elif kind == "progress" and "metrics" in event:
                self._before, self._now = self._now, event["metrics"]
                self._t, self._phase = event["t"], event["phase"]
            elif kind in ("traffic_ended", "done"):
                self._phase = "stopping"
            elif kind == "crash":
                self._down.update(event["nfs"].split(","))
            elif kind == "restart":
                names = event["nfs"].split(",")
                self._down.difference_update(names)
                if event["worker"] in self._workers:
                    self._workers[event["worker"]] = dict(self._workers[event["worker"]], pid=event["pid"])
                for name in names:
                    self._restarts[name] = self._restarts.get(name, 0) + 1
            elif kind == "change_cost":  # measured once the change's window passed: added to it
                for change in self._changes:
                    if change.get("id") == event.get("id") and change.get("state") == "applied":
                        change["cost"] = {key: value for key, value in event.items() if key not in ("event", "id")}
            elif kind == "change":
                self._changes.append({key: value for key, value in event.items() if key != "event"})
                if event.get("op") == "set_scheduler" and event.get("state") == "applied":
                    self._scheduler = {"name": event["scheduler"], "options": event.get("options", {})}
                if event.get("relayout") and event.get("state") == "applied":
                    # The NFs in new processes (a switch, a move): laid out as that scheduler runs them.
                    self._workers = {worker["name"]: worker for worker in event["workers"]}
                if event.get("op") == "remove_chain" and event.get("state") == "applied":
                    self._removed.add(event["chain"])
                if event.get("op") == "add_chain" and event.get("state") == "applied":
                    self._workers |= {worker["name"]: worker for worker in event["workers"]}

    @property
    def started_with(self) -> dict:
        """The config the service started with (its cores, its control core, the scheduler it began on)."""
        return self._config

    def status(self) -> dict:
        with self._lock:
            now, before, t, phase = self._now, self._before, self._t, self._phase
            workers, scheduler, changes = dict(self._workers), self._scheduler, list(self._changes)
            restarts, down, removed = dict(self._restarts), set(self._down), set(self._removed)
        status = {"name": self._config["name"], "scheduler": scheduler["name"], "phase": phase, "changes": changes}
        if scheduler["name"] == "per_core":
            status["scheduler_by_core"] = {
                choice["core"]: choice["name"] for choice in scheduler.get("options", {}).get("cores", [])
            }
        if "lab" in self._config:  # where a user's own clients can run: ip netns exec NETNS iperf3 --client ADDRESS
            hosts = self._config["lab"]["hosts"]
            status["lab"] = [{key: host.get(key) for key in ("name", "netns", "address")} for host in hosts]
        if now is None:
            return status | {"t_s": 0.0, "chains": [], "nfs": [], "ports": []}
        seconds = now["unix_time"] - before["unix_time"] if before else 0.0
        earlier = {kind: {item["name"]: item for item in before[kind]} for kind in ("chains", "nfs")} if before else {}
        chains = []
        for chain in now["chains"]:
            previous = earlier.get("chains", {}).get(chain["name"])
            latency, earlier_latency = chain.get("latency"), (previous or {}).get("latency")
            chains.append(
                {
                    "name": chain["name"],
                    "generated": chain["generated"],
                    "delivered": chain["delivered"],
                    "delivered_mpps": _rate(chain, previous, "delivered", seconds),
                    "entry_backpressure": chain["entry_backpressure"],
                    "generator_fell_behind": chain.get("generator_fell_behind", 0),
                    # Bucket bounds: the latency the median (99th) packet of the last interval stayed under.
                    "latency_p50_us_under": bound_of_percentile(latency, earlier_latency, 0.5),
                    "latency_p99_us_under": bound_of_percentile(latency, earlier_latency, 0.99),
                    "removed": chain["name"] in removed,
                }
            )
        drops_by_ring = {ring["name"]: ring["dropped_full"] for ring in now["rings"] if ring["dropped_full"]}
        worker_of = {nf: worker for worker in workers.values() for nf in str(worker.get("nfs", "")).split(",") if nf}
        nfs = []
        for nf in now["nfs"]:
            worker = worker_of.get(nf["name"], {})
            previous = earlier.get("nfs", {}).get(nf["name"])
            nfs.append(
                {
                    "name": nf["name"],
                    "chain": nf["chain"],
                    "worker": None if nf["chain"] in removed else worker.get("name"),
                    "pid": None if nf["chain"] in removed else worker.get("pid"),
                    "core": worker.get("core"),
                    "packets_in": nf["packets_in"],
                    "packets_dropped": nf["packets_dropped"],
                    "in_mpps": _rate(nf, previous, "packets_in", seconds),
                    "restarts": restarts.get(nf["name"], 0),
                    "down": nf["name"] in down,
                    "removed": nf["chain"] in removed,
                }
            )
        return status | {
            "t_s": t,
            "chains": chains,
            "nfs": nfs,
            "drops_by_ring": drops_by_ring,
            "ports": now.get("ports", []),
            "scheduler_live": now.get("scheduler", {}),
        }
