"""Madsen et al. §5: the workloads their MILP and ALBIC are evaluated on.

* :func:`fluctuation_problem` — §5.1: key groups evenly placed, then the load of a
  fraction of the nodes changes;
* :func:`drifting_loads` — §5.2.1: loads drifting over many rounds (AR(1) per key group);
* :func:`scale_in_problem` — §5.1 scale-in: nodes marked for removal, some overloaded;
* :class:`CollocationWorkload` and :func:`fluctuate` — §5.3's synthetic job, a chain of
  operators in which a share of the executors talk one-to-one, and its load changes;
* :func:`problem_dict`, :func:`even_placement` — the problem file of given loads and placement.

A Storm key group is an executor. Reconstructions of the paper's lost constants are stated
where they are chosen. The benchmarks that use them: :mod:`storm_planner_bench.sim.albic`.
"""
from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from storm_planner.core.problem import Problem

CAPACITY = 100.0


def problem_dict(nodes: int, loads: list[float], current: dict[str, str], options: dict[str, Any],
                 draining: Iterable[int] = (), ids: list[str] | None = None) -> dict[str, Any]:
    ids = ids or [f"kg/{i}" for i in range(len(loads))]
    marked = set(draining)
    return {
        "nodes": [{"id": f"n{i:02d}", "capacity": CAPACITY, **({"draining": True} if i in marked else {})}
                  for i in range(nodes)],
        "topology": {"id": "synthetic", "components": [{"id": "kg", "executors": len(loads)}]},
        "executors": [{"id": e, "component": "kg", "load": round(load, 6)} for e, load in zip(ids, loads)],
        "current": {e: f"{current[e]}:6700" for e in ids},
        "options": options,
    }


def even_placement(executors: int, nodes: int) -> dict[str, str]:
    """Key groups evenly allocated (§5.1): executor i on node i mod N."""
    return {f"kg/{i}": f"n{i % nodes:02d}" for i in range(executors)}


