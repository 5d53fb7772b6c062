"""``spread``: the little-collocation start of Madsen et al.'s real-data experiment (§5.4).

Madsen, Zhou & Cao, *Integrative Dynamic Reconfiguration in a Parallel Stream Processing Engine*,
§5.4: "the initial allocation of key groups is chosen such that the initial collocation is as little
as possible", to see whether ALBIC raises it at run time. On Storm a key group is an executor, and
two components fields-grouped on the same fields with the same number of tasks pair up one to one:
Storm sends a key to task ``hash(key) mod tasks`` of the next component, so executor k of one sends
only to executor k of the next (the airline jobs' extract and plane sums). Those pairs are what a
collocating planner can win.

``spread`` puts executor k (in start-task order) of a component at depth d (the fewest streams from a
spout to it; components no spout reaches, the ackers among them, at depth 0) on node ``(k + d) mod
N`` of the N usable nodes (by id), in each node's first slot. The k-th executors of two consecutive
components are thus never on one node (N ≥ 2), and every component is spread evenly. Spouts run in a
worker of their own, the node's second slot where it has one: the paper's input nodes are machines of
their own, and a re-plan that trusts its planner still holds every spout's worker still (a move into or
out of it would restart the spout and lose its tuples in flight), so an operator sharing that worker
could never move, nor a partner join it. It ignores the current placement, loads and capacities: it
stands for a start, not a plan worth keeping. Run it as ``planner.initial.algorithm`` with the
re-planning algorithm as ``planner.algorithm``.

Complexity: O(E log E + C + S + N log N) for E executors, C components, S streams and N nodes.
"""
from __future__ import annotations

from collections import deque
from types import MappingProxyType

from storm_planner.core.elements import SPOUT
from storm_planner.core.errors import InfeasibleError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.planners.base import Planner


def start_task(executor_id: str) -> tuple[int, int, str]:
    """Storm's executor order: by start task for "[s-e]" ids, else by name after them."""
    first = executor_id[1:].split("-", 1)[0] if executor_id.startswith("[") else ""
    return (0, int(first), executor_id) if first.isdigit() else (1, 0, executor_id)


def depths(problem: Problem) -> dict[str, int]:
    """Each component's fewest streams from a spout (0 for spouts and for components no spout reaches)."""
    after: dict[str, set[str]] = {}
    for stream in problem.streams:
        after.setdefault(stream.source, set()).add(stream.target)
    depth = {c.id: 0 for c in problem.components if c.type == SPOUT}
    queue = deque(sorted(depth))
    while queue:
        component = queue.popleft()
        for target in sorted(after.get(component, ())):
            if target not in depth:
                depth[target] = depth[component] + 1
                queue.append(target)
    return {c.id: depth.get(c.id, 0) for c in problem.components}


class SpreadPlanner(Planner):
    """Madsen et al.'s §5.4 start: the k-th executor of a component at depth d on node (k + d) mod N,
    so one-to-one partners of consecutive components never share a node.

    Takes no parameters.
    """

    name = "spread"
    summary = "Madsen et al. §5.4's start: consecutive components' k-th executors on different nodes"
    baseline = True
    resource_aware = False

    def plan(self, problem: Problem) -> Plan:
        usable = [n for n in sorted(problem.nodes, key=lambda n: n.id) if n.slots and not n.draining]
        if not usable:
            raise InfeasibleError("spread: no usable node has a slot")
        ports = [sorted(n.slots) for n in usable]
        slots = [Slot(n.id, p[0]) for n, p in zip(usable, ports)]
        spout_slots = [Slot(n.id, p[1] if len(p) > 1 else p[0]) for n, p in zip(usable, ports)]
        spouts = {c.id for c in problem.components if c.type == SPOUT}
        depth = depths(problem)
        by_component: dict[str, list[str]] = {}
        for one in problem.executors:
            by_component.setdefault(one.component, []).append(one.id)
        assignments: dict[str, Slot] = {}
        for component, ids in by_component.items():
            mine = spout_slots if component in spouts else slots
            for k, executor_id in enumerate(sorted(ids, key=start_task)):
                assignments[executor_id] = mine[(k + depth.get(component, 0)) % len(mine)]
        return Plan(algorithm=self.name, assignments=MappingProxyType(assignments))
