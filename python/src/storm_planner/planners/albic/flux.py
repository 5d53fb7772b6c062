"""``flux``: Flux's pairwise load shedding (baseline).

Shah et al., *Flux: an adaptive partitioning operator for continuous query
systems* (ICDE 2003), as summarised by Madsen et al. §2.2 and used as their
baseline in §5.1-5.2: "nodes are sorted in descending order of their workloads,
and then it moves the biggest suitable data partition at the first node to the
last one in the list, so that load-variance is decreased. If necessary, it also
moves a partition at the second node to the second last one in the list, and
so on." A Storm key group (partition) is an executor.

Reconstructions, since the summary leaves them open:

* *suitable*: the move must not reverse the pair's imbalance (the receiver's
  utilisation stays at or below the sender's afterwards), which is exactly the
  condition under which the pair's load variance does not grow;
* the pass over the sorted pairs repeats, re-sorting each time, until the
  migration budget (``options.max_migrations`` / ``max_migration_cost``, the same
  budget the MILP gets, as in §5.1) is spent or a pass moves nothing; an
  executor moves at most once per round;
* heterogeneous nodes are compared by utilisation (load / effective capacity);
* nodes marked for removal sort first and never receive load (Flux has no
  scale-in of its own); executors without a current place are first placed on
  the least utilised node, like every planner here.

Complexity: O(P · (N log N + E)) for P passes (P ≤ budget), N nodes, E executors.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from storm_planner.core.evaluate import relative_load
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Executor, Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners._parameters import checked, to_real, to_whole
from storm_planner.planners.albic._units import start_placement
from storm_planner.planners.albic.milp import budgets
from storm_planner.planners.base import Planner


def flux_moves(problem: Problem, node_of: dict[str, str], max_moves: float | None,
               max_cost: float | None) -> dict[str, str]:
    """Executor -> new node, Flux's pairwise moves within the budget (``node_of`` is updated)."""
    executors = {e.id: e for e in problem.executors}
    capacity = {n.id: n.effective_capacity for n in problem.nodes}
    draining = {n.id for n in problem.nodes if n.draining}
    load = {n.id: 0.0 for n in problem.nodes}
    for executor_id, node in node_of.items():
        load[node] += executors[executor_id].load
    moved: dict[str, str] = {}
    spent_cost = 0.0

    def utilisation(node: str) -> float:
        return relative_load(load[node], capacity[node])

    def budget_left(state_size: float) -> bool:
        if max_moves is not None and len(moved) + 1 > max_moves:
            return False
        return max_cost is None or spent_cost + state_size <= max_cost + 1e-9

    while True:
        ranked = sorted(load, key=lambda n: (n not in draining, -utilisation(n), n))
        moves_this_pass = 0
        for i in range(len(ranked) // 2):
            sender, receiver = ranked[i], ranked[-1 - i]
            if receiver in draining:
                break
            candidate = biggest_suitable(problem, node_of, moved, sender, receiver, load, capacity,
                                         sender in draining)
            if candidate is None or not budget_left(executors[candidate].state_size):
                continue
            node_of[candidate] = receiver
            moved[candidate] = receiver
            spent_cost += executors[candidate].state_size
            load[sender] -= executors[candidate].load
            load[receiver] += executors[candidate].load
            moves_this_pass += 1
        if moves_this_pass == 0 or (max_moves is not None and len(moved) >= max_moves):
            return moved


def biggest_suitable(problem: Problem, node_of: Mapping[str, str], moved: Mapping[str, str], sender: str,
                     receiver: str, load: Mapping[str, float], capacity: Mapping[str, float],
                     draining_sender: bool) -> str | None:
    """The largest executor on ``sender`` whose move leaves ``receiver`` no busier than ``sender``."""
    gap = relative_load(load[sender], capacity[sender]) - relative_load(load[receiver], capacity[receiver])
    best: Executor | None = None
    for executor in problem.executors:
        if node_of.get(executor.id) != sender or executor.id in moved or executor.load <= 0:
            continue
        shift = relative_load(executor.load, capacity[sender]) + relative_load(executor.load, capacity[receiver])
        if not draining_sender and shift > gap + 1e-12:
            continue
        if best is None or (executor.load, executor.id) > (best.load, best.id):
            best = executor
    return None if best is None else best.id


class FluxPlanner(Planner):
    """Flux (Shah et al., ICDE 2003; Madsen et al. §2.2): move the biggest suitable executor from the
    most to the least utilised node, pair by pair, until the migration budget is spent.

    Parameters
    ----------
    max_migrations : int or None, default=None
        Most executors with a current place that may move this round; None takes the problem's
        ``options.max_migrations`` (absent there: no limit).
    max_migration_cost : float or None, default=None
        Most summed ``state_size`` of the executors that move; None takes the problem's
        ``options.max_migration_cost`` (absent there: no limit).
    """

    name = "flux"
    summary = "Flux (Shah et al.; Madsen et al. §2.2): move the biggest suitable executor, most to least loaded node"
    baseline = True

    def __init__(self, *, max_migrations: int | None = None, max_migration_cost: float | None = None) -> None:
        self.max_migrations = checked(self.name, "max_migrations", max_migrations, to_whole, minimum=0,
                                      optional=True)
        self.max_migration_cost = checked(self.name, "max_migration_cost", max_migration_cost, to_real,
                                          minimum=0, optional=True)

    def plan(self, problem: Problem) -> Plan:
        max_moves, max_cost = budgets(problem, self.max_migrations, self.max_migration_cost)
        node_of = start_placement(problem)
        moved = flux_moves(problem, node_of, max_moves, max_cost)
        return Plan(
            algorithm=self.name,
            assignments=slots_for_nodes(problem, node_of),
            drain=tuple(n.id for n in problem.nodes if n.draining),
            figures=MappingProxyType({}),
            notes=(f"flux: {len(moved)} move(s)",),
        )
