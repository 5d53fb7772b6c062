"""The loads each topology was last measured at, by name: a resubmitted topology's first plan starts from them.

A topology's first plan comes before its first metrics window, so the service plans it on estimates: each
executor's declared CPU (Storm's default is 10 % of a core for every component) and a prior tuple size. On
the end-to-end bench that first plan is what a topology keeps: ``topdown`` packed bargains' join and vwap
onto one 45 % node on declared figures, and every measured re-plan that would have spread them had to
restart a spout's worker, which costs more than the pressure (``benchmarks/README.md``, *e2e-relief*).

Operators resubmit a topology under the same name (a new jar, a changed setting, a cluster move), and its
components cost about what they cost the last time. :class:`LoadMemory` keeps, per topology name, what
the last plan made on measured metrics saw:

* per component, the mean measured load of one executor (% of a core, the worker's overhead shared in as
  the metrics source shares it), the highest over that run's measured plans: a run ends with its feed
  stopped and its loads near zero, and topDown §7.4 places on the loads at the highest input rate ("running
  the algorithms once at the maximum input rate");
* per component pair, the bytes one tuple costs on the wire, as last measured;
* per component pair, the tuples per second sent, the highest over the run's measured plans (the prior
  rates are one tuple per spout output and selectivity 1 downstream; an aggregating bolt passes on far
  less than it receives), when the metrics count traffic in tuples (``planner.metrics.traffic.unit``).

A measured plan of a new run (another topology id under the name) starts the name's entry afresh.

With ``planner.loads.remembered`` a plan made without metrics takes these in place of the declared CPU,
the prior tuple size and the prior rates (:func:`storm_planner.service.planning.convert.problem_from_thrift`,
the rates by :func:`storm_planner.core.system_streams.with_remembered_rates`); a component or pair the memory
lacks keeps its estimate.
The topology is still planned as unmeasured: its first measured re-plan is judged as usual (but not as a
first correction: a placement made on remembered loads is not one made on estimates, docs/capacity.md). Its
run's per-tuple fit takes the remembered fixed parts as its prior until the run measures at two rates
(:func:`fixed_priors`). A component's
load is per executor, so a topology resubmitted with another parallelism gets the old per-executor load for
each of its executors (the component's total scales with the count, which is right when the work per executor
stays about the same and an overestimate otherwise, until the first measured re-plan).

Only executors with a window of their own count: the metrics source fills in the others with their
component's mean, or the topology's median when the whole component has none, and a guess is not remembered
as a measurement. A component's peak is kept per executor count: a rebalance within the run (same topology
id) changes the count, and the per-executor load seen at one count says little about another, so the peak
starts afresh there.

Bounded and checked: at most ``max_topologies`` names (the least recently used is forgotten first),
``MAX_ENTRIES`` components and pairs per name, names and component ids of at most ``MAX_KEY_CHARS``
characters, and a name only under an id Storm would give it (``<name>-<counter>-<seconds>``); only finite,
non-negative figures are kept. At the defaults that is at most about 128 × 3 × 2,000 short entries, some
tens of MB in the worst case. The service keeps it across restarts in a file or in ZooKeeper
(:mod:`~storm_planner.service.planning.memory_store`, written at most every 30 s and checked as it is read
back); without one, a restarted service remembers nothing.

Cost: O(E) per measured plan (one pass over the executors), O(C) per recall, for E executors and C
components.

**Rates.** A remembered pair's tuples/s replace its streams' prior rates, the streams of other pairs scaled to
the same scale (:func:`storm_planner.core.system_streams.with_remembered_rates`, applied as the conversion
builds the streams).

The handler asks :func:`recall_and_costs` what a topology's plan starts from (given what the metrics measured
now, :func:`storm_planner.metrics.measured.measured_now`, and the per-tuple costs of its run so far,
:class:`storm_planner.metrics.per_tuple.RunCosts`): plain mappings (:class:`Recalled`) the conversion
applies; and :func:`took_note` what the plan's note says it took.
"""
from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from storm_planner.core import settings
from storm_planner.core.costs import RateCosts
from storm_planner.core.elements import Executor
from storm_planner.core.problem import Problem, Stream
from storm_planner.metrics.measured import MeasuredTopology
from storm_planner.metrics.per_tuple import TupleCosts

