"""What each component costs per tuple, from measurements at the rates a topology ran at.

A measured load is absolute: what an executor used at the rate the topology ran at, falling behind or not.
The capacity planner (``docs/capacity.md``) needs what holds at any rate: per component, the CPU one
executor uses at zero rate (*fixed*) and per tuple it processes (*per tuple*), and how many tuples the
component processes per tuple the spouts serve (*per source*); then one executor of a component with
``E`` executors at source rate ``R`` needs ``fixed + per_tuple · per_source · R / E``.

* **Source rate**: the tuple trees the spouts complete per second (``acked``), or, for spouts without
  message ids (nothing acked), the tuples they emit.
* **Processed**: per executor, tuples executed (a bolt, the acker) or emitted (a spout) per second.
* **The fit**: each measurement adds one point per component, (processed per executor, load per
  executor), kept per run (:class:`CostHistory`; :class:`RunCosts` keeps one per running topology, bounded). Points at two rates or more, at least
  ``MIN_SPREAD`` apart, give the fixed part as a least-squares intercept (clipped to ``[0, the least load
  seen]``) and the per-tuple cost as its slope; with fewer, the fixed part is the prior (clipped the same
  way) and the per-tuple cost comes from the newest point. Points measured where every executor of the
  component ran on a node at its CPU quota (*capped*, :func:`capped_nodes`) give no intercept: the load
  reads the cap, not what the tuples cost, so a line through such points reads flat CPU as a fixed part.
  They still give the per-tuple cost of the newest point (the tuples processed are capped with the CPU). The prior is what an earlier run of the
  topology's name fitted, where the caller has one (``priors``: the service's load memory), else
  ``DEFAULT_EXECUTOR_FIXED``: a resubmitted topology's first windows come at one low rate, where a worker's
  waiting threads dominate its CPU, and read with the default as the fixed part they make every tuple look
  dearer than it is at capacity. The capacity benchmark steps the rate, and every rate change gives the fit
  a point.

Loads are the metrics source's (``load``: percent of a reference core, the worker's own CPU shared in by
tuples, a shell component's subprocess included: docs/metrics.md). Pure functions and small classes; no I/O.
O(executors) per measurement, O(points) per fit.

Bounded: at most ``max_runs`` runs (the least recently measured is forgotten first), ``MAX_COMPONENTS``
components a run, ids of at most ``MAX_ID_CHARS`` characters, and only finite, non-negative figures: the
ids and the figures come from the workers' windows.
"""
from __future__ import annotations

import math
import threading
from collections import OrderedDict, defaultdict, deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import islice
from types import MappingProxyType
from typing import Any, TypeVar

from storm_planner.metrics.loads_and_traffic import ExecutorFigures, Measurement
from storm_planner.metrics.measured import MeasuredTopology

# CPU % one executor uses at zero rate where no fit says otherwise (the idle executors of the local
# cluster's workers: a JVM thread waiting, a shell component's heartbeats).
DEFAULT_EXECUTOR_FIXED = 0.5
# A node where the topology's executors use this share of its CPU capacity is at its quota: their loads read
# the cap, flat whatever they process, and a line through them reads flat CPU as fixed cost (the capacity
# run's Word Count on hetero fitted tokenize's fixed part at 10.9-13.1 % at quota, 3.8 % in its calibration).
CAPPED_SHARE = 0.9
# Two processed rates this far apart (relative to the larger) make a fit of the fixed part.
MIN_SPREAD = 0.3
# Points kept per component and run.
MAX_POINTS = 32
# Runs (topology ids) whose points are kept.
DEFAULT_MAX_RUNS = 128
MAX_COMPONENTS = 2_000   # components a run keeps points of; more are dropped
MAX_ID_CHARS = 256       # a longer topology or component id is not kept


@dataclass(frozen=True)
class Point:
    """One component in one measurement: per executor, tuples processed per second and load; ``capped``: every
    executor of it ran on a node at its CPU quota (:data:`CAPPED_SHARE`), where its load reads the cap."""

    processed: float
    load: float
    capped: bool = False


@dataclass(frozen=True)
class Observation:
    """What one measurement says: the source rate, and per component its executors and one :class:`Point`."""

    source_rate: float
    points: Mapping[str, Point]
    executors: Mapping[str, int]


