"""``topdown``: group-aware top-down task allocation.

Chatzistergiou & Viglas, "Fast Heuristics for Near-Optimal Task Allocation in
Data Stream Processing over Clusters", CIKM 2014, §4: Algorithm 4 (topDown) with
Algorithm 5 (allocateGroupPair), lazy resolveSplits, and Algorithm 3
(allocateSingleTasks); §5's relaxations through :mod:`._groups`.

Group pairs (edges of the component graph) are taken in decreasing *relative
significance* s = IMC / (PC_i + PC_j) (Eq. 2; ``priority="imc"`` orders by IMC
instead, the TD-IMC variant of Figure 8). For each pair:

* neither group fully placed (mode *both*): put the whole pair on the node with
  the most spare capacity; if it does not fit, split it into balanced slices
  (one task of the smaller group per floor(|v_j|/|v_i|) tasks of the larger),
  place as many slices as fit there and repeat with the rest on the next node;
  when one side runs out the other side's tasks become single tasks;
* one group fully placed (mode *second*): put as many tasks of the other group as
  fit on the nodes hosting the placed one, best expected IMC gain first; the
  rest become single tasks;
* both fully placed, each on one node: fuse the two nodes if one can take the
  other's whole load.

Single tasks are placed last, heaviest first, on the node with the most spare
capacity (Alg. 3).

Reconstructions (the extracted text lost the formulas' symbols):

* Alg. 5 line 15 says "slice v_i and v_j at index k", but the minimum balanced
  split sigma = PC(t_i) + PC(t_j) * floor(|v_j|/|v_i|) holds one task of v_i and
  floor(|v_j|/|v_i|) tasks of v_j, and Example 2 puts 5 tasks of v_1 with 10 of
  v_2 on each node: so u_i takes k tasks and u_j takes k * floor(|v_j|/|v_i|).
* When even one balanced split does not fit the emptiest node (k = 0) the
  pseudo-code would recurse forever; we place one task of the smaller group with
  as many of the larger as fit, and give up on the pair (single tasks) when not
  even one task of each fits.
* Mode *second*: line 10 sets w_i to the empty set, which would stop after the
  first node, while the prose says "collocate as many tasks as possible from
  u_j to nodes hosting tasks from u_i" and line 14 prioritises those nodes on
  expected IMC gain. We walk them in that order: expected gain of node n =
  (tasks of u_i on n) x (tasks of u_j that fit on n) x per-link IMC.
* Fusion (lines 19-24) frees the whole of n_j's capacity, so all of n_j's tasks
  move (as in Alg. 1 line 23), not only u_j; line 21's n_i.mu^f is n_j.mu^f.
* A task pushed to R stays unplaced in its group, so a later pair holding that
  group still sees it as the group's unallocated part (resolveSplits), as the
  footnote of §3.2 describes for taskLevel.

Complexity (§4): O(|V| log |V| + |N| + |T| log |T|) for |V| groups, |N| nodes
and |T| tasks, plus O(traffic) to build the group graph from executor traffic.
"""
from __future__ import annotations

from collections.abc import Sequence

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Node, Problem
from storm_planner.planners._parameters import checked, to_real, to_text
from storm_planner.planners.base import Planner
from storm_planner.planners.topdown._groups import (
    DEFAULT_SKEW_MARGIN,
    IMC_UNITS,
    PRIORITIES,
    JobGraph,
    better_of,
    finish_plan,
    node_capacities,
    prioritised,
    require_capacity,
    usable_nodes,
    weighed_graphs,
)
from storm_planner.planners.topdown._pool import (
    NodePool,
    Placement,
    allocate_single_tasks,
    complete,
    count_fitting,
)


