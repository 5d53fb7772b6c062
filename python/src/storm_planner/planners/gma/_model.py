"""Elastic Allocator's resource model, kept up to date while executors are placed one at a time.

The same figures as :mod:`storm_planner.core.utilisation` (CPU load and link use per node,
D_CPU and D_BW, the deviations), but incremental: placing executor ``e`` on node ``k`` changes
node ``k``'s CPU and the link use of ``k`` and of every node holding one of ``e``'s placed peers.

For ``e``, ``P[j]`` is the Mbit/s between ``e`` and its peers already on node ``j``
(:meth:`GmaState.peer_traffic`, from per-component counts: O(streams of e's component × nodes),
or e's measured pairs); with ``T = Σ_j P[j]``, placing ``e`` on ``k`` adds ``P[j]`` to every
``j ≠ k`` and ``T − P[k]`` to ``k``. A pair is counted once, when its second executor is placed,
so after the last placement the links carry exactly what the evaluator computes.

The deviations (population standard deviations of per-node use in percent of capacity) come from
sums Σx and Σx², so a candidate node is scored in O(1) (only its own entry differs between
candidates once ``P`` is added everywhere); every per-node step is a numpy vector operation.
"""
from __future__ import annotations

from collections import defaultdict
from typing import overload

import numpy as np

from storm_planner.core.problem import Executor, Problem
from storm_planner.core.utilisation import bandwidth_room, cpu_room

EPSILON = 1e-9
LIGHT, MODERATE, HEAVY = 0, 1, 2
LEVEL_NAMES = ("light", "moderate", "heavy")


@overload
def _deviation(total: np.ndarray, squares: np.ndarray, count: int) -> np.ndarray: ...


@overload
def _deviation(total: float, squares: float, count: int) -> float: ...


def _deviation(total: float | np.ndarray, squares: float | np.ndarray, count: int) -> float | np.ndarray:
    """Population standard deviation from Σx and Σx² (scalars or arrays of candidates)."""
    if count == 0:
        return np.zeros_like(total) if isinstance(total, np.ndarray) else 0.0
    mean = total / count
    return np.sqrt(np.maximum(0.0, squares / count - mean * mean))


