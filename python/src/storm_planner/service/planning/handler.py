"""The planning side of ``PlannerService``: one request in, one plan per topology out.

Each topology is planned on its own, in request order, on the nodes as the request's state shows them
(:class:`~storm_planner.service.planning.convert.RequestState`: slots and resources earlier plans of the
request took). A topology's failure (bad spec or option, unknown algorithm, infeasible, over its share of
the deadline, a planner bug) becomes a typed ``PlanError`` for that topology alone; the plugin falls back
to Storm's default scheduler for it and applies the others.

The handler only sequences the steps, each in its own module, in the order a request meets them:

1. admission (:mod:`~storm_planner.service.planning.admission`): the call's token, shape and size, then per
   topology its options and fields, and the deadline's shares;
2. its loads: what the metrics measured (:mod:`~storm_planner.metrics.measured`), the per-tuple costs of its
   run so far (:mod:`~storm_planner.metrics.per_tuple`), else what was last measured under the topology's name
   (:mod:`~storm_planner.service.planning.memory`);
3. conversion (:mod:`~storm_planner.service.planning.convert`), on the nodes the request's state shows;
4. running a planner in a process it can stop (:mod:`~storm_planner.service.planning.runner`);
5. rebalances (:mod:`~storm_planner.service.planning.rebalance`): a plan may advise a running topology's
   parallelism (``Plan.advice``), and for a topology with ``planner.rebalance: true`` the service asks Nimbus
   for it after the answer has gone back to the plugin (:meth:`PlannerHandler.after_answer`);
   drains (:mod:`~storm_planner.service.planning.drain`): a re-plan that moves executors of a running
   topology pauses its spouts first, and a drain under way answers the topology's offers itself;
6. the answer (:mod:`~storm_planner.service.planning.convert`) and the plan log
   (:mod:`~storm_planner.service.planning.planlog`).
"""
from __future__ import annotations

import concurrent.futures
import logging
import time
from pathlib import Path
from typing import Any

from storm_planner import __version__
from storm_planner.adaptation.costs import MoveContext
from storm_planner.adaptation.replan import Replanner
from storm_planner.adaptation.state import MAX_FILE_BYTES as MAX_STATE_FILE_BYTES
from storm_planner.adaptation.state import FileStateStore, StateStore
from storm_planner.core.errors import PlanningError
from storm_planner.core.plan import ParallelismAdvice, Plan
from storm_planner.core.problem import Problem
from storm_planner.metrics.measured import MetricsSource, measured_now
from storm_planner.metrics.per_tuple import RunCosts
from storm_planner.planners import available
from storm_planner.service.planning.admission import (
    admit,
    admit_topology,
    request_budget_s,
    topology_share,
    within_share,
)
from storm_planner.service.planning.convert import (
    RequestState,
    error_to_thrift,
    plan_to_thrift,
    problem_of,
    timeout_message,
)
from storm_planner.service.planning.drain import DrainCoordinator, Windows
from storm_planner.service.planning.memory import LoadMemory, fixed_priors, recall_and_costs, took_note
from storm_planner.service.planning.memory_store import MAX_FILE_BYTES, MemoryKeeper
from storm_planner.service.planning.outcomes import count_plan
from storm_planner.service.planning.planlog import DEFAULT_MAX_LINE_MB, PlanLog
from storm_planner.service.planning.rebalance import AutoRebalancer
from storm_planner.service.planning.runner import PlannerRunner
from storm_planner.service.transport.caller_limits import ServiceLimits
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.counters import ServiceCounters

log = logging.getLogger("storm_planner.service")


