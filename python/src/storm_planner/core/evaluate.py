"""One evaluator for every plan, so planners are compared on identical figures.

Figures (CPU in percent of a reference core, traffic in the problem's rate unit):

* ``imc_total``  total executor-pair traffic;
* ``imc``        traffic between executors on different nodes (inter-machine);
* ``imc_gain``   traffic kept inside a node: ``imc_total - imc`` (the quantity
  Chatzistergiou & Viglas maximise);
* ``inter_worker`` traffic between different worker slots (serialised even on one node);
* ``collocation_factor`` ``imc_gain / imc_total`` (1 when there is no traffic);
* ``max_utilisation`` highest node utilisation in percent of its whole capacity: this
  topology's load plus what other work holds there (``used``);
* ``overloaded_nodes``, ``over_capacity`` nodes over capacity and the load beyond it;
* ``load_distance`` max over non-draining nodes of ``|utilisation - L|`` in percent
  points, with L the cluster's average utilisation (Madsen et al., §4.3.1);
* ``drain_load`` load still on draining nodes;
* ``migrations`` executors whose node differs from ``current`` (executors without a
  current place do not count); ``slot_moves`` the same at slot level;
* ``nodes_used``, ``slots_used``;
* Elastic Allocator's CPU and bandwidth figures (``cpu_utilisation``, ``cpu_deviation``,
  ``bandwidth_utilisation``, ``bandwidth_deviation``, ``network``, ``max_network_utilisation``,
  ``cpu_violations``, ``bandwidth_violations``, ``constraint_violations``): see
  :mod:`storm_planner.core.utilisation`.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.utilisation import CpuTally, with_bandwidth

EPSILON = 1e-9


def relative_load(load: float, capacity: float) -> float:
    """``load / capacity``, also for a node other topologies fill: 0 while it holds nothing, else infinite.

    Planners compare nodes by it (a full node is never the least loaded); no division by zero.
    """
    if capacity > EPSILON:
        return load / capacity
    return 0.0 if load <= EPSILON else math.inf


def node_loads(problem: Problem, node_of: Mapping[str, str]) -> dict[str, float]:
    loads = {n.id: 0.0 for n in problem.nodes}
    for executor in problem.executors:
        node = node_of.get(executor.id)
        if node is not None:
            loads[node] = loads.get(node, 0.0) + executor.load
    return loads


def utilisations(problem: Problem, node_of: Mapping[str, str],
                 loads: Mapping[str, float] | None = None) -> dict[str, float]:
    """Per node, percent of its whole capacity in use: this topology's load plus what other work holds."""
    loads = node_loads(problem, node_of) if loads is None else loads
    return {n.id: 100.0 * (loads[n.id] + n.used_cpu * n.speed) / (n.capacity * n.speed) for n in problem.nodes}


def average_utilisation(problem: Problem) -> float:
    """The cluster's utilisation L over its non-draining nodes, other work included."""
    base = problem.baseline
    return 100.0 * (problem.total_load + base.active_held) / base.active_capacity if base.active_capacity > 0 else 0.0


def load_distance(problem: Problem, node_of: Mapping[str, str],
                  utilisation: Mapping[str, float] | None = None) -> float:
    utilisation = utilisations(problem, node_of) if utilisation is None else utilisation
    average = average_utilisation(problem)
    active = [n.id for n in problem.nodes if not n.draining]
    return max((abs(utilisation[n] - average) for n in active), default=0.0)


def imc(problem: Problem, node_of: Mapping[str, str]) -> float:
    """Inter-machine traffic: pairs whose executors sit on different nodes."""
    return problem.traffic_model.crossing(node_of)


def migrations(problem: Problem, node_of: Mapping[str, str]) -> int:
    return sum(
        1 for executor, slot in problem.current.items()
        if executor in node_of and node_of[executor] != slot.node
    )