class GmaState:
    """CPU and link use per node while one topology is placed (nodes by index, draining ones excluded)."""

    def __init__(self, problem: Problem, bandwidth_weight: float = 1.0) -> None:
        self.problem = problem
        self.nodes = [n for n in problem.nodes if not n.draining] or list(problem.nodes)
        self.index = {n.id: i for i, n in enumerate(self.nodes)}
        options = problem.options
        size = len(self.nodes)
        self.cpu_capacity = np.array([n.capacity * n.speed for n in self.nodes], dtype=float)
        self.cpu_base = np.array([n.used_cpu * n.speed for n in self.nodes], dtype=float)
        self.cpu_room = np.array([max(0.0, cpu_room(n, options)) for n in self.nodes], dtype=float)
        self.linked = np.array([n.bandwidth is not None for n in self.nodes], dtype=bool)
        self.bw_capacity = np.array([n.bandwidth or 0.0 for n in self.nodes], dtype=float)
        self.bw_scale = np.where(self.linked, 100.0 / np.where(self.linked, self.bw_capacity, 1.0), 0.0)
        self.bw_base = np.array([n.used_bandwidth for n in self.nodes], dtype=float)
        self.bw_room = np.array([max(0.0, bandwidth_room(n, options)) for n in self.nodes], dtype=float)
        self.bw_count = int(self.linked.sum())
        self.load = np.zeros(size)   # this topology's CPU per node
        self.net = np.zeros(size)    # this topology's crossing Mbit/s per node
        self.bandwidth_weight = bandwidth_weight
        self.node_of: dict[str, int] = {}
        self.counts: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(size))
        model = problem.traffic_model
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
    def cpu_shares(self) -> np.ndarray:
        shares: np.ndarray = 100.0 * (self.cpu_base + self.load) / self.cpu_capacity
        return shares

    def bw_shares(self, extra: float | np.ndarray = 0.0) -> np.ndarray:
        """Per node, link use in percent of its capacity (0 for a node without one)."""
        shares: np.ndarray = (self.bw_base + self.net + extra) * self.bw_scale
        return shares

    def cpu_share(self, k: int) -> float:
        return float(self.cpu_shares()[k])

    def bw_share(self, k: int) -> float:
        return float(self.bw_shares()[k])

    def levels(self, light: float, heavy: float) -> np.ndarray:
        """Per node: light / moderate / heavy by the busier of its CPU and link (§IV.D)."""
        share = np.maximum(self.cpu_shares(), self.bw_shares())
        return np.where(share < light, LIGHT, np.where(share < heavy, MODERATE, HEAVY))

    def level(self, k: int, light: float, heavy: float) -> int:
        return int(self.levels(light, heavy)[k])

    def _sums(self) -> None:
        cpu, bw = self.cpu_shares(), self.bw_shares()
        self.cpu_sum, self.cpu_squares = float(cpu.sum()), float((cpu * cpu).sum())
        self.bw_sum, self.bw_squares = float(bw.sum()), float((bw * bw).sum())  # unlinked nodes add 0

    def objective(self) -> float:
        """R_dev of CPU plus ``bandwidth_weight`` × R_dev of bandwidth, in percent points."""
        return float(_deviation(self.cpu_sum, self.cpu_squares, len(self.nodes))
                     + self.bandwidth_weight * _deviation(self.bw_sum, self.bw_squares, self.bw_count))

    # -- one executor ------------------------------------------------------------------------
    def peer_traffic(self, executor: Executor) -> np.ndarray:
        """``P[j]``: Mbit/s between ``executor`` and its peers already placed on node ``j``."""
        peers = np.zeros(len(self.nodes))
        component = executor.component
        for other, mbit, role in self.flows.get(component, ()):
            if role == "to-first":
                home = self.node_of.get(self.first_target[other])
                if home is not None:
                    peers[home] += mbit
                continue
            if role == "first-from" and executor.id != self.first_target[component]:
                continue
            if other in self.counts:
                peers += mbit * self.counts[other]
        for other, mbit in self.pairs.get(executor.id, ()):
            j = self.node_of.get(other)
            if j is not None:
                peers[j] += mbit
        return peers

    def candidates(self, executor: Executor, peers: np.ndarray, nodes: np.ndarray,
                   constrained: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """For the nodes ``nodes`` (indices): the objective after placing ``executor`` on each, and
        whether each keeps D_CPU and D_BW (all True when not ``constrained``)."""
        total = float(peers.sum())
        # The links of the peers' nodes carry P[j] whichever node e goes to, except the chosen one.
        before, middle = self.bw_shares(), self.bw_shares(peers)
        bw_sum = self.bw_sum + float((middle - before).sum())
        bw_squares = self.bw_squares + float((middle * middle - before * before).sum())
        cpu = self.cpu_shares()[nodes]
        cpu_after = cpu + 100.0 * executor.load / self.cpu_capacity[nodes]
        cpu_sum = self.cpu_sum - cpu + cpu_after
        cpu_squares = self.cpu_squares - cpu * cpu + cpu_after * cpu_after
        net_after = self.net[nodes] + total - peers[nodes]
        b_mid = middle[nodes]
        b_after = (self.bw_base[nodes] + net_after) * self.bw_scale[nodes]
        values = (_deviation(cpu_sum, cpu_squares, len(self.nodes))
                  + self.bandwidth_weight * _deviation(bw_sum - b_mid + b_after,
                                                       bw_squares - b_mid * b_mid + b_after * b_after,
                                                       self.bw_count))
        if not constrained:
            return values, np.ones(len(nodes), dtype=bool)
        ok = ~((self.load[nodes] + executor.load > self.cpu_room[nodes] + EPSILON) & (executor.load > 0))
        ok &= ~(self.linked[nodes] & (net_after > self.bw_room[nodes] + EPSILON)
                & (net_after > self.net[nodes] + EPSILON))
        blocked = np.flatnonzero(self.linked & (peers > 0) & (self.net + peers > self.bw_room + EPSILON))
        if len(blocked) > 1:
            ok[:] = False
        elif len(blocked) == 1:
            ok &= nodes == blocked[0]
        return values, ok

    def place(self, executor: Executor, k: int, peers: np.ndarray | None = None) -> None:
        peers = self.peer_traffic(executor) if peers is None else peers
        total = float(peers.sum())
        self.net += peers
        self.net[k] += total - 2.0 * peers[k]
        self.load[k] += executor.load
        self.node_of[executor.id] = k
        self.counts[executor.component][k] += 1
        self._sums()  # O(nodes), vectorised: exact sums, no drift from repeated updates

    def node_ids(self) -> dict[str, str]:
        return {e: self.nodes[k].id for e, k in self.node_of.items()}
