"""Which of a re-plan's moves to apply: the gain gate, the restarts weighed, the move priced.

Step 5 of :mod:`.replan`'s docstring in code. :func:`decide` takes the planner's plan for a running topology
and the current placement's figures, and returns a :class:`Decision`: the fewest of the plan's moves that
pay (:func:`fewest_moves`), with acker moves held back unless the spouts' workers restart too, moves that
restart a spout's worker weighed (``planner.source.resumable``), and the move priced (:mod:`.costs`); or
the current placement and why. Each cut is evaluated once: O(log moves) evaluations per decision.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from storm_planner.adaptation.budget import limit_moves, moves_between
from storm_planner.adaptation.costs import MoveContext, price_move, short_for_new_workers
from storm_planner.adaptation.gate import (
    RELIEF,
    SUSTAINABLE,
    improvement,
    relieves_overload,
    short_of_cpu,
    short_of_something,
    unrelieved,
)
from storm_planner.adaptation.replan_settings import ReplanSettings
from storm_planner.adaptation.spout_workers import (
    Spared,
    ackers_with_spouts,
    sparing_spout_workers,
    spouts_held_still,
)
from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem, Slot
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.planner import DEFAULT_WORKER_FIXED

# A cut of a plan: (assignment, executors moved, why it pays or None).
_Cut = tuple[dict[str, Slot], list[str], str | None]


@dataclass(frozen=True)
class Decision:
    """Which of the planner's moves to apply: ``verdict`` None keeps the current placement (``reason``)."""

    assignments: Mapping[str, Slot]
    moved: list[str]
    verdict: str | None
    reason: str = ""
    note: str = ""
    figures: Mapping[str, float] | None = None   # the assignments' figures, when evaluated already


def decide(problem: Problem, plan: Mapping[str, Slot], left: int | None, settings: ReplanSettings,
            before: Mapping[str, float], asked: Problem | None = None, correcting: bool = False,
            context: MoveContext | None = None) -> Decision:
    """The gain gate and, with ``settings.cautious``, the restarts weighed and the move priced (module
    docstring, step 5). ``before``: the current placement's figures; ``asked``: the problem the planner was
    given (its D_CPU orders the moves, :func:`fewest_moves`); ``correcting``: the first measured re-plan of
    a placement made on estimates, with ``planner.replan.first.correction`` (:func:`_first_correction`);
    ``context``: what the move is priced with (:mod:`.costs`). Acker moves are held back unless the spouts'
    workers restart too (:func:`~.spout_workers.ackers_with_spouts`), whatever the mode."""
    context = context or MoveContext()
    enforce = settings.cautious and short_of_something(before)
    if correcting and settings.cautious:
        # The one correction is priced for its note, never refused by the price (docs/metrics.md, step 5): the
        # price weighs the gain at the rate served now, and below capacity a capacity planner's correction
        # gains rate the topology may be asked for later, which it cannot see (docs/capacity.md).
        return _priced(problem, _first_correction(problem, plan, left, settings, before, asked), settings,
                       before, context, enforce, price_binds=False)
    if not moves_between(problem.current, plan):
        return Decision(problem.current, [], None, "no move needed")
    if settings.trust:
        # Input never moves (Madsen et al.'s input nodes): a move that restarts a spout's worker stops the
        # source for as long as the worker takes to come back (on a loaded machine, longer than a 30 s
        # period: a real run under trust processed nothing).
        spared, held_back = spouts_held_still(problem, plan)
        spared, note = _ackers_held(problem, spared)
        limited, moved = limit_moves(problem, spared, left)
        note = (f"; {held_back} move(s) held back that restart a spout's worker" if held_back else "") + note
        if not moved:
            return Decision(problem.current, [], None, "no move but ones that restart a spout's worker", note)
        return Decision(limited, moved, "applied as planned (planner.replan.trust)", note=note)
    if settings.cautious and not short_of_something(before):
        return Decision(problem.current, [], None,
                         f"it keeps up (busiest node at {before['max_utilisation']:.0f} % of its CPU, busiest "
                         f"link at {before.get('max_network_utilisation', 0.0):.0f} %), and a move would only "
                         f"restart workers (planner.replan.cautious)")
    plan, note = _ackers_held(problem, plan)
    # Cautious and short of CPU: a cut that only cuts traffic is no answer while a larger one relieves.
    relief = settings.cautious and short_of_cpu(before)
    limited, moved, verdict = fewest_moves(problem, plan, left, before, settings.min_gain, asked, relief,
                                            settings.capacity)
    if settings.cautious and moved and verdict is not None and not verdict.startswith("overload"):
        (limited, moved, verdict), spout_note = _weigh_spout_restarts(problem, plan, (limited, moved, verdict),
                                                                      left, before, settings, asked, relief)
        note += spout_note
    if not moved:
        return Decision(problem.current, [], None, "no move needed", note)
    if verdict is None:
        return Decision(problem.current, moved, None, f"no placement better by {settings.min_gain:.0%}", note)
    after = placement_figures(problem, limited, settings.capacity)
    if settings.cautious and not relieves_overload(verdict):
        still_short = unrelieved(before, after)
        if still_short:
            return Decision(problem.current, moved, None, f"{verdict}, but {still_short}", note)
    return _priced(problem, Decision(limited, moved, verdict, note=note, figures=after), settings, before,
                   context, enforce)


