"""``topdown-ls``: topDown followed by a bounded local search on the IMC gain.

Not in the paper. Chatzistergiou & Viglas (CIKM 2014) note that topDown "is
essentially greedy so it may fall into the trap of local minima" (§4) and reach
93.1% of the optimum's IMC gain on their random jobs (§7.3). This planner starts
from the best of topDown (relative-significance and IMC priorities) and
taskLevel, then improves it with:

* **moves** - one executor to another node - and **swaps** - two executors on
  different nodes exchange places - each applied only when it raises the IMC
  gain and keeps every node within its capacity (capacity x speed); gains are
  computed in O(1) from each executor's traffic per node, kept up to date in
  O(degree) per move;
* starts: topDown with both priorities, and taskLevel when the executor graph
  has at most 10,000 communicating pairs (taskLevel is quadratic);
* **iterated local search**: a few random moves/swaps (a "kick", also within
  capacity) followed by the descent above; the kick is kept when the result is
  better, otherwise undone. The random generator is seeded by
  ``options.seed``, so the plan is deterministic for a seed.

Bounded: at most ``kicks`` kicks and ``max_evaluations`` evaluated moves and
swaps in all (the same bound for every problem, so on large problems the search
stops early and returns what it has - never worse than its start); as a safety
net the kicks also stop at ``options.time_limit_s`` (noted in the plan, since
the result then depends on timing). The search works on executor traffic, so it also repairs what
the uniform-group assumption of Eq. 1 misses (skewed or measured traffic).

Complexity: O(P) to build the executor graph (P communicating executor pairs),
then O(max_evaluations) at most.
"""
from __future__ import annotations

import random
import time
from collections.abc import Sequence

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Node, Problem
from storm_planner.planners._parameters import checked, to_real, to_text, to_whole
from storm_planner.planners.base import Planner
from storm_planner.planners.topdown._counts import EPSILON
from storm_planner.planners.topdown._groups import (
    DEFAULT_SKEW_MARGIN,
    IMC_UNITS,
    JobGraph,
    finish_plan,
    imc_gain,
    node_capacities,
    require_capacity,
    usable_nodes,
    weighed_graphs,
)
from storm_planner.planners.topdown._pool import complete
from storm_planner.planners.topdown.tasklevel import task_level
from storm_planner.planners.topdown.topdown import top_down

DEFAULT_KICKS = 200
DEFAULT_MAX_EVALUATIONS = 500_000
TASKLEVEL_START_MAX_LINKS = 10_000  # taskLevel is quadratic: a start only on small graphs


