"""Structural checks every plan must pass, whichever planner made it."""
from __future__ import annotations

from storm_planner.core.errors import PlanningError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem


class InvalidPlanError(PlanningError):
    """A planner returned a plan that breaks the contract (a bug in the planner)."""

    kind = "INTERNAL"


def check_plan(problem: Problem, plan: Plan) -> None:
    """Every executor placed exactly once, on a known node, in one of its slots."""
    expected = {e.id for e in problem.executors}
    placed = set(plan.assignments)
    if missing := expected - placed:
        raise InvalidPlanError(f"{plan.algorithm}: {len(missing)} executor(s) unplaced, e.g. {sorted(missing)[0]}")
    if unknown := placed - expected:
        raise InvalidPlanError(f"{plan.algorithm}: unknown executor(s) {sorted(unknown)[:3]}")
    nodes = {n.id: n for n in problem.nodes}
    for executor, slot in plan.assignments.items():
        node = nodes.get(slot.node)
        if node is None:
            raise InvalidPlanError(f"{plan.algorithm}: {executor} placed on unknown node {slot.node!r}")
        if slot.port not in node.slots:
            raise InvalidPlanError(f"{plan.algorithm}: {executor} placed on {slot}, not a slot of {node.id}")