Pair = tuple[str, str]
_EMPTY: Mapping[Pair, float] = MappingProxyType({})
DEFAULT_MAX_TOPOLOGIES = 128
MAX_ENTRIES = 2_000     # components (or component pairs) remembered per topology; more are dropped
MAX_KEY_CHARS = 256     # a longer topology name or component id is not remembered


class ComponentLoad(NamedTuple):
    """A component's mean load per executor (% of a core) over its executors with a window, and how many
    executors it had then."""

    per_executor: float
    executors: int


@dataclass(frozen=True)
class RememberedLoads:
    """One topology's last measured figures, as a later submission under its name may use them."""

    topology_id: str                                   # the run they were measured on
    loads: Mapping[str, ComponentLoad]                 # component -> its highest load per executor in the run
    tuple_bytes: Mapping[tuple[str, str], float]       # (source, target) component -> wire bytes per tuple
    measured_at: float                                 # the clock's time of the plan that saw them
    rates: Mapping[tuple[str, str], float] = field(default_factory=lambda: _EMPTY)   # pair -> tuples/s, highest
    costs: TupleCosts | None = None                    # per-tuple costs, fitted over the run's measurements
    peak_rate: float = 0.0                             # the highest source rate (tuples/s) the run served

    @property
    def cpu(self) -> Mapping[str, float]:
        """Component -> remembered load of one executor, % of a core."""
        return {component: load.per_executor for component, load in self.loads.items()}

    def cpu_for(self, executors: Mapping[str, int]) -> Mapping[str, float]:
        """Component -> one executor's load at the run's peak source rate with ``executors`` per component:
        from the per-tuple costs where the run measured them (a resubmission with other parallelism shares
        the component's tuples over its executors), else the peak load per executor as measured."""
        loads = dict(self.cpu)
        if self.costs is not None and self.peak_rate > 0:
            for component, cost in self.costs.components.items():
                if component in loads or component in executors:
                    loads[component] = cost.load(self.peak_rate, executors.get(component, 1))
        return loads

    def note(self, now: float, loads: int, rates: int, sizes: int) -> str:
        """The plan's note: what it took from the memory (how many components' loads, component pairs'
        rates and tuple sizes) and from which run."""
        took = [f"{what} of {count} {unit}" for what, count, unit in (
            ("loads", loads, "components"), ("rates", rates, "component pairs"),
            ("tuple sizes", sizes, "component pairs")) if count]
        declared = "" if loads else "; CPU as declared"
        return (f"{', '.join(took)} as measured on {self.topology_id} {max(0.0, now - self.measured_at):.0f} s ago "
                f"(planner.loads.remembered{declared})")


def _usable(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def component_loads(executors: Iterable[Executor], windowed: Collection[str] | None = None) -> dict[str, ComponentLoad]:
    """Component -> its mean load per executor over the executors in ``windowed`` (every one when None) whose
    load is finite and non-negative, with its count of executors; a component with no such executor is left out."""
    totals: dict[str, list[float]] = {}
    for executor in executors:
        total = totals.setdefault(executor.component, [0.0, 0, 0])
        total[2] += 1
        if (windowed is None or executor.id in windowed) and _usable(executor.load):
            total[0] += executor.load
            total[1] += 1
    return {component: ComponentLoad(load / used, int(count))
            for component, (load, used, count) in totals.items() if used}


_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


def _short(key: object) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(part, str) and len(part) <= MAX_KEY_CHARS for part in parts)


