"""Elastic Allocator's resource model, kept up to date while executors are placed one at a time.

The same figures as :mod:`storm_planner.core.utilisation` (CPU load and link use per node,
D_CPU and D_BW, the deviations), but incremental: placing executor ``e`` on node ``k`` changes
node ``k``'s CPU and the link use of ``k`` and of every node holding one of ``e``'s placed peers.

For ``e``, ``P[j]`` is the Mbit/s between ``e`` and its peers already on node ``j``
(:meth:`GmaState.peer_traffic`, from per-component counts: O(streams of e's component × nodes),
or e's measured pairs); with ``T = Σ_j P[j]``, placing ``e`` on ``k`` adds ``P[j]`` to every
``j ≠ k`` and ``T − P[k]`` to ``k``. A pair is counted once, when its second executor is placed,
so after the last placement the links carry exactly what the evaluator computes.

The deviations (population standard deviations of per-node use in percent of capacity) are kept
as running sums Σx and Σx², so a candidate node is scored in O(1) (only its own entry differs
between candidates once ``P`` is added everywhere).
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

from storm_planner.core.problem import Executor, Problem
from storm_planner.core.utilisation import bandwidth_room, cpu_room

EPSILON = 1e-9
LIGHT, MODERATE, HEAVY = 0, 1, 2
LEVEL_NAMES = ("light", "moderate", "heavy")


def _deviation(total: float, squares: float, count: int) -> float:
    if count == 0:
        return 0.0
    mean = total / count
    return math.sqrt(max(0.0, squares / count - mean * mean))


class GmaState:
    """CPU and link use per node while one topology is placed (nodes by index, draining ones excluded)."""

    def __init__(self, problem: Problem, bandwidth_weight: float = 1.0) -> None:
        self.problem = problem
        self.nodes = [n for n in problem.nodes if not n.draining] or list(problem.nodes)
        self.index = {n.id: i for i, n in enumerate(self.nodes)}
        options = problem.options
        self.cpu_capacity = [n.capacity * n.speed for n in self.nodes]
        self.cpu_base = [n.used_cpu * n.speed for n in self.nodes]
        self.cpu_room = [max(0.0, cpu_room(n, options)) for n in self.nodes]
        self.linked = [n.bandwidth is not None for n in self.nodes]
        self.bw_capacity = [n.bandwidth if n.bandwidth is not None else 0.0 for n in self.nodes]
        self.bw_room = [max(0.0, bandwidth_room(n, options)) for n in self.nodes]
        self.load = [0.0] * len(self.nodes)   # this topology's CPU per node
        self.net = [0.0] * len(self.nodes)    # this topology's crossing Mbit/s per node
        self.bandwidth_weight = bandwidth_weight
        self.node_of: dict[str, int] = {}
        self.counts: dict[str, list[int]] = defaultdict(lambda: [0] * len(self.nodes))
        model = problem.traffic_model
        self.component_of = {e.id: e.component for e in problem.executors}
        self.first_target = {c: members[0] for c, members in model.members.items()}
        # Per component, the flows that touch it as (other component, Mbit/s per pair, role).
        self.flows: dict[str, list[tuple[str, float, str]]] = defaultdict(list)
        for flow in model.flows:
            if not flow.tuple_bytes:
                continue
            mbit = flow.share * flow.tuple_bytes * 8e-6
            if flow.grouping == "global":
                self.flows[flow.source].append((flow.target, mbit, "to-first"))
                self.flows[flow.target].append((flow.source, mbit, "first-from"))
            else:
                self.flows[flow.source].append((flow.target, mbit, "to"))
                self.flows[flow.target].append((flow.source, mbit, "from"))
        self.pairs: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for (source, target), mbit in model.measured_mbit():
            if mbit > 0:
                self.pairs[source].append((target, mbit))
                self.pairs[target].append((source, mbit))
        self._sums()

    # -- figures -------------------------------------------------------------------------
    def cpu_share(self, k: int, extra: float = 0.0) -> float:
        return 100.0 * (self.cpu_base[k] + self.load[k] + extra) / self.cpu_capacity[k]

    def bw_share(self, k: int, extra: float = 0.0) -> float:
        n = self.nodes[k]
        return 100.0 * (n.used_bandwidth + self.net[k] + extra) / self.bw_capacity[k] if self.linked[k] else 0.0

    def level(self, k: int, light: float, heavy: float) -> int:
        """Light / moderate / heavy by the busier of the node's CPU and link (§IV.D)."""
        share = max(self.cpu_share(k), self.bw_share(k))
        return LIGHT if share < light else (MODERATE if share < heavy else HEAVY)

    def _sums(self) -> None:
        cpu = [self.cpu_share(k) for k in range(len(self.nodes))]
        bw = [self.bw_share(k) for k in range(len(self.nodes)) if self.linked[k]]
        self.cpu_sum, self.cpu_squares = sum(cpu), sum(x * x for x in cpu)
        self.bw_sum, self.bw_squares, self.bw_count = sum(bw), sum(x * x for x in bw), len(bw)

    def objective(self) -> float:
        """R_dev of CPU plus ``bandwidth_weight`` × R_dev of bandwidth, in percent points."""
        return (_deviation(self.cpu_sum, self.cpu_squares, len(self.nodes))
                + self.bandwidth_weight * _deviation(self.bw_sum, self.bw_squares, self.bw_count))

    # -- one executor ------------------------------------------------------------------------
    def peer_traffic(self, executor: Executor) -> list[float]:
        """``P[j]``: Mbit/s between ``executor`` and its peers already placed on node ``j``."""
        peers = [0.0] * len(self.nodes)
        component = executor.component
        for other, mbit, role in self.flows.get(component, ()):
            if role == "to-first":
                home = self.node_of.get(self.first_target[other])
                if home is not None:
                    peers[home] += mbit
                continue
            if role == "first-from" and executor.id != self.first_target[component]:
                continue
            for j, count in enumerate(self.counts[other]):
                if count:
                    peers[j] += mbit * count
        for other, mbit in self.pairs.get(executor.id, ()):
            j = self.node_of.get(other)
            if j is not None:
                peers[j] += mbit
        return peers

    def candidates(self, executor: Executor, peers: Sequence[float], nodes: Sequence[int],
                   constrained: bool = True) -> list[tuple[float, int]]:
        """(objective after placing ``executor`` on k, k) for every k in ``nodes`` within D_CPU and D_BW
        (all of ``nodes`` when not ``constrained``)."""
        total = sum(peers)
        n = len(self.nodes)
        # The links of the peers' nodes carry P[j] whichever node e goes to, except the chosen one.
        cpu_sum, cpu_squares = self.cpu_sum, self.cpu_squares
        bw_sum, bw_squares = self.bw_sum, self.bw_squares
        blocked = []
        for j, p in enumerate(peers):
            if p and self.linked[j]:
                before, after = self.bw_share(j), self.bw_share(j, p)
                bw_sum += after - before
                bw_squares += after * after - before * before
                if self.net[j] + p > self.bw_room[j] + EPSILON:
                    blocked.append(j)
        result = []
        for k in nodes:
            load_after = self.load[k] + executor.load
            net_after = self.net[k] + total - peers[k]
            if constrained:
                if load_after > self.cpu_room[k] + EPSILON and executor.load > 0:
                    continue
                if self.linked[k] and net_after > self.bw_room[k] + EPSILON and net_after > self.net[k] + EPSILON:
                    continue
                if any(j != k for j in blocked):
                    continue
            c_before, c_after = self.cpu_share(k), self.cpu_share(k, executor.load)
            c_sum, c_squares = cpu_sum - c_before + c_after, cpu_squares - c_before ** 2 + c_after ** 2
            b_sum, b_squares = bw_sum, bw_squares
            if self.linked[k]:
                b_mid, b_after = self.bw_share(k, peers[k]), self.bw_share(k, total - peers[k])
                b_sum += b_after - b_mid
                b_squares += b_after ** 2 - b_mid ** 2
            value = (_deviation(c_sum, c_squares, n)
                     + self.bandwidth_weight * _deviation(b_sum, b_squares, self.bw_count))
            result.append((value, k))
        return result

    def place(self, executor: Executor, k: int, peers: Sequence[float] | None = None) -> None:
        peers = self.peer_traffic(executor) if peers is None else peers
        total = sum(peers)
        for j, p in enumerate(peers):
            if p and j != k:
                self.net[j] += p
        self.net[k] += total - peers[k]
        self.load[k] += executor.load
        self.node_of[executor.id] = k
        self.counts[executor.component][k] += 1
        self._sums()  # O(nodes): exact sums, no drift from repeated updates

    def node_ids(self) -> dict[str, str]:
        return {e: self.nodes[k].id for e, k in self.node_of.items()}
