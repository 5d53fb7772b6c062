"""The rate a placement sustains: CPU and links as linear functions of the offered rate.

A problem's executor loads and stream rates describe the topology at one offered rate, its *reference
rate*. Scaled to a factor ``f`` of it, executor ``e`` needs ``fixed_e + f·(load_e − fixed_e)`` CPU
(reference-core percent: the part an idle executor burns does not grow with the rate), every worker JVM
adds ``worker_fixed``, and every stream carries ``f`` times its rate. A node ``n`` holding executors
``X_n`` in ``w_n`` workers sustains the factor while

    Σ_{e ∈ X_n} fixed_e + w_n · worker_fixed + f · Σ_{e ∈ X_n} variable_e  ≤  C_n
    f · sent_n ≤ B_n   and   f · received_n ≤ B_n

where ``C_n`` is the node's effective capacity left to the topology and ``B_n`` its link's rate in each
direction (full duplex, as the emulated network and Ethernet are) less what other work sends there. The
placement's sustainable factor is the least over nodes and links of what each allows (:meth:`factor`);
multiplied by the reference rate it is the predicted sustainable rate.

Where the fixed costs come from (:class:`~storm_planner.core.elements.CostModel`): measured per-tuple
costs fitted at two or more rates give each component's intercept; without them the fixed part is 0 and
loads scale in proportion. Declared CPU, where nothing was measured, makes the factor a measure of
balance by declared demand (no rate is predicted then).

Traffic at component level, as :mod:`storm_planner.core.traffic` computes it: for a uniform stream of
pair share ``σ`` (Mbit/s of one executor pair) from ``s`` to ``t``, node ``n`` sends
``σ·k_s(n)·(n_t − k_t(n))`` and receives ``σ·k_t(n)·(n_s − k_s(n))``; a ``global`` stream goes to the
target's first executor alone. Measured executor pairs count as they are.

Cost of one evaluation: O(executors + streams × nodes). Nothing here builds executor pairs.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from storm_planner.core.problem import Node, Problem
from storm_planner.core.traffic import Flow, TrafficModel

# A node whose fixed costs alone exceed its capacity sustains nothing; a factor this large means "unbounded".
UNBOUNDED = 1e9


@dataclass(frozen=True)
class NodeRoom:
    """What one node offers the topology: CPU (reference-core %), link Mbit/s each way, ports."""

    id: str
    cpu: float
    link: float            # math.inf: no link constraint
    ports: int


@dataclass(frozen=True)
class Demand:
    """What one node's share of a placement asks at factor ``f``: ``fixed + f·variable`` CPU, and
    ``f·sent`` / ``f·received`` Mbit/s on its link."""

    fixed: float = 0.0
    variable: float = 0.0
    sent: float = 0.0
    received: float = 0.0

    def factor(self, room: NodeRoom) -> float:
        """The largest factor this node sustains (0 when its fixed costs alone overflow it)."""
        if self.fixed > room.cpu + 1e-9:
            return 0.0
        best = UNBOUNDED
        if self.variable > 0:
            best = min(best, (room.cpu - self.fixed) / self.variable)
        for mbit in (self.sent, self.received):
            if mbit > 0:
                best = min(best, room.link / mbit)
        return max(0.0, best)


class CapacityModel:
    """A problem read as linear demands per executor and per stream (see the module docstring).

    ``worker_fixed``: CPU % one worker JVM costs at zero rate; ``executor_fixed``: per component, what one
    executor costs at zero rate (absent: 0). Nodes marked draining offer nothing.
    """

    def __init__(self, problem: Problem, executor_fixed: Mapping[str, float] | None = None,
                 worker_fixed: float = 0.0) -> None:
        self.problem = problem
        fixed_of = executor_fixed or {}
        self.rooms: dict[str, NodeRoom] = {n.id: node_room(n) for n in problem.nodes}
        self.component: dict[str, str] = {e.id: e.component for e in problem.executors}
        self.fixed: dict[str, float] = {}
        self.variable: dict[str, float] = {}
        for e in problem.executors:
            fixed = min(max(0.0, float(fixed_of.get(e.component, 0.0))), max(0.0, e.load))
            self.fixed[e.id] = fixed
            self.variable[e.id] = max(0.0, e.load - fixed)
        self.worker_fixed = max(0.0, float(worker_fixed))
        self.traffic: TrafficModel = problem.traffic_model
        self.flows: tuple[Flow, ...] = tuple(f for f in self.traffic.flows if f.tuple_bytes > 0)
        self.first_of = {c: members[0] for c, members in self.traffic.members.items() if members}
        self.measured_mbit = self.traffic.measured_mbit()
        self._usable = [n.id for n in problem.nodes
                        if not n.draining and self.rooms[n.id].cpu > 0 and self.rooms[n.id].ports > 0]

    # -- evaluation ------------------------------------------------------------------------------------
    def demands(self, node_of: Mapping[str, str], workers: Mapping[str, int] | None = None) -> dict[str, Demand]:
        """Per node used, what the placement asks of it (``workers``: per node, default one per node used)."""
        fixed: dict[str, float] = defaultdict(float)
        variable: dict[str, float] = defaultdict(float)
        for executor, node in node_of.items():
            fixed[node] += self.fixed.get(executor, 0.0)
            variable[node] += self.variable.get(executor, 0.0)
        for node in fixed:
            fixed[node] += self.worker_fixed * (workers.get(node, 1) if workers else 1)
        sent, received = self.link_use(node_of)
        nodes = {str(n) for n in (*fixed, *sent, *received) if n is not None}
        return {n: Demand(fixed.get(n, 0.0), variable.get(n, 0.0), sent.get(n, 0.0), received.get(n, 0.0))
                for n in nodes}

    def factor(self, node_of: Mapping[str, str], workers: Mapping[str, int] | None = None) -> float:
        """The largest factor of the reference rate the placement sustains (0: not even the fixed costs fit)."""
        demands = self.demands(node_of, workers)
        if not demands:
            return UNBOUNDED
        return min(d.factor(self.room(n)) for n, d in demands.items())

    def bottleneck(self, node_of: Mapping[str, str]) -> tuple[str, str]:
        """(node, "cpu" | "sent" | "received") that bounds the placement's factor."""
        demands = self.demands(node_of)
        node = min(demands, key=lambda n: demands[n].factor(self.room(n)))
        d, room = demands[node], self.room(node)
        limits = {"cpu": (room.cpu - d.fixed) / d.variable if d.variable > 0 else UNBOUNDED,
                  "sent": room.link / d.sent if d.sent > 0 else UNBOUNDED,
                  "received": room.link / d.received if d.received > 0 else UNBOUNDED}
        return node, min(limits, key=lambda k: limits[k])

    def room(self, node: str) -> NodeRoom:
        """The node's room (an unknown node offers nothing)."""
        return self.rooms.get(node) or NodeRoom(node, 0.0, 0.0, 0)

    def link_use(self, node_of: Mapping[str, Hashable]) -> tuple[dict[Hashable, float], dict[Hashable, float]]:
        """(sent, received) Mbit/s per node at the reference rate."""
        sent: dict[Hashable, float] = defaultdict(float)
        received: dict[Hashable, float] = defaultdict(float)
        for (source, target), mbit in self.measured_mbit:
            a, b = node_of.get(source), node_of.get(target)
            if a != b:
                sent[a] += mbit
                received[b] += mbit
        if self.flows:
            counts = component_counts(self.component, node_of)
            for flow in self.flows:
                self._flow_use(flow, counts, node_of, sent, received)
        return sent, received

    def _flow_use(self, flow: Flow, counts: Mapping[str, Mapping[Hashable, int]], node_of: Mapping[str, Hashable],
                  sent: dict[Hashable, float], received: dict[Hashable, float]) -> None:
        mbit = flow.share * flow.tuple_bytes * 8e-6
        sources = counts.get(flow.source, {})
        if flow.grouping == "global":
            home = node_of.get(self.first_of.get(flow.target, ""))
            away = 0
            for node, n in sources.items():
                if node != home:
                    sent[node] += mbit * n
                    away += n
            received[home] += mbit * away
            return
        targets = counts.get(flow.target, {})
        for node, n in sources.items():
            sent[node] += mbit * n * (flow.n_target - targets.get(node, 0))
        for node, n in targets.items():
            received[node] += mbit * n * (flow.n_source - sources.get(node, 0))

    # -- what the topology needs ----------------------------------------------------------------------
    @property
    def total_fixed(self) -> float:
        return sum(self.fixed.values())

    @property
    def total_variable(self) -> float:
        return sum(self.variable.values())

    def usable_nodes(self) -> list[str]:
        """Nodes that may take executors: not draining, some CPU and a port."""
        return self._usable


def node_room(node: Node) -> NodeRoom:
    cpu = 0.0 if node.draining else node.effective_capacity
    link = math.inf if node.bandwidth is None else max(0.0, node.bandwidth - node.used_bandwidth)
    return NodeRoom(node.id, cpu, link, len(node.slots))


def component_counts(component_of: Mapping[str, str],
                     node_of: Mapping[str, Hashable]) -> dict[str, dict[Hashable, int]]:
    """Per component, how many of its executors each node holds."""
    counts: dict[str, dict[Hashable, int]] = defaultdict(lambda: defaultdict(int))
    for executor, node in node_of.items():
        counts[component_of[executor]][node] += 1
    return counts
