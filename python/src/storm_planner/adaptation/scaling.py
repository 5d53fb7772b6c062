"""Horizontal scaling decisions for the adaptation round (Madsen et al. §4.2).

The paper leaves the scaling algorithm open ("existing techniques ... can be
directly applied"); what it fixes is *when* it runs: after a potential plan
(Alg. 1, line 5), so that balancing or collocation that already cures an
overload prevents a scale-out, and a scale-in that the remaining nodes could
not balance is not made. A policy is any object with
``decide(problem, plan) -> ScalingDecision``.

:class:`ThresholdScaling` (the default) thresholds the average utilisation of
the nodes not marked for removal: above ``scale_out_above`` it asks for enough
nodes (of the mean capacity) to bring it to ``target``; below
``scale_in_below`` it marks the least loaded nodes of the potential plan for
removal (fewest migrations to empty them) while the rest stay at or under
``target``. Nodes are added by whoever provisions them (the plan reports how
many); nodes are removed by the MILP draining them over the following rounds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from storm_planner.core.errors import ProblemError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Node, Problem


@dataclass(frozen=True)
class ScalingDecision:
    drain: tuple[str, ...] = ()   # nodes to mark for removal now
    add: int = 0                  # nodes wanted in addition (scale out)
    reason: str = "no scaling"


class ScalingPolicy(Protocol):
    def decide(self, problem: Problem, plan: Plan) -> ScalingDecision: ...


class NoScaling:
    def decide(self, problem: Problem, plan: Plan) -> ScalingDecision:
        return ScalingDecision()


@dataclass(frozen=True)
class ThresholdScaling:
    scale_out_above: float = 80.0   # percent average utilisation
    scale_in_below: float = 40.0
    target: float = 60.0
    min_nodes: int = 1

    def __post_init__(self) -> None:
        if not 0 < self.scale_in_below < self.target < self.scale_out_above:
            raise ProblemError("scaling thresholds: need 0 < scale_in_below < target < scale_out_above")

    def decide(self, problem: Problem, plan: Plan) -> ScalingDecision:
        active = [n for n in problem.nodes if not n.draining]
        capacity = sum(n.effective_capacity for n in active)
        if not active or capacity <= 0:
            return ScalingDecision()
        load = problem.total_load
        average = 100.0 * load / capacity
        if average > self.scale_out_above:
            mean = capacity / len(active)
            missing = load * 100.0 / self.target - capacity
            add = max(1, math.ceil(missing / mean - 1e-9))
            return ScalingDecision(add=add, reason=f"average utilisation {average:.1f}% > {self.scale_out_above:g}%")
        if average < self.scale_in_below:
            drain = self._least_loaded_to_drain(problem, plan, active, load)
            if drain:
                return ScalingDecision(drain=drain,
                                       reason=f"average utilisation {average:.1f}% < {self.scale_in_below:g}%")
        return ScalingDecision()

    def _least_loaded_to_drain(self, problem: Problem, plan: Plan, active: list[Node],
                               load: float) -> tuple[str, ...]:
        node_load = {n.id: 0.0 for n in active}
        by_id = {e.id: e for e in problem.executors}
        for executor, slot in plan.assignments.items():
            if slot.node in node_load and executor in by_id:
                node_load[slot.node] += by_id[executor].load
        remaining = sum(n.effective_capacity for n in active)
        kept = len(active)
        drain = []
        for node in sorted(active, key=lambda n: (node_load[n.id], n.id)):
            after = remaining - node.effective_capacity
            if kept - 1 < self.min_nodes or after <= 0 or 100.0 * load / after > self.target:
                break
            drain.append(node.id)
            remaining, kept = after, kept - 1
        return tuple(drain)
