"""Estimates used when a problem carries no measurements.

Without metrics, each component's cost is spread evenly over its executors, and
each stream's rate is spread over executor pairs as its grouping implies:

* shuffle, fields, local_or_shuffle, direct, none, custom: every source executor
  sends to every target executor equally, ``rate / (n_src * n_dst)`` per pair
  (fields grouping is uniform when keys are many and evenly spread);
* global: everything goes to the target's first executor, ``rate / n_src`` per pair;
* all: every target executor receives the whole stream, ``rate / n_src`` per pair.

A stream's ``rate`` is what the source component emits on it in total.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from storm_planner.core.problem import Component, Executor, Stream, Traffic


def executor_name(component_id: str, index: int) -> str:
    return f"{component_id}/{index}"


def derive_executors(components: Iterable[Component]) -> tuple[Executor, ...]:
    return tuple(
        Executor(
            id=executor_name(c.id, i),
            component=c.id,
            load=c.cost / c.executors,
            memory=c.memory / c.executors,
        )
        for c in components
        for i in range(c.executors)
    )


def derive_traffic(
    components: Iterable[Component],
    streams: Iterable[Stream],
    executors: Iterable[Executor],
) -> tuple[Traffic, ...]:
    by_component: dict[str, list[str]] = defaultdict(list)
    for executor in executors:
        by_component[executor.component].append(executor.id)
    rates: dict[tuple[str, str], float] = defaultdict(float)
    for stream in streams:
        sources, targets = by_component[stream.source], by_component[stream.target]
        if not sources or not targets or stream.rate <= 0:
            continue
        for source, target, rate in _pairs(stream.grouping, stream.rate, sources, targets):
            if source != target:
                rates[(source, target)] += rate
    return tuple(Traffic(s, t, r) for (s, t), r in rates.items())


def _pairs(grouping: str, rate: float, sources: list[str], targets: list[str]):
    if grouping == "global":
        for source in sources:
            yield source, targets[0], rate / len(sources)
    elif grouping == "all":
        for source in sources:
            for target in targets:
                yield source, target, rate / len(sources)
    else:
        share = rate / (len(sources) * len(targets))
        for source in sources:
            for target in targets:
                yield source, target, share
