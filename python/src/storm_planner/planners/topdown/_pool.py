"""Nodes and packing for the Chatzistergiou & Viglas planners (``tasklevel``, ``topdown``, ``topdown-ls``).

Chatzistergiou & Viglas, "Fast Heuristics for Near-Optimal Task Allocation in Data Stream Processing over
Clusters" (CIKM 2014):

* :class:`NodePool` - the paper's prioritised node list ``N`` (a max-heap on free capacity) plus fusion of
  two nodes' contents (Alg. 1 lines 17-23, Alg. 4 lines 19-24) through union-find over *bins*, so a fused
  node can be reused empty; :class:`Placement` - which bin holds each task.
* :func:`allocate_single_tasks` - Alg. 3.
* :func:`complete` - what happens when a greedy pass leaves tasks unplaced: §2.2 says "we will need to
  backtrack"; we keep the greedy placement where it still fits and best-fit the rest, then fall back to
  plain best-fit decreasing, then to an exhaustive search for any packing (small problems), and only then
  raise :class:`~storm_planner.core.errors.InfeasibleError`, whose message names §5's granularity fix
  (more, lighter executors) when the total fits.

The group model these work on (tasks and nodes as integer indices) is :mod:`._groups`.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

import numpy as np

from storm_planner.core.errors import InfeasibleError, TooLargeError
from storm_planner.core.problem import Node
from storm_planner.planners.topdown._counts import EPSILON, solve_counts


def count_fitting(spare: float, task_load: float) -> int:
    """How many tasks of ``task_load`` fit in ``spare`` capacity (k of Alg. 5 line 9)."""
    if task_load <= EPSILON:
        return 1 << 62
    return max(0, int(math.floor(spare / task_load + EPSILON)))


# -- nodes ---------------------------------------------------------------------------

class NodePool:
    """The prioritised node list ``N`` of Alg. 1 and 4, with node fusion.

    ``free[k]`` is node k's spare capacity ``n_k.mu``; :meth:`top` is the node with
    the most (ties: problem order). Tasks are placed into *bins*; a node holds one
    open bin. Fusing node a into node b merges a's bin into b's (union-find) and
    gives a a fresh empty bin, so a fusion costs O(1) instead of a pass over
    every task (Alg. 1 line 23).
    """

    def __init__(self, nodes: Sequence[Node], capacities: Sequence[float] | None = None) -> None:
        self.nodes = tuple(nodes)
        self.initial = [n.effective_capacity for n in nodes] if capacities is None else list(capacities)
        self.free = list(self.initial)
        self._heap = [(-free, k) for k, free in enumerate(self.free)]
        heapq.heapify(self._heap)
        self._parent = list(range(len(nodes)))  # bin -> parent bin
        self._bin_node = list(range(len(nodes)))  # root bin -> node
        self.open_bin = list(range(len(nodes)))  # node -> bin receiving its tasks

    def __len__(self) -> int:
        return len(self.free)

    def top(self) -> int:
        heap = self._heap
        while -heap[0][0] != self.free[heap[0][1]]:
            heapq.heappop(heap)  # stale entry left behind by a capacity change
        return heap[0][1]

    def fits(self, node: int, load: float) -> bool:
        return load <= self.free[node] + EPSILON

    def how_many_fit(self, node: int, task_load: float) -> int:
        return count_fitting(self.free[node], task_load)

    def _set_free(self, node: int, free: float) -> None:
        self.free[node] = free
        heapq.heappush(self._heap, (-free, node))

    def take(self, node: int, load: float) -> int:
        """Use ``load`` of ``node``; returns the bin the placed tasks go to."""
        self._set_free(node, self.free[node] - load)
        return self.open_bin[node]

    def used(self, node: int) -> float:
        return self.initial[node] - self.free[node]

    def node_of_bin(self, bin_id: int) -> int:
        parent = self._parent
        root = bin_id
        while parent[root] != root:
            root = parent[root]
        while parent[bin_id] != root:  # path compression
            parent[bin_id], bin_id = root, parent[bin_id]
        return self._bin_node[root]

    def try_fuse(self, a: int, b: int) -> bool:
        """Alg. 1 lines 18-23 / Alg. 4 lines 20-24: move everything on one node to the other.

        The node with the larger initial capacity receives the other's tasks, if its
        spare capacity holds their load. Merging two nodes' contents never lowers
        the IMC gain: every pair collocated before stays collocated.
        """
        if a == b:
            return False
        target, source = (a, b) if self.initial[a] > self.initial[b] else (b, a)
        moved = self.used(source)
        if moved > self.free[target] + EPSILON:
            return False
        source_bin = self.open_bin[source]
        self._parent[source_bin] = self.open_bin[target]
        fresh = len(self._parent)
        self._parent.append(fresh)
        self._bin_node.append(source)
        self.open_bin[source] = fresh
        self._set_free(target, self.free[target] - moved)
        self._set_free(source, self.initial[source])
        return True


# -- placement helpers ---------------------------------------------------------------

class Placement:
    """Task -> bin, with the node of each task resolved through the pool's fusions."""

    def __init__(self, pool: NodePool, task_count: int) -> None:
        self.pool = pool
        self.bin: list[int] = [-1] * task_count

    def place(self, tasks: Iterable[int], bin_id: int) -> None:
        for t in tasks:
            self.bin[t] = bin_id

    def is_placed(self, task: int) -> bool:
        return self.bin[task] >= 0

    def node(self, task: int) -> int | None:
        b = self.bin[task]
        return None if b < 0 else self.pool.node_of_bin(b)

    def nodes(self) -> list[int]:
        """Final node index of every task (-1 when unplaced)."""
        resolve = self.pool.node_of_bin
        cache: dict[int, int] = {}
        out = []
        for b in self.bin:
            if b < 0:
                out.append(-1)
                continue
            node = cache.get(b)
            if node is None:
                node = cache[b] = resolve(b)
            out.append(node)
        return out


