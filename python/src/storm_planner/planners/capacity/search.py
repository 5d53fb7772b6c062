"""The highest sustainable factor by local search, for problems too large for the exact model.

A placement is improved where it is tightest: every executor on the bottleneck node (the one whose CPU
or link bounds the factor, :mod:`.model`) is tried on every other node, and every swap of one of them
with an executor elsewhere; the best change that raises the placement's score is taken, until none
does. The score is leximin-like: the least node factor first, then how few nodes share it, then the
next least, so a tie at the bottom still moves toward one that can be lifted. Random kicks (a few
executors of the bottleneck moved at random) restart the descent from the best placement found while
time allows; the seed makes it repeatable.

The start is a greedy placement (heaviest executors first, each where it leaves its node the highest
factor, within ``topology.workers`` nodes) or a placement given (the current one, the exact model's).

Every change is evaluated incrementally (:class:`Placement`): moving one executor touches its two
nodes' CPU and, per stream of its component, the two nodes' link use (a ``global`` stream's home, or a
measured pair's partner, where the executor is one). One step costs O(executors on the bottleneck ×
nodes × (streams per component + nodes)); nothing is quadratic in the executors.
"""
from __future__ import annotations

import heapq
import math
import random
import time
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping

from storm_planner.core.traffic import Flow
from storm_planner.planners.capacity.model import UNBOUNDED, CapacityModel, Demand

Score = tuple[float, int, float]
# Swaps tried per other node: its lightest executors (O(bottleneck × nodes × this) a step).
SWAP_CANDIDATES = 8
# Nodes with the most CPU left that greedy tries for each executor (besides its partners' nodes).
GREEDY_CANDIDATES = 8


