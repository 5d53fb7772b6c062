"""The evaluation set-up of Nasiri et al. §6 as problems: topologies, clusters, profile.

*Reconstructed* — the figures did not survive extraction, so the topologies
follow the prose (§6.1, Fig. 5) and the Micro-benchmark of R-Storm it cites:

* ``linear``: one source, a sequence of intermediate components, a sink:
  ``spout → mid → high → sink``;
* ``diamond``: parallel components between source and sink:
  ``spout → {low, mid, high} → sink``;
* ``star``: several sources into one component that feeds several sinks:
  ``{spout1, spout2} → center → {sink1, sink2}``.

Each topology has one highCompute bolt (the paper's grey bolt); spouts and
sinks are lowCompute (star's sinks midCompute, so that all three types appear
as in Table IV). Every stream is shuffle-grouped with α = 1 and each
subscriber gets the whole stream (Storm's semantics).

Clusters: ``paper`` is the three worker machines of Table II (one Pentium,
one Core i3, one Core i5; the paper's fourth machine ran Nimbus);
``small``/``medium``/``large`` are the scenarios of Table IV (2/2/2, 10/10/10
and 20/70/90 machines of types 1/2/3). Every machine has the paper's budget
MAC = 100 and one worker slot. The profile is Table III
(``planners/hetero/examples/micro-benchmark.json``).
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent.parent / "planners" / "hetero" / "examples"
MACHINE_TYPES = ("pentium", "i3", "i5")   # Machines 1, 2, 3 of Table II

TOPOLOGIES: dict[str, dict[str, Any]] = {
    "linear": {
        "components": [("spout", "spout"), ("mid", "bolt"), ("high", "bolt"), ("sink", "bolt")],
        "streams": [("spout", "mid"), ("mid", "high"), ("high", "sink")],
    },
    "diamond": {
        "components": [("spout", "spout"), ("low", "bolt"), ("mid", "bolt"), ("high", "bolt"), ("sink", "bolt")],
        "streams": [("spout", "low"), ("spout", "mid"), ("spout", "high"),
                    ("low", "sink"), ("mid", "sink"), ("high", "sink")],
    },
    "star": {
        "components": [("spout1", "spout"), ("spout2", "spout"), ("center", "bolt"),
                       ("sink1", "bolt"), ("sink2", "bolt")],
        "streams": [("spout1", "center"), ("spout2", "center"), ("center", "sink1"), ("center", "sink2")],
    },
}

CLUSTERS: dict[str, tuple[int, int, int]] = {
    "paper": (1, 1, 1),
    "small": (2, 2, 2),
    "medium": (10, 10, 10),
    "large": (20, 70, 90),
}


def micro_profile() -> dict[str, Any]:
    return json.loads((EXAMPLES / "micro-benchmark.json").read_text())


def cluster_nodes(counts: tuple[int, ...], types: tuple[str, ...] = MACHINE_TYPES,
                  capacity: float = 100.0) -> list[dict[str, Any]]:
    """Problem-file nodes: ``counts[i]`` machines of ``types[i]``, named ``<type>-<k>``."""
    return [
        {"id": f"{machine_type}-{k:03d}", "capacity": capacity, "machine_type": machine_type, "slots": [6700]}
        for machine_type, count in zip(types, counts)
        for k in range(count)
    ]


def micro_problem(topology: str, cluster: str | tuple[int, ...], profile: dict[str, Any] | None = None,
                  **options: Any) -> dict[str, Any]:
    """A problem file (dict) for one topology on one cluster, one executor per component."""
    shape = TOPOLOGIES[topology]
    counts = CLUSTERS[cluster] if isinstance(cluster, str) else cluster
    return {
        "nodes": cluster_nodes(counts),
        "topology": {
            "id": f"micro-{topology}",
            "components": [{"id": name, "type": kind} for name, kind in shape["components"]],
            "streams": [{"from": s, "to": t, "grouping": "shuffle"} for s, t in shape["streams"]],
        },
        "profiles": profile or micro_profile(),
        "options": {"seed": 1, **options},
    }


def random_problem(seed: int, related: bool, bases: tuple[float, float] | None = None) -> dict[str, Any]:
    """A small random instance (problem-file dict): 2–3 machines of 3 types, 2–4 components in a
    random tree rooted at one spout. ``related``: each component's times are its work over the
    machine type's speed (one ranking of machines for every component); else drawn per machine
    type. ``bases`` (percent of a core, low and high; issue #18): a base per component and machine
    type drawn uniformly from that range — independently of the times, so on some instances a
    machine type with the smaller per-tuple cost has the larger base. Without ``bases`` the
    instance is the same as before bases existed (their draws come from a separate generator).
    """
    rng = random.Random(seed * 2 + (1 if related else 0))
    machines, components = rng.choice([2, 3]), rng.choice([2, 3, 4])
    types = ["t0", "t1", "t2"]
    speed = {t: rng.uniform(0.5, 2.0) for t in types}
    names = [f"c{i}" for i in range(components)]
    work = {n: rng.uniform(0.05, 0.5) for n in names}

    def times(name: str) -> dict[str, float]:
        if related:
            return {t: round(work[name] / speed[t], 4) for t in types}
        return {t: round(rng.uniform(0.05, 2.0), 4) for t in types}

    problem: dict[str, Any] = {
        "nodes": [{"id": f"n{i}", "machine_type": rng.choice(types),
                   "capacity": 100 if related else rng.choice([100, 200])} for i in range(machines)],
        "topology": {"id": f"random-{seed}", "components": [
            {"id": n, "type": "spout" if i == 0 else "bolt"} for i, n in enumerate(names)],
            "streams": [{"from": names[rng.randrange(i)], "to": names[i]} for i in range(1, components)]},
        "profiles": {"input_rate": 8, "components": {
            n: {"times": times(n), "alpha": 1 if related else rng.choice([0.5, 1, 2])} for n in names}},
    }
    if bases is not None:
        add_bases(problem["profiles"], random.Random(f"bases-{seed}-{related}"), *bases)
    return problem


def add_bases(profile: dict[str, Any], rng: random.Random, low: float, high: float) -> dict[str, Any]:
    """Give every time of ``profile`` — per component type and per component, on each machine
    type — a base drawn from ``low..high`` percent of a core (in place; returns the profile)."""
    def with_base(times: Any) -> dict[str, Any]:
        times = times if isinstance(times, dict) else {"et": times}
        return {**times, "base": round(rng.uniform(low, high), 3)}

    for by_machine in profile.get("component_types", {}).values():
        by_machine.update({machine: with_base(times) for machine, times in by_machine.items()})
    for entry in profile["components"].values():
        if "times" in entry:
            entry["times"] = {machine: with_base(times) for machine, times in entry["times"].items()}
    return profile
