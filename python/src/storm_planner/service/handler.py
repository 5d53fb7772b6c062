"""The planning side of ``PlannerService``: one request in, one plan per topology out.

Each topology is planned on its own, in request order, with the slots already
promised to earlier topologies taken out. A topology's failure (bad spec,
unknown algorithm, infeasible, over the deadline, a planner bug) becomes a
typed ``PlanError`` for that topology alone; the plugin falls back to Storm's
default scheduler for it and applies the others.

A plan may advise a running topology's parallelism (``Plan.advice``); for a
topology with ``planner.rebalance: true`` the service then asks Nimbus to
rebalance it — after the answer has gone back to the plugin
(:meth:`PlannerHandler.after_answer`, :mod:`storm_planner.service.rebalance`).
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import hmac
import logging
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

from storm_planner import __version__
from storm_planner.core import settings
from storm_planner.core.errors import PlanningError, ProblemError
from storm_planner.adaptation.state import StatefulRunner
from storm_planner.core.problem import Problem
from storm_planner.planners import available, run
from storm_planner.service.contract import planner_thrift as T
from storm_planner.service.checks import check_request, finite
from storm_planner.service.convert import RequestNodes, error_to_thrift, plan_to_thrift, problem_from_thrift
from storm_planner.service.counters import ServiceCounters
from storm_planner.service.ledger import RequestLedger
from storm_planner.service.limits import ServiceLimits
from storm_planner.service.planlog import DEFAULT_MAX_LINE_MB, PlanLog, read_plan_log  # noqa: F401 - re-exported
from storm_planner.service.rebalance import AutoRebalancer
from storm_planner.service.worker import PlannerProcess, is_isolated

log = logging.getLogger("storm_planner.service")

# Share of the plugin's deadline the service allows itself: the rest is transport.
DEADLINE_SHARE = 0.8
# Least time a topology is given when the deadline allows it, however small its share by size.
MIN_TOPOLOGY_S = 0.2

# Metrics source: topology id -> {"executors": [...], "traffic": [...], "notes": [...]} or None;
# or an object whose measure(spec, nodes) answers the same (storm_planner.metrics.source).
MetricsSource = Callable[[str], Mapping[str, Any] | None]


def topology_share(remaining_s: float, executors: int, executors_left: int) -> float:
    """A topology's time: what is left of the deadline in proportion to its size among those left.

    The handler sizes a topology as its executors plus the cluster's nodes.

    Time a topology does not use passes to the next ones; a slow planner cannot starve them. Every
    topology gets at least ``MIN_TOPOLOGY_S`` while that much is left.
    """
    if remaining_s <= 0:
        return remaining_s
    return min(remaining_s, max(remaining_s * executors / max(1, executors_left), MIN_TOPOLOGY_S))


class PlannerHandler:
    def __init__(self, default_algorithm: str = "even", metrics: MetricsSource | None = None,
                 plan_log: Path | None = None, replanner: Any | None = None,
                 nimbus: str | None = None, isolate: bool = True, limits: ServiceLimits | None = None,
                 plan_log_max_line_mb: float = DEFAULT_MAX_LINE_MB) -> None:
        self.default_algorithm = default_algorithm
        self.limits = limits or ServiceLimits()
        self.counters = ServiceCounters()
        self.isolate = isolate  # False: every planner runs in this process (tests that spy on planners)
        self.metrics = metrics
        # Decides keep-or-re-plan for running topologies (storm_planner.adaptation.replan.Replanner).
        self.replanner = replanner
        self.plan_log = PlanLog(plan_log, self.counters, plan_log_max_line_mb) if plan_log else None
        # Applies parallelism advice through Nimbus for topologies that opt in (needs Nimbus' address).
        self.rebalancer = AutoRebalancer(nimbus, record=self.plan_log.event if self.plan_log else None)
        self.started = time.monotonic()
        # Planners run one at a time in these threads. A planner that overruns its share of the
        # deadline is abandoned (its answer ignored); an isolated one (Planner.isolated) runs in
        # the worker process, which is killed then.
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="planner")
        self.worker = PlannerProcess()
        # Re-plans (and plans with kept planner state) of solver planners are stoppable too.
        if replanner is not None and replanner.runner is run:
            replanner.runner = self._run
        elif replanner is not None and isinstance(replanner.runner, StatefulRunner):
            replanner.runner.run = self._run

    def close(self) -> None:
        """Stop the worker process (the server calls it on shutdown)."""
        self.worker.close()

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
        self._admit(request)
        budget_s = max(0.05, (request.deadline_ms or 5000) / 1000.0 * DEADLINE_SHARE)
        nodes = RequestNodes(request.nodes)  # converted once; remembers the slots plans take
        ledger = RequestLedger(request.topologies)
        # Planning costs time with the executors and with the nodes (slots to sort, loads to sum).
        sizes = [len(spec.executors) + len(request.nodes) for spec in request.topologies]
        plans = []
        for k, spec in enumerate(request.topologies):
            remaining = budget_s - (time.monotonic() - received)
            share = topology_share(remaining, sizes[k], sum(sizes[k:]))
            algorithm = spec.algorithm or request.default_algorithm or self.default_algorithm
            result = self._plan_topology(request, spec, algorithm, nodes, share,
                                         ledger.held_by_others(spec.id))
            plans.append(result)
            for slot in result.assignments.values():
                nodes.take(slot.node_id, slot.port)
            ledger.planned(spec, result.assignments)
        return T.PlanResponse(request_id=request.request_id, plans=plans)

    def _admit(self, request: Any) -> None:
        """Refuse (``PlannerError``) a call without the service's token, or over its executor limit
        (calls decoded from the wire were counted already; this covers calls made in process)."""
        token = self.limits.token
        if token and not hmac.compare_digest(_bytes(request.token), token.encode()):
            self.counters.note("token_refused", log, "refused a plan call (request %r): %s token", request.request_id,
                               "wrong" if request.token else "no")
            raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST,
                                 message="this planner service requires its token: PlanRequest.token (the plugin's "
                                         "planner.service.token) is " + ("wrong" if request.token else "missing"))
        try:
            check_request(request)
        except ProblemError as error:
            raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST, message=str(error)) from None
        executors = sum(len(spec.executors) for spec in request.topologies)
        if executors > self.limits.max_executors:
            self.counters.add("requests_refused")
            raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST,
                                 message=f"the request has {executors} executors, more than "
                                         f"{self.limits.max_executors} (serve --max-executors)")

    def after_answer(self) -> None:
        """Work that must wait until the plugin has the answer (the server calls it after each reply):
        Nimbus is inside a scheduling round until then."""
        self.rebalancer.after_answer()

    # -- one topology ----------------------------------------------------------
    def _plan_topology(self, request: Any, spec: Any, algorithm: str, nodes: RequestNodes, remaining: float,
                       held: Mapping[str, tuple[float, float]] | None = None) -> Any:
        started = time.monotonic()
        outcome, executors = "ok", len(spec.executors)
        advice = None
        try:
            if remaining <= 0:
                raise TimeoutError
            settings.check_service_options(spec.options or {})  # refused before metrics are read for it
            measured = self._measure(spec, request.nodes)
            problem = self._problem(spec, nodes, remaining, measured, held)
            future = self._pool.submit(self.replanner.plan if self.replanner else self._run, problem, algorithm)
            try:
                plan = future.result(timeout=remaining)
            except concurrent.futures.TimeoutError:
                if self.isolate and is_isolated(algorithm):
                    self.worker.stop()  # frees the core for the next topologies at once
                raise
            notes = list(plan.notes)
            notes.extend((measured or {}).get("notes") or ())
            if not problem.measured:
                notes.append("no metrics for this topology: loads and rates are estimates")
            advice = plan.advice
            rebalance = self.rebalancer.consider(spec.id, spec.name or spec.id, problem.options.extra, advice)
            if rebalance:
                notes.append(rebalance)
            result = plan_to_thrift(spec.id, plan.replace(notes=tuple(notes)))
        except (TimeoutError, concurrent.futures.TimeoutError):
            outcome = "timeout"
            message = (f"{algorithm} did not finish within its {remaining * 1000:.0f} ms share of the deadline "
                       f"({request.deadline_ms} ms for {len(request.topologies)} topologies, shared by size: "
                       f"executors + nodes)"
                       if remaining > 0 else
                       f"not planned: the topologies before it in this request used up the deadline "
                       f"({request.deadline_ms} ms)")
            result = error_to_thrift(spec.id, algorithm, "TIMEOUT", message)
        except PlanningError as error:
            outcome = error.kind.lower()
            result = error_to_thrift(spec.id, algorithm, error.kind, str(error))
        except Exception as error:  # a planner bug must not cost the other topologies their plan
            log.exception("planner %s failed on %s", algorithm, spec.id)
            outcome = "internal"
            result = error_to_thrift(spec.id, algorithm, "INTERNAL", f"{type(error).__name__}: {error}")
        log.info(
            "plan request=%s topology=%s algorithm=%s executors=%d slots=%d solve_ms=%.1f total_ms=%.1f outcome=%s%s",
            request.request_id, spec.id, algorithm, executors,
            len({(s.node_id, s.port) for s in result.assignments.values()}),
            result.solve_ms or 0.0, (time.monotonic() - started) * 1000, outcome,
            f" error={result.error.message!r}" if result.error else "",
        )
        if self.plan_log:
            self.plan_log.write(request.request_id, result, advice)
        return result

    def _run(self, problem: Problem, algorithm: str, **params: Any):
        """``planners.run``, in the worker process for isolated planners."""
        if self.isolate and is_isolated(algorithm):
            return self.worker.run(problem, algorithm, **params)
        return run(problem, algorithm, **params)

    def _measure(self, spec: Any, nodes: list) -> Mapping[str, Any] | None:
        if self.metrics is None:
            return None
        measure = getattr(self.metrics, "measure", None)
        return measure(spec, nodes) if measure else self.metrics(spec.id)

    def _problem(self, spec: Any, nodes: RequestNodes | list, remaining: float,
                 measured: Mapping[str, Any] | None = None,
                 held: Mapping[str, tuple[float, float]] | None = None) -> Problem:
        problem = problem_from_thrift(spec, nodes, measured, held)
        # Planners with a solver time limit must stop well inside the deadline, whatever the
        # topology asks (planner.time.limit.secs, planner.<algorithm>.time_limit_s).
        limit = min(problem.options.time_limit_s, max(0.05, remaining * 0.9))
        extra = {key: _capped(key, value, limit) if key.split(".")[-1] == "time_limit_s" else value
                 for key, value in problem.options.extra.items()}
        return problem.replace(options=dataclasses.replace(
            problem.options, time_limit_s=limit, extra=MappingProxyType(extra)))


def _bytes(value: Any) -> bytes:
    """A token as bytes for a constant-time comparison (a token that is not UTF-8 arrives as bytes)."""
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()


def _capped(key: str, value: Any, limit: float) -> Any:
    """A time limit no longer than ``limit``; a value that is not a number is left for the planner to refuse,
    one that is not finite or negative is refused here (``min`` would keep a NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return min(finite(number, f"topology option {key}", minimum=0.0, given=repr(value)), limit)
