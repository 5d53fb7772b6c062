"""The cluster before this topology: what its nodes hold for other work, summed once per problem.

The evaluator's node figures (highest utilisation, load distance, Elastic
Allocator's CPU utilisation and deviation) are sums and extremes over every
node of the cluster, while a plan changes only the nodes it uses. On a
production-sized cluster (1,900 nodes, 45 topologies in one round) a Python
pass over every node for every plan was a quarter of the service's planning
time. So the figures of the idle cluster are computed once per problem, by
C-level sums over the :class:`~storm_planner.core.elements.NodeBaseline` cached
on each node (the service hands every topology of a request the same ``Node``
objects where nothing changed them), and a plan is scored by correcting them on
the nodes it uses: O(nodes used) in Python.

CPU in reference-core percent (``capacity × speed``), as everywhere in the core.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from functools import cached_property
from operator import attrgetter

from storm_planner.core.elements import Node

_CAPACITY, _HELD, _SHARE = attrgetter("capacity"), attrgetter("held"), attrgetter("share")


class ClusterBaseline:
    """Sums and extremes of the nodes' baselines: utilisation of each node is its ``share``."""

    def __init__(self, nodes: Iterable[Node]) -> None:
        self.nodes = tuple(nodes)
        bases = [n.baseline for n in self.nodes]
        capacities = list(map(_CAPACITY, bases))
        held = list(map(_HELD, bases))
        self._shares = shares = list(map(_SHARE, bases))
        self.count = len(bases)
        self.capacity = math.fsum(capacities)
        self.capped = math.fsum(map(min, held, capacities))  # what other work can actually use
        self.shares = math.fsum(shares)
        self.squares = math.fsum(s * s for s in shares)
        self.highest = max(shares, default=0.0)
        self._active = [i for i, n in enumerate(self.nodes) if not n.draining]
        self._all_active = len(self._active) == self.count
        self.active_capacity = self.capacity if self._all_active else math.fsum(capacities[i] for i in self._active)
        self.active_held = math.fsum(held) if self._all_active else math.fsum(held[i] for i in self._active)

    @cached_property
    def active_extremes(self) -> tuple[tuple[float, str], tuple[float, str]] | None:
        """(lowest, highest) utilisation of a non-draining node, each with the node's id; None without one."""
        if not self._active:
            return None
        ranked = [(self._shares[i], self.nodes[i].id) for i in self._active]
        return min(ranked), max(ranked)

    def lowest_active_except(self, skip: Collection[str]) -> float:
        """Lowest utilisation of a non-draining node whose id is not in ``skip``; inf if there is none."""
        extremes = self.active_extremes
        if extremes is None:
            return math.inf
        lowest, node_id = extremes[0]
        if node_id not in skip:
            return lowest
        return min((self._shares[i] for i in self._active if self.nodes[i].id not in skip), default=math.inf)
