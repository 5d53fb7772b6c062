"""From executor -> node placements to executor -> slot assignments.

Most planners decide only the node of each executor. Executors of one topology
on one node then share one worker (slot): intra-worker transfer is cheapest, and
Storm's own schedulers do the same on small clusters. The slot chosen on a node
is the one the topology already uses there (no worker restart), else the
node's first slot.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.problem import Problem, Slot


def slots_for_nodes(problem: Problem, node_of: Mapping[str, str]) -> Mapping[str, Slot]:
    """One slot per used node; prefers the topology's current port on that node."""
    current_ports: dict[str, Counter[int]] = {}
    for slot in problem.current.values():
        current_ports.setdefault(slot.node, Counter())[slot.port] += 1
    port_of: dict[str, int] = {}
    for node_id in set(node_of.values()):
        try:
            node = problem.node(node_id)
        except KeyError:
            raise InfeasibleError(f"the plan uses unknown node {node_id!r}") from None
        used = current_ports.get(node_id)
        usable = [p for p, _ in used.most_common() if p in node.slots] if used else []
        port_of[node_id] = usable[0] if usable else node.slots[0]
    slot_of = {node_id: Slot(node_id, port) for node_id, port in port_of.items()}  # one object per slot
    return MappingProxyType({e: slot_of[n] for e, n in node_of.items()})


def workers_note(problem: Problem, assignments: Mapping[str, Slot]) -> str:
    """How many workers a plan uses against ``topology.workers``, and why.

    Storm's ResourceAwareScheduler treats ``topology.workers`` as a bound, not a count to fill: fewer
    workers mean fewer tuples serialised between JVMs. The planners here do the same (one worker per
    node they use, more only where a worker's heap limit splits one); only ``even`` and ``storm-default``
    fill the count, as Storm's EvenScheduler and DefaultScheduler do.
    """
    slots = set(assignments.values())
    nodes = {slot.node for slot in slots}
    asked = problem.options.extra.get("workers")
    try:
        asked = int(asked) if asked is not None else None
    except (TypeError, ValueError):
        asked = None
    used = f"{len(slots)} worker(s) on {len(nodes)} node(s)"
    if asked is None:
        return f"{used}: one per node used"
    if len(slots) < asked:
        return (f"{used}, fewer than topology.workers {asked} (an upper bound, as Storm's RAS reads it): "
                f"executors on one node share a worker, so tuples between them are not serialised")
    if len(slots) > asked:
        return (f"{used}, more than topology.workers {asked}: the plan spreads over more nodes "
                f"(capacity, or the worker heap limit) than that many workers can cover")
    return f"{used} = topology.workers {asked}"
