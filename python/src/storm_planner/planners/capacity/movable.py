"""Each bolt keeps an executor that a later move can take without stopping the flow (issue #49).

Storm restarts every worker a move leaves or joins. A move of a running topology goes on acking through the
workers it does not restart, and the service then moves without a drain (``adaptation.costs.flow_goes_on``),
unless the worker it restarts holds a spout (nothing is emitted until it is up) or every executor of a bolt
or every acker (every tuple tree through it dies). The drain that a move then needs stands the topology
still for the restarted workers' start: 31-59 s on the heterogeneous quota cluster
(``benchmarks/reports/drain-6.md``), where Top-K's two counts each shared a worker with the spout or with
its only ``top``, so no count could move without one.

The capacity model sees no reason to keep a bolt's executor in such a *free* worker: packing the counts
with the spout saves link traffic. This step gives up at most ``tolerance`` of the predicted rate so that
every bolt with two executors or more has one in a free worker: one holding no spout executor and no
component whole. Where a bolt has none, one of its executors moves to the free node that keeps the highest
factor. It is the kit's own, not a paper's.

Each node the plan uses holds one worker unless the heap limit splits it, so a worker is taken as a node. A
node the plan does not use yet is tried only while ``topology.workers`` leaves room for it.

Complexity: per bolt, O(executors) to find the free nodes; per bolt without a free executor, one
incremental :class:`~storm_planner.planners.capacity.search.Placement` move and score per (executor of it,
free node): O(bolts × executors + executors × nodes × (streams + nodes)); nothing grows with the executors
squared.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from storm_planner.core.elements import SPOUT
from storm_planner.core.system_streams import ACKER
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.search import Placement

# The share of the predicted rate a plan may give up to keep its bolts movable (the planner's ``movable``).
DEFAULT_TOLERANCE = 0.02


@dataclass(frozen=True)
class Movable:
    """The placement after the step, and what the plan's note says of it (None: nothing to say)."""

    node_of: dict[str, str]
    note: str | None


def free_nodes(model: CapacityModel, node_of: Mapping[str, str]) -> set[str]:
    """The nodes whose worker a move may restart while the flow goes on: no spout executor there, and no
    bolt or the ackers all there."""
    blocked = blocked_nodes(model, node_of)
    return {node for node in node_of.values() if node not in blocked}


def blocked_nodes(model: CapacityModel, node_of: Mapping[str, str]) -> set[str]:
    """The nodes that hold a spout executor, or every executor of a bolt or every acker. O(executors)."""
    spouts = {c.id for c in model.problem.components if c.type == SPOUT}
    system = {c.id for c in model.problem.components if c.system and c.id != ACKER}
    homes: dict[str, set[str]] = defaultdict(set)
    blocked: set[str] = set()
    for executor, node in node_of.items():
        component = model.component[executor]
        if component in spouts:
            blocked.add(node)
        elif component not in system:
            homes[component].add(node)
    return blocked | {next(iter(nodes)) for nodes in homes.values() if len(nodes) == 1}


def keep_bolts_movable(model: CapacityModel, node_of: Mapping[str, str], workers: int | None = None,
                       tolerance: float = DEFAULT_TOLERANCE) -> Movable:
    """Give every bolt of two executors or more one in a free worker (:func:`free_nodes`) where all such
    moves together cost at most ``tolerance`` of the factor; otherwise leave it, and say what it would cost."""
    spouts = {c.id for c in model.problem.components if c.type == SPOUT}
    system = {c.id for c in model.problem.components if c.system}
    members: dict[str, list[str]] = defaultdict(list)
    for executor in sorted(node_of):
        component = model.component[executor]
        if component not in spouts and component not in system:
            members[component].append(executor)
    if tolerance <= 0:
        return Movable(dict(node_of), None)
    placement = Placement(model, node_of)
    before = placement.factor()
    moved, refused = [], []
    for bolt, executors in sorted(members.items()):
        current = {e: str(placement.node_of[e]) for e in node_of}
        free = free_nodes(model, current)
        if len(executors) < 2 or any(current[e] in free for e in executors):
            continue
        best = _best_move(model, placement, executors, current, workers)
        if best is None:
            refused.append(f"{bolt}: no node would leave one of its executors free to move")
            continue
        after, executor, target = best
        cost = 1.0 - after / before if before > 0 else 0.0
        if cost > tolerance:
            refused.append(f"{bolt}: {executor} on {target} would lower the predicted rate {cost:.1%}")
            continue
        placement.move(executor, target)
        moved.append(f"{bolt}: {executor} moved from {current[executor]} to {target}")
    result = {e: str(placement.node_of[e]) for e in node_of}
    return Movable(result, _note(moved, refused, before, placement.factor(), tolerance))


def _best_move(model: CapacityModel, placement: Placement, executors: list[str], current: dict[str, str],
               workers: int | None) -> tuple[float, str, str] | None:
    """(factor, executor, node) of the move of one of ``executors`` that leaves it on a free node and keeps
    the highest factor; None when no move does."""
    used = set(current.values())
    room_for_one_more = workers is None or len(used) < workers
    # A move of one executor leaves every other node's spouts and whole components where they are; its target
    # stays free unless the bolt's other executors are all there already (the bolt would then be whole there).
    blocked = blocked_nodes(model, current)
    held: dict[str, int] = defaultdict(int)
    for executor in executors:
        held[current[executor]] += 1
    candidates = [n for n in model.usable_nodes() if n not in blocked and (n in used or room_for_one_more)]
    best: tuple[tuple[float, int, float], float, str, str] | None = None
    for executor in executors:
        home = current[executor]
        for node in candidates:
            if node == home or held[node] == len(executors) - 1:
                continue
            placement.move(executor, node)
            score = placement.score()
            if best is None or score > best[0]:
                best = (score, placement.factor(), executor, node)
            placement.move(executor, home)
    return None if best is None else best[1:]


def _note(moved: list[str], refused: list[str], before: float, after: float, tolerance: float) -> str | None:
    parts = []
    if moved:
        cost = 1.0 - after / before if before > 0 else 0.0
        change = "unchanged" if abs(cost) < 5e-4 else (f"{cost:.1%} lower" if cost > 0 else f"{-cost:.1%} higher")
        parts.append(f"{'; '.join(moved)}, so that a move of it need not stop the flow (predicted rate {change})")
    if refused:
        parts.append(f"{'; '.join(refused)} (at most {tolerance:.1%}): left")
    return f"movable bolts: {'; '.join(parts)}" if parts else None
