"""The one interface every planner has, and the registry that finds them by name.

A planner is a class with a ``name``, keyword parameters in ``__init__`` (like a
scikit-learn estimator) and ``plan(problem) -> Plan``. Planners do no I/O and are
deterministic for a given ``problem.options.seed``. Register one with
``@register``; :func:`run` is what callers use: it looks the planner up,
times it, checks the plan's structure and adds the evaluator's figures.
"""
from __future__ import annotations

import time
from types import MappingProxyType
from typing import Any, ClassVar

from storm_planner.core.check import check_plan
from storm_planner.core.errors import UnknownAlgorithmError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.resources import fit_to_resources
from storm_planner.core.problem import Problem


class Planner:
    """Base class. Subclasses set ``name`` and implement :meth:`plan`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""        # one line for `storm-planner algorithms`
    baseline: ClassVar[bool] = False   # used only for comparison
    changes_parallelism: ClassVar[bool] = False  # may return new executors <component>/<i>
    # Plans kept within each node's free declared CPU and memory and the worker heap limit
    # (core.resources); Storm's own resource-unaware schedulers, as baselines, are not.
    resource_aware: ClassVar[bool] = True

    def __init__(self, **params: Any) -> None:
        self.params = params

    def plan(self, problem: Problem) -> Plan:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


_REGISTRY: dict[str, type[Planner]] = {}


def register(cls: type[Planner]) -> type[Planner]:
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise TypeError(f"two planners named {cls.name!r}: {_REGISTRY[cls.name].__name__}, {cls.__name__}")
    _REGISTRY[cls.name] = cls
    return cls


def available() -> dict[str, type[Planner]]:
    """Registered planners by name (importing the package registers them all)."""
    return dict(sorted(_REGISTRY.items()))


def get_planner(name: str, **params: Any) -> Planner:
    try:
        cls = _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownAlgorithmError(f"unknown algorithm {name!r}; known: {known}") from None
    return cls(**params)


def run(problem: Problem, algorithm: str, **params: Any) -> Plan:
    """Plan ``problem`` with the named planner: timed, checked, evaluated."""
    planner = get_planner(algorithm, **params)
    started = time.perf_counter()
    plan = planner.plan(problem)
    check_plan(problem, plan, allow_new_executors=planner.changes_parallelism)
    if planner.resource_aware and not planner.changes_parallelism:
        assignments, notes = fit_to_resources(problem, plan.assignments)
        if notes:
            plan = plan.replace(assignments=assignments, notes=(*plan.notes, *notes))
    solve_ms = (time.perf_counter() - started) * 1000.0
    figures = {**evaluate(problem, plan.assignments), **plan.figures}
    return plan.replace(
        algorithm=plan.algorithm or algorithm,
        solve_ms=solve_ms,
        figures=MappingProxyType(figures),
    )