def fluctuation_problem(nodes: int = 20, executors: int = 300, varies: float = 0.2, change: float = 0.5,
                        budget: int | None = 13, seed: int = 1, time_limit_s: float = 5.0,
                        spread: float = 0.2, utilisation: float = 60.0) -> dict[str, Any]:
    """§5.1's synthetic input.

    Every key group starts at the mean load (``utilisation`` on average) adjusted
    by a uniform ±``spread``; then on a fraction ``varies`` of the nodes half lose
    and half gain ``change`` of their load, through a random half of their key
    groups. (The paper's ranges were lost in extraction: ±20%, 50% are ours.)
    """
    rng = random.Random(seed)
    mean = nodes * CAPACITY * utilisation / 100.0 / executors
    loads = [mean * (1 + rng.uniform(-spread, spread)) for _ in range(executors)]
    current = even_placement(executors, nodes)
    changed = rng.sample(range(nodes), int(round(varies * nodes)))
    for k, node in enumerate(changed):
        members = [i for i in range(executors) if i % nodes == node]
        chosen = rng.sample(members, max(1, len(members) // 2))
        delta = change * sum(loads[i] for i in members) * (1 if k % 2 else -1)
        share = sum(loads[i] for i in chosen)
        for i in chosen:  # spread the change over the chosen key groups, keeping each positive
            loads[i] = max(0.05 * mean, loads[i] + delta * loads[i] / share)
    options = {"time_limit_s": time_limit_s, "seed": seed, **({"max_migrations": budget} if budget is not None else {})}
    return problem_dict(nodes, loads, current, options)


def drifting_loads(base: list[float], rounds: int, sigma: float, phi: float, seed: int) -> Iterable[list[float]]:
    """Loads per round: base × exp(x), x an AR(1) per key group (mean-reverting drift)."""
    rng = random.Random(seed)
    x = [0.0] * len(base)
    for _ in range(rounds):
        x = [phi * v + rng.gauss(0.0, sigma) for v in x]
        yield [b * math.exp(v) for b, v in zip(base, x)]


def scale_in_problem(nodes: int = 60, executors: int = 900, marked: int = 10, overloaded: int = 1,
                     budget: int = 20, seed: int = 1, time_limit_s: float = 5.0,
                     utilisation: float = 50.0) -> dict[str, Any]:
    """§5.1 scale-in: ``marked`` nodes for removal, ``overloaded`` others at 100% (the rest share the load)."""
    rng = random.Random(seed)
    mean = nodes * CAPACITY * utilisation / 100.0 / executors
    loads = [mean * (1 + rng.uniform(-0.2, 0.2)) for _ in range(executors)]
    current = even_placement(executors, nodes)
    draining = list(range(nodes - marked, nodes))
    for node in range(overloaded):  # the first nodes: scale their key groups up to 100%
        members = [i for i in range(executors) if i % nodes == node]
        factor = CAPACITY / sum(loads[i] for i in members)
        for i in members:
            loads[i] *= factor
    options = {"time_limit_s": time_limit_s, "seed": seed, "max_migrations": budget}
    return problem_dict(nodes, loads, current, options, draining=draining)


@dataclass
class CollocationWorkload:
    """§5.3's synthetic job: a chain of operators; a share of executors talk one-to-one.

    Executor i of operator o sends ``rate`` per period: all of it to executor i of
    operator o+1 (one-to-one) with probability ``one_to_one``, else evenly to every
    executor of o+1 (full partitioning). An executor's load is its base load plus
    ``serialisation`` per unit of traffic it sends or receives across nodes, so
    collocation lowers the system load (the paper's load index). Constants are
    ours: at a random placement serialisation is ~40% of the load, and the
    cluster is ~60% utilised.
    """

    nodes: int
    ids: list[str]
    components: list[dict[str, Any]]
    streams: list[dict[str, Any]]
    base: list[float]
    traffic: dict[tuple[str, str], float]
    serialisation: float

    @classmethod
    def build(cls, nodes: int, executors: int, operators: int, one_to_one: float = 0.5, seed: int = 1,
              rate: float = 10.0, utilisation: float = 60.0, serialisation_share: float = 0.4):
        rng = random.Random(seed)
        per = executors // operators
        ids_by_op = [[f"op{o:02d}/{i}" for i in range(per)] for o in range(operators)]
        traffic: dict[tuple[str, str], float] = {}
        for o in range(operators - 1):
            for i, source in enumerate(ids_by_op[o]):
                if rng.random() < one_to_one:
                    traffic[(source, ids_by_op[o + 1][i])] = rate
                else:
                    for target in ids_by_op[o + 1]:
                        traffic[(source, target)] = rate / per
        ids = [e for op in ids_by_op for e in op]
        total_load = nodes * CAPACITY * utilisation / 100.0
        remote_share = 1.0 - 1.0 / nodes
        moved_traffic = 2.0 * sum(traffic.values()) * remote_share  # sent + received
        serialisation = serialisation_share * total_load / moved_traffic
        base_total = (1.0 - serialisation_share) * total_load
        raw = [1 + rng.uniform(-0.2, 0.2) for _ in ids]
        base = [base_total * r / sum(raw) for r in raw]
        components = [{"id": f"op{o:02d}", "executors": per} for o in range(operators)]
        streams = [{"from": f"op{o:02d}", "to": f"op{o + 1:02d}", "grouping": "fields", "rate": rate * per}
                   for o in range(operators - 1)]
        return cls(nodes, ids, components, streams, base, traffic, serialisation)

    def loads(self, base: list[float], node_of: dict[str, str]) -> list[float]:
        extra = {e: 0.0 for e in self.ids}
        for (source, target), rate in self.traffic.items():
            if node_of[source] != node_of[target]:
                extra[source] += rate * self.serialisation
                extra[target] += rate * self.serialisation
        return [b + extra[e] for b, e in zip(base, self.ids)]

    def problem(self, base: list[float], node_of: dict[str, str], options: dict[str, Any]) -> Problem:
        return Problem.from_dict({
            "nodes": [{"id": f"n{i:02d}", "capacity": CAPACITY} for i in range(self.nodes)],
            "topology": {"id": "collocation", "components": self.components, "streams": self.streams},
            "executors": [{"id": e, "component": e.split("/")[0], "load": round(load, 6)}
                          for e, load in zip(self.ids, self.loads(base, node_of))],
            "traffic": [{"from": s, "to": t, "rate": r} for (s, t), r in self.traffic.items()],
            "current": {e: f"{node_of[e]}:6700" for e in self.ids},
            "options": options,
        })

    def random_placement(self, seed: int) -> dict[str, str]:
        rng = random.Random(seed)
        order = list(self.ids)
        rng.shuffle(order)
        return {e: f"n{k % self.nodes:02d}" for k, e in enumerate(order)}


def fluctuate(base0: list[float], factors: list[float], rng: random.Random, share: float = 0.2,
              amplitude: float = 0.2) -> list[float]:
    """The loads of a random ``share`` of the key groups change by U(-amplitude, +amplitude) of their base."""
    for i in rng.sample(range(len(factors)), int(share * len(factors))):
        factors[i] = 1.0 + rng.uniform(-amplitude, amplitude)
    return [b * f for b, f in zip(base0, factors)]


__all__ = ["CAPACITY", "CollocationWorkload", "drifting_loads", "even_placement", "fluctuate",
           "fluctuation_problem", "problem_dict", "scale_in_problem"]
