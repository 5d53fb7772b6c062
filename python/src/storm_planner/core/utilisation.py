"""CPU and network use per node after placement, against Elastic Allocator's limits.

Elastic Allocator (``elastic-allocator-gma.txt``, §IV.A–C) scores a placement on
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
from typing import Hashable, Mapping

from storm_planner.core.problem import Node, Options, Problem

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
                 counts: Mapping[str, Mapping] | None = None) -> dict[str, float]:
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
                     counts: Mapping[str, Mapping] | None = None) -> dict[str, float]:
    """Elastic Allocator's figures of a placement (see the module docstring).

    ``loads``: this topology's CPU per node; ``counts``: the traffic model's per-component counts of
    ``node_of`` when the caller has them. Returns ``cpu_utilisation``/``cpu_deviation`` (R_utl, R_dev
    of CPU, %), ``bandwidth_utilisation``/``bandwidth_deviation`` (the same over nodes with a link
    capacity), ``network`` (Mbit/s this topology sends between nodes), ``max_network_utilisation``
    (%, the busiest link), ``cpu_violations``/``bandwidth_violations`` (nodes over D_CPU / D_BW) and
    ``constraint_violations`` (their sum).
    """
    options = problem.options
    network = node_network(problem, node_of, counts)
    cpu_demand = {n.id: loads.get(n.id, 0.0) + n.used_cpu * n.speed for n in problem.nodes}
    cpu_capacity = {n.id: n.capacity * n.speed for n in problem.nodes}
    linked = [n for n in problem.nodes if n.bandwidth is not None]
    cpu_utl, cpu_dev = utilisation_and_deviation(cpu_demand, cpu_capacity)
    bw_utl, bw_dev = utilisation_and_deviation({n.id: network[n.id] for n in linked},
                                               {n.id: n.bandwidth for n in linked})
    # A node other work alone already takes past its limit counts only once this topology adds to it.
    cpu_over = sum(1 for n in problem.nodes
                   if loads.get(n.id, 0.0) > max(0.0, cpu_room(n, options)) + EPSILON)
    bw_over = sum(1 for n in linked
                  if network[n.id] - n.used_bandwidth > max(0.0, bandwidth_room(n, options)) + EPSILON)
    own = sum(network.values()) - sum(n.used_bandwidth for n in problem.nodes)
    return {
        "cpu_utilisation": cpu_utl,
        "cpu_deviation": cpu_dev,
        "bandwidth_utilisation": bw_utl,
        "bandwidth_deviation": bw_dev,
        "network": max(0.0, own / 2.0),  # each crossing pair is counted at both of its ends
        "max_network_utilisation": max((100.0 * network[n.id] / n.bandwidth for n in linked), default=0.0),
        "cpu_violations": float(cpu_over),
        "bandwidth_violations": float(bw_over),
        "constraint_violations": float(cpu_over + bw_over),
    }