class Placement:
    """Executors on nodes, with each node's demand and factor kept up to date under moves."""

    def __init__(self, model: CapacityModel, node_of: Mapping[str, str | None]) -> None:
        self.model = model
        self._factor: dict[Hashable, float] = {}
        self.node_of: dict[str, str | None] = dict(node_of)
        self.fixed: dict[Hashable, float] = defaultdict(float)
        self.variable: dict[Hashable, float] = defaultdict(float)
        self.members: dict[Hashable, set[str]] = defaultdict(set)
        self.counts: dict[str, dict[Hashable, int]] = defaultdict(lambda: defaultdict(int))
        self.placed: dict[str, int] = defaultdict(int)   # per component, its executors on some node
        for executor, node in self.node_of.items():
            self._add(executor, node)
        self.flows_of: dict[str, list[int]] = defaultdict(list)
        for i, flow in enumerate(model.flows):
            self.flows_of[flow.source].append(i)
            if flow.target != flow.source:
                self.flows_of[flow.target].append(i)
        self.pairs_of: dict[str, list[int]] = defaultdict(list)
        for i, ((a, b), _) in enumerate(model.measured_mbit):
            self.pairs_of[a].append(i)
            self.pairs_of[b].append(i)
        self.sent: dict[Hashable, float] = defaultdict(float)
        self.received: dict[Hashable, float] = defaultdict(float)
        # Per flow, per node: (sent, received) Mbit/s the flow adds there; per measured pair likewise.
        self.flow_use: list[dict[Hashable, tuple[float, float]]] = [{} for _ in model.flows]
        self.pair_use: list[dict[Hashable, tuple[float, float]]] = [{} for _ in model.measured_mbit]
        for i in range(len(model.flows)):
            self._refresh_flow(i, None)
        for i in range(len(model.measured_mbit)):
            self._refresh_pair(i)

    # -- bookkeeping --------------------------------------------------------------------------------
    def _add(self, executor: str, node: Hashable, sign: int = 1) -> None:
        if node is None:
            return
        model = self.model
        self.fixed[node] += sign * model.fixed[executor]
        self.variable[node] += sign * model.variable[executor]
        self.counts[model.component[executor]][node] += sign
        self.placed[model.component[executor]] += sign
        (self.members[node].add if sign > 0 else self.members[node].discard)(executor)

    def _flow_at(self, flow: Flow, node: Hashable) -> tuple[float, float]:
        """(sent, received) of one flow at one node, from the counts there (uniform groupings)."""
        mbit = flow.share * flow.tuple_bytes * 8e-6
        sources, targets = self.counts[flow.source].get(node, 0), self.counts[flow.target].get(node, 0)
        return (mbit * sources * (flow.n_target - targets), mbit * targets * (flow.n_source - sources))

    def _global_use(self, flow: Flow) -> dict[Hashable, tuple[float, float]]:
        mbit = flow.share * flow.tuple_bytes * 8e-6
        home = self.node_of.get(self.model.first_of.get(flow.target, ""))
        use: dict[Hashable, tuple[float, float]] = {}
        away = 0
        for node, n in self.counts[flow.source].items():
            if n and node != home and node is not None:
                use[node] = (mbit * n, 0.0)
                away += n
        if away and home is not None:
            out, _ = use.get(home, (0.0, 0.0))
            use[home] = (out, mbit * away)
        return use

    def _set_use(self, table: dict[Hashable, tuple[float, float]], node: Hashable, value: tuple[float, float]) -> None:
        old = table.get(node, (0.0, 0.0))
        self.sent[node] += value[0] - old[0]
        self.received[node] += value[1] - old[1]
        table[node] = value
        self._factor.pop(node, None)

    def _refresh_flow(self, index: int, nodes: Iterable[Hashable] | None, moved: str | None = None) -> None:
        """Bring one flow's use up to date at ``nodes`` (None: everywhere); ``moved``: the executor whose
        move made it stale (a ``global`` stream's target executor moving changes its use everywhere)."""
        flow, table = self.model.flows[index], self.flow_use[index]
        if flow.grouping == "global":
            first = self.model.first_of.get(flow.target)
            if nodes is None or moved == first:
                fresh = self._global_use(flow)
                for node in set(table) | set(fresh):
                    self._set_use(table, node, fresh.get(node, (0.0, 0.0)))
                return
            home = self.node_of.get(first or "")
            for node in {*nodes, home}:
                if node is not None:
                    self._set_use(table, node, self._global_at(flow, node, home))
            return
        places = nodes if nodes is not None else (set(self.counts[flow.source]) | set(self.counts[flow.target]))
        for node in places:
            if node is not None:
                self._set_use(table, node, self._flow_at(flow, node))

    def _global_at(self, flow: Flow, node: Hashable, home: Hashable) -> tuple[float, float]:
        """(sent, received) of a ``global`` stream at one node: its sources there send unless it is home;
        home receives from every placed source elsewhere."""
        mbit = flow.share * flow.tuple_bytes * 8e-6
        here = self.counts[flow.source].get(node, 0)
        if node != home:
            return (mbit * here, 0.0)
        return (0.0, mbit * (self.placed[flow.source] - here))

    def _refresh_pair(self, index: int) -> None:
        (a, b), mbit = self.model.measured_mbit[index]
        table = self.pair_use[index]
        na, nb = self.node_of.get(a), self.node_of.get(b)
        fresh: dict[Hashable, tuple[float, float]] = {}
        if na != nb:
            if na is not None:
                fresh[na] = (mbit, 0.0)
            if nb is not None:
                fresh[nb] = (fresh.get(nb, (0.0, 0.0))[0], mbit)
        for node in set(table) | set(fresh):
            self._set_use(table, node, fresh.get(node, (0.0, 0.0)))

    def move(self, executor: str, node: str | None) -> str | None:
        """Put ``executor`` on ``node``; returns where it was. O(streams of its component + pairs of it),
        O(nodes) more for a ``global`` stream."""
        before = self.node_of.get(executor)
        if before == node:
            return before
        self._add(executor, before, -1)
        self.node_of[executor] = node
        self._add(executor, node, +1)
        self._factor.pop(before, None)
        self._factor.pop(node, None)
        for i in self.flows_of.get(self.model.component[executor], ()):
            self._refresh_flow(i, (before, node), executor)
        for i in self.pairs_of.get(executor, ()):
            self._refresh_pair(i)
        return before

    # -- figures ------------------------------------------------------------------------------------
    def used_nodes(self) -> set[Hashable]:
        return {n for n, members in self.members.items() if members}

    def node_factor(self, node: Hashable) -> float:
        cached = self._factor.get(node)
        if cached is not None:
            return cached
        members = bool(self.members.get(node))
        out, into = max(0.0, self.sent.get(node, 0.0)), max(0.0, self.received.get(node, 0.0))
        if not members and out <= 1e-12 and into <= 1e-12:
            value = UNBOUNDED
        else:
            demand = Demand(self.fixed[node] + (self.model.worker_fixed if members else 0.0),
                            self.variable[node], out, into)
            value = demand.factor(self.model.room(str(node)))
        self._factor[node] = value
        return value

    def score(self) -> Score:
        factors = [self.node_factor(n) for n in self.model.usable_nodes()]
        if not factors:
            return (0.0, 0, 0.0)
        least = min(factors)
        edge = least * (1 + 1e-9) + 1e-12
        ties = sum(1 for f in factors if f <= edge)
        following = min((f for f in factors if f > edge), default=least)
        return (least, -ties, following)

    def factor(self) -> float:
        return self.score()[0]


def greedy(model: CapacityModel, workers: int | None = None) -> dict[str, str]:
    """Heaviest executors first, each on the node that keeps the highest factor, within ``workers`` nodes.

    Each executor is tried on the ``GREEDY_CANDIDATES`` nodes with the most CPU left and on the nodes that
    hold its component's stream partners: O(executors × (candidates + partners' nodes) × streams)."""
    nodes = model.usable_nodes()
    placement = Placement(model, dict.fromkeys(model.component))
    order = sorted(model.component, key=lambda e: (-(model.fixed[e] + model.variable[e]), e))
    for executor in order:
        used = placement.used_nodes()
        allowed = [n for n in nodes if workers is None or len(used) < workers or n in used] or nodes
        best_node, best_value = allowed[0], -math.inf
        for node in _greedy_candidates(placement, executor, allowed):
            placement.move(executor, node)
            value = placement.node_factor(node)
            placement.move(executor, None)
            if value > best_value + 1e-12:
                best_node, best_value = node, value
        placement.move(executor, best_node)
    return {e: str(n) for e, n in placement.node_of.items()}


