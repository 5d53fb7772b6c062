"""``even``: Storm's EvenScheduler as a planner (the baseline).

Storm sorts the free slots so that consecutive slots sit on different nodes
(round-robin interleaving of each node's ports), takes as many as the topology
asks workers, and deals the executors over those slots round-robin in executor
order. Executors that already run in a live slot stay there, as in Storm; only
the unplaced ones are dealt. ``options.workers`` is ``topology.workers``
(default: one worker per node).

Complexity: O(E + S log S) for E executors and S slots.
"""
from __future__ import annotations

from itertools import zip_longest
from types import MappingProxyType

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.planners.base import Planner, register


def interleaved_slots(problem: Problem) -> list[Slot]:
    """Slots ordered node-by-node in turns: a:1, b:1, a:2, b:2, ... (EvenScheduler's sort)."""
    nodes = sorted((n for n in problem.nodes if not n.draining), key=lambda n: n.id)
    per_node = [[Slot(n.id, p) for p in sorted(n.slots)] for n in nodes]
    return [slot for turn in zip_longest(*per_node) for slot in turn if slot is not None]


def executor_order(executor_id: str) -> tuple:
    """Storm's executor order: by start task for "[s-e]" ids, else by name."""
    if executor_id.startswith("[") and "-" in executor_id:
        start = executor_id[1:].split("-", 1)[0]
        if start.lstrip("-").isdigit():
            return (0, int(start), executor_id)
    return (1, 0, executor_id)


@register
class EvenPlanner(Planner):
    name = "even"
    summary = "Storm's EvenScheduler: executors round-robin over slots interleaved across nodes"
    baseline = True
    resource_aware = False  # as Storm's own scheduler is

    def plan(self, problem: Problem) -> Plan:
        valid = set(interleaved_slots(problem))
        kept = {e: s for e, s in problem.current.items() if s in valid}
        kept_slots = list(dict.fromkeys(kept.values()))
        workers = int(problem.options.get("workers", 0)) or len(problem.nodes)
        new_slots = [s for s in interleaved_slots(problem) if s not in kept_slots]
        new_slots = new_slots[: max(0, workers - len(kept_slots))]
        # Storm deals the unassigned executors over the newly taken slots; when the
        # topology already has all its workers, over the slots it keeps.
        targets = new_slots or kept_slots or interleaved_slots(problem)[:1]
        unplaced = sorted((e.id for e in problem.executors if e.id not in kept), key=executor_order)
        assignments = dict(kept)
        assignments.update({e: targets[i % len(targets)] for i, e in enumerate(unplaced)})
        return Plan(algorithm=self.name, assignments=MappingProxyType(assignments))
