"""One-call API for scripts and notebooks, on the JSON shapes of docs/formats.md.

>>> import storm_planner
>>> plan = storm_planner.plan(problem_dict, algorithm="topdown")
>>> plan["assignments"]["count/0"]
'sup-a:6700'
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storm_planner.core.problem import Problem
from storm_planner.planners import available, run
from storm_planner.scaling import run_scaler, scalers


def plan(problem: Mapping[str, Any] | Problem, algorithm: str = "even", **params: Any) -> dict[str, Any]:
    """Plan a problem (dict in the problem-file shape, or a Problem); returns the plan as a dict."""
    if not isinstance(problem, Problem):
        problem = Problem.from_dict(problem)
    return run(problem, algorithm, **params).to_dict()


def algorithms() -> dict[str, str]:
    """Registered algorithm names with their one-line summaries."""
    return {name: cls.summary for name, cls in available().items()}


def scale(problem: Mapping[str, Any], algorithm: str = "qcesa", **params: Any) -> dict[str, Any]:
    """A scaling schedule (QEScalor; docs/formats.md, *Scaling problem*): instances per provision and
    epoch, covering the workload at the lowest cost the algorithm finds."""
    return run_scaler(problem, algorithm, **params)


def scaling_algorithms() -> dict[str, str]:
    """Registered scaling algorithms with their one-line summaries."""
    return {name: cls.summary for name, cls in scalers().items()}
