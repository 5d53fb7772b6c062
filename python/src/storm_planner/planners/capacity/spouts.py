"""Spouts on the node with the most CPU, so that the fail messages a move causes pass quickly (issue #49).

When a move of a running topology restarts a worker without a drain, the tuple trees through that worker
die, and at ``topology.message.timeout.secs`` Storm expires them together: the spout's executor takes a
``fail`` for each, one multilang round trip apiece, before it emits again. Nothing is acked meanwhile, so
the burst is a stall, as long as the lost trees over the rate at which the spout's process can take fails.
That rate grows with the CPU the spout's node gives it (one core at most: the executor and its subprocess
take turns). In ``benchmarks/reports/drain-5.md`` the same move of a count and an acker, at the same rate,
stalled Top-K for 0.3 and 1.2 s with the spout on the 70 % node and for 11.3 s (59,453 fails, about 4,700 a
second) with it on a 30 % node.

The capacity model sees no difference: at the rate it plans for, a spout costs the same CPU wherever it
runs. This step gives up at most ``tolerance`` of the predicted rate to move each spout executor to the
node with the most CPU (capped at one core) that can take it: of the nodes with more than its own, the
one with the most, ties to the one that keeps the highest factor. It is the kit's own, not a paper's.

A node the plan does not use yet is tried only while ``topology.workers`` leaves room for it.

Complexity: one incremental :class:`~storm_planner.planners.capacity.search.Placement` move and score per
(spout executor, candidate node), O(spout executors × nodes × (streams of the spout + nodes)).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from storm_planner.core.elements import SPOUT
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.search import Placement

# The share of the predicted rate a plan may give up to move its spouts (the planner's ``spout_room``).
DEFAULT_TOLERANCE = 0.02
ONE_CORE = 100.0    # a spout's executor and its subprocess take turns: more than a core does not help them


@dataclass(frozen=True)
class SpoutRoom:
    """The placement after the step, and what the plan's note says of it (None: nothing to say)."""

    node_of: dict[str, str]
    note: str | None


def fail_room(model: CapacityModel, node: str) -> float:
    """The CPU (reference-core %) a spout on ``node`` may take fails at while the topology stands still."""
    return min(ONE_CORE, model.room(node).cpu)


def spouts_to_room(model: CapacityModel, node_of: Mapping[str, str], workers: int | None = None,
                   tolerance: float = DEFAULT_TOLERANCE) -> SpoutRoom:
    """Move each spout executor to the node with the most :func:`fail_room` where the placement's factor
    stays within ``tolerance`` of what it was; otherwise leave it, and say what it would cost."""
    spouts_of = {c.id for c in model.problem.components if c.type == SPOUT}
    spouts = sorted(e for e, component in model.component.items() if component in spouts_of and e in node_of)
    if tolerance <= 0 or not spouts:
        return SpoutRoom(dict(node_of), None)
    placement = Placement(model, node_of)
    before = placement.factor()
    moved, refused = [], []
    for spout in spouts:
        home = node_of[spout]
        used = {str(n) for n in placement.used_nodes()}
        room_for_one_more = workers is None or len(used) < workers
        roomier = [n for n in model.usable_nodes() if fail_room(model, n) > fail_room(model, home)
                   and (n in used or room_for_one_more)]
        if not roomier:
            continue
        # The most room first; among equals, the node that keeps the highest factor.
        scored = []
        for node in roomier:
            placement.move(spout, node)
            scored.append((fail_room(model, node), placement.score(), placement.factor(), node))
            placement.move(spout, home)
        _, _, after, target = max(scored)
        cost = 1.0 - after / before if before > 0 else 0.0
        if cost > tolerance:
            refused.append(f"{spout} on {target} would lower the predicted rate {cost:.1%}")
            continue
        placement.move(spout, target)
        moved.append(f"{spout} moved from {home} to {target}")
    room = dict(node_of)
    room.update({e: str(placement.node_of[e]) for e in spouts})
    return SpoutRoom(room, _note(moved, refused, before, placement.factor(), tolerance))


def _note(moved: list[str], refused: list[str], before: float, after: float, tolerance: float) -> str | None:
    parts = []
    if moved:
        cost = 1.0 - after / before if before > 0 else 0.0
        change = "unchanged" if abs(cost) < 5e-4 else (f"{cost:.1%} lower" if cost > 0 else f"{-cost:.1%} higher")
        parts.append(f"{', '.join(moved)}, where a burst of fails passes quickest (predicted rate {change})")
    if refused:
        parts.append(f"{'; '.join(refused)} (more than {tolerance:.1%}): left")
    return f"spouts: {'; '.join(parts)}" if parts else None
