"""How a topology's loads grow with its offered rate: the problem file's ``costs``.

A problem's executor loads and stream rates describe the topology at one offered rate. ``costs`` says
which, and what does not grow with it, so a planner can predict the loads at another rate:

* ``reference_rate``: the tuples per second the topology's spouts were offered (all of them together)
  when the loads and rates were measured; absent when they are declared rather than measured;
* ``executor_fixed``: per component, the CPU one executor uses at zero rate (reference-core percent:
  Storm's executors are never free: spinning, heartbeats, a shell component's idle subprocess);
* ``worker_fixed``: the CPU one worker JVM uses at zero rate (timers, heartbeats, the garbage collector);
* ``origin``: ``measured`` (this run's metrics), ``remembered`` (an earlier run of the topology's name)
  or ``declared`` (Storm's declared resources: nothing was measured).

Everything else of an executor's load, and every stream's rate, is taken to be in proportion to the
offered rate: a per-tuple cost. See ``docs/capacity.md``.

Example::

    "costs": {"reference_rate": 400, "executor_fixed": {"count": 0.8, "__acker": 0.3},
              "worker_fixed": 2.5, "origin": "measured"}
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.core.fields import non_negative, positive

ORIGINS = ("measured", "remembered", "declared")
_EMPTY: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True)
class RateCosts:
    """See the module docstring."""

    reference_rate: float | None = None
    executor_fixed: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    worker_fixed: float | None = None
    origin: str = "declared"

    @property
    def measured(self) -> bool:
        """Whether the loads are a real run's (this one's or a remembered one's)."""
        return self.origin != "declared"

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"origin": self.origin}
        if self.reference_rate is not None:
            result["reference_rate"] = self.reference_rate
        if self.executor_fixed:
            result["executor_fixed"] = dict(self.executor_fixed)
        if self.worker_fixed is not None:
            result["worker_fixed"] = self.worker_fixed
        return result


def parse_costs(raw: Any, component_ids: set[str], where: str = "costs") -> RateCosts:
    """``costs`` of a problem file, each field checked (an unknown key or component is an error)."""
    if raw is None:
        return RateCosts()
    if not isinstance(raw, Mapping):
        raise ProblemError(f"{where}: an object, got {type(raw).__name__}")
    unknown = set(raw) - {"reference_rate", "executor_fixed", "worker_fixed", "origin"}
    if unknown:
        raise ProblemError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} (known: "
                           "reference_rate, executor_fixed, worker_fixed, origin)")
    origin = raw.get("origin", "declared")
    if origin not in ORIGINS:
        raise ProblemError(f"{where}.origin: one of {', '.join(ORIGINS)}, got {origin!r}")
    rate = raw.get("reference_rate")
    fixed_raw = raw.get("executor_fixed") or {}
    if not isinstance(fixed_raw, Mapping):
        raise ProblemError(f"{where}.executor_fixed: an object of component -> CPU percent")
    fixed = {}
    for component, value in fixed_raw.items():
        if component not in component_ids:
            raise ProblemError(f"{where}.executor_fixed: no component {component!r} in the topology")
        fixed[str(component)] = non_negative(value, f"{where}.executor_fixed.{component}")
    worker = raw.get("worker_fixed")
    return RateCosts(
        reference_rate=None if rate is None else positive(rate, f"{where}.reference_rate"),
        executor_fixed=MappingProxyType(fixed),
        worker_fixed=None if worker is None else non_negative(worker, f"{where}.worker_fixed"),
        origin=str(origin),
    )