def _ackers_held(problem: Problem, plan: Mapping[str, Slot]) -> tuple[dict[str, Slot], str]:
    """``plan`` without the acker moves the spouts' workers do not restart with, and a note on them."""
    held = ackers_with_spouts(problem, plan)
    note = (f"; {held.undone} acker move(s) held back: an acker holds the tuple trees of every spout's tuples "
            f"and moves only when the spouts' workers restart too" if held.undone else "")
    return held.plan, note


def _priced(problem: Problem, decision: Decision, settings: ReplanSettings, before: Mapping[str, float],
            context: MoveContext, enforce: bool, price_binds: bool = True) -> Decision:
    """``decision`` with its move priced (:mod:`.costs`): refused, with ``enforce``, when a new worker
    would be short of CPU or (``price_binds``) the cost is more than the gain over the period; the note
    says both."""
    if decision.verdict is None or not decision.moved:
        return decision
    after = (decision.figures if decision.figures is not None else
             placement_figures(problem, decision.assignments, settings.capacity))
    price = price_move(problem, decision.assignments, before, after, context, settings.period_s)
    note = f"{decision.note}; {price.note()}"
    short = short_for_new_workers(problem, decision.assignments) if relieves_overload(decision.verdict) else ""
    if enforce and short:
        return Decision(problem.current, decision.moved, None, f"{decision.verdict}, but {short}", note)
    if enforce and price_binds and not price.pays:
        return Decision(problem.current, decision.moved, None,
                         f"{decision.verdict}, but the move costs more than it gains", note)
    return dataclasses.replace(decision, note=note, figures=after)


def placement_figures(problem: Problem, assignment: Mapping[str, Slot], capacity: bool) -> dict[str, float]:
    """The evaluator's figures of ``assignment``; with ``capacity``, also the factor of the reference rate it
    sustains (``capacity_factor``, :mod:`storm_planner.planners.capacity.model`), which the gate weighs first."""
    figures = dict(evaluate(problem, assignment))
    if capacity:
        model = CapacityModel(problem, problem.costs.executor_fixed,
                              problem.costs.worker_fixed if problem.costs.worker_fixed is not None else
                              DEFAULT_WORKER_FIXED)
        figures["capacity_factor"] = model.factor({e: slot.node for e, slot in assignment.items()})
    return figures


def _first_correction(problem: Problem, plan: Mapping[str, Slot], left: int | None, settings: ReplanSettings,
                      before: Mapping[str, float], asked: Problem | None) -> Decision:
    """The gain gate alone, once: the fewest of the planner's moves that beat the current placement by
    ``min_gain`` on the measured problem, though it is short of nothing. A move that restarts a spout's
    worker is held back unless the source is resumable (``planner.source.resumable``). On the end-to-end
    bench topdown's first trends plan, made on priors, sent 564 bytes per tweet over the links against RAS's
    440 (two of four ackers alone on the i5s); its measured re-plans found better placements, but the
    topology was short of nothing and each of them restarted the spout's worker, so none was taken."""
    plan, note = _ackers_held(problem, plan)
    if not settings.resumable:
        spared = sparing_spout_workers(problem, plan)
        plan, note = spared.plan, note + _spared_note(spared, "not resumable")
    limited, moved, verdict = fewest_moves(problem, plan, left, before, settings.min_gain, asked, False,
                                            settings.capacity)
    if not moved:
        return Decision(problem.current, [], None, "first correction: no move needed", note)
    if verdict is None:
        return Decision(problem.current, moved, None,
                         f"first correction: no placement better by {settings.min_gain:.0%}", note)
    restarts = sparing_spout_workers(problem, limited).undone
    why = ("; first correction of a placement made on estimates (planner.replan.first.correction)"
           + (f", {restarts} move(s) restart a spout's worker (resumable)" if restarts else ""))
    return Decision(limited, moved, verdict, note=note + why)


