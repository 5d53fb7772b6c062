"""``even``: Storm's EvenScheduler as a planner (the baseline).

As ``org.apache.storm.scheduler.EvenScheduler`` (Storm 2.8.3) places one topology:

- executors that already run in a live slot stay there;
- the topology takes ``topology.workers`` minus the slots it keeps, from the
  free slots (not its own), in ``sortSlots`` order: each node's free ports
  ascending, nodes with the most free slots first (ties by node id), dealt in
  turns, so consecutive slots sit on different nodes;
- the executors without a slot, in start-task order, are dealt round-robin
  over those new slots.

Resource-unaware, as Storm's. ``options.workers`` is ``topology.workers``
(default: one worker per node). One deliberate difference: when Storm has no
new slot to give (the topology already has its workers alive, or no slot is
free) it leaves the unplaced executors unassigned; a plan must place every
executor, so they are dealt over the slots the topology keeps instead.

Complexity: O(E log E + N log N + S) for E executors, N nodes and S slots.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import zip_longest
from types import MappingProxyType

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.planners.base import Planner


def interleaved_slots(problem: Problem) -> list[Slot]:
    """Every slot of the usable nodes, node by node in turns: a:1, b:1, a:2, b:2, ... (nodes by id)."""
    nodes = sorted((n for n in problem.nodes if not n.draining), key=lambda n: n.id)
    per_node = [[Slot(n.id, p) for p in sorted(n.slots)] for n in nodes]
    return [slot for turn in zip_longest(*per_node) for slot in turn if slot is not None]


def storm_sorted_slots(slots: Iterable[Slot]) -> list[Slot]:
    """EvenScheduler.sortSlots: ports ascending per node, the nodes with the most slots first
    (ties by node id), then one slot of each node in turn."""
    per_node: dict[str, list[Slot]] = {}
    for slot in sorted(slots, key=lambda s: (s.node, s.port)):
        per_node.setdefault(slot.node, []).append(slot)
    # sorted() is stable, also with reverse=True: equal sizes keep node id order, as Storm's TreeMap.
    groups = sorted(per_node.values(), key=len, reverse=True)
    return [slot for turn in zip_longest(*groups) for slot in turn if slot is not None]


def storm_first_slots(ports_of: Mapping[str, Iterable[int]], count: int) -> list[Slot]:
    """The first ``count`` slots of :func:`storm_sorted_slots` over ``ports_of`` (node -> its ports).

    Only the nodes and turns those slots come from are looked at: O(N log N + count) for N nodes,
    where sorting every slot of a 1,900-supervisor cluster cost ~190 ms per topology.
    """
    nodes = sorted((-len(ports), node, ports) for node, ports in ((n, set(p)) for n, p in ports_of.items()) if ports)
    chosen: list[Slot] = []
    ordered: dict[str, list[int]] = {}
    turn = 0
    while len(chosen) < count and nodes and -nodes[0][0] > turn:
        for size, node, ports in nodes:
            if -size <= turn:
                break  # nodes are by size: the rest have no slot left for this turn
            if node not in ordered:
                ordered[node] = sorted(ports)
            chosen.append(Slot(node, ordered[node][turn]))
            if len(chosen) == count:
                break
        turn += 1
    return chosen


def executor_order(executor_id: str) -> tuple[int, int, str]:
    """Storm's executor order: by start task for "[s-e]" ids, else by name."""
    if executor_id.startswith("[") and "-" in executor_id:
        start = executor_id[1:].split("-", 1)[0]
        if start.lstrip("-").isdigit():
            return (0, int(start), executor_id)
    return (1, 0, executor_id)


class EvenPlanner(Planner):
    """Storm's EvenScheduler placing one topology: executors round-robin over new slots interleaved
    across nodes, running executors left where they are.

    Takes no parameters; ``options.workers`` is ``topology.workers``.
    """

    name = "even"
    summary = "Storm's EvenScheduler: executors round-robin over slots interleaved across nodes"
    baseline = True
    resource_aware = False  # as Storm's own scheduler is

    def plan(self, problem: Problem) -> Plan:
        usable = {n.id: n.slots for n in problem.nodes if not n.draining}
        kept = {e: s for e, s in problem.current.items() if s.port in usable.get(s.node, ())}
        kept_slots = storm_sorted_slots(set(kept.values()))
        # Storm's available slots: free ones only; the topology's own are not offered again.
        own: dict[str, set[int]] = {}
        for slot in problem.current.values():
            own.setdefault(slot.node, set()).add(slot.port)
        free = {node: set(ports) - own[node] if node in own else ports for node, ports in usable.items()}
        workers = int(problem.options.get("workers", 0)) or len(problem.nodes)
        new_slots = storm_first_slots(free, max(0, workers - len(kept_slots)))
        # Storm deals the unplaced executors over the new slots only; with none (see the module
        # docstring) they go over the slots the topology keeps, as a plan must place them all.
        targets = new_slots or kept_slots or storm_first_slots(usable, 1)
        unplaced = sorted((e.id for e in problem.executors if e.id not in kept), key=executor_order)
        assignments = dict(kept)
        assignments.update({e: targets[i % len(targets)] for i, e in enumerate(unplaced)})
        return Plan(algorithm=self.name, assignments=MappingProxyType(assignments))
