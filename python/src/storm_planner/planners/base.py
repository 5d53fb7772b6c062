"""The one interface every planner has, and the registry that finds them by name.

A planner is a class with a ``name`` and ``plan(problem) -> Plan``. Planners do
no I/O and are deterministic for a given ``problem.options.seed``. Register one
with ``@register``; :func:`run` is what callers use: it looks the planner up,
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
* ``tests/planners/test_contract.py`` checks all of this for every registered
  planner, so a new planner is covered by adding its module.
"""
from __future__ import annotations

import inspect
import time
from types import MappingProxyType
from typing import Any, ClassVar, Mapping

from storm_planner.core.check import check_plan
from storm_planner.core.errors import UnknownAlgorithmError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.resources import fit_to_resources, without_full_nodes
from storm_planner.core.problem import Problem
from storm_planner.planners._parameters import parameters_from_options, unknown_parameters_error


_DEFAULTS: dict[type, dict[str, Any]] = {}  # planner class -> its parameters and their defaults


class Planner:
    """Base class. Subclasses set ``name``, take their parameters as keywords with defaults in
    ``__init__`` (a planner without any keeps this one), and implement :meth:`plan`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""        # one line for `storm-planner algorithms`
    baseline: ClassVar[bool] = False   # used only for comparison
    changes_parallelism: ClassVar[bool] = False  # may return new executors <component>/<i>
    # Plans kept within each node's free declared CPU and memory and the worker heap limit
    # (core.resources); Storm's own resource-unaware schedulers, as baselines, are not.
    resource_aware: ClassVar[bool] = True
    # The service runs it in a worker process it kills at the deadline (service.worker): solver
    # planners whose model building can overrun their time limit; a thread cannot be stopped.
    isolated: ClassVar[bool] = False
    # Keys under planner.<name>. that are inputs read elsewhere, not parameters (hetero's profiles).
    option_inputs: ClassVar[frozenset[str]] = frozenset()
    # Older option names that still set a parameter: {option key: parameter}.
    option_aliases: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def __new__(cls, *args: Any, **params: Any) -> "Planner":
        # Checked here, before __init__, so every planner refuses unknown names the same way
        # (Python's own TypeError would not name the planner nor list what it takes).
        cls.refuse_unknown(params)
        return super().__new__(cls)

    @classmethod
    def refuse_unknown(cls, names: Any) -> None:
        """UnknownParameterError for any of ``names`` that is not a parameter of this planner."""
        known = cls.param_defaults()
        unknown = set(names) - set(known)
        if unknown:
            raise unknown_parameters_error(cls.name or cls.__name__, unknown, known)

    def __init__(self) -> None:
        """A planner without parameters."""

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        """Parameter -> default, from the ``__init__`` signature (as scikit-learn's _get_param_names)."""
        if cls not in _DEFAULTS:  # inspecting a signature costs more than a small plan's evaluation
            _DEFAULTS[cls] = cls._signature_defaults()
        return dict(_DEFAULTS[cls])

    @classmethod
    def _signature_defaults(cls) -> dict[str, Any]:
        defaults = {}
        for parameter in list(inspect.signature(cls.__init__).parameters.values())[1:]:
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ takes *{parameter.name}: a planner's parameters "
                                f"must be explicit keywords with defaults")
            if parameter.default is parameter.empty:
                raise TypeError(f"{cls.__name__}.__init__: parameter {parameter.name} has no default")
            defaults[parameter.name] = parameter.default
        return defaults

    def get_params(self) -> dict[str, Any]:
        """This planner's parameters and their values."""
        return {name: getattr(self, name) for name in self.param_defaults()}

    def set_params(self, **params: Any) -> "Planner":
        """Change parameters; unknown names and bad values are refused as by the constructor."""
        self.refuse_unknown(params)
        self.__init__(**{**self.get_params(), **params})
        return self

    @property
    def params(self) -> Mapping[str, Any]:
        """Read-only view of :meth:`get_params` (older spelling)."""
        return MappingProxyType(self.get_params())

    def plan(self, problem: Problem) -> Plan:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        # getattr with a default: repr must work on a planner whose __init__ failed half-way (tracebacks)
        args = ", ".join(f"{k}={getattr(self, k, '?')!r}" for k in self.param_defaults())
        return f"{type(self).__name__}({args})"


_REGISTRY: dict[str, type[Planner]] = {}


def register(cls: type[Planner]) -> type[Planner]:
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise TypeError(f"two planners named {cls.name!r}: {_REGISTRY[cls.name].__name__}, {cls.__name__}")
    cls.param_defaults()  # a planner whose __init__ breaks the contract fails at import, not at use
    _REGISTRY[cls.name] = cls
    return cls


def available() -> dict[str, type[Planner]]:
    """Registered planners by name (importing the package registers them all)."""
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
        assignments, notes = fit_to_resources(seen, plan.assignments)
        if notes:
            plan = plan.replace(assignments=assignments, notes=(*plan.notes, *notes))
    solve_ms = (time.perf_counter() - started) * 1000.0
    figures = {**evaluate(problem, plan.assignments), **plan.figures}
    return plan.replace(
        algorithm=plan.algorithm or algorithm,
        solve_ms=solve_ms,
        figures=MappingProxyType(figures),
    )
