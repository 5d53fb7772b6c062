"""λ*: an upper bound on the rate any placement of the topology could sustain, from the LP relaxation.

The exact model of :mod:`.exact` with every count continuous: an executor may be split over nodes, a
worker's fixed cost shared. The link terms are replaced by their convex envelope: a node holding
fractions ``p_s`` of a uniform stream's sources and ``p_t`` of its targets sends ``R·p_s·(1 − p_t)`` of the
stream's ``R`` Mbit/s, and ``p_s·(1 − p_t) ≥ max(0, p_s − p_t)`` on the unit square (McCormick), so the
relaxation lets the LP send no more than any integer placement would. One cut restores what splitting
executors loses most: an executor (with the worker it runs in) must fit on one node, so no placement
sustains a factor above ``(C_max − fixed_e − worker_fixed) / variable_e`` for any executor ``e``.

Every integer placement is feasible in the relaxation, so the highest factor the LP sustains (found by
bisection, feasibility being monotone in the factor) bounds every placement's factor from above. Times
the reference rate it is λ*. What it leaves out (CPU the model does not see, a spout's own ceiling, the
machine's cores under the quotas) can only make the real λ* lower; the benchmark reports how well the
model predicted the measured capacities.

O(classes × nodes + streams × nodes) columns; about 40 LPs of that size.
"""
from __future__ import annotations

import logging
import math
from collections import defaultdict
from typing import Any

import highspy

from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners.capacity.classes import ExecutorClass, executor_classes
from storm_planner.planners.capacity.model import UNBOUNDED, CapacityModel

_log = logging.getLogger(__name__)


def factor_bound(model: CapacityModel, workers: int | None = None, tolerance: float = 1e-3) -> float:
    """The LP relaxation's highest sustainable factor (0 when not even the fixed costs fit anywhere)."""
    classes = executor_classes(model)
    nodes = model.usable_nodes()
    if not classes:
        return UNBOUNDED
    if not nodes:
        return 0.0
    high = min(_total_cut(model, nodes), _executor_cut(model, classes, nodes))
    if high <= 0 or not _feasible(model, classes, nodes, 0.0, workers):
        return 0.0
    if high >= UNBOUNDED and _feasible(model, classes, nodes, UNBOUNDED, workers):
        return UNBOUNDED
    high = min(high, UNBOUNDED)
    low = 0.0
    while high - low > tolerance * max(high, 1e-9):
        middle = (low + high) / 2.0
        if _feasible(model, classes, nodes, middle, workers):
            low = middle
        else:
            high = middle
    return high   # the least factor known infeasible (or the cut): a bound from above, within the tolerance


def _total_cut(model: CapacityModel, nodes: list[str]) -> float:
    """The whole cluster's CPU against the whole topology's (one worker at the least)."""
    variable = model.total_variable
    room = sum(model.room(n).cpu for n in nodes) - model.total_fixed - model.worker_fixed
    if variable <= 0:
        return UNBOUNDED if room >= 0 else 0.0
    return max(0.0, room / variable)


def _executor_cut(model: CapacityModel, classes: list[ExecutorClass], nodes: list[str]) -> float:
    """Each executor, with a worker, on the largest node."""
    largest = max(model.room(n).cpu for n in nodes)
    cut = UNBOUNDED
    for klass in classes:
        if klass.variable > 0:
            cut = min(cut, max(0.0, (largest - klass.fixed - model.worker_fixed) / klass.variable))
    return cut


def _feasible(model: CapacityModel, classes: list[ExecutorClass], nodes: list[str], factor: float,
              workers: int | None) -> bool:
    with native_output_to_log(_log, "HiGHS"):
        highs = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's constructor is unannotated
        highs.setOptionValue("output_flag", False)
        # No "threads": HiGHS sizes one scheduler per process at its first run, and a later run asking for
        # another size fails (no solution): the service and the bench run other planners' HiGHS solves too.
        k = {(g, n): highs.addVariable(lb=0, ub=c.size) for g, c in enumerate(classes) for n in nodes}
        w = {n: highs.addVariable(lb=0, ub=model.room(n).ports) for n in nodes}
        for g, klass in enumerate(classes):
            highs.addConstr(sum(k[g, n] for n in nodes) == klass.size)
            for n in nodes:
                highs.addConstr(k[g, n] <= klass.size * w[n])
        if workers is not None:
            highs.addConstr(sum(w.values()) <= max(1, workers))
        for n in nodes:
            cpu = sum((c.fixed + factor * c.variable) * k[g, n] for g, c in enumerate(classes))
            highs.addConstr(cpu + model.worker_fixed * w[n] <= model.room(n).cpu)
        _links(highs, model, classes, nodes, k, factor)
        highs.run()
        return highs.getModelStatus() == highspy.HighsModelStatus.kOptimal


def _links(highs: Any, model: CapacityModel, classes: list[ExecutorClass], nodes: list[str],
           k: dict[tuple[int, str], Any], factor: float) -> None:
    limited = [n for n in nodes if math.isfinite(model.room(n).link)]
    if not limited or factor <= 0:
        return
    share: dict[tuple[str, str], Any] = {}

    def fraction(component: str, n: str, size: int) -> Any:
        if (component, n) not in share:
            share[component, n] = sum(k[g, n] for g, c in enumerate(classes) if c.component == component) / size
        return share[component, n]

    sent: dict[str, Any] = defaultdict(float)
    received: dict[str, Any] = defaultdict(float)
    index = {e: g for g, c in enumerate(classes) for e in c.members}
    for flow in model.flows:
        total = flow.total * flow.tuple_bytes * 8e-6
        for n in limited:
            source = fraction(flow.source, n, flow.n_source)
            if flow.grouping == "global":
                target = k[index[model.first_of[flow.target]], n]
            else:
                target = fraction(flow.target, n, flow.n_target)
            out, into = highs.addVariable(lb=0), highs.addVariable(lb=0)
            highs.addConstr(out >= total * (source - target))
            highs.addConstr(into >= total * (target - source))
            sent[n] = sent[n] + out
            received[n] = received[n] + into
    for (a, b), mbit in model.measured_mbit:
        for n in limited:
            out, into = highs.addVariable(lb=0), highs.addVariable(lb=0)
            highs.addConstr(out >= mbit * (k[index[a], n] - k[index[b], n]))
            highs.addConstr(into >= mbit * (k[index[b], n] - k[index[a], n]))
            sent[n] = sent[n] + out
            received[n] = received[n] + into
    for n in limited:
        for use in (sent[n], received[n]):
            if not isinstance(use, (int, float)):
                highs.addConstr(factor * use <= model.room(n).link)
