"""``cola``: COLA's recursive balanced partitioning, from scratch every time (baseline).

Khandekar et al., *COLA: Optimizing stream processing applications via graph
partitioning* (Middleware 2009), as summarised by Madsen et al. §2.1 and used
as their baseline for ALBIC in §5.3-5.4: "It first puts all operators into one
partition, and then gradually splits the partitions until a solution with a
sufficient load balance is obtained. Splitting is done by a balanced graph
partitioning algorithm, which ensures the load of each partition is relatively
even, while minimizing the data sent across different partitions."

Here the vertices are executors (Madsen et al. compare at key-group level),
edges carry executor-pair traffic, and splitting is a METIS bisection of the
heaviest partition weighted by load. After each split the partitions are packed
onto the nodes not marked for removal, largest first onto the node that ends
least utilised (LPT); the loop stops when the load distance is at most
``max_ld`` (default 10 percent points, ALBIC's) or no partition can be split.
COLA is a static optimiser: it ignores the current placement, so nearly every
executor may migrate each time it runs (Madsen et al. report ~200 per period).

Reconstructions: the packing rule (LPT) and the stopping test (the same
load-distance bound ALBIC uses) stand in for details the summary leaves open;
memory limits are not modelled.

Complexity: at most E bisections, each near-linear in the partition's size,
plus an O(P log P + P·N) packing after each split (P partitions, N nodes).
"""
from __future__ import annotations

import heapq
from types import MappingProxyType

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.evaluate import load_distance, relative_load
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners._parameters import checked, to_real
from storm_planner.planners.albic._partition import bisect_graph, edge_weights
from storm_planner.planners.base import Planner


def pack(problem: Problem, partitions: list[list[str]], load: dict[str, float]) -> dict[str, str]:
    """Largest partition first onto the node that ends least utilised (ties: node id)."""
    active = sorted((n for n in problem.nodes if not n.draining), key=lambda n: n.id)
    node_load = {n.id: 0.0 for n in active}
    node_of: dict[str, str] = {}
    weight = {i: sum(load[m] for m in p) for i, p in enumerate(partitions)}
    for i in sorted(weight, key=lambda i: (-weight[i], min(partitions[i]))):
        target = min(active, key=lambda n: (relative_load(node_load[n.id] + weight[i], n.effective_capacity), n.id))
        node_load[target.id] += weight[i]
        node_of.update({m: target.id for m in partitions[i]})
    return node_of


def cola_partitions(problem: Problem, max_ld: float, seed: int) -> tuple[dict[str, str], int]:
    """Split the heaviest partition until the packed placement is balanced enough."""
    active = [n for n in problem.nodes if not n.draining]
    if not active:
        raise InfeasibleError("every node is marked for removal: there is nowhere to place executors")
    load = {e.id: e.load for e in problem.executors}
    pairs = problem.traffic_model.executor_pairs(who="cola (METIS over executor pairs)")
    edges = edge_weights({(t.source, t.target): t.rate for t in pairs})
    # Max-heap of (load, tie-break, members); singletons cannot be split and are kept aside.
    heap = [(-sum(load.values()), 0, sorted(load))]
    done: list[list[str]] = []
    counter = 1
    while True:
        partitions = done + [p for _, _, p in heap]
        if len(partitions) >= len(active):
            node_of = pack(problem, partitions, load)
            if load_distance(problem, node_of) <= max_ld or not heap:
                return node_of, len(partitions)
        if not heap:
            return pack(problem, partitions, load), len(partitions)
        _, _, heaviest = heapq.heappop(heap)
        pieces = bisect_graph(heaviest, load, edges, 2, seed + counter)
        if len(pieces) < 2:  # METIS left one side empty (one executor dominates): peel it off
            top = max(heaviest, key=lambda m: (load[m], m))
            pieces = [[top], [m for m in heaviest if m != top]]
        for piece in pieces:
            if len(piece) == 1:
                done.append(piece)
            else:
                heapq.heappush(heap, (-sum(load[m] for m in piece), counter, piece))
            counter += 1


class ColaPlanner(Planner):
    """COLA (Khandekar et al., Middleware 2009; Madsen et al. §2.1): split the executor graph by
    balanced METIS bisections until the partitions pack within a load distance, ignoring the current
    placement.

    Parameters
    ----------
    max_ld : float, default=10.0
        Load distance, in percent points, at which splitting stops.
    """

    name = "cola"
    summary = "COLA (Khandekar et al.; Madsen et al. §2.1): recursive METIS partitioning from scratch"
    baseline = True

    def __init__(self, *, max_ld: float = 10.0) -> None:
        self.max_ld = checked(self.name, "max_ld", max_ld, to_real, minimum=0)

    def plan(self, problem: Problem) -> Plan:
        max_ld = self.max_ld
        node_of, parts = cola_partitions(problem, max_ld, problem.options.seed)
        return Plan(
            algorithm=self.name,
            assignments=slots_for_nodes(problem, node_of),
            drain=tuple(n.id for n in problem.nodes if n.draining),
            figures=MappingProxyType({"cola_partitions": float(parts)}),
            notes=(f"cola: {parts} partition(s), max_ld {max_ld:g}",),
        )
