"""Ackers in two workers or more, so that a later move of one worker leaves others to ack (issue #49).

Storm keeps each tuple tree on one acker executor. Where every acker of a topology shares one worker, a
re-plan that restarts that worker loses every tree in flight: the spouts wait for the message timeout, or
the service must drain before it moves (``service.planning.drain``), and a drained topology stands still
while the restarted workers start (27 s on a 30 % node in ``benchmarks/reports/drain-4.md``). With ackers
in two workers or more, a move that restarts one of them loses only that worker's trees and the flow goes
on through the others. The capacity model sees no reason to split the ackers: they are light, and packing
them with their partners saves link traffic. This step gives up at most ``tolerance`` of the predicted
rate to put one acker elsewhere. It is the kit's own, not a paper's.

Each node the plan uses holds one worker unless the heap limit splits it, so "another worker" is taken as
"another node the plan uses"; a node the plan does not use yet is tried only while ``topology.workers``
leaves room for it.

Complexity: one incremental :class:`~storm_planner.planners.capacity.search.Placement` move and score per
(acker, candidate node), O(ackers × nodes × (streams of the acker + nodes)); Storm runs one acker per
worker by default, so this is small, and nothing grows with the executors squared.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from storm_planner.core.system_streams import ACKER
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.search import Placement

# The share of the predicted rate a plan may give up to spread its ackers (the planner's ``acker_spread``).
DEFAULT_TOLERANCE = 0.02


@dataclass(frozen=True)
class AckerSpread:
    """The placement after the step, and what the plan's note says of it (None: nothing to say)."""

    node_of: dict[str, str]
    note: str | None


def spread_ackers(model: CapacityModel, node_of: Mapping[str, str], workers: int | None = None,
                  tolerance: float = DEFAULT_TOLERANCE) -> AckerSpread:
    """Move one acker off a node that holds them all, to the node that keeps the highest factor, when
    that costs at most ``tolerance`` of the factor; otherwise ``node_of`` as it is, with the reason."""
    ackers = sorted(e for e, component in model.component.items() if component == ACKER and e in node_of)
    homes = {node_of[a] for a in ackers}
    if tolerance <= 0 or len(ackers) < 2 or len(homes) > 1:
        return AckerSpread(dict(node_of), None)
    home = homes.pop()
    placement = Placement(model, node_of)
    before = placement.factor()
    used = {str(n) for n in placement.used_nodes()}
    room_for_one_more = workers is None or len(used) < workers
    targets = [n for n in model.usable_nodes() if n != home and (n in used or room_for_one_more)]
    count = len(ackers)
    if not targets:
        return AckerSpread(dict(node_of), f"ackers: all {count} on {home}; no other node may take one")
    # Ackers may differ in measured load: each is tried on each node, the best pair taken.
    best: tuple[tuple[float, int, float], str, str] | None = None
    for acker in ackers:
        for node in targets:
            placement.move(acker, node)
            score = placement.score()
            placement.move(acker, home)
            if best is None or score > best[0]:
                best = (score, acker, node)
    assert best is not None
    (after, _, _), mover, target = best
    cost = 1.0 - after / before if before > 0 else 0.0
    if cost > tolerance:
        return AckerSpread(dict(node_of), f"ackers: all {count} on {home}; one on {target} would lower the "
                                          f"predicted rate {cost:.1%} (more than {tolerance:.1%})")
    spread = dict(node_of)
    spread[mover] = target
    return AckerSpread(spread, f"ackers: {mover} moved from {home} to {target}, so that a move of one worker "
                               f"leaves others acking (predicted rate {_change(cost)})")


def _change(cost: float) -> str:
    if abs(cost) < 5e-4:
        return "unchanged"
    return f"{cost:.1%} lower" if cost > 0 else f"{-cost:.1%} higher"