class LocalSearch:
    """Executors on nodes, with each executor's traffic per node for O(1) move gains."""

    def __init__(self, graph: JobGraph, capacities: Sequence[float], node_of: Sequence[int]) -> None:
        self.loads = graph.task_loads
        self.capacities = list(capacities)
        self.node_of = list(node_of)
        self.neighbours: list[dict[int, float]] = [{} for _ in node_of]
        for (i, j), weight in graph.task_links().items():
            self.neighbours[i][j] = self.neighbours[i].get(j, 0.0) + weight
            self.neighbours[j][i] = self.neighbours[j].get(i, 0.0) + weight
        self.used = [0.0] * len(capacities)
        self.members: list[set[int]] = [set() for _ in capacities]
        for task, node in enumerate(self.node_of):
            self.used[node] += self.loads[task]
            self.members[node].add(task)
        # traffic[t][n]: traffic between t and its neighbours on node n
        self.traffic: list[dict[int, float]] = []
        for neighbours in self.neighbours:
            per_node: dict[int, float] = {}
            for other, weight in neighbours.items():
                node = self.node_of[other]
                per_node[node] = per_node.get(node, 0.0) + weight
            self.traffic.append(per_node)
        self.gain: float = sum(weight for (i, j), weight in graph.task_links().items()
                        if self.node_of[i] == self.node_of[j])
        self.evaluations = 0
        self.journal: list[tuple[int, int]] = []  # (task, previous node), for undo

    # -- primitives -------------------------------------------------------------------
    def fits(self, node: int, extra: float) -> bool:
        return self.used[node] + extra <= self.capacities[node] + EPSILON

    def move_gain(self, task: int, node: int) -> float:
        here = self.traffic[task]
        return here.get(node, 0.0) - here.get(self.node_of[task], 0.0)

    def move(self, task: int, node: int) -> None:
        source = self.node_of[task]
        self.gain += self.move_gain(task, node)
        self.journal.append((task, source))
        self.node_of[task] = node
        load = self.loads[task]
        self.used[source] -= load
        self.used[node] += load
        self.members[source].discard(task)
        self.members[node].add(task)
        traffic = self.traffic
        for other, weight in self.neighbours[task].items():
            per_node = traffic[other]
            remaining = per_node[source] - weight
            if remaining > EPSILON:
                per_node[source] = remaining
            else:
                del per_node[source]
            per_node[node] = per_node.get(node, 0.0) + weight

    def swap(self, a: int, b: int) -> None:
        node_a, node_b = self.node_of[a], self.node_of[b]
        self.move(a, node_b)
        self.move(b, node_a)

    def undo_to(self, mark: int) -> None:
        while len(self.journal) > mark:
            task, previous = self.journal.pop()
            self.move(task, previous)
            self.journal.pop()  # the undo's own entry

    # -- descent ----------------------------------------------------------------------
    def descend(self, budget: int) -> None:
        """Improving moves, then improving swaps, until neither exists or the budget ends."""
        while self.evaluations < budget:
            if self._improve_by_moves(budget):
                continue
            if not self._improve_by_swaps(budget):
                return

    def _improve_by_moves(self, budget: int) -> bool:
        improved = False
        for task in range(len(self.node_of)):
            if self.evaluations >= budget:
                break
            here = self.node_of[task]
            best_node, best_gain = -1, EPSILON
            for node in self.traffic[task]:
                self.evaluations += 1
                if node != here and self.fits(node, self.loads[task]):
                    gain = self.move_gain(task, node)
                    if gain > best_gain:
                        best_node, best_gain = node, gain
            if best_node >= 0:
                self.move(task, best_node)
                improved = True
        return improved

    def _improve_by_swaps(self, budget: int) -> bool:
        loads = self.loads
        for task in range(len(self.node_of)):
            here = self.node_of[task]
            for node in list(self.traffic[task]):
                if node == here:
                    continue
                there_gain = self.move_gain(task, node)
                # the partner must free enough room on `node` and fit in `here`
                room_needed = self.used[node] + loads[task] - self.capacities[node]
                room_here = self.capacities[here] - self.used[here] + loads[task]
                links = self.neighbours[task]
                for other in self.members[node]:
                    self.evaluations += 1
                    load = loads[other]
                    if load + EPSILON < room_needed or load > room_here + EPSILON:
                        continue
                    gain = there_gain + self.move_gain(other, here) - 2.0 * links.get(other, 0.0)
                    if gain > EPSILON:
                        self.swap(task, other)
                        return True
                if self.evaluations >= budget:
                    return False
        return False

    # -- perturbation -----------------------------------------------------------------
    def kick(self, rng: random.Random, size: int) -> None:
        """``size`` random moves or swaps that keep every node within capacity."""
        tasks, nodes = len(self.node_of), len(self.capacities)
        for _ in range(size):
            task = rng.randrange(tasks)
            node = rng.randrange(nodes)
            if node == self.node_of[task]:
                continue
            if self.fits(node, self.loads[task]):
                self.move(task, node)
                continue
            here = self.node_of[task]
            for other in sorted(self.members[node]):
                delta = self.loads[task] - self.loads[other]
                if self.fits(node, delta) and self.fits(here, -delta):
                    self.swap(task, other)
                    break


def local_search(graph: JobGraph, capacities: Sequence[float], start: Sequence[int], seed: int,
                 kicks: int = DEFAULT_KICKS, max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
                 deadline: float = float("inf")) -> tuple[list[int], bool]:
    """Descent from ``start``, then iterated local search.

    Returns the best placement found and whether the ``deadline``
    (``time.monotonic()``; a safety net that makes the result depend on timing)
    cut the kicks short.
    """
    search = LocalSearch(graph, capacities, start)
    search.descend(max_evaluations)
    rng = random.Random(seed)
    for _ in range(kicks):
        if search.evaluations >= max_evaluations:
            break
        if time.monotonic() > deadline:
            return search.node_of, True
        mark, before = len(search.journal), search.gain
        search.kick(rng, rng.randint(1, 3))
        search.descend(max_evaluations)
        if search.gain <= before + EPSILON:
            search.undo_to(mark)
        search.journal.clear()
    return search.node_of, False


