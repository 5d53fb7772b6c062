"""The group model shared by ``tasklevel``, ``topdown``, ``topdown-ls`` and ``optimal``.

Chatzistergiou & Viglas, "Fast Heuristics for Near-Optimal Task Allocation in
Data Stream Processing over Clusters" (CIKM 2014), model a job as a DAG of
*groups* of tasks (§2.1); every task of one group talks to every task of a
connected group, and a group's processing cost (PC) and a group pair's
intermodule communication cost (IMC) are spread evenly over its tasks (Eq. 1).
In Storm a group is a component, a task is an executor and a node is a
supervisor.

This module builds that model from a :class:`~storm_planner.core.problem.Problem`
and holds the pieces both algorithms of the paper share:

* :func:`job_graph` - groups, group pairs with IMC and relative significance
  (Eq. 2), executor-pair link weights. IMC is the problem's ``traffic`` (measured,
  or derived from stream rates) summed over both directions, because the IMC
  gain of §2.2 counts every ordered pair of collocated tasks.
* §5's relaxations: node capacity is ``Node.effective_capacity`` (capacity
  times speed, i.e. normalised to a reference core), held to the share
  ``planner.max.cpu.utilisation`` allows when it is set (:func:`node_capacities`:
  §2.2's other setting of n.mu, below what a node could take); groups whose executors have
  skewed loads are split by a linear scan over the sorted loads into
  near-uniform sub-groups (:func:`near_uniform_runs`); draining nodes get nothing.
* :class:`NodePool` - the paper's prioritised node list ``N`` (a max-heap on free
  capacity) plus fusion of two nodes' contents (Alg. 1 lines 17-23, Alg. 4
  lines 19-24) through union-find over *bins*, so a fused node can be reused
  empty.
* :func:`allocate_single_tasks` - Alg. 3.
* :func:`complete` - what happens when a greedy pass leaves tasks unplaced:
  §2.2 says "we will need to backtrack"; we keep the greedy placement where it
  still fits and best-fit the rest, then fall back to plain best-fit decreasing,
  then to an exhaustive search for any packing (small problems), and only then
  raise :class:`~storm_planner.core.errors.InfeasibleError`, whose message
  names §5's granularity fix (more, lighter executors) when the total fits.

Everything works on integer task and node indices for speed; :func:`finish_plan`
turns the result back into executor ids and worker slots (one slot per node,
:func:`~storm_planner.core.slots.slots_for_nodes`).
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from storm_planner.core.elements import EXECUTOR_ID, EXECUTOR_LOAD, executors_by_component
from storm_planner.core.errors import InfeasibleError, TooLargeError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Executor, Node, Problem, Traffic
from storm_planner.core.resources import fit_to_resources
from storm_planner.core.slots import slots_for_nodes
from storm_planner.core.system_streams import unknown_tuple_bytes
from storm_planner.core.utilisation import cpu_room
from storm_planner.planners.chatzistergiou._counts import EPSILON, solve_counts

DEFAULT_SKEW_MARGIN = 0.25
PRIORITIES = ("significance", "imc")


@dataclass(frozen=True)
class Group:
    """A (sub-)group of interchangeable tasks: one component, or one near-uniform part of it."""

    index: int
    name: str
    component: str
    tasks: tuple[int, ...]
    task_load: float  # the average task PC of Eq. 1

    @property
    def size(self) -> int:
        return len(self.tasks)

    @property
    def load(self) -> float:
        return self.task_load * len(self.tasks)


@dataclass(frozen=True)
class GroupPair:
    """An edge of the job graph: total IMC between two groups, both directions."""

    first: int
    second: int
    imc: float
    significance: float  # Eq. 2: IMC per unit of the pair's PC
    order: int           # stable tie-break: order of first appearance

    def priority(self, policy: str) -> float:
        return self.significance if policy == "significance" else self.imc


@dataclass(frozen=True)
class JobGraph:
    task_ids: tuple[str, ...]
    task_loads: tuple[float, ...]
    task_group: tuple[int, ...]
    groups: tuple[Group, ...]
    pairs: tuple[GroupPair, ...]
    links: Mapping[tuple[int, int], float] | None  # (i, j), i < j -> IMC of the task pair

    def link_imc(self, pair: GroupPair) -> float:
        """IMC of one task pair of a group pair under Eq. 1."""
        first, second = self.groups[pair.first], self.groups[pair.second]
        return pair.imc / (first.size * second.size)

    def task_links(self) -> Mapping[tuple[int, int], float]:
        """``links``, for the algorithms that need them (taskLevel, the local search)."""
        assert self.links is not None, "job graph built without with_links=True"
        return self.links


# -- building the model --------------------------------------------------------------

def usable_nodes(problem: Problem) -> tuple[Node, ...]:
    """Nodes that may receive executors: all but the draining ones, in problem order."""
    return tuple(n for n in problem.nodes if not n.draining)


def node_capacities(problem: Problem, nodes: Sequence[Node]) -> list[float] | None:
    """Each node's n.mu when ``planner.max.cpu.utilisation`` (D_CPU) is set: the CPU this topology may use
    there within that share (:func:`~storm_planner.core.utilisation.cpu_room`); None when it is unset
    (n.mu is the node's effective capacity, as the paper sets it to minimise IMC).

    §2.2 sets n.mu below a node's whole capacity when the aim is to balance load rather than to fill as
    few nodes as possible. The re-plan of a topology short of CPU asks for that
    (:mod:`storm_planner.adaptation.replan`): packed to 100 % by measured load, topDown kept a quota-held
    node at 93 % (its measured loads) beside one idle node on the end-to-end bench.
    """
    if problem.options.max_cpu_utilisation is None:
        return None
    return [max(0.0, cpu_room(n, problem.options)) for n in nodes]


def require_capacity(problem: Problem, nodes: Sequence[Node]) -> None:
    """Raise :class:`InfeasibleError` when no packing can exist, with the reason."""
    if not nodes:
        raise InfeasibleError("every node is draining: no node may receive executors")
    capacity = sum(n.effective_capacity for n in nodes)
    load = problem.total_load
    if load > capacity + EPSILON:
        raise InfeasibleError(
            f"the topology needs {load:g}% CPU but the {len(nodes)} usable node(s) offer "
            f"{capacity:g}% (capacity x speed, draining nodes excluded)"
        )
    largest = max(n.effective_capacity for n in nodes)
    for executor in problem.executors:
        if executor.load > largest + EPSILON:
            raise InfeasibleError(
                f"executor {executor.id!r} needs {executor.load:g}% CPU but the largest usable "
                f"node offers {largest:g}%"
            )


def near_uniform_runs(executors: Sequence[Executor], margin: float | None) -> list[list[Executor]]:
    """§5: split a group with skewed task costs into sub-groups of near-equal cost.

    One linear scan over the executors sorted by load; a new sub-group starts when
    a load exceeds the smallest load of the current one by more than ``margin``
    (relative). ``margin=None`` keeps the group whole.
    """
    if margin is None or len(executors) < 2:
        return [list(executors)]
    loads = [e.load for e in executors]
    if max(loads) <= min(loads) * (1.0 + margin) + EPSILON:
        return [list(executors)]  # the usual case: one run, no sort needed
    ordered = sorted(executors, key=lambda e: e.load)
    runs: list[list[Executor]] = [[ordered[0]]]
    base = ordered[0].load
    for executor in ordered[1:]:
        if executor.load > base * (1.0 + margin) + EPSILON:
            runs.append([])
            base = executor.load
        runs[-1].append(executor)
    return runs


IMC_UNITS = ("auto", "bytes", "tuples")


def imc_unknown_bytes(problem: Problem, imc_unit: str) -> float | None:
    """How group IMC is weighed: None for tuples/s, else bytes/s with a tuple of unknown size weighing the
    returned bytes (:func:`~storm_planner.core.system_streams.unknown_tuple_bytes`).

    The paper's IMC is a data volume (MB/s, §7.3). ``tuples`` counts tuples; ``bytes`` weighs each tuple by
    its stream's size; ``auto`` does so whenever some stream's size is known (the acker's streams always are
    when the service adds them), and counts tuples when none is (every tuple would weigh the same prior).
    Weighed in tuples, one acker message (two ids, ~60 bytes on the wire) counts as much as a data tuple
    that carries those ids and its values too, and a spout kept with its ackers sends every data tuple across
    a link: before metrics exist the user streams have no size, and ``auto`` used to fall back to tuples
    there, which placed the bench's trends spout with three ackers and away from both counts.
    """
    if imc_unit == "tuples" or (imc_unit == "auto" and not problem.traffic_model.some_sizes_known()):
        return None
    return unknown_tuple_bytes(problem.streams)


def imc_note(unknown_bytes: float | None, imc_unit: str) -> str:
    """The plan's note on how IMC was weighed."""
    if unknown_bytes is None:
        return f"IMC weighed in tuples/s (imc_unit {imc_unit})"
    unknown = "" if unknown_bytes <= 0 else f"; a tuple of unknown size weighs {unknown_bytes:g} B"
    return f"IMC weighed in bytes/s (imc_unit {imc_unit}{unknown})"


def weighed_graphs(problem: Problem, imc_unit: str, skew_margin: float | None, with_links: bool,
                   notes: list[str]) -> tuple[JobGraph, JobGraph | None]:
    """The job graph IMC is weighed on (:func:`imc_unknown_bytes`), and a second one in tuples/s when ``auto``
    weighs some tuples by the prior alone (a stream of unknown size): None otherwise.

    An anchored user tuple is never lighter than an acker message, and the prior puts it a little heavier;
    tuples/s is the other end of that range (a user tuple exactly as heavy). topDown and taskLevel are greedy, and
    on tight nodes a small change of weights reorders their pairs: on the end-to-end bench's Top-K, weighed
    by the prior, topDown fills the spout's node with its counts and their sink before any acker fits there,
    which puts every init, completion and ack on a link. So a planner that gets the second graph plans on
    both and keeps the plan that collocates more IMC by the first (:func:`better_of`). The note says which.
    """
    unknown = imc_unknown_bytes(problem, imc_unit)
    notes.append(imc_note(unknown, imc_unit))
    graph = job_graph(problem, skew_margin, with_links, unknown)
    if imc_unit != "auto" or unknown is None or problem.traffic_model.sizes_known():
        return graph, None
    return graph, job_graph(problem, skew_margin, with_links, None)


def imc_gain(graph: JobGraph, node_of: Sequence[int]) -> float:
    """IMC kept on one node by ``node_of`` (node per task), in ``graph``'s unit: executor links when the graph
    has them, else group pairs under Eq. 1. O(links), or O(tasks + pairs x nodes)."""
    if graph.links is not None:
        return sum(w for (i, j), w in graph.links.items() if node_of[i] == node_of[j])
    per_group: dict[int, dict[int, int]] = {}
    for task, node in enumerate(node_of):
        here = per_group.setdefault(graph.task_group[task], {})
        here[node] = here.get(node, 0) + 1
    gain = 0.0
    for pair in graph.pairs:
        first, second = per_group.get(pair.first, {}), per_group.get(pair.second, {})
        gain += graph.link_imc(pair) * sum(n * second.get(k, 0) for k, n in first.items())
    return gain


def better_of(problem: Problem, graph: JobGraph, nodes: Sequence[Node], weighed: list[int], in_tuples: list[int],
              notes: list[str]) -> list[int]:
    """``weighed`` unless ``in_tuples`` (the plan on the tuples/s graph) collocates more of ``graph``'s IMC.

    Both are compared as they will run: after :func:`~storm_planner.core.resources.fit_to_resources` (which
    :func:`~storm_planner.planners.base.run` applies to the chosen one), since moving executors off a node
    over its declared CPU can part what the planner put together.
    """
    index = {n.id: k for k, n in enumerate(nodes)}

    def fitted_gain(node_of: list[int]) -> float:
        placement = {graph.task_ids[t]: nodes[k].id for t, k in enumerate(node_of)}
        try:
            fitted, _ = fit_to_resources(problem, slots_for_nodes(problem, placement))
        except InfeasibleError:
            return -math.inf
        return imc_gain(graph, [index.get(fitted[e].node, -1 - t) for t, e in enumerate(graph.task_ids)])

    gain, other = fitted_gain(weighed), fitted_gain(in_tuples)
    if other > gain + EPSILON * max(1.0, abs(gain)):
        notes.append(f"the plan weighed in tuples/s keeps more IMC off the network by the bytes weighing "
                     f"({other:g} against {gain:g} B/s): taken")
        return in_tuples
    return weighed


def job_graph(problem: Problem, skew_margin: float | None = DEFAULT_SKEW_MARGIN,
              with_links: bool = False, unknown_bytes: float | None = None) -> JobGraph:
    """The paper's job graph of ``problem``: O(E + streams × groups²) time (+ executor pairs with links).
    ``unknown_bytes`` (:func:`imc_unknown_bytes`): None weighs IMC (groups and links) in tuples/s, a number
    in bytes/s with a tuple of unknown size weighing that many bytes."""
    executors = problem.executors
    task_ids = tuple(map(EXECUTOR_ID, executors))  # C-level passes: this runs for every plan
    index = dict(zip(task_ids, range(len(task_ids))))
    task_loads = tuple(map(EXECUTOR_LOAD, executors))
    task_group = [0] * len(task_ids)

    by_component = executors_by_component(executors)
    groups: list[Group] = []
    for component in _component_order(problem, by_component):
        runs = near_uniform_runs(by_component[component], skew_margin)
        for part, run in enumerate(runs):
            tasks = tuple(sorted(map(index.__getitem__, map(EXECUTOR_ID, run))))  # keep Storm's executor order
            name = component if len(runs) == 1 else f"{component}#{part}"
            group = Group(len(groups), name, component, tasks,
                          sum(map(task_loads.__getitem__, tasks)) / len(tasks))
            for t in tasks:
                task_group[t] = group.index
            groups.append(group)

    group_imc, links = _aggregate_traffic(problem, index, task_group, len(groups), with_links, unknown_bytes)
    pairs: list[GroupPair] = []
    for (gi, gj), imc in group_imc.items():
        if gi == gj:
            continue  # traffic inside one group: no pair to fuse, only the evaluator sees it
        cost = groups[gi].load + groups[gj].load
        significance = imc / cost if cost > EPSILON else math.inf
        pairs.append(GroupPair(gi, gj, imc, significance, len(pairs)))
    return JobGraph(task_ids, task_loads, tuple(task_group), tuple(groups), tuple(pairs),
                    None if links is None else MappingProxyType(links))


def _aggregate_traffic(problem: Problem, index: Mapping[str, int], task_group: Sequence[int],
                       group_count: int, with_links: bool, unknown_bytes: float | None = None,
                       ) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], float] | None]:
    """Sum traffic per unordered group pair (and, on request, per unordered executor pair).

    Group traffic comes from the traffic model per component (O(streams ×
    groups²) when the streams carry it), so topDown never sees executor pairs;
    ``with_links`` (taskLevel, the local search) builds them, within the
    model's size limit. Pair order is the order of first appearance in the
    executor traffic, which keeps tie-breaking stable. ``unknown_bytes``: see :func:`job_graph`.
    """
    model = problem.traffic_model
    by_bytes = unknown_bytes is not None
    group_of = {executor: task_group[i] for executor, i in index.items()}
    group_imc: dict[tuple[int, int], float] = {}
    for (gi, gj), rate in model.group_rates(group_of, by_bytes, unknown_bytes or 0.0).items():
        key = (gi, gj) if gi <= gj else (gj, gi)
        group_imc[key] = group_imc.get(key, 0.0) + rate
    links = None
    if with_links:
        pairs = model.executor_pairs() if not by_bytes else model.executor_pairs_in_bytes(unknown_bytes or 0.0)
        links = _executor_links(pairs, index, len(task_group))
    return group_imc, links


