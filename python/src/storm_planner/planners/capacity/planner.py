"""``capacity`` and ``auto``: place executors for the highest rate the topology sustains.

See the package docstring for the model; this module only sequences it: the bound, a start (greedy, or
the current placement when it is complete), local search, the exact model where it is small enough, a
target rate's shortcut, parallelism advice, and the plan's figures and notes.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from storm_planner.core.errors import InfeasibleError, InvalidParameterError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners._parameters import checked, to_flag, to_real, to_whole
from storm_planner.planners.base import Planner
from storm_planner.planners.capacity import ackers, exact
from storm_planner.planners.capacity.advice import advise
from storm_planner.planners.capacity.bound import factor_bound
from storm_planner.planners.capacity.model import UNBOUNDED, CapacityModel
from storm_planner.planners.capacity.search import greedy, improve

# CPU % one worker JVM uses at zero rate where the problem's costs do not say (measured on the local
# cluster's quota-held supervisors: an idle worker's timers, heartbeats and metrics; docs/capacity.md).
DEFAULT_WORKER_FIXED = 2.0
# A placement that sustains the target rate with this margin is kept as it is (no move, no restart).
TARGET_MARGIN = 0.10


class CapacityPlanner(Planner):
    """Maximise the rate the topology sustains: the least headroom over every node's CPU and link.

    Parameters
    ----------
    target_rate : float or None, default=None
        Tuples/s offered to the spouts in all that the placement must sustain; a current placement that
        sustains it with a 10 % margin is kept as it is. None: as high as possible.
    worker_fixed : float or None, default=None
        CPU percent one worker JVM uses at zero rate; None: the problem's ``costs.worker_fixed``, else 2.0.
    max_columns : int, default=4000
        The exact model (HiGHS) is used up to this many columns; local search alone beyond.
    time_limit_s : float or None, default=None
        Seconds for the search and the exact model together; None: the problem's ``options.time_limit_s``.
    advise : bool, default=True
        Propose more executors (up to each component's tasks) where a component's executor count binds.
    acker_spread : float, default=0.02
        The largest share of the predicted rate a new placement gives up to put the ackers in two workers or
        more, so that a later move of one worker leaves others acking (:mod:`.ackers`); 0: never.
    """

    name = "capacity"
    summary = "highest sustainable rate on measured per-tuple costs (exact MILP when small, local search beyond)"
    # It plans on what the executors really use (measured per-tuple costs), not on Storm's declared CPU:
    # memory and the worker heap still bind (core.resources).
    accounts_declared_cpu = False

    def __init__(self, target_rate: float | None = None, worker_fixed: float | None = None,
                 max_columns: int = exact.MAX_COLUMNS, time_limit_s: float | None = None,
                 advise: bool = True, acker_spread: float = ackers.DEFAULT_TOLERANCE) -> None:
        name = self.name
        self.target_rate = checked(name, "target_rate", target_rate, to_real, above=0, optional=True)
        self.worker_fixed = checked(name, "worker_fixed", worker_fixed, to_real, minimum=0, optional=True)
        self.max_columns = checked(name, "max_columns", max_columns, to_whole, minimum=0)
        self.time_limit_s = checked(name, "time_limit_s", time_limit_s, to_real, above=0, optional=True)
        self.advise = checked(name, "advise", advise, to_flag)
        self.acker_spread = checked(name, "acker_spread", acker_spread, to_real, minimum=0)
        if self.acker_spread >= 1:
            raise InvalidParameterError(f"{name}: parameter acker_spread must be below 1 (a share of the rate), "
                                        f"got {acker_spread!r}")

    def plan(self, problem: Problem) -> Plan:
        model = self.model(problem)
        workers = topology_workers(problem)
        limit = self.time_limit_s or problem.options.time_limit_s
        bound = factor_bound(model, workers)
        current = current_nodes(problem)
        notes: list[str] = []
        kept = self._kept(problem, model, current, workers)
        if kept is not None:
            node_of, how = kept, "the current placement sustains the target rate: kept"
        else:
            node_of, how = self._search(problem, model, workers, bound, current, limit)
        if not node_of:
            raise InfeasibleError(f"topology {problem.topology_id}: no node can take its executors")
        spread = ackers.spread_ackers(model, node_of, workers, self.acker_spread) if kept is None else None
        if spread is not None and spread.node_of != node_of:
            node_of, how = spread.node_of, f"{how}, then one acker moved"
        factor = model.factor(node_of)
        notes.append(self._summary(problem, model, node_of, factor, bound, how))
        if spread is not None and spread.note:
            notes.append(spread.note)
        advice = advise(problem, model, node_of, factor, workers) if self.advise else None
        if advice is not None:
            notes.append(advice.note)
        return Plan(
            algorithm=self.name,
            assignments=slots_for_nodes(problem, node_of),
            figures=MappingProxyType(figures(problem, factor, bound)),
            notes=tuple(notes),
            advice=advice.advice if advice is not None else None,
        )

    def model(self, problem: Problem) -> CapacityModel:
        costs = problem.costs
        worker = self.worker_fixed if self.worker_fixed is not None else costs.worker_fixed
        return CapacityModel(problem, costs.executor_fixed,
                             DEFAULT_WORKER_FIXED if worker is None else worker)

    def _kept(self, problem: Problem, model: CapacityModel, current: Mapping[str, str] | None,
              workers: int | None) -> dict[str, str] | None:
        rate = problem.costs.reference_rate
        if self.target_rate is None or current is None or rate is None:
            return None
        if workers is not None and len(set(current.values())) > workers:
            return None
        return dict(current) if model.factor(current) * rate >= self.target_rate * (1 + TARGET_MARGIN) else None

    def _search(self, problem: Problem, model: CapacityModel, workers: int | None, bound: float,
                current: Mapping[str, str] | None, limit: float) -> tuple[dict[str, str], str]:
        starts = [greedy(model, workers)]
        if current is not None:
            starts.append(dict(current))
        seed = problem.options.seed
        searched = [improve(model, s, workers, seed=seed, time_limit_s=limit / (2 * len(starts))) for s in starts]
        best = max(searched, key=model.factor)
        how = "local search"
        if exact.model_columns(model) <= self.max_columns:
            result = exact.solve(model, model.factor(best), bound, start=current, workers=workers,
                                 time_limit_s=limit / 2)
            if result is not None and model.factor(result.node_of) >= model.factor(best) * (1 - 1e-9):
                best = dict(result.node_of)
                how = "exact (HiGHS)" + ("" if result.proven else ", stopped at its time limit")
        return best, how

    @staticmethod
    def _summary(problem: Problem, model: CapacityModel, node_of: Mapping[str, str], factor: float, bound: float,
                 how: str) -> str:
        node, resource = model.bottleneck(node_of)
        rate = problem.costs.reference_rate
        origin = problem.costs.origin
        if rate is None:
            return (f"capacity ({how}, {origin} loads): {factor:.3g}× the loads given fit, bound "
                    f"{_times(bound)}; {node}'s {resource} binds")
        return (f"capacity ({how}, {origin} costs at {rate:.6g} t/s): predicted {factor * rate:.6g} t/s "
                f"sustained, λ* {_rate(bound * rate)} t/s ({_share(factor, bound)} of it); {node}'s {resource} binds")


class AutoPlanner(CapacityPlanner):
    """The recommended planner: :class:`CapacityPlanner` on the costs the service measures by itself.

    The service's default for a topology that names no planner. With nothing measured yet it places by
    declared CPU, measures the topology for a calibration window, then makes one corrective re-plan
    (docs/capacity.md); the parameters are the capacity planner's.

    Parameters
    ----------
    target_rate : float or None, default=None
        As ``capacity``'s.
    worker_fixed : float or None, default=None
        As ``capacity``'s.
    max_columns : int, default=4000
        As ``capacity``'s.
    time_limit_s : float or None, default=None
        As ``capacity``'s.
    advise : bool, default=True
        As ``capacity``'s.
    acker_spread : float, default=0.02
        As ``capacity``'s.
    """

    name = "auto"
    summary = "the recommended planner: capacity on the costs the service measures, calibrated once"


def topology_workers(problem: Problem) -> int | None:
    """``topology.workers`` as a bound (the problem's ``options.workers``), None when absent or not whole."""
    value: Any = problem.options.extra.get("workers")
    try:
        workers = int(value)
    except (TypeError, ValueError):
        return None
    return workers if workers > 0 else None


def current_nodes(problem: Problem) -> dict[str, str] | None:
    """Executor -> node of the current assignment when it covers every executor on known nodes."""
    if not problem.current:
        return None
    nodes = {n.id for n in problem.nodes if not n.draining}
    node_of = {e: slot.node for e, slot in problem.current.items() if slot.node in nodes}
    return node_of if set(node_of) == problem.executor_ids else None


def figures(problem: Problem, factor: float, bound: float) -> dict[str, float]:
    result = {"capacity_factor": _finite(factor), "capacity_bound_factor": _finite(bound)}
    rate = problem.costs.reference_rate
    if rate is not None:
        result["predicted_rate"] = _finite(factor * rate)
        result["rate_bound"] = _finite(bound * rate)
    return result


def _finite(value: float) -> float:
    return value if value < UNBOUNDED else math.inf


def _times(value: float) -> str:
    return "unbounded" if value >= UNBOUNDED else f"{value:.3g}×"


def _rate(value: float) -> str:
    return "unbounded" if not math.isfinite(value) or value >= UNBOUNDED else f"{value:.6g}"


def _share(factor: float, bound: float) -> str:
    return "—" if bound <= 0 or bound >= UNBOUNDED else f"{factor / bound:.0%}"
