"""CPU and network use per node after placement, against Elastic Allocator's limits.

Elastic Allocator (*Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the
Cloud*, SOSE 2014, §IV.A–C) scores a placement on
both resources a stream query uses, on a cluster where other work already runs:

* **load** of node i: the operators' CPU plus what other work holds,
  ``load(n_i) = Σ_j e_j·r_j/s_j + C0_i`` (§IV.A). Here an executor's ``load`` is
  its CPU in reference-core percent, ``Node.used_cpu`` is C0_i.
* **bandwidth** of node i's link after placement: the initial use B0 plus what
  the placed operators send across it (§IV.B). Here: Mbit/s its executors send
  to and receive from executors on other nodes
  (:meth:`~storm_planner.core.traffic.TrafficModel.network`, linear in streams ×
  nodes) plus ``Node.used_bandwidth``.
* **constraints** (§IV.C): ``B ≤ D_BW`` and ``Load ≤ D_CPU``, read as fractions of
  each node's capacity: ``options.max_cpu_utilisation`` × CPU capacity and
  ``options.max_bandwidth_utilisation`` × link bandwidth (absent: 1; a node
  without ``bandwidth`` has no bandwidth constraint). A node that other work
  alone already takes past a limit violates it only once this topology adds
  CPU (or traffic) there: a placement is judged on what it does.
* **objectives** (§IV.C, Figs. 4–5): utilisation ``R_utl = Σ u_i / R_total`` and
  deviation ``R_dev``. The extracted formulas lost their symbols; ours:
  ``u_i`` is what node i *can* use of its resource, ``min(demand_i, capacity_i)``
  (demand beyond capacity is backlog, not work done — this is why a placement
  that overloads nodes shows a lower utilisation, as the paper's Random does),
  ``R_total = Σ capacity_i``; ``R_dev = sqrt(mean_i (R_i − R_av)²)`` with ``R_i``
  node i's demand in percent of its capacity (uncapped, so overload shows as
  imbalance) and ``R_av`` their mean — the population standard deviation, the
  usual reading of "√Σ(R_i − R_av)" with its square and normalisation lost.

Complexity: O(executors + streams × nodes) per evaluation (never executor pairs,
except measured ones, which the problem lists).
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Mapping

from storm_planner.core.baseline import ClusterBaseline
from storm_planner.core.problem import Node, Options, Problem
from storm_planner.core.traffic import PlaceCounts

EPSILON = 1e-9


def cpu_fraction(options: Options) -> float:
    """D_CPU: the fraction of a node's CPU capacity that may be in use (absent: 1)."""
    return 1.0 if options.max_cpu_utilisation is None else options.max_cpu_utilisation


def bandwidth_fraction(options: Options) -> float:
    """D_BW: the fraction of a node's link bandwidth that may be in use (absent: 1)."""
    return 1.0 if options.max_bandwidth_utilisation is None else options.max_bandwidth_utilisation


def cpu_room(node: Node, options: Options) -> float:
    """CPU (reference-core percent) this topology may use on ``node`` within D_CPU, other work counted."""
    return (cpu_fraction(options) * node.capacity - node.used_cpu) * node.speed


def bandwidth_room(node: Node, options: Options) -> float:
    """Mbit/s this topology may add on ``node``'s link within D_BW (infinite without a link capacity)."""
    if node.bandwidth is None:
        return math.inf
    return bandwidth_fraction(options) * node.bandwidth - node.used_bandwidth


def node_network(problem: Problem, node_of: Mapping[str, Hashable],
                 counts: PlaceCounts | None = None) -> dict[str, float]:
    """Per node, Mbit/s on its link after placement: this topology's crossing traffic plus ``used.bandwidth``."""
    crossing = problem.traffic_model.network(node_of, counts)
    return {n.id: crossing.get(n.id, 0.0) + n.used_bandwidth for n in problem.nodes}


def node_cpu(problem: Problem, loads: Mapping[str, float]) -> dict[str, float]:
    """Per node, CPU in use in percent of its whole capacity: this topology's load plus ``used.cpu``."""
    return {n.id: 100.0 * (loads.get(n.id, 0.0) + n.used_cpu * n.speed) / (n.capacity * n.speed)
            for n in problem.nodes}


def utilisation_and_deviation(demand: Mapping[str, float], capacity: Mapping[str, float]) -> tuple[float, float]:
    """(R_utl, R_dev) in percent: capped use over total capacity, and the deviation of per-node demand.

    ``demand`` and ``capacity`` in the same unit, over the same nodes.
    """
    if not capacity:
        return 0.0, 0.0
    total = sum(capacity.values())
    used = sum(min(demand[n], capacity[n]) for n in capacity)
    shares = [100.0 * demand[n] / capacity[n] for n in capacity]
    mean = sum(shares) / len(shares)
    deviation = math.sqrt(sum((s - mean) ** 2 for s in shares) / len(shares))
    return 100.0 * used / total, deviation


