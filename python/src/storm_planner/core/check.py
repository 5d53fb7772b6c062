"""Structural checks every plan must pass, whichever planner made it."""
from __future__ import annotations

from collections.abc import Set as AbstractSet

from storm_planner.core.errors import PlanningError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem


class InvalidPlanError(PlanningError):
    """A planner returned a plan that breaks the contract (a bug in the planner)."""

    kind = "INTERNAL"


def check_plan(problem: Problem, plan: Plan, allow_new_executors: bool = False) -> None:
    """Every executor placed exactly once, on a known node, in one of its slots.

    ``allow_new_executors`` (planners with ``changes_parallelism``): the plan may
    also place new executors named ``<component>/<i>``, as many per component as
    its ``parallelism`` says.
    """
    expected = problem.executor_ids
    placed = frozenset(plan.assignments)
    if missing := expected - placed:
        raise InvalidPlanError(f"{plan.algorithm}: {len(missing)} executor(s) unplaced, e.g. {sorted(missing)[0]}")
    if allow_new_executors:
        _check_new_executors(problem, plan, placed - expected)
        placed = expected
    if unknown := placed - expected:
        raise InvalidPlanError(f"{plan.algorithm}: unknown executor(s) {sorted(unknown)[:3]}")
    nodes = {n.id: n for n in problem.nodes}
    for slot in set(plan.assignments.values()):  # few slots, many executors: name one only on error
        node = nodes.get(slot.node)
        if node is None or slot.port not in node.slots:
            executor = next(e for e, s in plan.assignments.items() if s == slot)
            if node is None:
                raise InvalidPlanError(f"{plan.algorithm}: {executor} placed on unknown node {slot.node!r}")
            raise InvalidPlanError(f"{plan.algorithm}: {executor} placed on {slot}, not a slot of {node.id}")


def _check_new_executors(problem: Problem, plan: Plan, new: AbstractSet[str]) -> None:
    """New executors are ``<known component>/<i>`` and match the plan's parallelism."""
    components = {c.id for c in problem.components}
    counts = {c: 0 for c in components}
    for executor in problem.executors:
        counts[executor.component] += 1
    for executor_id in new:
        component, _, index = executor_id.rpartition("/")
        if component not in components or not index.isdigit():
            raise InvalidPlanError(f"{plan.algorithm}: unknown executor {executor!r} (new ones are <component>/<i>)")
        counts[component] += 1
    for component, count in plan.parallelism.items():
        if counts.get(component) != count:
            raise InvalidPlanError(
                f"{plan.algorithm}: parallelism says {component}={count} but {counts.get(component)} are placed"
            )