def _bounded(mapping: Mapping[_Key, _Value], usable: Callable[[_Value], bool]) -> Mapping[_Key, _Value]:
    """The usable entries of ``mapping`` with short keys, at most MAX_ENTRIES of them, read-only."""
    kept: dict[_Key, _Value] = {}
    for key, value in mapping.items():
        if len(kept) >= MAX_ENTRIES:
            break
        if _short(key) and usable(value):
            kept[key] = value
    return MappingProxyType(kept)


def _usable_load(load: ComponentLoad) -> bool:
    return _usable(load.per_executor) and load.executors > 0


def _peaks(earlier: Mapping[str, ComponentLoad], now: Mapping[str, ComponentLoad]) -> dict[str, ComponentLoad]:
    """Per component the higher of two plans' loads of one run; at another executor count, the newer."""
    merged = dict(earlier)
    for component, load in now.items():
        before = earlier.get(component)
        if before is not None and before.executors == load.executors and before.per_executor > load.per_executor:
            continue
        merged[component] = load
    return merged


def _bounded_costs(costs: TupleCosts | None) -> TupleCosts | None:
    if costs is None or not _usable(costs.source_rate) or costs.source_rate <= 0:
        return None
    kept = _bounded(costs.components, lambda c: _usable(c.fixed) and _usable(c.per_tuple) and _usable(c.per_source))
    return TupleCosts(costs.source_rate, kept) if kept else None


def storm_name_of(topology_id: str, name: str) -> bool:
    """Whether ``topology_id`` is an id Storm gives a topology called ``name``: ``<name>-<counter>-<seconds>``."""
    counter, _, seconds = topology_id[len(name) + 1:].partition("-")
    return topology_id.startswith(name + "-") and counter.isdigit() and seconds.isdigit()


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
        self.version = 0     # counts the changes, so a keeper (memory_store.py) writes only what changed

    def __len__(self) -> int:
        return len(self._by_name)

    def remember(self, name: str, topology_id: str, loads: Mapping[str, ComponentLoad],
                 tuple_bytes: Mapping[tuple[str, str], float],
                 rates: Mapping[tuple[str, str], float] = _EMPTY, costs: TupleCosts | None = None) -> None:
        """Keep what a plan on measured metrics saw of topology ``name`` (running as ``topology_id``): each
        component's load per executor (:func:`component_loads`), the highest of this run's plans at its
        executor count, the tuple sizes, the latest, and the component pairs' tuples/s (``rates``), the
        highest. A name that is long or not ``topology_id``'s is not kept."""
        if not name or len(name) > MAX_KEY_CHARS or not storm_name_of(topology_id, name):
            return
        kept_loads, sizes = _bounded(loads, _usable_load), _bounded(tuple_bytes, _usable)
        kept_rates = _bounded(rates, _usable)
        if not kept_loads and not sizes and not kept_rates:
            return
        costs = _bounded_costs(costs)
        peak = costs.source_rate if costs is not None else 0.0
        with self._lock:
            earlier = self._by_name.get(name)
            if earlier is not None and earlier.topology_id == topology_id:   # the same run: keep its peaks
                kept_loads = _bounded(_peaks(earlier.loads, kept_loads), _usable_load)
                sizes = _bounded({**earlier.tuple_bytes, **sizes}, _usable)
                kept_rates = _bounded({**earlier.rates, **{pair: max(rate, earlier.rates.get(pair, 0.0))
                                                           for pair, rate in kept_rates.items()}}, _usable)
                costs = costs or earlier.costs
                peak = max(peak, earlier.peak_rate)
            self._by_name[name] = RememberedLoads(topology_id, kept_loads, sizes, self.clock(), kept_rates,
                                                  costs, peak)
            self._by_name.move_to_end(name)
            self._trim()
            self.version += 1

    def _trim(self) -> None:
        while len(self._by_name) > self.max_topologies:
            self._by_name.popitem(last=False)

    def entries(self) -> list[tuple[str, RememberedLoads]]:
        """(name, entry) of every topology remembered, the least recently used first."""
        with self._lock:
            return list(self._by_name.items())

    def restore(self, entries: Iterable[tuple[str, RememberedLoads]]) -> None:
        """Take ``entries`` (least recently used first), as a restarted service reads them back
        (:mod:`~storm_planner.service.planning.memory_store`); a name already remembered keeps its newer
        entry. Bounded as :meth:`remember` is."""
        with self._lock:
            newer = dict(self._by_name)
            for name, entry in entries:
                if name not in newer and _short(name) and storm_name_of(entry.topology_id, name):
                    self._by_name[name] = dataclasses.replace(
                        entry, loads=_bounded(entry.loads, _usable_load), tuple_bytes=_bounded(entry.tuple_bytes, _usable),
                        rates=_bounded(entry.rates, _usable), costs=_bounded_costs(entry.costs))
            for name in newer:
                self._by_name.move_to_end(name)
            self._trim()

    def recall(self, name: str) -> RememberedLoads | None:
        """The last measured loads of topology ``name``, or None."""
        with self._lock:
            loads = self._by_name.get(name)
            if loads is not None:
                self._by_name.move_to_end(name)
            return loads


