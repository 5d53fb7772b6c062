"""How the service runs a planner: in this process, or in the worker process it can stop.

:class:`PlannerRunner` is the ``runner(problem, algorithm)`` of the service's plans and re-plans. It is built
first and handed to everything that plans (the handler, the
:class:`~storm_planner.adaptation.replan.Replanner`, a
:class:`~storm_planner.adaptation.state.StatefulRunner`), so a solver planner is stoppable whichever of them
runs it.
"""
from __future__ import annotations

from typing import Any

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners import run
from storm_planner.service.worker import PlannerProcess, is_isolated


class PlannerRunner:
    """``planners.run``, in the worker process for isolated planners (``Planner.isolated``)."""

    def __init__(self, isolate: bool = True, worker: PlannerProcess | None = None) -> None:
        self.isolate = isolate  # False: every planner runs in this process (tests that spy on planners)
        self.worker = worker or PlannerProcess()

    def __call__(self, problem: Problem, algorithm: str, **params: Any) -> Plan:
        if self.isolates(algorithm):
            return self.worker.run(problem, algorithm, **params)
        return run(problem, algorithm, **params)

    def isolates(self, algorithm: str) -> bool:
        return self.isolate and is_isolated(algorithm)

    def abandon(self, algorithm: str) -> None:
        """A plan of ``algorithm`` overran its time: stop it if it runs in the worker (frees the core for
        the next topologies at once; a plan in this process cannot be stopped, its answer is ignored)."""
        if self.isolates(algorithm):
            self.worker.stop()

    def close(self) -> None:
        self.worker.close()
