"""A forced move: named executors to a named node, once, for experiments on moving itself.

``planner.replan.force: "[3-3],__acker@sup-slow"`` makes the re-planner answer the first offer of the
running topology ``planner.replan.force.after.secs`` after its first plan with exactly that move, past
every gate (cautious, gain, price, budget, the acker rule) but through the same drain as any re-plan
(:mod:`storm_planner.service.planning.drain`), so a benchmark can show the same move drained
(``planner.replan.drain.always``), undrained (``planner.replan.drain: false``), and as the service decides.

Each item before ``@`` is an executor id (``[3-3]``) or a component id (``count``: its first executor, by
task, that is not on the node yet, one outside the spouts' workers first, then one outside a worker that
holds every executor of a bolt or every acker, whose restart would stop every tuple tree); after ``@`` a node id (a
supervisor id), ``node:port`` for one slot, or ``*``: the node holding the fewest executors of the first
item's component (ties: the last by id; never the node an executor named by id is on), so that the move
moves something whatever the first plan did. Without a port the executors join the topology's worker on
that node that holds no spout (its lowest port), else the node's lowest free slot, else its worker with a
spout; with ``node:new`` they start a worker of their own in the node's lowest free slot, so that no worker
already on the node restarts for them (joining the worker that holds the other ackers restarts them all:
nothing is acked until it is up again), and a component's executor on that node may move too (into the new
worker), so that the move need not take one from the spouts' workers. Every worker a move leaves or joins
restarts, so a component named rather than an executor keeps the spouts' workers running where it can: the
move is then about the named component, not the spouts (the drain benchmark's move of a count and an acker,
issue #49). Pure, O(executors).
"""
from __future__ import annotations

from storm_planner.adaptation.costs import first_task, tree_carriers
from storm_planner.adaptation.spout_workers import spout_slots
from storm_planner.core import settings
from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Problem, Slot

NEW_WORKER = "new"      # ``node:new``: the node's lowest free slot


class ForceError(ProblemError):
    """A forced move that names what the topology or the cluster does not have; the message says what."""


def forced_move(problem: Problem, text: str) -> tuple[dict[str, Slot], list[str]]:
    """(the assignment with the move, the executors it moves) for the ``planner.replan.force`` value
    ``text``; :class:`ForceError` when an executor, component, node or port is unknown."""
    items, _, where = text.rpartition("@")
    spouts_at = spout_slots(problem, problem.current)
    where = where.strip()
    if where == "*":
        where = _fewest_of(problem, items.split(",")[0].strip())
    target = _target(problem, where, spouts_at)
    new_worker = where.endswith(f":{NEW_WORKER}")
    assignment = dict(problem.current)
    moved: list[str] = []
    # a component's executors outside the spouts' workers first, then outside a worker whose restart would
    # stop every tree (it holds a bolt's every executor, or every acker), each group by task
    sole = _sole_holders(problem)
    executors = sorted(problem.executors, key=lambda e: (problem.current.get(e.id) in spouts_at,
                                                         problem.current.get(e.id) in sole, first_task(e.id)))
    for item in (part.strip() for part in items.split(",")):
        if item.startswith("["):
            if item not in assignment:
                raise ForceError(f"{settings.REPLAN_FORCE.key}: the topology has no executor {item}")
            chosen = item
        else:
            of_component = [e.id for e in executors if e.component == item]
            if not of_component:
                raise ForceError(f"{settings.REPLAN_FORCE.key}: the topology has no component {item!r}")
            # into a new worker any executor moves, one on its node too; else one not on the node yet
            elsewhere = [e for e in of_component if e not in moved
                         and (assignment[e] != target if new_worker else assignment[e].node != target.node)]
            if not elsewhere:
                continue   # every executor of it is on the node already
            chosen = elsewhere[0]
        if assignment[chosen] != target:
            assignment[chosen] = target
            moved.append(chosen)
    return assignment, sorted(moved)


def _sole_holders(problem: Problem) -> frozenset[Slot]:
    """The workers holding every executor of a bolt or every acker: a move that restarts one stops every
    tuple tree through that component until it is up again."""
    held = ({problem.current[e] for e in ids if e in problem.current} for ids in tree_carriers(problem).values())
    return frozenset(next(iter(slots)) for slots in held if len(slots) == 1)


def _target(problem: Problem, where: str, spouts_at: frozenset[Slot]) -> Slot:
    node_id, _, port_text = where.partition(":")
    node = next((n for n in problem.nodes if n.id == node_id), None)
    if node is None:
        raise ForceError(f"{settings.REPLAN_FORCE.key}: no supervisor {node_id!r} in this round "
                         f"(nodes: {', '.join(sorted(n.id for n in problem.nodes))})")
    own = sorted({s.port for s in problem.current.values() if s.node == node_id})   # the topology's workers there
    free = sorted(port for port in node.slots if port not in own)
    if port_text == NEW_WORKER:
        if not free:
            raise ForceError(f"{settings.REPLAN_FORCE.key}: {node_id} has no free slot for a new worker")
        return Slot(node_id, free[0])
    if port_text:
        port = int(port_text)
        if port not in node.slots and port not in own:
            raise ForceError(f"{settings.REPLAN_FORCE.key}: {node_id} has no slot {port} free for it")
        return Slot(node_id, port)
    without_spout = [port for port in own if Slot(node_id, port) not in spouts_at]
    ports = [*without_spout, *free, *own]
    if not ports:
        raise ForceError(f"{settings.REPLAN_FORCE.key}: {node_id} has no free slot")
    return Slot(node_id, ports[0])


def _fewest_of(problem: Problem, item: str) -> str:
    """The node holding the fewest executors of ``item``'s component (an executor id: its own), ties to the
    last node by id."""
    component = next((e.component for e in problem.executors if e.id == item), item)
    named_at = problem.current.get(item)
    workers = {slot.node for slot in problem.current.values()}
    # a node that can take it: a slot of its own or a worker of the topology there; not where it already is
    held = {node.id: 0 for node in problem.nodes
            if (node.slots or node.id in workers) and (named_at is None or node.id != named_at.node)}
    for executor in problem.executors:
        slot = problem.current.get(executor.id)
        if executor.component == component and slot is not None and slot.node in held:
            held[slot.node] += 1
    if not held:
        raise ForceError(f"{settings.REPLAN_FORCE.key}: no supervisor in this round to move {item!r} to")
    return min(sorted(held, reverse=True), key=lambda node: held[node])
