"""Moves of a re-plan that would restart a spout's worker: undone, or sent to a worker of their own.

Storm restarts a worker whenever its executors change, so a move restarts the worker it leaves and the
one it joins. When one of them runs a spout, the spout's pending tuples die with it and come back only as
replays after ``topology.message.timeout.secs`` (on the end-to-end bench, 200-2,000 tuples lost per such
re-plan). Pure functions of a problem and a plan, O(E + slots).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from storm_planner.adaptation.budget import moves_between
from storm_planner.core.elements import SPOUT
from storm_planner.core.problem import Problem, Slot


class Spared(NamedTuple):
    """A plan with the spouts' workers spared: what is left of it, and how many moves were undone or sent
    to a new worker."""

    plan: dict[str, Slot]
    undone: int
    redirected: int = 0

    @property
    def changed(self) -> int:
        """The plan's moves undone or sent to a new worker."""
        return self.undone + self.redirected


def sparing_spout_workers(problem: Problem, plan: Mapping[str, Slot]) -> Spared:
    """``plan`` with the spouts where they are and no move out of or into the workers they run in now.

    A spout's move and a move out of a spout's worker are undone. A move into one goes instead to a slot of
    the same node that the topology uses neither now nor in the plan, a new worker there, one per node,
    so the node still takes the load off another; only when the node has no such slot, or the move stays on
    its node, is it undone. The slots the plan would give the spouts do not count: their moves are undone.
    On the end-to-end bench topDown kept bargains' join and vwap on a quota-held i7 at 97 % of its CPU for
    the whole cell (p99 215 ms against DefaultScheduler's 67): every relief moved them into the i5s'
    workers, both of which run a spout, and was held back; counting the planned spout slots too held back
    the relief's every move, since the re-plan put a spout on the i7. More workers than
    ``topology.workers`` are allowed (an upper bound, as Storm's RAS reads it).
    """
    spout_slots = _spout_slots(problem, {})
    new_worker = _free_slots(problem, plan)
    spared, undone, redirected = dict(plan), 0, 0
    for executor_id in moves_between(problem.current, plan):
        now, then = problem.current[executor_id], plan[executor_id]
        if now in spout_slots or (then in spout_slots and now.node == then.node):
            # Out of a spout's worker, or into one on its own node: a new worker there relieves nothing.
            spared[executor_id] = now
            undone += 1
        elif then in spout_slots:
            free = new_worker.get(then.node)
            spared[executor_id] = now if free is None else free
            undone += free is None
            redirected += free is not None
    return Spared(spared, undone, redirected)


def spout_worker_restarts(problem: Problem, plan: Mapping[str, Slot]) -> int:
    """How many of ``plan``'s moves restart a spout's worker: leave or join a slot that holds a spout
    executor now or in the plan (a spout's own move among them). O(E)."""
    spout_slots = _spout_slots(problem, plan)
    return sum(1 for executor_id in moves_between(problem.current, plan)
               if problem.current[executor_id] in spout_slots or plan[executor_id] in spout_slots)


def _spout_slots(problem: Problem, plan: Mapping[str, Slot]) -> set[Slot]:
    """The slots that hold a spout executor now, or in ``plan``."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    return {slot for e in problem.executors if e.component in spouts
            for slot in (problem.current.get(e.id), plan.get(e.id)) if slot is not None}


def _free_slots(problem: Problem, plan: Mapping[str, Slot]) -> dict[str, Slot]:
    """Each node's first slot that the topology uses neither now nor in ``plan`` (nodes with none left out)."""
    used: dict[str, set[int]] = {}
    for slot in (*problem.current.values(), *plan.values()):
        used.setdefault(slot.node, set()).add(slot.port)
    free = {}
    for node in problem.nodes:
        port = next((p for p in node.slots if p not in used.get(node.id, ())), None)
        if port is not None:
            free[node.id] = Slot(node.id, port)
    return free


def spouts_held_still(problem: Problem, plan: Mapping[str, Slot]) -> Spared:
    """``plan`` with every spout executor where it is and no move out of or into the workers they run in.
    Unlike :func:`sparing_spout_workers`, the slots the plan would give the spouts do not count: the spouts
    stay where they are (Madsen et al.'s input nodes, under ``planner.replan.trust``). O(E)."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    moving_spouts = {e.id for e in problem.executors if e.component in spouts}
    still = {problem.current[e] for e in moving_spouts if e in problem.current}
    spared, undone = dict(plan), 0
    for executor_id in moves_between(problem.current, plan):
        now, then = problem.current[executor_id], plan[executor_id]
        if executor_id in moving_spouts or now in still or then in still:
            spared[executor_id] = now
            undone += 1
    return Spared(spared, undone)
