"""The scaling problem of QEScalor (Mu et al., ICCS 2020, §2.4): its JSON shape and its arrays.

A problem names one operator, the resource provisions its instances may get (CPU in cores, memory in
MB, a price per instance per epoch), what one instance sustains with each (given as ``performance``,
or predicted from ``samples`` by the random forest of :mod:`.performance`), the cost of starting and
of stopping an instance, the instances running now, and the workload of the coming epochs (given, or
forecast from ``history`` by :mod:`.forecast`). docs/formats.md, *Scaling problem*, describes the shape.

:func:`read_problem` checks the JSON and refuses unknown keys and bad values naming them;
:func:`resolve` turns it into a :class:`ScalingInstance` of arrays, the only thing the algorithms see.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from storm_planner.core.errors import ProblemError
from storm_planner.core.limits import MAX_EPOCHS_ENV, current_limits

TOP_KEYS = frozenset({"operator", "epoch_s", "resources", "performance", "samples", "startup_cost",
                      "shutdown_cost", "current", "workload", "history", "seed"})
RESOURCE_KEYS = frozenset({"id", "cpu", "memory_mb", "price"})
SAMPLE_KEYS = frozenset({"cpu", "memory_mb", "throughput"})
HISTORY_KEYS = frozenset({"rates", "season", "horizon", "quantile"})


@dataclass(frozen=True)
class Resource:
    id: str
    cpu: float        # cores
    memory_mb: float
    price: float      # per instance per epoch


@dataclass(frozen=True)
class ScalingProblem:
    """The problem as read from JSON (checked), before performance and workload are resolved."""

    operator: str
    epoch_s: float
    resources: tuple[Resource, ...]
    performance: Mapping[str, float]
    samples: tuple[tuple[float, float, float], ...]   # (cpu, memory_mb, throughput)
    startup_cost: float
    shutdown_cost: float
    current: Mapping[str, int]
    workload: tuple[float, ...] | None
    history: Mapping[str, Any] | None    # {"rates": [...], "season": n, "horizon": h, "quantile": q or None}
    seed: int


@dataclass(frozen=True)
class ScalingInstance:
    """What the algorithms see: R provisions, T epochs, as arrays."""

    resource_ids: tuple[str, ...]
    performance: np.ndarray   # (R,) tuples/s one instance sustains
    price: np.ndarray         # (R,) per instance per epoch
    startup_cost: float
    shutdown_cost: float
    current: np.ndarray       # (R,) instances running now
    workload: np.ndarray      # (T,) tuples/s to sustain in each epoch

    @property
    def n_resources(self) -> int:
        return len(self.resource_ids)

    @property
    def n_epochs(self) -> int:
        return len(self.workload)

    def restricted(self, resource: int) -> ScalingInstance:
        """The same instance with provision ``resource`` alone (CBA's single provision)."""
        keep = slice(resource, resource + 1)
        return ScalingInstance(self.resource_ids[keep], self.performance[keep], self.price[keep],
                               self.startup_cost, self.shutdown_cost, self.current[keep], self.workload)


def read_problem(data: Any) -> ScalingProblem:
    """Check a scaling problem's JSON; a ProblemError names the first key or value at fault."""
    if not isinstance(data, Mapping):
        raise ProblemError(f"a scaling problem is a JSON object, got {type(data).__name__}")
    _refuse_unknown(data, TOP_KEYS, "scaling problem")
    resources = _resources(data.get("resources"))
    ids = [r.id for r in resources]
    performance = {key: _number(value, f"performance.{key}", above=0.0)
                   for key, value in _mapping(data.get("performance", {}), "performance").items()}
    _refuse_unknown(performance, ids, "performance (resource ids)")
    current = {key: _whole(value, f"current.{key}")
               for key, value in _mapping(data.get("current", {}), "current").items()}
    _refuse_unknown(current, ids, "current (resource ids)")
    workload = data.get("workload")
    history = data.get("history")
    if (workload is None) == (history is None):
        raise ProblemError("a scaling problem needs exactly one of 'workload' (rates per epoch) and "
                           "'history' (past rates to forecast from)")
    return ScalingProblem(
        operator=str(data.get("operator", "operator")),
        epoch_s=_number(data.get("epoch_s", 300.0), "epoch_s", above=0.0),
        resources=resources,
        performance=performance,
        samples=_samples(data.get("samples", [])),
        startup_cost=_number(data.get("startup_cost", 0.0), "startup_cost", minimum=0.0),
        shutdown_cost=_number(data.get("shutdown_cost", 0.0), "shutdown_cost", minimum=0.0),
        current=current,
        workload=None if workload is None else _workload(workload),
        history=None if history is None else _history(history),
        seed=_whole(data.get("seed", 0), "seed"),
    )


def resolve(problem: ScalingProblem) -> ScalingInstance:
    """Performance of every provision (given, else predicted from the samples) and the workload
    (given, else forecast from the history), as a :class:`ScalingInstance`."""
    performance = dict(problem.performance)
    missing = [r for r in problem.resources if r.id not in performance]
    if missing:
        if not problem.samples:
            raise ProblemError(f"no performance for {', '.join(r.id for r in missing)}: give it under "
                               f"'performance' or give 'samples' to predict it from")
        from storm_planner.scaling.performance import PerformanceModel
        model = PerformanceModel(seed=problem.seed).fit(problem.samples)
        predicted = model.predict([(r.cpu, r.memory_mb) for r in missing])
        for resource, value in zip(missing, predicted):
            if value <= 0:
                raise ProblemError(f"the model predicts no throughput for {resource.id}; sample around it")
            performance[resource.id] = float(value)
    if problem.workload is not None:
        workload = np.asarray(problem.workload, dtype=float)
    elif problem.history is None:
        raise ProblemError("the scaling problem gives neither 'workload' nor 'history'")
    else:
        from storm_planner.scaling.forecast import forecast
        history = problem.history
        workload = forecast(history["rates"], season=history["season"], horizon=history["horizon"],
                            quantile=history["quantile"])
    return ScalingInstance(
        resource_ids=tuple(r.id for r in problem.resources),
        performance=np.array([performance[r.id] for r in problem.resources], dtype=float),
        price=np.array([r.price for r in problem.resources], dtype=float),
        startup_cost=problem.startup_cost,
        shutdown_cost=problem.shutdown_cost,
        current=np.array([problem.current.get(r.id, 0) for r in problem.resources], dtype=int),
        workload=workload,
    )


# -- checks ------------------------------------------------------------------------------------------

def _refuse_unknown(data: Mapping[str, Any], known: Any, where: str) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ProblemError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}")


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ProblemError(f"{where} must be an object, got {value!r}")
    return value


