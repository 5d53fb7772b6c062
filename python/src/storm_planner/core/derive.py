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

from collections.abc import Iterable
from itertools import repeat

from storm_planner.core.elements import Component, Executor, Stream, Traffic
from storm_planner.core.traffic import TrafficModel


def executor_name(component_id: str, index: int) -> str:
    return f"{component_id}/{index}"  # derive_executors builds the same names in bulk


def derive_executors(components: Iterable[Component]) -> tuple[Executor, ...]:
    """Each component's cost and memory spread evenly over its executors, in Storm's order."""
    executors: list[Executor] = []
    for c in components:
        fields = (c.id, c.cost / c.executors, 1.0, c.memory / c.executors, None)
        # tuple.__new__ over zipped fields builds every executor in C: no Python frame per
        # executor, which made this the largest part of reading a problem file.
        executors.extend(map(tuple.__new__, repeat(Executor), zip(
            map(f"{c.id}/".__add__, map(str, range(c.executors))), *map(repeat, fields))))
    return tuple(executors)


def derive_traffic(
    components: Iterable[Component],
    streams: Iterable[Stream],
    executors: Iterable[Executor],
) -> tuple[Traffic, ...]:
    """Every executor pair the streams imply: O(executors²) for shuffle streams.

    For small problems and for checking the component-level figures of
    :class:`storm_planner.core.traffic.TrafficModel`, which never builds these
    unless a planner asks.
    """
    return TrafficModel(executors, streams, ()).executor_pairs(limit=None)