class _TopDown:
    """One run of Algorithm 4 over a job graph; state lives here, not in the groups."""

    def __init__(self, graph: JobGraph, pool: NodePool) -> None:
        self.graph = graph
        self.pool = pool
        self.placement = Placement(pool, len(graph.task_ids))
        self.next_unplaced = [0] * len(graph.groups)  # unplaced tasks form a suffix
        # the "sequence of splits and node allocations" of each group: (bin, task count)
        self.splits: list[list[tuple[int, int]]] = [[] for _ in graph.groups]
        self.single: list[int] = []  # the list R

    # -- resolveSplits -------------------------------------------------------------
    def unplaced(self, group: int) -> int:
        return self.graph.groups[group].size - self.next_unplaced[group]

    def hosting_nodes(self, group: int) -> dict[int, int]:
        """Node -> number of the group's tasks there, after any fusion since."""
        counts: dict[int, int] = {}
        for bin_id, count in self.splits[group]:
            node = self.pool.node_of_bin(bin_id)
            counts[node] = counts.get(node, 0) + count
        return counts

    def place(self, group: int, count: int, node: int) -> None:
        if count <= 0:
            return
        info = self.graph.groups[group]
        start = self.next_unplaced[group]
        bin_id = self.pool.take(node, count * info.task_load)
        self.placement.place(info.tasks[start:start + count], bin_id)
        self.next_unplaced[group] = start + count
        self.splits[group].append((bin_id, count))

    def push_single(self, group: int) -> None:
        tasks = self.graph.groups[group].tasks
        self.single.extend(tasks[self.next_unplaced[group]:])

    # -- Algorithm 4 ---------------------------------------------------------------
    def run(self, priority: str) -> list[int]:
        for pair in prioritised(self.graph.pairs, lambda p: p.priority(priority)):
            first, second = pair.first, pair.second
            left_first, left_second = self.unplaced(first), self.unplaced(second)
            if left_first and left_second:
                self.allocate_both(first, second)
            elif left_first or left_second:
                placed, other = (second, first) if left_first else (first, second)
                self.allocate_second(placed, other, self.graph.link_imc(pair))
            else:
                self.fuse(first, second)
        leftovers = list(self.single)
        for group in self.graph.groups:
            leftovers.extend(group.tasks[self.next_unplaced[group.index]:])
        allocate_single_tasks(leftovers, self.graph.task_loads, self.pool, self.placement)
        return self.placement.nodes()

    def fuse(self, first: int, second: int) -> None:
        nodes_first, nodes_second = self.hosting_nodes(first), self.hosting_nodes(second)
        if len(nodes_first) == 1 and len(nodes_second) == 1:
            self.pool.try_fuse(next(iter(nodes_first)), next(iter(nodes_second)))

    # -- Algorithm 5, mode "second" --------------------------------------------------
    def allocate_second(self, placed: int, other: int, link_imc: float) -> None:
        task_load = self.graph.groups[other].task_load
        remaining = self.unplaced(other)
        hosts = self.hosting_nodes(placed)

        def expected_gain(node: int) -> float:
            fit = min(remaining, self.pool.how_many_fit(node, task_load))
            return hosts[node] * fit * link_imc

        for node in sorted(hosts, key=lambda n: (-expected_gain(n), n)):
            count = min(remaining, self.pool.how_many_fit(node, task_load))
            self.place(other, count, node)
            remaining -= count
            if not remaining:
                return
        self.push_single(other)

    # -- Algorithm 5, mode "both" ----------------------------------------------------
    def allocate_both(self, first: int, second: int) -> None:
        groups = self.graph.groups
        pool = self.pool
        while True:  # the recursion of line 20, unrolled
            node = pool.top()
            left_first, left_second = self.unplaced(first), self.unplaced(second)
            load = left_first * groups[first].task_load + left_second * groups[second].task_load
            if pool.fits(node, load):
                self.place(first, left_first, node)
                self.place(second, left_second, node)
                return
            small, large = (first, second) if left_first <= left_second else (second, first)
            left_small, left_large = self.unplaced(small), self.unplaced(large)
            ratio = left_large // left_small
            sigma = groups[small].task_load + ratio * groups[large].task_load
            splits = min(left_small, pool.how_many_fit(node, sigma))
            if splits > 0:
                take_small, take_large = splits, splits * ratio
            elif pool.fits(node, groups[small].task_load + groups[large].task_load):
                # k = 0: not even one balanced split fits the emptiest node (reconstruction)
                take_small = 1
                spare = pool.free[node] - groups[small].task_load
                take_large = min(left_large, count_fitting(spare, groups[large].task_load))
            else:
                self.push_single(first)
                self.push_single(second)
                return
            self.place(small, take_small, node)
            self.place(large, take_large, node)
            left_small, left_large = self.unplaced(small), self.unplaced(large)
            if left_small == 0 or left_large == 0:
                self.push_single(small)
                self.push_single(large)
                return


def top_down(graph: JobGraph, nodes: Sequence[Node], priority: str = "significance",
             capacities: Sequence[float] | None = None) -> list[int]:
    """Algorithm 4 on a prepared job graph: node index of every task (-1: unplaced); ``capacities``: each
    node's n.mu when not its effective capacity (:func:`._groups.node_capacities`)."""
    return _TopDown(graph, NodePool(nodes, capacities)).run(priority)


class TopDownPlanner(Planner):
    """topDown (Chatzistergiou & Viglas, CIKM 2014, §4, Alg. 4–5): group pairs in decreasing priority,
    split into balanced slices where a whole pair does not fit one node.

    Parameters
    ----------
    priority : {"significance", "imc"}, default="significance"
        Order of the group pairs: relative significance IMC / (PC_i + PC_j) (Eq. 2), or IMC alone
        (the TD-IMC variant of the paper's Figure 8).
    skew_margin : float or None, default=0.25
        Relative load spread within a component beyond which it is split into near-uniform sub-groups
        (§5's skew relaxation); None keeps every component whole.
    imc_unit : {"auto", "bytes", "tuples"}, default="auto"
        What IMC counts: bytes per second (the paper's data volume) or tuples per second. ``auto`` takes
        bytes whenever some stream's size is known (the acker's streams are sized from the start), a user
        tuple of unknown size weighing an acker message plus a prior for its values
        (:func:`~storm_planner.core.system_streams.unknown_tuple_bytes`); tuples when no size is known.
    """

    name = "topdown"
    summary = "Chatzistergiou & Viglas topDown (Alg. 4-5): group pairs by relative significance"

    def __init__(self, *, priority: str = "significance",
                 skew_margin: float | None = DEFAULT_SKEW_MARGIN, imc_unit: str = "auto") -> None:
        self.priority = checked(self.name, "priority", priority, to_text, choices=PRIORITIES)
        self.skew_margin = checked(self.name, "skew_margin", skew_margin, to_real, minimum=0, optional=True)
        self.imc_unit = checked(self.name, "imc_unit", imc_unit, to_text, choices=IMC_UNITS)

    def plan(self, problem: Problem) -> Plan:
        nodes = usable_nodes(problem)
        require_capacity(problem, nodes)
        notes: list[str] = []
        graph, in_tuples = weighed_graphs(problem, self.imc_unit, self.skew_margin, False, notes)
        capacities = node_capacities(problem, nodes)

        def solve(on: JobGraph, notes: list[str]) -> list[int]:
            return complete(top_down(on, nodes, self.priority, capacities), on.task_loads, nodes, notes, capacities)

        node_of = solve(graph, notes)
        if in_tuples is not None:
            node_of = better_of(problem, graph, nodes, node_of, solve(in_tuples, []), notes)
        return finish_plan(problem, self.name, graph, nodes, node_of, notes)