def _executor_links(traffic: Sequence[Traffic], index: Mapping[str, int],
                    task_count: int) -> dict[tuple[int, int], float]:
    """Rate per unordered executor pair (both directions summed), self-pairs and zero rates dropped."""
    count = len(traffic)
    source = np.fromiter((index[t.source] for t in traffic), dtype=np.int64, count=count)
    target = np.fromiter((index[t.target] for t in traffic), dtype=np.int64, count=count)
    rate = np.fromiter((t.rate for t in traffic), dtype=np.float64, count=count)
    keep = (source != target) & (rate > 0)
    source, target, rate = source[keep], target[keep], rate[keep]
    low, high = np.minimum(source, target), np.maximum(source, target)
    link_keys, link_inverse = np.unique(low * task_count + high, return_inverse=True)
    link_sums = np.bincount(link_inverse, weights=rate, minlength=len(link_keys))
    return {divmod(int(key), task_count): float(w) for key, w in zip(link_keys, link_sums)}


def _component_order(problem: Problem, by_component: Mapping[str, list[Any]]) -> list[str]:
    declared = [c.id for c in problem.components if c.id in by_component]
    seen = set(declared)
    return declared + [c for c in by_component if c not in seen]


_Item = TypeVar("_Item")


def prioritised(pairs: Iterable[_Item], key: Callable[[_Item], float]) -> list[_Item]:
    """Highest priority first; ties keep the input order (the paper leaves them open)."""
    return sorted(pairs, key=lambda p: -key(p))


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
    ``capacities`` (:func:`node_capacities`, D_CPU) are tried first; when nothing packs within them the
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


def finish_plan(problem: Problem, algorithm: str, graph: JobGraph, nodes: Sequence[Node],
                node_of: Sequence[int], notes: Sequence[str] = ()) -> Plan:
    """Executor -> node index to a :class:`Plan` (one worker slot per used node)."""
    placement = {graph.task_ids[t]: nodes[k].id for t, k in enumerate(node_of)}
    notes = list(notes)
    if problem.current and (problem.options.max_migrations is not None
                            or problem.options.max_migration_cost is not None):
        # The paper reallocates from scratch after a drain-out (§2.2, "State migration").
        notes.append(f"{algorithm} plans from scratch: the migration budget is not a constraint here")
    return Plan(algorithm=algorithm, assignments=slots_for_nodes(problem, placement),
                notes=tuple(notes))