def _number(value: Any, where: str, minimum: float | None = None, above: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProblemError(f"{where} must be a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ProblemError(f"{where} must be >= {minimum:g}, got {value!r}")
    if above is not None and value <= above:
        raise ProblemError(f"{where} must be > {above:g}, got {value!r}")
    return float(value)


def _whole(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProblemError(f"{where} must be a whole number >= 0, got {value!r}")
    return value


def _check_epochs(count: int, where: str) -> None:
    limit = current_limits().max_epochs
    if count > limit:
        raise ProblemError(f"{where}: {count} epochs, more than the limit of {limit} ({MAX_EPOCHS_ENV})")


def _workload(values: Any) -> tuple[float, ...]:
    rates = _rates(values, "workload")
    _check_epochs(len(rates), "workload")
    return rates


def _rates(values: Any, where: str) -> tuple[float, ...]:
    if not isinstance(values, Sequence) or isinstance(values, str) or not values:
        raise ProblemError(f"{where} must be a non-empty list of rates (tuples/s), got {values!r}")
    return tuple(_number(v, f"{where}[{i}]", minimum=0.0) for i, v in enumerate(values))


def _resources(values: Any) -> tuple[Resource, ...]:
    if not isinstance(values, Sequence) or isinstance(values, str) or not values:
        raise ProblemError("resources must be a non-empty list of {id, cpu, memory_mb, price}")
    resources = []
    for i, value in enumerate(values):
        where = f"resources[{i}]"
        value = _mapping(value, where)
        _refuse_unknown(value, RESOURCE_KEYS, where)
        if not isinstance(value.get("id"), str) or not value["id"]:
            raise ProblemError(f"{where}.id must be a non-empty string, got {value.get('id')!r}")
        resources.append(Resource(value["id"], _number(value.get("cpu"), f"{where}.cpu", above=0.0),
                                  _number(value.get("memory_mb"), f"{where}.memory_mb", above=0.0),
                                  _number(value.get("price"), f"{where}.price", minimum=0.0)))
    ids = [r.id for r in resources]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ProblemError(f"resources: duplicate id {', '.join(map(repr, duplicated))}")
    return tuple(resources)


def _samples(values: Any) -> tuple[tuple[float, float, float], ...]:
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise ProblemError(f"samples must be a list of {{cpu, memory_mb, throughput}}, got {values!r}")
    samples = []
    for i, value in enumerate(values):
        where = f"samples[{i}]"
        value = _mapping(value, where)
        _refuse_unknown(value, SAMPLE_KEYS, where)
        samples.append((_number(value.get("cpu"), f"{where}.cpu", above=0.0),
                        _number(value.get("memory_mb"), f"{where}.memory_mb", above=0.0),
                        _number(value.get("throughput"), f"{where}.throughput", minimum=0.0)))
    return tuple(samples)


def _history(value: Any) -> Mapping[str, Any]:
    value = _mapping(value, "history")
    _refuse_unknown(value, HISTORY_KEYS, "history")
    season = _whole(value.get("season", 0), "history.season")
    horizon = _whole(value.get("horizon", 0), "history.horizon")
    if horizon < 1:
        raise ProblemError("history.horizon (epochs to forecast) must be >= 1")
    _check_epochs(horizon, "history.horizon")
    rates = _rates(value.get("rates"), "history.rates")
    if season and len(rates) < 2 * season:
        raise ProblemError(f"history.rates holds {len(rates)} epochs; a season of {season} needs at least "
                           f"two seasons ({2 * season})")
    quantile = value.get("quantile")
    if quantile is not None and not (isinstance(quantile, (int, float)) and 0.0 < quantile < 1.0):
        raise ProblemError(f"history.quantile must be a number in (0, 1), got {quantile!r}")
    return {"rates": rates, "season": season, "horizon": horizon, "quantile": quantile}
