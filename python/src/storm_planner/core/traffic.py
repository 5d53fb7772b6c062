"""A topology's traffic, linear in the problem's size.

A problem's traffic is one of two kinds (as it always was: measured pairs,
when a problem has them, are its whole traffic):

* **measured**: the executor pairs that metrics (or a problem file) name, with
  their rates. Sparse: only pairs that really talk.
* **derived from streams**: each stream's rate spread over executor pairs as
  its grouping implies (see :mod:`storm_planner.core.derive`). A shuffle
  stream between components of ``m`` and ``n`` executors implies ``m·n`` pairs,
  so they are never written out here: every figure is computed per component
  from how many executors of it each place (node or slot) holds.

Figures from the component counts (one stream ``s → t``, rate ``r``,
``c_s(k)``, ``c_t(k)`` executors at place ``k``; a stream from a component to
itself skips each executor's pair with itself, as the derivation does):

* uniform groupings (shuffle, fields, …): pair share ``r / (n_s·n_t)``;
  collocated ``share · (Σ_k c_s(k)·c_t(k) − n_self)``;
* ``all``: pair share ``r / n_s``; collocated the same way;
* ``global``: every source sends ``r / n_s`` to the target's first executor
  ``t₀``; collocated ``(r / n_s) · (c_s(place(t₀)) − [self-stream])``.

Network use per place (:meth:`TrafficModel.network`, Elastic Allocator's link
bandwidth after placement): what a place's executors send to and receive from
executors at other places, in Mbit/s (rate × ``tuple_bytes`` × 8 / 10⁶). For a
uniform stream at place ``k``: sent ``share · c_s(k) · (n_t − c_t(k))``,
received ``share · c_t(k) · (n_s − c_s(k))`` (a self-pair is never split);
for ``global``: every source away from ``place(t₀)`` sends ``r / n_s``, and
``place(t₀)`` receives ``(r / n_s) · (n_s − c_s(place(t₀)))``. Measured pairs
take the ``tuple_bytes`` of the stream(s) between their components (the
rate-weighted mean; 0 when no stream names them).

Cost: O(executors + streams × places) per evaluation, against O(executors²)
for the pairs. Planners that truly need executor pairs (taskLevel, the exact
optimum, METIS-based ones) ask :meth:`TrafficModel.executor_pairs`, which
builds them once, and refuses with :class:`TooLargeError` beyond a limit
instead of exhausting memory.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from storm_planner.core.elements import EXECUTOR_ID, Executor, Stream, Traffic, executors_by_component
from storm_planner.core.errors import TooLargeError

if TYPE_CHECKING:  # problem.py imports this module
    from storm_planner.core.problem import Problem

# Per component, executors per place (a node, a slot, ...; None: unplaced). Counts may be fractional.
PlaceCounts = Mapping[str, Mapping[Any, float]]

# Executor pairs a planner may have built for it: ~100 MB of Python objects.
MAX_EXECUTOR_PAIRS = 1_000_000


@dataclass(frozen=True)
class Flow:
    """One stream at component level: who sends, who receives, how."""

    source: str
    target: str
    grouping: str
    rate: float
    n_source: int
    n_target: int
    tuple_bytes: float = 0.0

    @property
    def self_stream(self) -> bool:
        return self.source == self.target

    @property
    def share(self) -> float:
        """Rate of one executor pair."""
        if self.grouping in ("global", "all"):
            return self.rate / self.n_source
        return self.rate / (self.n_source * self.n_target)

    @property
    def pair_count(self) -> int:
        if self.grouping == "global":
            return self.n_source - (1 if self.self_stream else 0)
        return self.n_source * self.n_target - (self.n_source if self.self_stream else 0)

    @property
    def total(self) -> float:
        return self.share * self.pair_count


def traffic_model(problem: Problem) -> TrafficModel:
    """The problem's traffic model, built once per problem (a Problem is immutable)."""
    model: TrafficModel | None = problem.__dict__.get("_traffic_model")
    if model is None:
        model = problem.__dict__["_traffic_model"] = TrafficModel(
            problem.executors, problem.streams, problem.traffic)
    return model


