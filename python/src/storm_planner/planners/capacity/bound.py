"""λ*: an upper bound on the rate any placement of the topology could sustain, from a relaxation (mostly LP).

The exact model of :mod:`.exact` with every count continuous: an executor may be split over nodes, a
worker's fixed cost shared. The link terms are replaced by their convex envelope: a node holding
fractions ``p_s`` of a uniform stream's sources and ``p_t`` of its targets sends ``R·p_s·(1 − p_t)`` of the
stream's ``R`` Mbit/s, and ``p_s·(1 − p_t) ≥ max(0, p_s − p_t)`` on the unit square (McCormick), so the
relaxation lets the LP send no more than any integer placement would. One cut restores what splitting
executors loses most: an executor (with the worker it runs in) must fit on one node, so no placement
sustains a factor above ``(C_max − fixed_e − worker_fixed) / variable_e`` for any executor ``e``.

Past the pure LP, the executors of components that have only one (Top-K's spout and its ranking bolt) are
kept whole: binary per node, the rest continuous. Split over nodes, such an executor sends only the
share of its stream that its fractions do not meet, which no placement can do; on the 2 Mbit/s cluster's
Top-K (``benchmarks/reports/capacity-links-1``) the split spout put the pure LP's bound at 2.5 times the
best placement the same model has. A component of one executor per node is a small number of binaries
(at most :data:`MAX_WHOLE` of them, else the pure LP), and a solve that does not conclude within its time
counts as feasible, so the bound never falls below a placement's factor.

Every integer placement is feasible in the relaxation, so the highest factor it sustains (found by
bisection, feasibility being monotone in the factor) bounds every placement's factor from above. Times
the reference rate it is λ*. It bounds placements *in the model*: what the model leaves out (CPU it does
not see, a spout's own ceiling, the machine's cores under the quotas) can only make the real λ* lower, but a
cost it overstates makes it higher: near capacity the model counts more bytes than the wire carries, and on
the 2 Mbit/s cluster RAS sustained 118 % of trends' λ* (``benchmarks/reports/capacity-trends-links-1``).
The benchmark reports how well the model predicted the measured capacities, node by node.

O(classes × nodes + streams × nodes) columns; about 40 solves of that size, with at most MAX_WHOLE binaries.
"""
from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from typing import Any

import highspy

from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners.capacity.classes import ExecutorClass, executor_classes
from storm_planner.planners.capacity.model import UNBOUNDED, CapacityModel

_log = logging.getLogger(__name__)

# Binaries (single-executor components × nodes) past which the bound is the pure LP.
MAX_WHOLE = 256
# Seconds one bisection step's solve with binaries may take; past it the step counts as feasible.
STEP_TIME_LIMIT_S = 2.0


def factor_bound(model: CapacityModel, workers: int | None = None, tolerance: float = 1e-3,
                 whole: bool = True) -> float:
    """The relaxation's highest sustainable factor (0 when not even the fixed costs fit anywhere);
    ``whole``: single-executor components kept whole (the module docstring), else the pure LP."""
    classes = executor_classes(model)
    nodes = model.usable_nodes()
    if not classes:
        return UNBOUNDED
    if not nodes:
        return 0.0
    kept_whole = _whole_classes(model, classes, nodes) if whole else frozenset()

    def feasible(factor: float) -> bool:
        return _feasible(model, classes, nodes, factor, workers, kept_whole)

    high = min(_total_cut(model, nodes), _executor_cut(model, classes, nodes))
    if high <= 0 or not feasible(0.0):
        return 0.0
    if high >= UNBOUNDED and feasible(UNBOUNDED):
        return UNBOUNDED
    high = min(high, UNBOUNDED)
    low = 0.0
    while high - low > tolerance * max(high, 1e-9):
        middle = (low + high) / 2.0
        if feasible(middle):
            low = middle
        else:
            high = middle
    return high   # the least factor known infeasible (or the cut): a bound from above, within the tolerance


def _whole_classes(model: CapacityModel, classes: list[ExecutorClass], nodes: list[str]) -> frozenset[int]:
    """Indices of the classes that are a whole single-executor component (none past MAX_WHOLE binaries)."""
    sizes = Counter(model.component.values())
    whole = frozenset(g for g, c in enumerate(classes) if c.size == 1 and sizes[c.component] == 1)
    return whole if len(whole) * len(nodes) <= MAX_WHOLE else frozenset()


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
              workers: int | None, whole: frozenset[int] = frozenset()) -> bool:
    """Whether the relaxation sustains ``factor``; only a proven infeasibility says no (a bound from above)."""
    with native_output_to_log(_log, "HiGHS"):
        highs = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's constructor is unannotated
        highs.setOptionValue("output_flag", False)
        if whole:   # a pure LP runs to its end, as before; the binaries get a time limit
            highs.setOptionValue("time_limit", STEP_TIME_LIMIT_S)
        # No "threads": HiGHS sizes one scheduler per process at its first run, and a later run asking for
        # another size fails (no solution): the service and the bench run other planners' HiGHS solves too.
        k = {(g, n): (highs.addIntegral(lb=0, ub=1) if g in whole else highs.addVariable(lb=0, ub=c.size))
             for g, c in enumerate(classes) for n in nodes}
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
        return highs.getModelStatus() != highspy.HighsModelStatus.kInfeasible


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
