"""``bench hetero-real``'s plans, made before the cluster starts: the graphs each placement runs and
what the ResourceAwareScheduler is told.

* ``hetero`` in search mode (the planner API) chooses the parallelism. ``hetero``, ``storm-default``,
  Storm's DefaultScheduler (``default``) and its ResourceAwareScheduler (``ras``) all run that graph.
* ``hetero-optimal`` in search mode chooses its own graph: the exhaustive optimum of the same model,
  bounded as ``bench hetero`` bounds it (at most twice the machines' count of instances per component,
  ``--optimal-max-nodes`` search nodes). Its runs submit that graph with ``planner.algorithm:
  hetero-optimal``; the service then searches again from the submitted graph, and Storm can only run
  the executors it was given, so the bench checks here that this second search keeps the graph (no
  executor added) before any run. A shape where either search is refused or the graph would change
  is recorded with the reason, and hetero-optimal's runs of it are skipped.
* **Declared CPU for RAS** (:func:`declared_cpu`): RAS places by each executor's declared CPU
  (``topology.component.cpu.pcore.percent``) and the supervisors' declared capacity (``cpu`` in the
  bench's cluster description, which is also each supervisor's CFS quota). An operator who profiled
  the topology would declare what the profile predicts one executor uses at the rate the topology is
  meant to run: here, eq. 7 on the profile at the input rate ``hetero``'s plan predicts, per executor
  of hetero's graph (every executor of a component receives the same rate with shuffle grouping). The
  machine types share one set of times, so one figure per component; were they to differ, the mean
  over the machines is declared. If RAS cannot place the topology with those declarations (their sum
  is close to the cluster's whole capacity), the bench declares a lower share of that rate
  (``--ras-shares``) and records the share RAS ran with.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner_bench.hetero_real.driver import Machine, problem_dict
from storm_planner_bench.hetero_real.search import assignment_counts


@dataclass
class ShapePlan:
    """What the searches chose for one shape (``optimal`` None: hetero-optimal does not run it, ``skipped``
    says why)."""

    shape: str
    parallelism: dict[str, int]               # hetero's graph
    figures: dict[str, float]
    notes: list[str]
    search_placement: dict[str, int]          # "component@node" -> executors, hetero's search
    declared_cpu: dict[str, float]            # per executor of hetero's graph, at hetero's predicted rate
    optimal: dict[str, Any] | None = None     # parallelism, figures, search_placement, seconds
    skipped: dict[str, str] = field(default_factory=dict)   # placement -> why its runs are skipped

    def parallelism_of(self, placement: str) -> dict[str, int]:
        """The graph ``placement`` runs: hetero-optimal's own, hetero's for every other placement."""
        if placement == "hetero-optimal":
            if self.optimal is None:
                raise StormPlannerError(f"{self.shape}: hetero-optimal has no plan ({self.skipped.get(placement)})")
            return dict(self.optimal["parallelism"])
        return dict(self.parallelism)

    def to_dict(self) -> dict[str, Any]:
        return {"parallelism": self.parallelism, "figures": self.figures, "notes": self.notes,
                "search_placement": self.search_placement, "declared_cpu": self.declared_cpu,
                "optimal": self.optimal, "skipped": self.skipped}


def _search_summary(plan: Any) -> tuple[dict[str, int], dict[str, int]]:
    """(parallelism, "component@node" -> executors) of a search-mode plan."""
    parallelism = {c: int(n) for c, n in plan.parallelism.items()}
    component_of = {e: e.rsplit("/", 1)[0] for e in plan.assignments}
    counts = assignment_counts({e: str(s) for e, s in plan.assignments.items()}, component_of)
    return parallelism, {f"{c}@{n}": k for (c, n), k in sorted(counts.items())}


def plan_shape(shape: str, machines: Sequence[Machine], profile: Mapping[str, Any], *, optimal: bool,
               optimal_max_nodes: int) -> ShapePlan:
    """hetero's search (and hetero-optimal's, with ``optimal``) for ``shape`` on ``machines``."""
    from storm_planner.core.problem import Problem
    from storm_planner.planners import run as run_planner

    plan = run_planner(Problem.from_dict(problem_dict(shape, machines, profile)), "hetero", mode="search")
    parallelism, placement = _search_summary(plan)
    rate = float(plan.figures["max_input_rate"])
    found = ShapePlan(shape, parallelism, dict(plan.figures), list(plan.notes), placement,
                      declared_cpu(shape, machines, profile, parallelism, rate))
    if optimal:
        try:
            found.optimal = plan_optimal(shape, machines, profile, optimal_max_nodes)
        except StormPlannerError as error:
            found.skipped["hetero-optimal"] = f"hetero-optimal refused {shape}: {error}"
    return found


def plan_optimal(shape: str, machines: Sequence[Machine], profile: Mapping[str, Any],
                 max_nodes: int) -> dict[str, Any]:
    """hetero-optimal's search-mode optimum of ``shape``, checked to keep its graph when the service plans the
    submitted graph again (:class:`~storm_planner.core.errors.StormPlannerError` naming the reason if not)."""
    from storm_planner.core.problem import Problem
    from storm_planner.planners import run as run_planner

    started = time.perf_counter()
    plan = run_planner(Problem.from_dict(problem_dict(shape, machines, profile)), "hetero-optimal",
                       max_nodes=max_nodes)
    seconds = time.perf_counter() - started
    parallelism, placement = _search_summary(plan)
    started = time.perf_counter()
    again = run_planner(Problem.from_dict(problem_dict(shape, machines, profile, parallelism)), "hetero-optimal",
                        max_nodes=max_nodes)
    graph_seconds = time.perf_counter() - started
    kept, _ = _search_summary(again)
    if kept != parallelism:
        raise StormPlannerError(f"planning its own graph {parallelism} again it adds executors ({kept}), which "
                                "Storm would not run without a rebalance")
    return {"parallelism": parallelism, "figures": dict(plan.figures), "search_placement": placement,
            "graph_placement": _search_summary(again)[1], "seconds": round(seconds, 2),
            "graph_seconds": round(graph_seconds, 2)}


def declared_cpu(shape: str, machines: Sequence[Machine], profile: Mapping[str, Any],
                 parallelism: Mapping[str, int], input_rate: float) -> dict[str, float]:
    """Per component, the CPU (percent of one core) eq. 7 predicts one executor of ``parallelism`` uses when
    the topology's input rate is ``input_rate``: ``base + IR · (ET + MET) / 10`` with IR the executor's input
    rate (eq. 8), the mean over ``machines`` where the machine types' times differ."""
    import numpy as np

    from storm_planner.core.problem import Problem
    from storm_planner.planners.hetero.model import build_model
    from storm_planner.planners.hetero.rates import propagate

    model = build_model(Problem.from_dict(problem_dict(shape, machines, profile, parallelism)))
    counts = [int(parallelism[c]) for c in model.components]
    rates = propagate(model, counts, input_rate)
    found = {}
    for i, component in enumerate(model.components):
        per_executor = float(rates.per_instance[i] + rates.first[i] / counts[i])
        found[component] = float(np.mean(model.base[i]) + per_executor * np.mean(model.cost[i]))
    return found