# -- what a plan starts from: measured now, else remembered, and what its note says ------------------------
def applied_pairs(streams: Iterable[Stream], keys: Iterable[Pair]) -> int:
    """How many of ``keys`` name a component pair that ``streams`` has: what a remembered figure applied to."""
    pairs = {(s.source, s.target) for s in streams}
    return sum(1 for key in keys if key in pairs)


@dataclass(frozen=True)
class Recalled:
    """What a topology planned without metrics takes from the memory, as plain mappings for the conversion
    (a component or pair they lack keeps its estimate), and the entry they come from (for the plan's note)."""

    entry: RememberedLoads
    cpu: Mapping[str, float]          # component -> one executor's load at the topology's parallelism
    loads_remembered: bool            # a component of the topology takes its remembered load

    @property
    def tuple_bytes(self) -> Mapping[Pair, float]:
        return self.entry.tuple_bytes

    @property
    def rates(self) -> Mapping[Pair, float]:
        return self.entry.rates


def recalled_for(entry: RememberedLoads, spec: Any) -> Recalled:
    """``entry`` as topology ``spec`` takes it: each component's load per executor at its parallelism (at least
    one executor a component, as the conversion counts them)."""
    executors = {c.id: max(1, c.parallelism) for c in spec.components}
    return Recalled(entry, entry.cpu_for(executors), any(component in entry.loads for component in executors))


def remembered_loads(memory: LoadMemory, spec: Any, measured: MeasuredTopology | None,
                     algorithm: str | None = None) -> RememberedLoads | None:
    """Remember what a measured topology costs, by its name; recall it for one with nothing measured
    that asks for it (``planner.loads.remembered``, on by default for ``auto``; its traffic alone with
    ``planner.loads.remembered.cpu`` false)."""
    recalled = recall_and_costs(memory, spec, measured, algorithm)[0]
    return recalled.entry if recalled is not None else None