def _greedy_candidates(placement: Placement, executor: str, allowed: list[str]) -> list[str]:
    if len(allowed) <= GREEDY_CANDIDATES:
        return allowed
    model = placement.model

    def left(node: str) -> float:
        return model.room(node).cpu - placement.fixed[node] - placement.variable[node]
    roomy = heapq.nlargest(GREEDY_CANDIDATES, allowed, key=lambda n: (left(n), n))
    partners = {p for i in placement.flows_of.get(model.component[executor], ())
                for c in (model.flows[i].source, model.flows[i].target)
                for p, count in placement.counts[c].items() if count and p is not None}
    return sorted(set(roomy) | {str(p) for p in partners if p in set(allowed)})


def improve(model: CapacityModel, start: Mapping[str, str], workers: int | None = None, seed: int = 1,
            time_limit_s: float = 2.0, max_steps: int = 10_000, patience: int = 20) -> dict[str, str]:
    """Local search from ``start`` (see the module docstring); the best placement found. It stops at the
    time limit, after ``max_steps`` changes, or after ``patience`` kicks in a row found nothing better."""
    deadline = time.monotonic() + time_limit_s
    rng = random.Random(seed)
    placement = Placement(model, start)
    best, best_score = dict(start), placement.score()
    steps, idle = 0, 0
    while time.monotonic() < deadline and steps < max_steps and idle <= patience:
        steps += _descend(placement, workers, deadline, max_steps - steps)
        score = placement.score()
        if score > best_score:
            best, best_score, idle = {e: str(n) for e, n in placement.node_of.items()}, score, 0
        else:
            idle += 1
            placement = Placement(model, best)
        if not _kick(placement, rng, workers):
            break
    return best


def _descend(placement: Placement, workers: int | None, deadline: float, budget: int) -> int:
    """Take the best improving move or swap off the bottleneck until none improves; returns the steps."""
    steps = 0
    nodes = placement.model.usable_nodes()
    while steps < budget and time.monotonic() < deadline:
        current = placement.score()
        change = _best_change(placement, nodes, workers, current, deadline)
        if change is None:
            return steps
        for executor, node in change:
            placement.move(executor, node)
        steps += 1
    return steps


def _bottleneck(placement: Placement, nodes: list[str]) -> str:
    return min(nodes, key=lambda n: (placement.node_factor(n), n))


def _best_change(placement: Placement, nodes: list[str], workers: int | None, current: Score,
                 deadline: float) -> list[tuple[str, str]] | None:
    tight = _bottleneck(placement, nodes)
    used = placement.used_nodes()
    best: list[tuple[str, str]] | None = None
    best_score = current
    for executor in sorted(placement.members.get(tight, ())):
        if time.monotonic() > deadline:
            break
        for node in nodes:
            if node == tight or (workers is not None and node not in used and len(used) >= workers
                                 and len(placement.members[tight]) > 1):
                continue
            placement.move(executor, node)
            score = placement.score()
            if score > best_score:
                best, best_score = [(executor, node)], score
            for other in _lightest(placement, node, SWAP_CANDIDATES):
                if other == executor:
                    continue
                placement.move(other, tight)
                score = placement.score()
                if score > best_score:
                    best, best_score = [(executor, node), (other, tight)], score
                placement.move(other, node)
            placement.move(executor, tight)
    return best


def _lightest(placement: Placement, node: str, count: int) -> list[str]:
    """The ``count`` executors of ``node`` with the least demand: the ones worth trading for a heavier one."""
    model = placement.model
    members = placement.members.get(node, ())
    return sorted(members, key=lambda e: (model.fixed[e] + model.variable[e], e))[:count]


def _kick(placement: Placement, rng: random.Random, workers: int | None) -> bool:
    """Move up to two executors of the bottleneck node to random used nodes; False when nothing can move."""
    nodes = placement.model.usable_nodes()
    tight = _bottleneck(placement, nodes)
    members = sorted(placement.members.get(tight, ()))
    used = sorted(map(str, placement.used_nodes()))
    # Within topology.workers: a kick may open a node only while the bound leaves room for one.
    pool = nodes if workers is None or len(used) < workers else used
    targets = [n for n in (used if workers else pool) if n != tight] or [n for n in pool if n != tight]
    if not members or not targets:
        return False
    for executor in rng.sample(members, min(2, len(members))):
        placement.move(executor, rng.choice(targets))
    return True
