"""The loads each topology was last measured at, by name: a resubmitted topology's first plan starts from them.

A topology's first plan comes before its first metrics window, so the service plans it on estimates: each
executor's declared CPU (Storm's default is 10 % of a core for every component) and a prior tuple size. On
the end-to-end bench that first plan is what a topology keeps: ``topdown`` packed bargains' join and vwap
onto one 45 % node on declared figures, and every measured re-plan that would have spread them had to
restart a spout's worker, which costs more than the pressure (``benchmarks/reports/e2e-relief.md``).

Operators resubmit a topology under the same name (a new jar, a changed setting, a cluster move), and its
components cost about what they cost the last time. :class:`LoadMemory` keeps, per topology name, what
the last plan made on measured metrics saw:

* per component, the mean measured load of one executor (% of a core, the worker's overhead shared in as
  the metrics source shares it), the highest over that run's measured plans: a run ends with its feed
  stopped and its loads near zero, and topDown §7.4 places on the loads at the highest input rate ("running
  the algorithms once at the maximum input rate");
* per component pair, the bytes one tuple costs on the wire, as last measured.

A measured plan of a new run (another topology id under the name) starts the name's entry afresh.

With ``planner.loads.remembered`` a plan made without metrics takes these in place of the declared CPU
and the prior tuple size (:func:`storm_planner.service.convert.problem_from_thrift`); a component or pair
the memory lacks keeps its estimate. The topology is still planned as unmeasured: its first measured
re-plan is judged as usual. A component's load is per executor, so a topology resubmitted with another
parallelism gets the old per-executor load for each of its executors (the component's total scales with
the count, which is right when the work per executor stays about the same and an overestimate otherwise,
until the first measured re-plan).

Bounded and checked: at most ``max_topologies`` names (the least recently used is forgotten first) and
``MAX_ENTRIES`` components and pairs per name; only finite, non-negative figures are kept. In memory only:
a restarted service remembers nothing, and nothing read from outside is written anywhere.

Cost: O(E) per measured plan (one pass over the executors), O(C) per recall, for E executors and C
components.
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from storm_planner.core.elements import Executor

DEFAULT_MAX_TOPOLOGIES = 256
MAX_ENTRIES = 10_000   # components (or component pairs) remembered per topology; more are dropped


@dataclass(frozen=True)
class RememberedLoads:
    """One topology's last measured figures, as a later submission under its name may use them."""

    topology_id: str                                   # the run they were measured on
    cpu: Mapping[str, float]                           # component -> mean load of one executor, % of a core,
                                                       # the run's highest
    tuple_bytes: Mapping[tuple[str, str], float]       # (source, target) component -> wire bytes per tuple
    measured_at: float                                 # the clock's time of the plan that saw them

    def note(self, now: float) -> str:
        """The plan's note: where its loads came from."""
        return (f"loads as measured on {self.topology_id} {max(0.0, now - self.measured_at):.0f} s ago "
                f"({len(self.cpu)} components, {len(self.tuple_bytes)} tuple sizes; planner.loads.remembered)")


def _usable(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def mean_load_per_component(executors: Iterable[Executor]) -> dict[str, float]:
    """Component -> mean measured load of its executors; executors with a load that is not finite and
    non-negative are left out, and a component with none left is too."""
    totals: dict[str, list[float]] = {}
    for executor in executors:
        if _usable(executor.load):
            total = totals.setdefault(executor.component, [0.0, 0])
            total[0] += executor.load
            total[1] += 1
    return {component: total / count for component, (total, count) in totals.items()}


_Key = TypeVar("_Key")


def _bounded(mapping: Mapping[_Key, float]) -> Mapping[_Key, float]:
    """The usable figures of ``mapping``, at most MAX_ENTRIES of them, read-only."""
    kept: dict[_Key, float] = {}
    for key, value in mapping.items():
        if len(kept) >= MAX_ENTRIES:
            break
        if _usable(value):
            kept[key] = float(value)
    return MappingProxyType(kept)


class LoadMemory:
    """Per topology name, the last measured loads (:class:`RememberedLoads`); thread-safe, bounded."""

    def __init__(self, max_topologies: int = DEFAULT_MAX_TOPOLOGIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_topologies < 1:
            raise ValueError(f"max_topologies must be at least 1, not {max_topologies}")
        self.max_topologies = max_topologies
        self.clock = clock
        self._by_name: OrderedDict[str, RememberedLoads] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._by_name)

    def remember(self, name: str, topology_id: str, executors: Iterable[Executor],
                 tuple_bytes: Mapping[tuple[str, str], float]) -> None:
        """Keep what a plan on measured metrics saw of topology ``name`` (running as ``topology_id``): each
        component's load per executor, the highest of this run's plans, and the tuple sizes, the latest."""
        if not name:
            return
        cpu, sizes = _bounded(mean_load_per_component(executors)), _bounded(tuple_bytes)
        if not cpu and not sizes:
            return
        with self._lock:
            earlier = self._by_name.get(name)
            if earlier is not None and earlier.topology_id == topology_id:   # the same run: keep its peak
                cpu = _bounded({**earlier.cpu, **{c: max(load, earlier.cpu.get(c, 0.0)) for c, load in cpu.items()}})
                sizes = _bounded({**earlier.tuple_bytes, **sizes})
            self._by_name[name] = RememberedLoads(topology_id, cpu, sizes, self.clock())
            self._by_name.move_to_end(name)
            while len(self._by_name) > self.max_topologies:
                self._by_name.popitem(last=False)

    def recall(self, name: str) -> RememberedLoads | None:
        """The last measured loads of topology ``name``, or None."""
        with self._lock:
            loads = self._by_name.get(name)
            if loads is not None:
                self._by_name.move_to_end(name)
            return loads


__all__ = ["DEFAULT_MAX_TOPOLOGIES", "LoadMemory", "MAX_ENTRIES", "RememberedLoads", "mean_load_per_component"]