def resource_figures(problem: Problem, node_of: Mapping[str, Hashable], loads: Mapping[str, float],
                     counts: PlaceCounts | None = None) -> dict[str, float]:
    """Elastic Allocator's figures of a placement (see the module docstring).

    ``loads``: this topology's CPU per node; ``counts``: the traffic model's per-component counts of
    ``node_of`` when the caller has them. Returns ``cpu_utilisation``/``cpu_deviation`` (R_utl, R_dev
    of CPU, %), ``bandwidth_utilisation``/``bandwidth_deviation`` (the same over nodes with a link
    capacity), ``network`` (Mbit/s this topology sends between nodes), ``max_network_utilisation``
    (%, the busiest link), ``cpu_violations``/``bandwidth_violations`` (nodes over D_CPU / D_BW) and
    ``constraint_violations`` (their sum).
    """
    cpu = CpuTally(problem.options)
    for n in problem.nodes:
        cpu.add(n, loads.get(n.id, 0.0))
    return with_bandwidth(cpu.figures(), problem, node_of, counts)


class CpuTally:
    """Elastic Allocator's CPU figures, fed node by node.

    Either every node is added (:meth:`add`), or the tally starts from the idle cluster
    (:meth:`from_baseline`) and only the nodes this topology uses are placed (:meth:`place`).
    """

    def __init__(self, options: Options) -> None:
        self.options, self.spread, self.over = options, _Spread(), 0

    @classmethod
    def from_baseline(cls, options: Options, baseline: ClusterBaseline) -> CpuTally:
        """Every node of ``baseline`` counted as holding nothing of this topology."""
        tally = cls(options)
        tally.spread = _Spread.of_baseline(baseline)
        return tally

    def add(self, node: Node, load: float) -> None:
        """``load``: this topology's CPU on ``node`` (reference-core percent)."""
        self.spread.add(load + node.used_cpu * node.speed, node.capacity * node.speed)
        self._count_violation(node, load)

    def place(self, node: Node, load: float) -> None:
        """``load`` on ``node``, which the tally counted idle (started :meth:`from_baseline`; once per node)."""
        base = node.baseline
        self.spread.replace(base.held, load + base.held, base.capacity)
        self._count_violation(node, load)

    def _count_violation(self, node: Node, load: float) -> None:
        # A node other work alone already takes past its limit counts only once this topology adds to it.
        if load > max(0.0, cpu_room(node, self.options)) + EPSILON:
            self.over += 1

    def figures(self) -> dict[str, float]:
        utilisation, deviation = self.spread.utilisation_and_deviation()
        return {"cpu_utilisation": utilisation, "cpu_deviation": deviation, "cpu_violations": float(self.over)}


def with_bandwidth(cpu: Mapping[str, float], problem: Problem, node_of: Mapping[str, Hashable],
                   counts: PlaceCounts | None = None) -> dict[str, float]:
    """``cpu`` (:meth:`CpuTally.figures`) with the network figures added: O(places + nodes with a link)."""
    options = problem.options
    crossing = problem.traffic_model.network(node_of, counts)
    bandwidth, over, highest = _Spread(), 0, 0.0
    for n in problem.nodes:
        if n.bandwidth is None:
            continue
        sent = crossing.get(n.id, 0.0)
        bandwidth.add(sent + n.used_bandwidth, n.bandwidth)
        highest = max(highest, 100.0 * (sent + n.used_bandwidth) / n.bandwidth)
        if sent > max(0.0, bandwidth_room(n, options)) + EPSILON:
            over += 1
    utilisation, deviation = bandwidth.utilisation_and_deviation()
    own = sum(mbit for place, mbit in crossing.items() if place is not None)
    return {
        **cpu,
        "bandwidth_utilisation": utilisation,
        "bandwidth_deviation": deviation,
        "network": max(0.0, own / 2.0),  # each crossing pair is counted at both of its ends
        "max_network_utilisation": highest,
        "bandwidth_violations": float(over),
        "constraint_violations": cpu["cpu_violations"] + float(over),
    }


class _Spread:
    """Running sums for :func:`utilisation_and_deviation` over nodes seen one at a time."""

    def __init__(self) -> None:
        self.total = self.used = self.shares = self.squares = 0.0
        self.count = 0

    @classmethod
    def of_baseline(cls, baseline: ClusterBaseline) -> _Spread:
        spread = cls()
        spread.total, spread.used, spread.count = baseline.capacity, baseline.capped, baseline.count
        spread.shares, spread.squares = baseline.shares, baseline.squares
        return spread

    def add(self, demand: float, capacity: float) -> None:
        share = 100.0 * demand / capacity
        self.total += capacity
        self.used += min(demand, capacity)
        self.shares += share
        self.squares += share * share
        self.count += 1

    def replace(self, before: float, after: float, capacity: float) -> None:
        """A node already counted with demand ``before`` now has ``after``."""
        old, new = 100.0 * before / capacity, 100.0 * after / capacity
        self.used += min(after, capacity) - min(before, capacity)
        self.shares += new - old
        self.squares += new * new - old * old

    def utilisation_and_deviation(self) -> tuple[float, float]:
        if not self.count:
            return 0.0, 0.0
        mean = self.shares / self.count
        return 100.0 * self.used / self.total, math.sqrt(max(0.0, self.squares / self.count - mean * mean))
