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
* nodes and packing (:class:`NodePool`, Alg. 3, completing a greedy pass): :mod:`._pool`.

Everything works on integer task and node indices for speed; :func:`finish_plan`
turns the result back into executor ids and worker slots (one slot per node,
:func:`~storm_planner.core.slots.slots_for_nodes`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from storm_planner.core.elements import EXECUTOR_ID, EXECUTOR_LOAD, executors_by_component
from storm_planner.core.errors import InfeasibleError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Executor, Node, Problem, Traffic
from storm_planner.core.resources import fit_to_resources
from storm_planner.core.slots import slots_for_nodes
from storm_planner.core.system_streams import unknown_tuple_bytes
from storm_planner.core.utilisation import cpu_room
from storm_planner.planners.topdown._counts import EPSILON

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
