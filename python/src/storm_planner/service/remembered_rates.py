"""Stream rates from a run's measured component-pair rates (``planner.loads.remembered``).

The metrics count, per component pair, the tuples delivered to the target's tasks; a :class:`Stream`'s
``rate`` counts emits, and an ``all`` stream delivers each emit to every executor of its target
(:mod:`storm_planner.core.traffic`). So a pair measured at R tuples/s with streams s_1..s_k gets

    rate_i = R * prior_i / sum_j(prior_j * copies_j)

(copies_j: the target's executors for an ``all`` stream, else 1): the prior's mix between the pair's
streams is kept and the pair delivers R in all. Streams of pairs the memory lacks are scaled by the ratio of
remembered to prior rates over the matched streams, so that every stream's rate is on one absolute scale
(a prior of one tuple per spout output next to hundreds per second would weigh nothing).

Apply it to the user streams first and derive the acker's streams from them, then once more to the system
streams alone (:func:`storm_planner.service.convert.problem_from_thrift`): acker pairs the run measured
take their measured rate, the others follow the user streams' remembered rates.

Cost: O(S) for S streams.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from storm_planner.core.problem import Component, Stream
from storm_planner.core.system_streams import copies_per_emit

Pair = tuple[str, str]


def with_remembered_rates(components: Iterable[Component], streams: tuple[Stream, ...], rates: Mapping[Pair, float],
                          *, only: Callable[[Stream], bool] = lambda stream: True,
                          scale_unmatched: bool = True) -> tuple[Stream, ...]:
    """``streams`` with the rates of the pairs in ``rates`` (the streams ``only`` selects; the others as
    they are), and, with ``scale_unmatched``, the selected streams of other pairs scaled to the same scale."""
    by_id = {c.id: c for c in components}
    chosen = [s for s in streams if only(s)]
    delivered: dict[Pair, float] = defaultdict(float)
    for stream in chosen:
        delivered[(stream.source, stream.target)] += stream.rate * copies_per_emit(stream, by_id)
    factor = {pair: rates[pair] / total for pair, total in delivered.items() if pair in rates and total > 0}
    matched = [s for s in chosen if (s.source, s.target) in factor]
    prior = sum(s.rate for s in matched)
    scale = sum(s.rate * factor[(s.source, s.target)] for s in matched) / prior if prior > 0 else 1.0
    return tuple(_rated(s, factor, scale if scale_unmatched else 1.0) if only(s) else s for s in streams)


def _rated(stream: Stream, factor: Mapping[Pair, float], scale: float) -> Stream:
    pair = (stream.source, stream.target)
    if pair in factor:
        return dataclasses.replace(stream, rate=stream.rate * factor[pair])
    if scale == 1.0:
        return stream
    return dataclasses.replace(stream, rate=stream.rate * scale)


def applied_pairs(streams: Iterable[Stream], keys: Iterable[Pair]) -> int:
    """How many of ``keys`` name a component pair that ``streams`` has: what a remembered figure applied to."""
    pairs = {(s.source, s.target) for s in streams}
    return sum(1 for key in keys if key in pairs)


__all__ = ["applied_pairs", "with_remembered_rates"]
