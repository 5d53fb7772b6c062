"""Moves of a re-plan that would restart a spout's worker, or an acker's without the spouts, undone.

Storm restarts a worker whenever its executors change, so a move restarts the worker it leaves and the
one it joins. When one of them runs a spout, the spout's pending tuples die with it and come back only as
replays after ``topology.message.timeout.secs`` (on the end-to-end bench, 200-2,000 tuples lost per such
re-plan). Pure functions of a problem and a plan, O(E) (and O(S log S) for a node's S slots).

Tried and measured (``benchmarks/README.md``, *e2e-relief*): sending a move into a spout's worker to a new
worker on the same node instead, so that bargains' join and vwap could leave an i7 held at 97 % of its
CPU quota. The relief restarted the i7's worker: 4,000 tuples failed and were replayed, throughput fell to
148 of 400 t/s and p99 rose from 69-98 ms to 2.3-43 s in the measured window. The rule stays as it was
for the cautious re-plan. Under ``planner.replan.trust`` (Madsen et al.'s experiment, whose spouts are
input machines of their own) a move into a spout's worker goes to another worker on its node: only the
moves out of it are what restarts it, and without the redirect an executor sharing the spout's node could
never be joined by its partner.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from storm_planner.adaptation.budget import moves_between
from storm_planner.adaptation.costs import restarted_slots
from storm_planner.core.elements import SPOUT
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.system_streams import ACKER


class Spared(NamedTuple):
    """A plan with the spouts' workers spared: what is left of it, and how many moves were undone."""

    plan: dict[str, Slot]
    undone: int


def spout_slots(problem: Problem, *assignments: Mapping[str, Slot]) -> frozenset[Slot]:
    """The slots that hold a spout executor in any of ``assignments``."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    return frozenset(assignment[e.id] for e in problem.executors if e.component in spouts
                     for assignment in assignments if e.id in assignment)


def sparing_spout_workers(problem: Problem, plan: Mapping[str, Slot]) -> Spared:
    """``plan`` with every move undone that leaves or joins a slot holding a spout executor now or in the
    plan, or moves a spout executor."""
    spouts_at = spout_slots(problem, problem.current, plan)
    spared, undone = dict(plan), 0
    for executor_id in moves_between(problem.current, plan):
        now, then = problem.current[executor_id], plan[executor_id]
        if now in spouts_at or then in spouts_at:
            spared[executor_id] = now
            undone += 1
    return Spared(spared, undone)


def spouts_held_still(problem: Problem, plan: Mapping[str, Slot]) -> Spared:
    """``plan`` with every spout executor where it is and no move out of the workers they run in; a move
    into one goes to another worker on the same node instead (the node is what the planner chose; the
    worker is only where :func:`~storm_planner.core.slots.slots_for_nodes` found the topology on it), and
    is undone only where the node has no other slot. Unlike :func:`sparing_spout_workers`, the slots the
    plan would give the spouts do not count: the spouts stay where they are (Madsen et al.'s input nodes,
    under ``planner.replan.trust``)."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    moving_spouts = {e.id for e in problem.executors if e.component in spouts}
    still = {problem.current[e] for e in moving_spouts if e in problem.current}
    in_use: dict[str, Slot] = {}   # per node, the lowest slot the plan uses there that holds no spout
    for slot in plan.values():
        if slot not in still and (slot.node not in in_use or slot.port < in_use[slot.node].port):
            in_use[slot.node] = slot
    spared, undone = dict(plan), 0
    for executor_id in moves_between(problem.current, plan):
        now, then = problem.current[executor_id], plan[executor_id]
        if executor_id in moving_spouts or now in still:
            spared[executor_id] = now
            undone += 1
        elif then in still:
            other = in_use.get(then.node) or _free_slot(problem, still, then.node)
            if other is None:
                spared[executor_id] = now   # the node has no other slot
                undone += 1
            elif other.node == now.node:
                spared[executor_id] = now   # already on the node the planner chose: nothing to gain, no move
            else:
                spared[executor_id] = other
    return Spared(spared, undone)


def _free_slot(problem: Problem, still: set[Slot], node_id: str) -> Slot | None:
    """The lowest port of ``node_id`` that holds no spout; None when the node has no other slot."""
    try:
        ports = sorted(problem.node(node_id).slots)
    except KeyError:
        return None
    free = [port for port in ports if Slot(node_id, port) not in still]
    return Slot(node_id, free[0]) if free else None


def ackers_with_spouts(problem: Problem, plan: Mapping[str, Slot]) -> Spared:
    """``plan`` with every move of an acker undone unless every spout's worker restarts in it anyway.

    An acker holds the tuple trees of every spout's tuples (Storm picks a tree's acker by its root id, so
    each acker holds some of every spout task's): a restarted acker loses them, and the spouts'
    ``max.spout.pending`` fills with tuples that can only time out. Measured on the local cluster, a relief
    that moved one acker to a small node stalled Top-K for ``topology.message.timeout.secs`` (0 acked,
    2,003 failed in a 30 s window). An acker may move only with the executors whose trees it holds: when
    the plan restarts every spout's worker by its other moves (then those trees are lost with the spouts,
    and replayed from their source whatever the acker does), or not at all. Judged on the plan without
    the acker moves, so that an acker leaving a spout's worker does not count as that worker's restart.
    O(E)."""
    ackers = {e.id for e in problem.executors if e.component == ACKER}
    acker_moves = [e for e in moves_between(problem.current, plan) if e in ackers]
    if not acker_moves:
        return Spared(dict(plan), 0)
    without = dict(plan)
    for executor_id in acker_moves:
        without[executor_id] = problem.current[executor_id]
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    restarting = restarted_slots(problem.current, without)
    spout_slots = [without[e.id] for e in problem.executors if e.component in spouts and e.id in without]
    if spout_slots and all(slot in restarting for slot in spout_slots):
        return Spared(dict(plan), 0)
    return Spared(without, len(acker_moves))