@dataclass(frozen=True)
class ComponentCost:
    """See the module docstring. ``fitted``: the fixed part comes from points at several rates."""

    fixed: float
    per_tuple: float
    per_source: float
    fitted: bool = False

    def load(self, source_rate: float, executors: int) -> float:
        """One executor's load when the topology serves ``source_rate`` with ``executors`` of this component."""
        return self.fixed + self.per_tuple * self.per_source * source_rate / max(1, executors)


@dataclass(frozen=True)
class TupleCosts:
    """Per component, what it costs per tuple; and the source rate of the measurement they describe."""

    source_rate: float
    components: Mapping[str, ComponentCost]


def observe(measurement: Measurement, spouts: Collection[str], windowed: Collection[str] | None = None,
            capped: Collection[str] = frozenset()) -> Observation:
    """The source rate and each component's point, over the executors with a window of their own; where some
    of a component's executors ran on nodes that are not ``capped`` (at their CPU quota), over those alone."""
    by_component: dict[str, list[ExecutorFigures]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for figures in measurement.executors.values():
        counts[figures.component] += 1
        if figures.measured and (windowed is None or figures.executor in windowed) and _finite(figures.load):
            by_component[figures.component].append(figures)
    spout_figures = [f for c in spouts for f in by_component.get(c, ())]
    acked = sum(f.acked_per_s for f in spout_figures)
    source = acked if acked > 0 else sum(f.emitted_per_s for f in spout_figures)
    points = {c: _point([f for f in members if f.node not in capped] or members, c in spouts, capped)
              for c, members in by_component.items()}
    return Observation(source if _finite(source) else 0.0, MappingProxyType(points), MappingProxyType(dict(counts)))


def _point(members: list[ExecutorFigures], spout: bool, capped: Collection[str]) -> Point:
    return Point(_mean(_processed(f, spout) for f in members), _mean(f.load for f in members),
                 all(f.node in capped for f in members))


def capped_nodes(measurement: Measurement, capacities: Mapping[str, float]) -> frozenset[str]:
    """The nodes where the topology's executors used at least ``CAPPED_SHARE`` of the node's CPU capacity
    (``capacities``: node id -> % of a core, Storm's ``supervisor.cpu.capacity``): held at their quota."""
    used: dict[str, float] = defaultdict(float)
    for figures in measurement.executors.values():
        if figures.node is not None and _usable(figures.cpu_percent):
            used[figures.node] += figures.cpu_percent
    return frozenset(node for node, cpu in used.items()
                     if _usable(capacities.get(node, math.nan)) and cpu >= CAPPED_SHARE * capacities[node] > 0)


def _processed(figures: ExecutorFigures, spout: bool) -> float:
    value = figures.emitted_per_s if spout else figures.executed_per_s
    return value if _finite(value) else 0.0


class CostHistory:
    """One run's points per component (at most ``MAX_POINTS`` each, the newest kept) and its newest source rate."""

    def __init__(self) -> None:
        self.points: dict[str, deque[tuple[float, Point]]] = defaultdict(lambda: deque(maxlen=MAX_POINTS))
        self.latest: Observation | None = None

    def add(self, observation: Observation) -> None:
        if observation.source_rate <= 0:
            return
        for component, point in observation.points.items():
            if point.processed > 0:
                self.points[component].append((observation.source_rate, point))
        self.latest = observation

    def costs(self, priors: Mapping[str, float] = MappingProxyType({})) -> TupleCosts | None:
        """Per-tuple costs from the points so far, at the newest observation's source rate (None: none yet);
        ``priors``: per component, the fixed part where the points cannot fit one (module docstring)."""
        latest = self.latest
        if latest is None:
            return None
        components = {}
        for component, points in self.points.items():
            executors = latest.executors.get(component, 1)
            cost = fit(list(points), executors, _prior(priors.get(component)))
            if cost is not None:
                components[component] = cost
        return TupleCosts(latest.source_rate, MappingProxyType(components))


class RunCosts:
    """Per running topology (by id), its :class:`CostHistory`; thread-safe, bounded (module docstring)."""

    def __init__(self, max_runs: int = DEFAULT_MAX_RUNS) -> None:
        self.max_runs = max_runs
        self._histories: OrderedDict[str, CostHistory] = OrderedDict()
        self._lock = threading.Lock()

    def observe(self, spec: Any, measured: MeasuredTopology | None,
                priors: Mapping[str, float] = MappingProxyType({}),
                capacities: Mapping[str, float] = MappingProxyType({})) -> TupleCosts | None:
        """Add what the metrics measured of topology ``spec`` (its id, its components' ids and types) now to its
        run's points; its per-tuple costs so far (None: nothing measured, no figures kept, or no point yet);
        ``priors``: per component, the fixed part where the run's points cannot fit one yet; ``capacities``:
        node id -> CPU capacity, to tell the points measured at a node's quota (:func:`capped_nodes`)."""
        if measured is None or not measured.measured or measured.measurement is None or len(spec.id) > MAX_ID_CHARS:
            return None
        spouts = {c.id for c in spec.components if c.type == "spout"}
        observation = observe(measured.measurement, spouts, measured.windowed,
                              capped_nodes(measured.measurement, capacities))
        with self._lock:
            history = self._histories.get(spec.id)
            if history is None:
                history = self._histories[spec.id] = CostHistory()
            self._histories.move_to_end(spec.id)
            while len(self._histories) > self.max_runs:
                self._histories.popitem(last=False)
            history.add(_kept(observation))
            return history.costs(priors)


_Value = TypeVar("_Value")


def _kept(observation: Observation) -> Observation:
    """What a run keeps of one observation: finite non-negative figures of components with short ids."""
    points = _first((c, p) for c, p in observation.points.items() if _usable(p.processed) and _usable(p.load))
    executors = _first((c, n) for c, n in observation.executors.items() if isinstance(n, int) and n > 0)
    return Observation(observation.source_rate if _usable(observation.source_rate) else 0.0, points, executors)


def _first(entries: Iterable[tuple[str, _Value]]) -> Mapping[str, _Value]:
    """The first ``MAX_COMPONENTS`` of ``entries`` whose id has at most ``MAX_ID_CHARS`` characters, read-only."""
    short = ((c, value) for c, value in entries if isinstance(c, str) and len(c) <= MAX_ID_CHARS)
    return MappingProxyType(dict(islice(short, MAX_COMPONENTS)))


def fit(points: Iterable[tuple[float, Point]], executors: int,
        prior_fixed: float = DEFAULT_EXECUTOR_FIXED) -> ComponentCost | None:
    """A component's cost from its (source rate, point) pairs, the newest last, ``prior_fixed`` its fixed part
    where the points are at one rate (see the module docstring)."""
    seen = [(rate, p) for rate, p in points if rate > 0 and p.processed > 0 and _finite(p.load) and p.load >= 0]
    if not seen:
        return None
    newest_rate, newest = seen[-1]
    per_source = newest.processed * max(1, executors) / newest_rate
    least = min(p.load for _, p in seen)
    free = [p for _, p in seen if not p.capped]   # a capped load reads the quota: no line through it
    processed = [p.processed for p in free]
    fixed, fitted = min(prior_fixed, least), False
    if len(free) >= 2 and (max(processed) - min(processed)) >= MIN_SPREAD * max(processed):
        slope, intercept = _least_squares(processed, [p.load for p in free])
        if slope >= 0:
            fixed, fitted = min(max(0.0, intercept), least), True
    per_tuple = max(0.0, newest.load - fixed) / newest.processed
    return ComponentCost(fixed, per_tuple, per_source, fitted)


def _prior(value: float | None) -> float:
    """A caller's prior fixed part, or the default where it gave none or none usable."""
    return value if value is not None and _usable(value) else DEFAULT_EXECUTOR_FIXED


def _least_squares(xs: list[float], ys: list[float]) -> tuple[float, float]:
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    var = sum((x - mean_x) ** 2 for x in xs)
    if var <= 0:
        return 0.0, mean_y
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / var
    return slope, mean_y - slope * mean_x


def _mean(values: Iterable[float]) -> float:
    seen = list(values)
    return sum(seen) / len(seen) if seen else 0.0


def _finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _usable(value: float) -> bool:
    return _finite(value) and not isinstance(value, bool) and value >= 0