def recall_and_costs(memory: LoadMemory, spec: Any, measured: MeasuredTopology | None, algorithm: str | None = None,
                     observed: TupleCosts | None = None) -> tuple[Recalled | None, RateCosts]:
    """(what a topology with nothing measured recalls, the costs its problem carries: ``core.costs``).

    Measured: its loads, tuple sizes, rates and per-tuple costs (``observed``: its run's so far,
    :class:`~storm_planner.metrics.per_tuple.RunCosts`) join the memory (by name); the problem's costs are the
    measured source rate and the fixed parts fitted so far. Recalled: the peak source rate of the remembered
    run, its fixed parts. Otherwise nothing is known of how its loads grow with the rate."""
    name = spec.name or ""
    if measured is not None and measured.measured:
        loads = component_loads(measured.executors, measured.windowed)
        counted = measured.measurement
        rates = counted.component_traffic if counted is not None and counted.unit == "tuples/s" else {}
        memory.remember(name, spec.id, loads, measured.tuple_bytes, rates, observed)
        if observed is None or observed.source_rate <= 0:
            return None, RateCosts(origin="measured")
        return None, _rate_costs(observed, observed.source_rate, "measured")
    recalled = _asked_for(memory, spec, algorithm)
    if recalled is None:
        return None, RateCosts()
    if not settings.LOADS_REMEMBERED_CPU.read(spec.options or {}):
        return recalled_for(dataclasses.replace(recalled, loads=MappingProxyType({}), costs=None), spec), RateCosts()
    if recalled.costs is None or recalled.peak_rate <= 0:
        return recalled_for(recalled, spec), RateCosts()
    return recalled_for(recalled, spec), _rate_costs(recalled.costs, recalled.peak_rate, "remembered")


def fixed_priors(memory: LoadMemory, spec: Any, algorithm: str | None = None) -> Mapping[str, float]:
    """Per component, the fixed part (CPU % of one executor at zero rate) the memory holds for topology
    ``spec``'s name, when it asks for remembered loads: the prior of its run's per-tuple fit until the run
    has measured at rates far enough apart (:mod:`storm_planner.metrics.per_tuple`). The entry may be the
    run's own: a part it took from an earlier run stays its prior until it fits its own."""
    entry = _asked_for(memory, spec, algorithm)
    if entry is None or entry.costs is None or not settings.LOADS_REMEMBERED_CPU.read(spec.options or {}):
        return MappingProxyType({})
    return _fixed_parts(entry.costs)


def _asked_for(memory: LoadMemory, spec: Any, algorithm: str | None) -> RememberedLoads | None:
    """The memory's entry for ``spec``'s name when the topology asks for remembered loads, else None."""
    name = spec.name or ""
    if not name or not wants_remembered(spec.options or {}, algorithm):
        return None
    return memory.recall(name)


def _fixed_parts(costs: TupleCosts) -> Mapping[str, float]:
    """Component -> the fixed part of one executor's cost."""
    return MappingProxyType({c: cost.fixed for c, cost in costs.components.items()})


def _rate_costs(costs: TupleCosts, rate: float, origin: str) -> RateCosts:
    """The problem's costs (``core.costs``) at ``rate``: each component's fixed part."""
    return RateCosts(rate, _fixed_parts(costs), origin=origin)


def wants_remembered(options: Mapping[str, Any], algorithm: str | None) -> bool:
    """``planner.loads.remembered`` as the topology sets it; unset, on for ``auto`` (which plans on costs)."""
    if settings.LOADS_REMEMBERED.is_set(options):
        return bool(settings.LOADS_REMEMBERED.read(options))
    return algorithm == "auto"


def took_note(memory: LoadMemory, recalled: Recalled, problem: Problem) -> str | None:
    """The note on what a plan took from the load memory, or None when it took nothing."""
    remembered = recalled.entry
    loads = sum(1 for c in problem.components if c.id in remembered.loads) if problem.loads_remembered else 0
    rates = applied_pairs(problem.streams, remembered.rates)
    sizes = applied_pairs(problem.streams, remembered.tuple_bytes)
    return remembered.note(memory.clock(), loads, rates, sizes) if loads or rates or sizes else None


__all__ = ["DEFAULT_MAX_TOPOLOGIES", "MAX_ENTRIES", "MAX_KEY_CHARS", "ComponentLoad", "LoadMemory", "Recalled",
           "RememberedLoads", "applied_pairs", "component_loads", "fixed_priors", "recall_and_costs", "recalled_for", "remembered_loads",
           "storm_name_of", "took_note", "wants_remembered"]