class TrafficModel:
    """The traffic of one topology: stream flows (derived) or measured executor pairs."""

    def __init__(self, executors: Iterable[Executor], streams: Iterable[Stream], measured: Iterable[Traffic]) -> None:
        self.members: dict[str, list[str]] = defaultdict(list, {
            component: list(map(EXECUTOR_ID, members))
            for component, members in executors_by_component(executors).items()})
        self.measured = tuple(measured)
        self.flows: tuple[Flow, ...] = () if self.measured else tuple(self._flows(streams))
        self._pairs: tuple[Traffic, ...] | None = None  # executor_pairs(), computed once
        self._streams = tuple(streams)
        self._measured_mbit: tuple[tuple[tuple[str, str], float], ...] | None = None

    def _flows(self, streams: Iterable[Stream]) -> Iterator[Flow]:
        for stream in streams:
            n_source, n_target = len(self.members[stream.source]), len(self.members[stream.target])
            if n_source and n_target and stream.rate > 0:
                flow = Flow(stream.source, stream.target, stream.grouping, stream.rate, n_source, n_target,
                            stream.tuple_bytes)
                if flow.pair_count:
                    yield flow

    @property
    def total(self) -> float:
        return sum(f.total for f in self.flows) + sum(t.rate for t in self.measured)

    @property
    def pair_count(self) -> int:
        return sum(f.pair_count for f in self.flows) + len(self.measured)

    # -- figures ---------------------------------------------------------------------
    def collocated(self, place: Mapping[str, Hashable], counts: PlaceCounts | None = None) -> float:
        """Traffic between executors at the same place (a node, a slot; unplaced ones share None).

        ``counts``: :meth:`counts` of ``place`` when the caller has them already.
        """
        measured = sum(t.rate for t in self.measured if place.get(t.source) == place.get(t.target))
        if not self.flows:
            return measured
        counts = self.counts(place) if counts is None else counts
        return measured + sum(self._flow_collocated(flow, counts, place) for flow in self.flows)

    def crossing(self, place: Mapping[str, Hashable], counts: PlaceCounts | None = None) -> float:
        """Traffic between executors at different places."""
        return max(0.0, self.total - self.collocated(place, counts))

    def counts(self, place: Mapping[str, Hashable]) -> dict[str, dict[Hashable, int]]:
        """Per component, how many of its executors each place holds."""
        counts: dict[str, dict[Hashable, int]] = {}
        for component, executors in self.members.items():
            here: dict[Hashable, int] = defaultdict(int)
            for executor in executors:
                here[place.get(executor)] += 1
            counts[component] = here
        return counts

    def _flow_collocated(self, flow: Flow, counts: PlaceCounts,
                         place: Mapping[str, Hashable]) -> float:
        sources = counts[flow.source]
        if flow.grouping == "global":
            first = place.get(self.members[flow.target][0])
            return flow.share * (sources.get(first, 0) - (1 if flow.self_stream else 0))
        targets = counts[flow.target]
        if len(targets) < len(sources):
            sources, targets = targets, sources
        together = sum(n * targets.get(k, 0) for k, n in sources.items())
        return flow.share * (together - (flow.n_source if flow.self_stream else 0))

    def network(self, place: Mapping[str, Hashable],
                counts: PlaceCounts | None = None) -> dict[Hashable, float]:
        """Per place, Mbit/s its executors send to and receive from executors at other places.

        Places without crossing traffic may be absent; unplaced executors share the place None.
        O(executors + streams × places), or O(measured pairs) for measured traffic.
        """
        use: dict[Hashable, float] = defaultdict(float)
        for (source, target), mbit in self.measured_mbit():
            a, b = place.get(source), place.get(target)
            if a != b:
                use[a] += mbit
                use[b] += mbit
        if not self.flows:
            return dict(use)
        counts = self.counts(place) if counts is None else counts
        for flow in self.flows:
            if not flow.tuple_bytes:
                continue
            mbit = flow.share * flow.tuple_bytes * 8e-6  # one executor pair, Mbit/s
            sources = counts[flow.source]
            if flow.grouping == "global":
                home = place.get(self.members[flow.target][0])
                for k, n in sources.items():
                    if k != home:
                        use[k] += mbit * n
                use[home] += mbit * (flow.n_source - sources.get(home, 0))
                continue
            targets = counts[flow.target]
            for k, n in sources.items():
                use[k] += mbit * n * (flow.n_target - targets.get(k, 0))
            for k, n in targets.items():
                use[k] += mbit * n * (flow.n_source - sources.get(k, 0))
        return dict(use)

    def measured_mbit(self) -> tuple[tuple[tuple[str, str], float], ...]:
        """Measured pairs as ((source, target), Mbit/s), the tuple size from their components' streams."""
        if self._measured_mbit is None:
            size, component_of = self._pair_sizes(), self._component_of()
            self._measured_mbit = tuple(
                ((t.source, t.target), t.rate * size.get((component_of[t.source], component_of[t.target]), 0.0) * 8e-6)
                for t in self.measured if t.rate > 0 and t.source != t.target)
        return self._measured_mbit

    def sizes_known(self) -> bool:
        """Whether every flow or measured pair that carries tuples has a known tuple size (bytes > 0)."""
        if not self.measured:
            return bool(self.flows) and all(f.tuple_bytes > 0 for f in self.flows)
        size, component_of = self._pair_sizes(), self._component_of()
        return all(size.get((component_of[t.source], component_of[t.target]), 0.0) > 0
                   for t in self.measured if t.rate > 0 and t.source != t.target)

    def some_sizes_known(self) -> bool:
        """Whether any flow, or any measured pair's component pair, has a known tuple size (bytes > 0)."""
        if not self.measured:
            return any(f.tuple_bytes > 0 for f in self.flows)
        return any(size > 0 for size in self._pair_sizes().values())

    def _pair_sizes(self) -> dict[tuple[str, str], float]:
        """Bytes per tuple per (source component, target component): the rate-weighted mean of their streams."""
        weighted: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
        for stream in self._streams:
            entry = weighted[(stream.source, stream.target)]
            entry[0] += stream.rate * stream.tuple_bytes
            entry[1] += stream.rate
        return {key: (b / r if r > 0 else 0.0) for key, (b, r) in weighted.items()}

    def _component_of(self) -> dict[str, str]:
        return {e: c for c, members in self.members.items() for e in members} if self.measured else {}

    # -- group level -----------------------------------------------------------------
    def group_rates(self, group_of: Mapping[str, int], by_bytes: bool = False,
                    unknown_bytes: float = 0.0) -> dict[tuple[int, int], float]:
        """Traffic between executor groups, per ordered (source group, target group).

        Pairs appear in the order the executor pairs would (stream by stream, then
        by the groups' first executors), so planners that break ties by that order
        keep their choices. O(streams × groups²) for derived traffic. ``by_bytes``:
        bytes per second (each tuple weighted by its stream's size) instead of tuples;
        a tuple of unknown size (0) then weighs ``unknown_bytes``.
        """
        rates: dict[tuple[int, int], float] = {}
        if not self.flows:
            size, component_of = (self._pair_sizes(), self._component_of()) if by_bytes else ({}, {})
            for t in self.measured:
                if t.rate <= 0 or t.source == t.target:
                    continue
                key = (group_of[t.source], group_of[t.target])
                weight = (size.get((component_of[t.source], component_of[t.target]), 0.0) or unknown_bytes
                          if by_bytes else 1.0)
                rates[key] = rates.get(key, 0.0) + t.rate * weight
            return rates
        sizes: dict[str, list[tuple[int, int]]] = {}
        for flow in self.flows:
            for component in (flow.source, flow.target):
                if component not in sizes:
                    sizes[component] = self._group_sizes(component, group_of)
            sources = sizes[flow.source]
            share = flow.share * ((flow.tuple_bytes or unknown_bytes) if by_bytes else 1.0)
            if flow.grouping == "global":
                first = self.members[flow.target][0]
                target_group = group_of[first]
                for group, members in sources:
                    own = 1 if flow.self_stream and group_of[first] == group else 0
                    if members - own:
                        key = (group, target_group)
                        rates[key] = rates.get(key, 0.0) + share * (members - own)
                continue
            targets = sizes[flow.target]
            for source_group, source_size in sources:
                for target_group, target_size in targets:
                    pairs = source_size * target_size
                    if flow.self_stream and source_group == target_group:
                        pairs -= source_size
                    if pairs:
                        key = (source_group, target_group)
                        rates[key] = rates.get(key, 0.0) + share * pairs
        return rates

    def _group_sizes(self, component: str, group_of: Mapping[str, int]) -> list[tuple[int, int]]:
        """(group, members of ``component`` in it), groups in the order of their first member."""
        return list(Counter(map(group_of.__getitem__, self.members[component])).items())

    # -- executor pairs, for the planners that need them ------------------------------
    def executor_pairs(self, limit: int | None = MAX_EXECUTOR_PAIRS, who: str = "this planner") -> tuple[Traffic, ...]:
        """Every executor pair with its rate (measured, or derived from the streams), built once.

        Raises :class:`TooLargeError` when there would be more than ``limit`` pairs.
        """
        if self._pairs is None:
            count = self.pair_count
            if limit is not None and count > limit:
                raise TooLargeError(
                    f"{who} needs every executor pair, and this topology's streams imply {count:,} "
                    f"(more than {limit:,}); use a planner that works per component (topdown, even, milp)")
            self._pairs = self._derived_pairs() if self.flows else self.measured
        return self._pairs

    def executor_pairs_in_bytes(self, unknown_bytes: float = 0.0, limit: int | None = MAX_EXECUTOR_PAIRS,
                                who: str = "this planner") -> tuple[Traffic, ...]:
        """:meth:`executor_pairs` in bytes/s: each pair's tuples weighted by the size of its components' streams
        (the rate-weighted mean, as for link use), ``unknown_bytes`` where that size is unknown (0)."""
        size = self._pair_sizes()
        component = {e: c for c, members in self.members.items() for e in members}
        return tuple(Traffic(t.source, t.target,
                             t.rate * (size.get((component[t.source], component[t.target]), 0.0) or unknown_bytes))
                     for t in self.executor_pairs(limit, who))

    def _derived_pairs(self) -> tuple[Traffic, ...]:
        rates: dict[tuple[str, str], float] = defaultdict(float)
        for flow in self.flows:
            sources, targets = self.members[flow.source], self.members[flow.target]
            if flow.grouping == "global":
                pairs = ((source, targets[0]) for source in sources)
            else:
                pairs = ((source, target) for source in sources for target in targets)
            share = flow.share
            for pair in pairs:
                if pair[0] != pair[1]:
                    rates[pair] += share
        return tuple(Traffic(s, t, r) for (s, t), r in rates.items())
