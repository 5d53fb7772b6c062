"""From executor -> node placements to executor -> slot assignments.

Most planners decide only the node of each executor. Executors of one topology
on one node then share one worker (slot): intra-worker transfer is cheapest, and
Storm's own schedulers do the same on small clusters. The slot chosen on a node
is the one the topology already uses there (no worker restart), else the
node's first slot.
"""
from __future__ import annotations

from collections import Counter
from types import MappingProxyType
from typing import Mapping

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.problem import Problem, Slot


def slots_for_nodes(problem: Problem, node_of: Mapping[str, str]) -> Mapping[str, Slot]:
    """One slot per used node; prefers the topology's current port on that node."""
    current_ports: dict[str, Counter] = {}
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
