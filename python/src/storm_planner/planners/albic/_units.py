"""The units of the balance model and where they start.

A unit is one executor (the plain MILP) or one of ALBIC's partitions. Each may go to the
nodes of its domain, shared by every unit with the same choice (Lemma 1 restricts only units
wholly on a node marked for removal), and knows what placing it on a node migrates
(:class:`Migrations`, computed per node on demand). So a model of U units on N nodes holds
O(U + N) objects, and the start placement (LPT over capacity classes) costs O(E · C log N) for
E executors and C distinct node capacities, never U·N.
"""
from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.evaluate import relative_load
from storm_planner.core.problem import Executor, Node, Problem

_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Unit:
    """Executors that share one node in the plan (one executor for the plain MILP).

    ``allowed`` and ``domain`` are shared by every unit with the same choice of nodes, and
    ``moves`` / ``move_cost`` are computed per node on demand (:class:`Migrations`): a model of
    U units on N nodes holds O(U + N) objects, not U·N.
    """

    members: tuple[str, ...]
    load: float
    memory: float
    start: str                         # node in the warm start
    allowed: tuple[str, ...]           # nodes it may be placed on, in the problem's order
    moves: Mapping[str, float]         # node -> members migrating if placed there
    move_cost: Mapping[str, float]     # node -> state cost migrating if placed there
    domain: frozenset[str] = frozenset()  # ``allowed`` as a set (filled from it when not given)

    def __post_init__(self) -> None:
        if not self.domain:
            object.__setattr__(self, "domain", frozenset(self.allowed))


class Migrations(Mapping[str, float]):
    """node -> what the unit's members that run elsewhere weigh (a count, or state sizes) if placed there.

    ``placed`` is the total over members that run somewhere now, ``here`` the part per current node.
    """

    def __init__(self, placed: float, here: Mapping[str, float], domain: frozenset[str]) -> None:
        self.placed, self.here, self._domain = placed, here, domain

    def __getitem__(self, node: str) -> float:
        if node not in self._domain:
            raise KeyError(node)
        return self.placed - self.here.get(node, 0.0)

    def __contains__(self, node: object) -> bool:
        return node in self._domain

    def __iter__(self) -> Iterator[str]:
        return iter(self._domain)

    def __len__(self) -> int:
        return len(self._domain)

    def restricted(self, domain: frozenset[str]) -> Migrations:
        return Migrations(self.placed, self.here, domain)


def start_placement(problem: Problem, node_of: Mapping[str, str] | None = None) -> dict[str, str]:
    """Executor -> node to start from: the current node, else the least utilised remaining node.

    New executors go largest first onto the node with the lowest utilisation
    after placement (LPT), respecting memory limits when nodes declare them.
    """
    placed = dict(node_of) if node_of is not None else {e: s.node for e, s in problem.current.items()}
    known = {n.id for n in problem.nodes}
    placed = {e: n for e, n in placed.items() if n in known}
    active = [n for n in problem.nodes if not n.draining]
    if not active:
        raise InfeasibleError("every node is marked for removal: there is nowhere to place executors")
    load = {n.id: 0.0 for n in problem.nodes}
    memory = {n.id: 0.0 for n in problem.nodes}
    by_id = {e.id: e for e in problem.executors}
    for executor_id, node in placed.items():
        load[node] += by_id[executor_id].load
        memory[node] += by_id[executor_id].memory
    unplaced = sorted((e for e in problem.executors if e.id not in placed), key=lambda e: (-e.load, e.id))
    classes = _CapacityClasses(active, load)
    for executor in unplaced:
        best = classes.least_utilised_after(executor, memory)
        if best is None:
            raise InfeasibleError(
                f"executor {executor.id!r} needs {executor.memory:g} memory and no remaining node has it free"
            )
        placed[executor.id] = best.id
        load[best.id] += executor.load
        memory[best.id] += executor.memory
        classes.update(best, load[best.id])
    return placed


class _CapacityClasses:
    """The remaining nodes grouped by effective capacity, each group a heap by (load, id).

    Within a group, the node with the least load is the least utilised after any addition, so
    the node LPT wants is the best of the groups' tops: O(C log N) per executor for C distinct
    capacities (a few hardware classes), where scanning every node was O(N). Nodes too short of
    memory for the executor are passed over and put back.
    """

    def __init__(self, nodes: Sequence[Node], load: Mapping[str, float]) -> None:
        self.heaps: dict[float, list[tuple[float, str]]] = {}
        self.node = {n.id: n for n in nodes}
        for n in nodes:
            self.heaps.setdefault(n.effective_capacity, []).append((load[n.id], n.id))
        for heap in self.heaps.values():
            heapq.heapify(heap)
        self.load = dict(load)

    def least_utilised_after(self, executor: Executor, memory: Mapping[str, float]) -> Node | None:
        best: Node | None = None
        best_key: tuple[float, str] | None = None
        for capacity, heap in self.heaps.items():
            passed = []
            while heap:
                node_load, node_id = heap[0]
                if node_load != self.load[node_id]:
                    heapq.heappop(heap)  # stale: the node's load changed since
                    continue
                node = self.node[node_id]
                if node.memory is None or memory[node_id] + executor.memory <= node.memory + _TOLERANCE:
                    key = (relative_load(node_load + executor.load, capacity), node_id)
                    if best_key is None or key < best_key:
                        best, best_key = node, key
                    break
                passed.append(heapq.heappop(heap))
            for entry in passed:
                heapq.heappush(heap, entry)
        return best

    def update(self, node: Node, load: float) -> None:
        self.load[node.id] = load
        heapq.heappush(self.heaps[node.effective_capacity], (load, node.id))
