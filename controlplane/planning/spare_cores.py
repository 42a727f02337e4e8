"""Where a scaled NF's spare instances go when the spec names no core: the NF core with the most headroom by the
placement model (each NF's measured batch model at its planned rate), if that headroom holds the instance's share of
the NF's work, else the NF's own core (μNF IV-E: "on a core with headroom, else the same core")."""

from __future__ import annotations

from dataclasses import dataclass

from controlplane.planning.batch_model import batch_models
from controlplane.planning.placement import PlacedNf, k_per_packet
from controlplane.planning.rate_shares import chain_shares


@dataclass
class Spare:
    name: str
    own_core: int
    need: float  # the core share it takes when the instances split the NF's work evenly


def choose_cores(spares: list[Spare], load: dict[int, float]) -> dict[str, tuple[int, str]]:
    """Each spare's core and why: in order, the core other than its NF's with the most headroom (1 - load) if that
    holds its need, charging it there; else its NF's own core. `load`: each NF core's planned share, 0..1+."""
    load = dict(load)
    chosen = {}
    for spare in spares:
        others = sorted((core for core in load if core != spare.own_core), key=lambda core: (load[core], core))
        if others and 1.0 - load[others[0]] >= spare.need:
            core = others[0]
            chosen[spare.name] = (
                core,
                f"core {core}: {1.0 - load[core]:.2f} of it free by the placement model, it needs {spare.need:.2f}",
            )
            load[core] += spare.need
        else:
            best = f"at most {1.0 - load[others[0]]:.2f} free elsewhere" if others else "no other NF core"
            chosen[spare.name] = (
                spare.own_core,
                f"its NF's core {spare.own_core}: it needs {spare.need:.2f} of a core, {best}",
            )
    return chosen


def place_spares(config: dict, source: str, say=None) -> tuple[dict, list[str]]:
    """The config with every open spare instance on its chosen core, and a note for each."""
    open_spares = [nf for chain in config["chains"] for nf in chain["nfs"] if nf.get("core_open")]
    if not open_spares:
        return config, []
    cores = [core for core in config["placement_cores"] if core != config["control_core"]]
    if len({*cores, *(nf["core"] for nf in open_spares)}) < 2:
        names = ", ".join(nf["name"] for nf in open_spares)
        return _without_open(config, {}), [f"spare instances on their NFs' core, the machine's only NF core: {names}"]
    else:
        models = batch_models(config, source, say=say)
        shares = chain_shares(config, source, say=say)
        hz = next(iter(models.values()))["tsc_hz"]
        load = {core: 0.0 for core in cores}
        work = {}  # NF name -> its core share at the chain's rate (the busy share of a core for an unpaced chain)
        for chain in config["chains"]:
            rate = chain["traffic"]["mean_rate_pps"]
            for nf in chain["nfs"]:
                if nf.get("instance", 1) > 1:
                    continue
                placed = PlacedNf(
                    name=nf["name"],
                    chain=chain["name"],
                    rate_pps=rate,
                    weight=1.0,
                    k_cycles=models[nf["name"]]["k_cycles"],
                    c_cycles=models[nf["name"]]["c_cycles"],
                    share=shares[chain["name"]]["nfs"][nf["name"]],
                )
                work[nf["name"]] = (
                    1.0 if rate is None else placed.share * rate * k_per_packet(placed, config["burst"]) / hz
                )
                load[nf["core"]] = load.get(nf["core"], 0.0) + work[nf["name"]]
        spares = []
        for chain in config["chains"]:
            for nf in chain["nfs"]:
                if nf.get("core_open"):
                    instances = sum(1 for other in chain["nfs"] if other.get("scale_group") == nf["scale_group"])
                    spares.append(Spare(nf["name"], nf["core"], work[nf["scale_group"]] / instances))
        chosen = choose_cores(spares, load)
    return _without_open(config, chosen), [f"spare instance {name} on {why}" for name, (core, why) in chosen.items()]


def _without_open(config: dict, chosen: dict[str, tuple[int, str]]) -> dict:
    """The config with the chosen cores and no `core_open` marks."""
    return dict(
        config,
        chains=[
            dict(
                chain,
                nfs=[
                    {k: v for k, v in nf.items() if k != "core_open"}
                    | ({"core": chosen[nf["name"]][0]} if nf["name"] in chosen else {})
                    for nf in chain["nfs"]
                ],
            )
            for chain in config["chains"]
        ],
    )
