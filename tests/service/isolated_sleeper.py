"""A stand-in for a solver planner that overruns its time limit, for the worker-process tests.

The worker process imports it (``PlannerProcess(imports=("isolated_sleeper",))``) and it registers
itself there; the tests register it in their own process only while they run, so that no other
test (the contract suite runs over every registered planner) ever sees it.
"""
from __future__ import annotations

import multiprocessing
import time

from storm_planner.core.plan import Plan
from storm_planner.planners.base import _REGISTRY, Planner


class IsolatedSleeper(Planner):
    name = "test-isolated-sleeper"
    isolated = True

    def plan(self, problem):
        time.sleep(600)
        return Plan(algorithm=self.name, assignments={})


if multiprocessing.current_process().name == "storm-planner-worker":
    _REGISTRY[IsolatedSleeper.name] = IsolatedSleeper