def starting_points(graph: JobGraph, nodes: Sequence[Node], seed: int,
                    capacities: Sequence[float] | None = None) -> list[list[int]]:
    starts = [top_down(graph, nodes, "significance", capacities), top_down(graph, nodes, "imc", capacities)]
    if len(graph.task_links()) <= TASKLEVEL_START_MAX_LINKS:
        starts.append(task_level(graph, nodes, "significance", seed, capacities=capacities))
    return starts


class TopDownLocalSearchPlanner(Planner):
    """topDown and taskLevel starts refined by a bounded iterated local search of moves and swaps
    that raise the IMC gain within every node's capacity (not in the paper).

    Parameters
    ----------
    kicks : int, default=200
        Most random perturbations ("kicks"), each followed by a descent and kept only if it improves
        the result; 0 is a plain descent from the best start.
    max_evaluations : int, default=500000
        Most moves and swaps evaluated in all, the same bound for every problem size; the search stops
        there with the best placement so far.
    skew_margin : float or None, default=0.25
        Relative load spread within a component beyond which it is split into near-uniform sub-groups
        for the topDown and taskLevel starts; None keeps every component whole.
    imc_unit : {"auto", "bytes", "tuples"}, default="auto"
        What a link's IMC counts, as for ``topdown``: bytes per second or tuples per second; ``auto`` takes
        bytes whenever some stream's size is known, a user tuple of unknown size weighing an acker message
        plus a prior for its values, and then also starts from the plans weighed in tuples
        (:func:`._groups.weighed_graphs`); the search itself weighs bytes.
    """

    name = "topdown-ls"
    summary = "topDown (and taskLevel) starts refined by a bounded local search of moves and swaps"

    def __init__(self, *, kicks: int = DEFAULT_KICKS, max_evaluations: int = DEFAULT_MAX_EVALUATIONS,
                 skew_margin: float | None = DEFAULT_SKEW_MARGIN, imc_unit: str = "auto") -> None:
        self.kicks = checked(self.name, "kicks", kicks, to_whole, minimum=0)
        self.max_evaluations = checked(self.name, "max_evaluations", max_evaluations, to_whole, minimum=0)
        self.skew_margin = checked(self.name, "skew_margin", skew_margin, to_real, minimum=0, optional=True)
        self.imc_unit = checked(self.name, "imc_unit", imc_unit, to_text, choices=IMC_UNITS)

    def plan(self, problem: Problem) -> Plan:
        nodes = usable_nodes(problem)
        require_capacity(problem, nodes)
        notes: list[str] = []
        graph, in_tuples = weighed_graphs(problem, self.imc_unit, self.skew_margin, True, notes)
        held = node_capacities(problem, nodes)   # D_CPU's n.mu, when set
        capacities = [n.effective_capacity for n in nodes] if held is None else held
        best: list[int] = []   # every start's gain is >= 0: the first one replaces this
        best_gain = -1.0
        starts = starting_points(graph, nodes, problem.options.seed, held)
        if in_tuples is not None:
            starts += starting_points(in_tuples, nodes, problem.options.seed, held)
        for start in starts:
            start = complete(start, graph.task_loads, nodes, [], held)
            gain = _collocated(graph, start)
            if gain > best_gain + EPSILON:
                best, best_gain = start, gain
        start_gain = best_gain
        if held is not None and not _within(graph.task_loads, best, held):
            capacities = [n.effective_capacity for n in nodes]   # no start packs within D_CPU
        deadline = time.monotonic() + problem.options.time_limit_s
        node_of, timed_out = local_search(graph, capacities, best, problem.options.seed,
                                          self.kicks, self.max_evaluations, deadline)
        if timed_out:
            notes.append(f"local search stopped at the time limit ({problem.options.time_limit_s:g} s)")
        notes.append(f"local search: IMC gain {start_gain:g} -> {_collocated(graph, node_of):g}")
        return finish_plan(problem, self.name, graph, nodes, node_of, notes)


def _within(loads: Sequence[float], node_of: Sequence[int], capacities: Sequence[float]) -> bool:
    """Whether every node's tasks fit its capacity: the local search keeps a placement within the capacities
    it is given, so it is given ones the start already fits."""
    used = [0.0] * len(capacities)
    for task, node in enumerate(node_of):
        used[node] += loads[task]
    return all(u <= c + EPSILON for u, c in zip(used, capacities))


def _collocated(graph: JobGraph, node_of: Sequence[int]) -> float:
    return imc_gain(graph, node_of)
