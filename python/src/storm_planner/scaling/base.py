"""The interface of a scaling algorithm and the registry that finds one by name.

A scaler is a class with a ``name`` and ``schedule(instance) -> Schedule``, its parameters explicit
keywords with defaults (the planners' contract, :class:`~storm_planner.planners._parameters.Parameterised`:
``get_params``, unknown names refused naming them). :func:`run_scaler` is what callers use
(``storm_planner.scale``, ``storm-planner scale plan``): it reads and resolves the problem, runs the
scaler, checks that every epoch is covered and returns the answer (docs/formats.md, *Scaling problem*) as a dict.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

from storm_planner.core.errors import PlanningError, UnknownAlgorithmError
from storm_planner.planners._parameters import Parameterised
from storm_planner.scaling.scaling_problem import ScalingInstance, ScalingProblem, read_problem, resolve
from storm_planner.scaling.schedule import Schedule


class Scaler(Parameterised):
    """Base class: subclasses set ``name`` and ``summary`` and implement :meth:`schedule`."""

    summary: ClassVar[str] = ""
    baseline: ClassVar[bool] = False

    def schedule(self, instance: ScalingInstance) -> Schedule:  # pragma: no cover - interface
        raise NotImplementedError


_SCALERS: dict[str, type[Scaler]] = {}


def register_scaler(cls: type[Scaler]) -> type[Scaler]:
    """Enter ``cls`` under its name (:mod:`storm_planner.scaling.scaler_registry` lists the in-tree scalers)."""
    if not cls.name or cls.name in _SCALERS and _SCALERS[cls.name] is not cls:
        raise TypeError(f"{cls.__name__}: a scaler needs a name of its own, got {cls.name!r}")
    cls.param_defaults()  # a scaler whose __init__ breaks the contract fails at import
    _SCALERS[cls.name] = cls
    return cls


def scalers() -> dict[str, type[Scaler]]:
    """Registered scalers by name (importing :mod:`storm_planner.scaling` registers the listed ones)."""
    return dict(sorted(_SCALERS.items()))


def scaler_class(name: str) -> type[Scaler]:
    try:
        return _SCALERS[name]
    except KeyError:
        raise UnknownAlgorithmError(f"unknown scaling algorithm {name!r}; known: "
                                    f"{', '.join(sorted(_SCALERS)) or 'none'}") from None


def run_scaler(problem: Mapping[str, Any] | ScalingProblem, algorithm: str = "qcesa",
               **params: Any) -> dict[str, Any]:
    """Schedule ``problem`` (the JSON shape or a read problem) with the named scaler."""
    scaler = scaler_class(algorithm)(**params)
    if not isinstance(problem, ScalingProblem):
        problem = read_problem(problem)
    instance = resolve(problem)
    started = time.perf_counter()
    schedule = scaler.schedule(instance)
    solve_ms = (time.perf_counter() - started) * 1000.0
    short = schedule.short_epochs(instance)
    if short:  # a bug, not an input error: no scaler may return an uncovered epoch
        raise PlanningError(f"{algorithm} left epochs {short[:5]} under capacity")
    return {"algorithm": algorithm, "operator": problem.operator, "epoch_s": problem.epoch_s,
            **schedule.to_dict(instance), "solve_ms": round(solve_ms, 3), "params": scaler.get_params()}