class PlannerHandler:
    """``PlannerService``'s ``plan`` and ``health``.

    ``runner`` runs the planners (default: a :class:`PlannerRunner`, isolating the solver planners in a
    worker process unless ``isolate`` is False); a ``replanner`` must have been built with the same runner
    for its plans to be stoppable too (``storm-planner serve`` does so).
    """

    def __init__(self, default_algorithm: str = "auto", metrics: MetricsSource | None = None,
                 plan_log: Path | None = None, replanner: Replanner | None = None,
                 nimbus: str | None = None, isolate: bool = True, limits: ServiceLimits | None = None,
                 plan_log_max_line_mb: float = DEFAULT_MAX_LINE_MB, runner: PlannerRunner | None = None,
                 problem_log: Path | None = None, drain_markers: StateStore | None = None,
                 drains: DrainCoordinator | None = None, load_memory_store: StateStore | None = None) -> None:
        self.default_algorithm = default_algorithm
        self.limits = limits or ServiceLimits()
        self.counters = ServiceCounters()
        self.metrics = metrics
        self.load_memory = LoadMemory()   # per topology name, its last measured loads
        # kept across restarts: a restarted service plans a known name on its loads (memory_store.py)
        store = load_memory_store or _beside(plan_log, ".loads.json", MAX_FILE_BYTES)
        self.memory_keeper = MemoryKeeper(self.load_memory, store, self.counters) if store else None
        if self.memory_keeper is not None:
            self.memory_keeper.restore()
        self.run_costs = RunCosts()       # per running topology, its per-tuple costs so far
        self.runner = runner or PlannerRunner(isolate=isolate)
        self.replanner = replanner
        self.plan_log = PlanLog(plan_log, self.counters, plan_log_max_line_mb) if plan_log else None
        # Each topology's problem as its planner saw it, one JSON line a round (replayable with `plan`).
        self.problem_log = PlanLog(problem_log, self.counters, plan_log_max_line_mb) if problem_log else None
        # Applies parallelism advice through Nimbus for topologies that opt in (needs Nimbus' address).
        self.rebalancer = AutoRebalancer(nimbus, record=self.plan_log.event if self.plan_log else None)
        # Drains a re-plan's move (needs Nimbus' address and the metrics); marks what it pauses where a
        # restarted service finds it, and resumes what an earlier one left paused.
        self.drains = drains or DrainCoordinator(
            nimbus, windows=metrics_windows(metrics), record=self.plan_log.event if self.plan_log else None,
            markers=drain_markers or _beside(plan_log, ".paused.json"), on_done=replanner.settle if replanner else None)
        self.drains.recover()
        self.started = time.monotonic()
        # Planners run one at a time in these threads. A planner that overruns its share of the
        # deadline is abandoned (its answer ignored); an isolated one is stopped (PlannerRunner.abandon).
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="planner")

    def close(self) -> None:
        """Stop the worker process and resume what a drain paused (the server calls it on shutdown)."""
        self.drains.close()
        self.runner.close()
        if self.memory_keeper is not None:
            self.memory_keeper.write_if_due(force=True)

    # -- PlannerService --------------------------------------------------------
    def health(self) -> Any:
        return T.Health(
            status="ok",
            version=__version__,
            algorithms=sorted(available()),
            uptime_ms=int((time.monotonic() - self.started) * 1000),
            counters=self.counters.snapshot(),
        )

    def plan(self, request: Any) -> Any:
        received = time.monotonic()
        admit(request, self.limits, self.counters)
        budget_s = request_budget_s(request.deadline_ms)
        state = RequestState(request.nodes, request.topologies)
        # Planning costs time with the executors and with the nodes (slots to sort, loads to sum).
        sizes = [len(spec.executors) + len(request.nodes) for spec in request.topologies]
        plans = []
        for k, spec in enumerate(request.topologies):
            remaining = budget_s - (time.monotonic() - received)
            share = topology_share(remaining, sizes[k], sum(sizes[k:]))
            algorithm = spec.algorithm or request.default_algorithm or self.default_algorithm
            plans.append(self._plan_topology(request, spec, algorithm, state, share))
        return T.PlanResponse(request_id=request.request_id, plans=plans)

    def after_answer(self) -> None:
        """Work that must wait until the plugin has the answer (the server calls it after each reply):
        Nimbus is inside a scheduling round until then."""
        self.rebalancer.after_answer()
        self.drains.after_answer()
        if self.memory_keeper is not None:
            self.memory_keeper.write_if_due()   # throttled; never in the plugin's round

    # -- one topology ----------------------------------------------------------
    def _plan_topology(self, request: Any, spec: Any, algorithm: str, state: RequestState,
                       remaining: float) -> Any:
        started = time.monotonic()
        outcome, advice = "ok", None
        try:
            result, advice = self._planned(request, spec, algorithm, state, remaining)
        except (TimeoutError, concurrent.futures.TimeoutError):
            outcome = "timeout"
            result = error_to_thrift(spec.id, algorithm, "TIMEOUT", timeout_message(request, algorithm, remaining))
        except PlanningError as error:
            outcome = error.kind.lower()
            result = error_to_thrift(spec.id, algorithm, error.kind, str(error))
        except Exception as error:  # a planner bug must not cost the other topologies their plan
            log.exception("planner %s failed on %s", algorithm, spec.id)
            outcome = "internal"
            result = error_to_thrift(spec.id, algorithm, "INTERNAL", f"{type(error).__name__}: {error}")
        log.info(
            "plan request=%s topology=%s algorithm=%s executors=%d slots=%d solve_ms=%.1f total_ms=%.1f outcome=%s%s",
            request.request_id, spec.id, algorithm, len(spec.executors),
            len({(s.node_id, s.port) for s in result.assignments.values()}),
            result.solve_ms or 0.0, (time.monotonic() - started) * 1000, outcome,
            f" error={result.error.message!r}" if result.error else "",
        )
        state.commit(spec, result.assignments)   # later topologies of the request see what it took
        count_plan(self.counters, spec, algorithm, outcome, result)
        if self.plan_log:
            self.plan_log.write(request.request_id, result, advice)
        return result

    def _planned(self, request: Any, spec: Any, algorithm: str, state: RequestState,
                 remaining: float) -> tuple[Any, ParallelismAdvice | None]:
        """(the topology's Thrift plan, its parallelism advice); raises what refuses it."""
        if remaining <= 0:
            raise TimeoutError
        unread = admit_topology(spec)  # its options and fields, once: refused before metrics are read for it
        measured = measured_now(self.metrics, spec, request.nodes)
        observed = self.run_costs.observe(spec, measured, fixed_priors(self.load_memory, spec, algorithm),
                                          {node.id: node.cpu_capacity for node in request.nodes})
        recalled, costs = recall_and_costs(self.load_memory, spec, measured, algorithm, observed)
        problem = within_share(problem_of(spec, state, measured, recalled, costs), remaining)
        if self.problem_log:
            self.problem_log.event({"event": "problem", "topology": spec.id, "name": spec.name or "",
                                    "algorithm": algorithm, "problem": problem.to_dict()})
        steered = self.drains.steer(spec, problem)   # a drain under way answers for its topology
        if steered is None:
            # one for the re-planner's price and the drain, so they agree (the drain reads its own otherwise)
            context = self.drains.context(spec, problem) if self.replanner is not None else None
            plan, reoffer = self.drains.begin(spec, problem, self._run(spec, problem, algorithm, remaining, context),
                                              context)
        else:
            plan, reoffer = steered
        notes = list(plan.notes)
        notes.extend(unread)
        notes.extend(measured.notes if measured is not None else ())
        took = took_note(self.load_memory, recalled, problem) if recalled is not None else None
        if took:
            notes.append(took)
        elif not problem.measured:
            notes.append("no metrics for this topology: loads and rates are estimates")
        rebalance = self.rebalancer.consider(spec.id, spec.name or spec.id, problem.options.extra, plan.advice)
        if rebalance:
            notes.append(rebalance)
        answer = plan_to_thrift(spec.id, plan.replace(notes=tuple(notes)))
        if reoffer is not None:
            answer.reoffer_ms = reoffer
        return answer, plan.advice

    def _run(self, spec: Any, problem: Problem, algorithm: str, remaining: float,
             context: MoveContext | None) -> Plan:
        """The re-planner's plan (priced with ``context``: what the drains know of the topology), else the
        planner's."""
        if self.replanner is not None:
            future = self._pool.submit(self.replanner.plan, problem, algorithm, context)
        else:
            future = self._pool.submit(self.runner, problem, algorithm)
        try:
            plan: Plan = future.result(timeout=remaining)
        except concurrent.futures.TimeoutError:
            self.runner.abandon(algorithm)
            raise
        return plan


def metrics_windows(metrics: MetricsSource | None) -> Windows | None:
    """A topology's windows by task from a metrics source backed by a store (None: no windows to read)."""
    store = getattr(metrics, "store", None)
    if store is None:
        return None
    return lambda topology_id: store.view(topology_id).windows


def _beside(plan_log: Path | None, suffix: str, max_bytes: int = MAX_STATE_FILE_BYTES) -> StateStore | None:
    """Where state is kept without ZooKeeper (the paused topologies, the load memory): a file beside the plan
    log, its name and ``suffix``, read only up to ``max_bytes`` (None: in memory only)."""
    path = Path(plan_log).with_name(Path(plan_log).name + suffix) if plan_log else None
    return FileStateStore(path, max_bytes=max_bytes) if path else None