def _weigh_spout_restarts(problem: Problem, plan: Mapping[str, Slot], cut: _Cut, left: int | None,
                          before: Mapping[str, float], settings: ReplanSettings, asked: Problem | None,
                          relief: bool) -> tuple[_Cut, str]:
    """A cautious cut (assignment, moved, verdict) for anything but overload, with the moves that restart a
    spout's worker weighed; returns (the cut kept, a note for the plan).

    With ``planner.source.resumable`` the spouts resume without loss: the CPU pressure's relief is worth a
    spout's restart, but only when no relief spares it (a restart still stops the source for tens of
    seconds). A capacity planner's gate reads the same relief as a rise of the predicted sustainable rate
    (it weighs the rate first); while the topology is short of CPU (``relief``) that rise is weighed as the
    relief (on the capacity run's hetero cluster, 40 re-plans of Word Count under CPU pressure were refused
    because it was not). Otherwise only relieving overload is worth it: the same plan is tried without
    those moves.
    Not the CPU pressure's relief either: allowed that, topdown re-planned Top-K on the end-to-end bench
    twice within a minute, each time restarting the spout's worker, and lost 439 tuples (the replay spout
    then started its feed over).
    """
    limited, _, verdict = cut
    assert verdict is not None
    spared = sparing_spout_workers(problem, plan)
    if settings.resumable and (verdict.startswith(RELIEF) or (relief and verdict.startswith(SUSTAINABLE))):
        restarts = sparing_spout_workers(problem, limited).undone
        if not restarts:
            return cut, ""
        alternative = fewest_moves(problem, spared.plan, left, before, settings.min_gain, asked, relief,
                                   settings.capacity)
        if alternative[1] and alternative[2] is not None and relieves_overload(alternative[2]):
            return alternative, _spared_note(spared, "a relief without them was found")
        return cut, (f"; {restarts} move(s) restart a spout's worker: its source resumes from its committed "
                     f"progress (planner.source.resumable), so relieving the CPU pressure is worth that")
    if not spared.undone:
        return cut, ""
    cost = ("its source stops while the worker restarts; only relieving overload or the CPU pressure is worth that"
            if settings.resumable else
            "its tuples in flight are lost; only relieving overload is worth that, or the CPU pressure with "
            "planner.source.resumable")
    return (fewest_moves(problem, spared.plan, left, before, settings.min_gain, asked, relief, settings.capacity),
            _spared_note(spared, cost))


def _spared_note(spared: Spared, why: str) -> str:
    """What sparing the spouts' workers did to a plan, for its notes ('' when nothing)."""
    return f"; {spared.undone} move(s) held back that restart a spout's worker ({why})" if spared.undone else ""


def fewest_moves(problem: Problem, plan: Mapping[str, Slot], budget: int | None, before: Mapping[str, float],
                  min_gain: float, asked: Problem | None = None, relief: bool = False,
                  capacity: bool = False) -> tuple[dict[str, Slot], list[str], str | None]:
    """The plan cut to the fewest moves (1, 2, 4, ... up to ``budget``) that already pay, best moves first.

    Every move restarts the workers it touches (tens of seconds without their tuples), so a re-plan
    takes only as many of the planner's moves as its gain needs: on the end-to-end bench ``topdown``
    re-planned a whole CPU-bound topology (8 moves) where moving its ackers would have relieved the
    node. Returns (assignment, moved, verdict); the verdict is None when not even the whole cut pays.
    The moves are ranked on ``asked`` (the planner's problem): under the D_CPU of a relief re-plan the
    ones that take load off a node above it come first; with ``relief`` a smaller cut is taken only for
    a verdict that relieves overload or the CPU pressure (a traffic verdict there would be refused as
    unrelieved, when a larger cut of the same plan relieves). O(log moves) cuts and evaluations.
    """
    wanted = len(moves_between(problem.current, plan))
    if not wanted:
        return dict(problem.current), [], None   # e.g. every move restarted a spout's worker and was held back
    most = wanted if budget is None else min(budget, wanted)
    by_bytes = problem.traffic_model.sizes_known()
    steps = [k for k in (2 ** i for i in range(max(1, most).bit_length())) if k < most] + [most]
    for count in steps:
        limited, moved = limit_moves(asked or problem, plan, count)
        held = ackers_with_spouts(problem, limited)   # a cut may leave out the spout moves an acker needs
        if held.undone:
            limited, moved = held.plan, moves_between(problem.current, held.plan)
        verdict = improvement(before, placement_figures(problem, limited, capacity), min_gain, by_bytes=by_bytes)
        if count == most or (verdict is not None and (not relief or relieves_overload(verdict))):
            return limited, moved, verdict
    raise AssertionError("unreachable: the last step is the whole cut")