def evaluate(problem: Problem, assignments: Mapping[str, Slot]) -> dict[str, float]:
    slot_counts, slot_loads = _tally(problem, assignments)
    node_counts = {component: _by_node(here) for component, here in slot_counts.items()}
    node_of = _NodeOf(assignments)
    loads = {node: load for node, load in _by_node(slot_loads).items() if node is not None}
    traffic = problem.traffic_model
    total = traffic.total
    inter_machine = traffic.crossing(node_of, node_counts)
    inter_worker = traffic.crossing(assignments, slot_counts)
    slots = set(assignments.values())
    return {
        "imc_total": total,
        "imc": inter_machine,
        "imc_gain": total - inter_machine,
        "inter_worker": inter_worker,
        "collocation_factor": (total - inter_machine) / total if total > 0 else 1.0,
        **_node_figures(problem, loads, cpu := CpuTally.from_baseline(problem.options, problem.baseline)),
        "migrations": float(migrations(problem, node_of)),
        "slot_moves": float(sum(
            1 for e, s in problem.current.items() if e in assignments and assignments[e] != s
        )),
        "nodes_used": float(len({slot.node for slot in slots})),
        "slots_used": float(len(slots)),
        **with_bandwidth(cpu.figures(), problem, node_of, node_counts),
    }


def _node_figures(problem: Problem, loads: Mapping[str, float], cpu: CpuTally) -> dict[str, float]:
    """Utilisation, overload, load distance and drain load (feeding ``cpu``): the idle cluster's figures
    (:attr:`Problem.baseline`) corrected on the nodes this topology uses, O(nodes used).

    ``loads``: this topology's CPU per node it uses (ids of other nodes are ignored).
    """
    base = problem.baseline
    average = average_utilisation(problem)
    highest, overloaded, over, drain = base.highest, 0, 0.0, 0.0
    extremes = base.active_extremes
    active_low, active_high = (extremes[0][0], extremes[1][0]) if extremes else (math.inf, -math.inf)
    loaded_active: set[str] = set()
    loaded_low = math.inf
    for node_id, load in loads.items():
        n = problem.find_node(node_id)
        if n is None:
            continue
        cpu.place(n, load)
        utilisation = n.baseline.with_load(load)
        highest = max(highest, utilisation)
        if load > n.effective_capacity + EPSILON:
            overloaded += 1
            over += load - n.effective_capacity
        if n.draining:
            drain += load
        else:
            loaded_active.add(node_id)
            loaded_low = min(loaded_low, utilisation)
            active_high = max(active_high, utilisation)  # a node's load only raises its utilisation
    if extremes is None:
        distance = 0.0
    else:
        lowest = min(loaded_low, base.lowest_active_except(loaded_active) if loaded_active else active_low)
        distance = max(active_high - average, average - lowest)
    return {"max_utilisation": highest, "overloaded_nodes": float(overloaded), "over_capacity": over,
            "load_distance": distance, "drain_load": drain}


def _tally(problem: Problem, assignments: Mapping[str, Slot]) -> tuple[dict[str, dict[Slot | None, int]], dict[Slot | None, float]]:
    """Per component, executors per slot; per slot, their load (unplaced executors under None)."""
    counts: dict[str, dict[Slot | None, int]] = {c.id: {} for c in problem.components}
    loads: dict[Slot | None, float] = {}
    place = assignments.get
    for group in problem.by_component:
        slots = list(map(place, group.ids))
        counts[group.component] = here = Counter(slots)
        if group.load is not None:  # the usual case: derived executors share their component's load
            for slot, count in here.items():
                loads[slot] = loads.get(slot, 0.0) + count * group.load
        else:
            for slot, load in zip(slots, group.loads):
                loads[slot] = loads.get(slot, 0.0) + load
    return counts, loads


def _by_node(per_slot: Mapping[Slot | None, float]) -> dict[str | None, float]:
    """Per-slot figures summed per node (unplaced executors stay under None)."""
    per_node: dict[str | None, float] = {}
    for slot, value in per_slot.items():
        node = None if slot is None else slot.node
        per_node[node] = per_node.get(node, 0) + value
    return per_node


class _NodeOf(Mapping[str, str]):
    """Executor -> node, read through a plan's slots without building the dict."""

    def __init__(self, assignments: Mapping[str, Slot]) -> None:
        self._assignments = assignments

    def __getitem__(self, executor: str) -> str:
        return self._assignments[executor].node

    def __contains__(self, executor: object) -> bool:
        return executor in self._assignments

    def __iter__(self) -> Iterator[str]:
        return iter(self._assignments)

    def __len__(self) -> int:
        return len(self._assignments)


def evaluate_plan(problem: Problem, plan: Plan) -> dict[str, float]:
    return evaluate(problem, plan.assignments)
