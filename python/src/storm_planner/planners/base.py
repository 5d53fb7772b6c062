"""The one interface every planner has, and the registry that finds them by name.

A planner is a class with a ``name`` and ``plan(problem) -> Plan``. Planners do
no I/O and are deterministic for a given ``problem.options.seed``. The in-tree
planners are listed in :mod:`storm_planner.planners.registry`; :func:`register`
adds one from outside the tree (a test's). :func:`run` is what callers use: it looks the planner up,
builds it with its parameters, times it, checks the plan's structure and adds
the evaluator's figures.

The parameter contract (scikit-learn's estimator contract, ``sklearn/base.py``):

* Every parameter is an explicit keyword argument of ``__init__`` with a
  default, stored unchanged or normalised (``"5"`` -> 5) under its own name;
  there is no ``**params``. :meth:`Planner.get_params` derives the names from
  the signature, so ``cls(**p.get_params()).get_params() == p.get_params()``,
  and :meth:`Planner.set_params` re-checks new values as the constructor does.
  A default of None means "from the problem" (e.g. ``max_migrations``: the
  problem's ``options.max_migrations``).
* An unknown (often misspelled) parameter is refused before ``__init__`` runs,
  with :class:`~storm_planner.core.errors.UnknownParameterError` (BAD_REQUEST:
  exit status 2 on the command line, a per-topology error in the service)
  naming it, the planner and the known parameters. A wrong type or an
  out-of-range value raises :class:`~storm_planner.core.errors.InvalidParameterError`
  naming the parameter (:func:`~storm_planner.planners._parameters.checked`).
* One resolver (:func:`~storm_planner.planners._parameters.parameters_from_options`)
  reads parameters from a problem's options: ``planner.<algorithm>.<key>``
  (a topology's conf through the service; values arrive as strings and are
  converted to the type of the default), else the bare ``<key>`` of older
  problem files. An unknown key under ``planner.<algorithm>.`` is refused like
  an unknown argument. Arguments given to :func:`run` (``-p KEY=VALUE``,
  ``storm_planner.plan(..., **params)``) win over options.
* Each parameter is described in the ``Parameters`` section of the planner's
  class docstring (numpydoc, as scikit-learn's estimators);
  ``storm-planner algorithms --params`` prints it.
* ``tests/planners/test_contract.py`` checks all of this for every registered
  planner, so a new planner is covered by listing it in the registry.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from storm_planner.core.check import check_plan
from storm_planner.core.errors import UnknownAlgorithmError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.resources import fit_to_resources, without_full_nodes
from storm_planner.core.slots import workers_note
from storm_planner.planners._parameters import Parameterised, parameters_from_options


class Planner(Parameterised):
    """Base class. Subclasses set ``name``, take their parameters as keywords with defaults in
    ``__init__`` (a planner without any keeps this one), and implement :meth:`plan`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""        # one line for `storm-planner algorithms`
    baseline: ClassVar[bool] = False   # used only for comparison
    changes_parallelism: ClassVar[bool] = False  # may return new executors <component>/<i>
    # Plans kept within each node's free declared CPU and memory and the worker heap limit
    # (core.resources); Storm's own resource-unaware schedulers, as baselines, are not.
    resource_aware: ClassVar[bool] = True
    # Whether a resource-aware planner's plan is also kept within each node's declared CPU (Storm's RAS
    # accounting). A planner that plans on measured costs says no: memory and the heap limit still bind.
    accounts_declared_cpu: ClassVar[bool] = True
    # The service runs it in a worker process it kills at the deadline (service.planning.runner): solver
    # planners whose model building can overrun their time limit; a thread cannot be stopped.
    isolated: ClassVar[bool] = False
    # Keys under planner.<name>. that are inputs read elsewhere, not parameters (hetero's profiles).
    option_inputs: ClassVar[frozenset[str]] = frozenset()
    # Older option names that still set a parameter: {option key: parameter}.
    option_aliases: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def plan(self, problem: Problem) -> Plan:  # pragma: no cover - interface
        raise NotImplementedError


_REGISTRY: dict[str, type[Planner]] = {}


def register(cls: type[Planner]) -> type[Planner]:
    """Enter ``cls`` under its name: the registry's planners, or one from outside the tree."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise TypeError(f"two planners named {cls.name!r}: {_REGISTRY[cls.name].__name__}, {cls.__name__}")
    cls.param_defaults()  # a planner whose __init__ breaks the contract fails at import, not at use
    _REGISTRY[cls.name] = cls
    return cls


def available() -> dict[str, type[Planner]]:
    """Registered planners by name (importing :mod:`storm_planner.planners` registers the listed ones)."""
    return dict(sorted(_REGISTRY.items()))


def planner_class(name: str) -> type[Planner]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownAlgorithmError(f"unknown algorithm {name!r}; known: {known}") from None


def get_planner(name: str, **params: Any) -> Planner:
    return planner_class(name)(**params)


def planner_for(problem: Problem, algorithm: str, **params: Any) -> Planner:
    """The named planner with its parameters from ``problem``'s options, ``params`` winning."""
    cls = planner_class(algorithm)
    return cls(**{**parameters_from_options(cls, problem.options.extra), **params})


def run(problem: Problem, algorithm: str, **params: Any) -> Plan:
    """Plan ``problem`` with the named planner: timed, checked, evaluated."""
    planner = planner_for(problem, algorithm, **params)
    started = time.perf_counter()
    # Resource-aware planners do not see nodes other topologies fill; the evaluator still does.
    seen = without_full_nodes(problem) if planner.resource_aware else problem
    plan = planner.plan(seen)
    check_plan(seen, plan, allow_new_executors=planner.changes_parallelism)
    if planner.resource_aware and not planner.changes_parallelism:
        assignments, notes = fit_to_resources(seen, plan.assignments, declared_cpu=planner.accounts_declared_cpu)
        if notes:
            plan = plan.replace(assignments=assignments, notes=(*plan.notes, *notes))
    solve_ms = (time.perf_counter() - started) * 1000.0
    figures = {**evaluate(problem, plan.assignments), **plan.figures,
               "workers": float(len(set(plan.assignments.values())))}
    return plan.replace(
        algorithm=plan.algorithm or algorithm,
        solve_ms=solve_ms,
        figures=MappingProxyType(figures),
        notes=(*plan.notes, workers_note(problem, plan.assignments)),
    )