def allocate_single_tasks(tasks: Iterable[int], loads: Sequence[float], pool: NodePool,
                          placement: Placement) -> list[int]:
    """Alg. 3: heaviest task first, each onto the node with the most spare capacity.

    Returns the tasks that did not fit. Unlike the pseudo-code, a task that does
    not fit does not stop the loop: lighter ones may still fit, and the
    leftovers go to :func:`repack` rather than to failure.
    """
    pending = sorted({t for t in tasks if not placement.is_placed(t)}, key=lambda t: (-loads[t], t))
    leftovers = []
    for task in pending:
        node = pool.top()
        if pool.fits(node, loads[task]):
            placement.place((task,), pool.take(node, loads[task]))
        else:
            leftovers.append(task)
    return leftovers


def repack(node_of: list[int], loads: Sequence[float], capacities: Sequence[float]) -> list[int]:
    """Place every task, keeping ``node_of`` where it still fits (first pass) or not (second).

    Heaviest tasks first; a task keeps its node when it fits there, otherwise goes
    to the fullest node that still holds it (best fit). When that fails the
    greedy placement is dropped for plain best-fit decreasing. Raises
    :class:`InfeasibleError` when neither packs every task (bin packing is
    NP-hard: this is not a proof that no packing exists, and the message says so).
    """
    order = sorted(range(len(loads)), key=lambda t: (-loads[t], t))
    for keep in (True, False):
        free = list(capacities)
        result = [-1] * len(loads)
        for task in order:
            preferred = node_of[task] if keep else -1
            if preferred >= 0 and loads[task] <= free[preferred] + EPSILON:
                chosen = preferred
            else:
                chosen = _best_fit(free, loads[task])
                if chosen < 0:
                    break
            result[task] = chosen
            free[chosen] -= loads[task]
        else:
            return result
    unplaced = [t for t in order if result[t] < 0]
    raise InfeasibleError(
        f"no packing found: {sum(loads):g}% CPU over {len(capacities)} node(s) of "
        f"{sum(capacities):g}% total; the executors are too coarse for the nodes' capacities "
        f"(first one left over needs {loads[unplaced[0]]:g}%)"
    )


def _best_fit(free: Sequence[float], load: float) -> int:
    best, best_free = -1, math.inf
    for node, spare in enumerate(free):
        if load <= spare + EPSILON and spare < best_free:
            best, best_free = node, spare
    return best


def complete(node_of: list[int], loads: Sequence[float], nodes: Sequence[Node],
             notes: list[str], capacities: Sequence[float] | None = None) -> list[int]:
    """Repack when the greedy pass left tasks unplaced, with a note saying how.

    Best fit first (:func:`repack`); when that fails too, an exhaustive search
    over how many executors of each load go to each node settles it on small
    problems, so :class:`InfeasibleError` then means that no packing exists.
    ``capacities`` (:func:`._groups.node_capacities`, D_CPU) are tried first; when nothing packs within them the
    nodes' whole capacities are used, and a note says so: D_CPU is a target, never a reason to refuse.
    """
    unplaced = sum(1 for n in node_of if n < 0)
    if not unplaced:
        return node_of
    whole = [n.effective_capacity for n in nodes]
    result, how = None, ""
    if capacities is not None:
        try:
            result, how = repack(node_of, loads, capacities), "best fit within planner.max.cpu.utilisation"
        except InfeasibleError:
            notes.append("no packing within planner.max.cpu.utilisation: packed within the nodes' whole CPU")
    if result is None:
        try:
            result, how = repack(node_of, loads, whole), "best fit"
        except InfeasibleError as error:
            result, how = exact_packing(loads, whole, error), "exhaustive packing"
    moved = sum(1 for before, after in zip(node_of, result) if before >= 0 and before != after)
    notes.append(f"greedy pass left {unplaced} executor(s) unplaced; repacked ({how}), "
                 f"moving {moved} placed executor(s)")
    return result


def exact_packing(loads: Sequence[float], capacities: Sequence[float],
                  heuristic_failure: InfeasibleError) -> list[int]:
    """Any packing of the tasks into the nodes, found by exhaustive search over counts.

    Raises :class:`InfeasibleError` naming the granularity fix of §5 when none
    exists, and re-raises ``heuristic_failure`` when the search would be too large.
    """
    by_load: dict[float, list[int]] = {}
    for task, load in enumerate(loads):
        by_load.setdefault(round(load, 9), []).append(task)
    classes = list(by_load.values())
    try:
        _, contents = solve_counts([len(c) for c in classes], [loads[c[0]] for c in classes],
                                   np.zeros((len(classes), len(classes))), capacities,
                                   max_states=200_000, max_work=50_000_000)
    except TooLargeError:
        raise heuristic_failure from None
    except InfeasibleError:
        raise InfeasibleError(
            f"the executors cannot be packed: {sum(loads):g}% CPU fits the {len(capacities)} node(s)' "
            f"{sum(capacities):g}% in total, but not executor by executor (they are too coarse; "
            f"raise the components' parallelism so each executor is lighter, or add capacity)"
        ) from None
    result = [-1] * len(loads)
    taken = [0] * len(classes)
    for node, counts in enumerate(contents):
        for c, count in enumerate(counts):
            for task in classes[c][taken[c]:taken[c] + int(count)]:
                result[task] = node
            taken[c] += int(count)
    return result
