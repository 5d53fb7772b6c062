"""Re-planning running topologies: when, within which budget, and only if it pays.

The Nimbus plugin offers every running (fully placed) topology to the service
now and then (``planner.replan.interval.secs``). :class:`Replanner` answers
each offer with either the current placement (nothing moves, nothing restarts)
or a new one:

1. A topology that is not fully placed is planned as always (its executors
   need slots); the loads and traffic used become the topology's *basis*.
2. ``planner.replan: false``, no metrics yet, or the migration budget of the
   current period spent: keep.
3. Re-plan only when the measured loads or traffic differ from the basis by
   more than ``planner.replan.threshold`` (relative: sum of absolute changes
   over the larger total), when ``planner.replan.period.secs`` have passed
   since the last re-plan, or (under ``planner.replan.cautious``) when a node
   has become short of CPU since then.
4. The topology's own ``planner.algorithm`` plans on the measured problem with
   ``max_migrations`` = what is left of the budget; the result is then cut to
   that budget (:func:`~storm_planner.adaptation.budget.limit_moves`) whatever the
   planner did with it. When a node is short of CPU (``CPU_PRESSURE_PCT``) and the
   topology's load fits under ``RELIEF_TARGET_PCT`` of the cluster, the planner is
   asked for a placement within that share of every node
   (``planner.max.cpu.utilisation``, D_CPU, unless the topology sets a lower one):
   what the gate below accepts. Left to fill nodes to 100 % by measured load,
   ``topdown`` re-planned trends on the end-to-end bench into the same layout,
   its quota-held busiest node at 93 % beside an idle one.
5. The new placement is applied only if it beats the current one (:mod:`.gate`, decided in :mod:`.decision`) on the same
   measured problem: overload lower by ``planner.replan.min.gain`` (relative)
   and at least 5 % of a core, or the same overload and traffic / load distance
   lower by at least ``planner.replan.min.gain``; or, when a node is short of
   CPU, a placement that ends it (busiest node ``MIN_RELIEF_PCT`` lower and
   under ``CPU_PRESSURE_PCT``, no link put under pressure), ahead of traffic:
   measured CPU never exceeds what a node has (a quota-held node shows 93-100 %
   while its queue grows), so the pressure line is where overload can be
   seen, and its relief counts as overload's does. Traffic is the bytes between
   nodes when every tuple size is measured and a link is at least half busy,
   then the tuples between workers; worse on either by ``min_gain`` refuses the
   move. Of the planner's moves only the fewest that pay are taken (1, 2, 4,
   ... best first): every move restarts workers. Under ``planner.replan.cautious``
   a move for traffic or balance must also take ``MIN_RELIEF_PCT`` (5) points off
   the busiest node or link the topology is short of. Otherwise keep;
   the basis is updated either way, so the same metrics do not trigger again.
   With ``planner.replan.cautious`` (the default) nothing moves while the
   topology is short of nothing: no node at ``CPU_PRESSURE_PCT`` (90 %) of its
   CPU or more, no link at ``LINK_PRESSURE_PCT`` (50 %) or more. A move restarts
   the workers it touches, the spout's often among them, and loses what they had
   in flight; a placement that already keeps up gains nothing worth that (on the
   end-to-end bench every planner that moved for traffic or balance on links at
   20 % collapsed from 400 to 11-126 tuples/s for the rest of the run). And a
   move that restarts a spout's worker is taken only to relieve overload; for
   traffic or balance the plan is tried without such moves. With
   ``planner.source.resumable`` (the topology's spouts resume from their committed
   progress after a restart, as Kafka's spout does or the kit's replay spouts with
   ``<prefix>.checkpoint_dir``: a restart delays their tuples but loses none) such a
   move may also relieve the CPU pressure, when no relief without it is found; the
   plan's note then says how many moves restart a spout's worker and why. For traffic
   or balance they stay held back: the restart still stops the source for tens of
   seconds. (On the end-to-end bench topdown's first trends plan puts the spout and
   both counts in one quota-held worker: only moves out of the spout's worker relieve it.)
   With ``planner.replan.first.correction`` the first re-plan on measured metrics of a
   placement made on declared loads is the exception, once: it faces the gain gate alone
   (short of nothing or not), and may restart a spout's worker when the source is
   resumable. The first plan is a guess on priors (a user tuple of unknown size, the
   acker's messages), and the cautious gate kept the guess for the topology's life.
   A placement made on remembered loads (an earlier run's, ``planner.loads.remembered``)
   is not corrected: it is what a correction would plan, on costs measured at the
   earlier run's highest rate, while the first windows measure the new run at its first,
   low rate (Word Count on the 2 Mbit/s cluster: the first re-plan, at 646 t/s, moved 6
   executors of a placement made on the calibration's costs, and what it left sustained
   0.84 x RAS).
   Whatever the mode, an acker moves only when every spout's worker restarts by the plan's other moves
   (:func:`~storm_planner.adaptation.spout_workers.ackers_with_spouts`): it holds the tuple trees of every
   spout's tuples. Last, the move is priced (:mod:`.costs`): the workers it restarts, their start on their
   nodes (measured, else a prior), the drain, and for an acker or a spout the tuples in flight, against the
   share by which it lowers the bottleneck over ``planner.replan.period.secs``; under
   ``planner.replan.cautious`` (the move is for something the topology is short of) a move that costs more
   than it gains is refused, and so is a relief that would run a new worker on a node short of CPU. The
   note gives both figures either way.
6. After a re-plan that moved executors, their workers restart and lose what
   was in flight; their first windows measure the move, not the placement.
   For ``planner.replan.settle.secs`` (30) nothing is re-planned and the basis
   follows what the new placement measures, so the next decision compares
   settled figures (without it, each move's own disturbance triggered the next
   move: ``topdown`` moved 8-12 executors per 40 s on the end-to-end bench).

``planner.replan.force`` makes the first offer ``planner.replan.force.after.secs`` after the first plan move
named executors to a named node, once, past every gate (:mod:`.forced`): an experiment on moving itself.

With ``planner.replan.trust`` the gates of step 5 are off: the planner's plan is applied as it is (but for
moves that restart a spout's worker: the source stays put, as the input nodes of that paper), cut
to what is left of the budget (an experiment on a planner's own adaptation: ALBIC's collocation
period after period against COLA's re-optimisation, Madsen et al. §5.4), and the first re-plan waits for
``planner.replan.period.secs`` instead of coming with the first metrics. ``planner.initial.algorithm``
names the planner of step 1 alone (a topology's first placement), e.g. ``spread``, the little-collocation
start of that experiment.

Budget: at most ``planner.max.migrations`` executor moves per
``planner.replan.period.secs`` (unset: no limit), counted when a plan that
moves executors is returned.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from storm_planner.adaptation.budget import moves_between
from storm_planner.adaptation.costs import MoveContext
from storm_planner.adaptation.decision import decide, placement_figures
from storm_planner.adaptation.forced import ForceError, forced_move
from storm_planner.adaptation.gate import RELIEF_TARGET_PCT, short_of_cpu
from storm_planner.adaptation.replan_settings import (
    CALIBRATION_HEADROOM,
    DEFAULT_SETTLE_S,
    ReplanSettings,
)
from storm_planner.core import settings
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Options, Problem
from storm_planner.metrics.loads_and_traffic import change
from storm_planner.planners import available
from storm_planner.planners import run as run_planner

log = logging.getLogger("storm_planner.replan")

# A topology not offered for this long is gone (killed): its state is dropped.
FORGET_AFTER_S = 3600.0

Runner = Callable[[Problem, str], Plan]

@dataclass
class _TopologyState:
    loads: dict[str, float]
    traffic: dict[str, float]
    measured: bool
    planned_at: float
    budget_started_at: float
    moves_used: int = 0
    last_note: str = ""
    seen_at: float = 0.0
    settle_until: float = float("-inf")   # after moves: metrics until then are not compared
    placed_on_estimates: bool = False      # planned on declared loads, no measured re-plan decided since
    pressed: bool = False                  # a node short of CPU at the last re-plan (planner.replan.cautious)
    measured_since: float | None = None    # the first measured offer of a placement made on estimates
    created_at: float = 0.0                # the first plan or offer this service saw
    forced: bool = False                   # planner.replan.force was answered
    settle_s: float = DEFAULT_SETTLE_S     # the settling of its last move (settle() starts it again)


def _basis(problem: Problem) -> tuple[dict[str, float], dict[str, float]]:
    loads = {e.id: e.load for e in problem.executors}
    traffic: dict[str, float] = {}
    for t in problem.traffic:
        key = f"{t.source}>{t.target}"
        traffic[key] = traffic.get(key, 0.0) + t.rate
    return loads, traffic


@dataclass
class Replanner:
    """Decides, per offered topology, between the current placement and a new plan."""

    enabled: bool = True                # False: running topologies are never moved (serve --no-replan)
    clock: Callable[[], float] = time.monotonic
    runner: Runner = run_planner
    # Re-plans run (the planner ran on a running topology): "moved" or "kept"; "migrations": executors moved.
    counts: Counter[str] = field(default_factory=lambda: Counter(moved=0, kept=0, migrations=0))
    _states: dict[str, _TopologyState] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def plan(self, problem: Problem, algorithm: str, context: MoveContext | None = None) -> Plan:
        """The plan for ``problem``'s topology; ``context``: what the service knows of it beyond the problem
        (the drain, the tuples in flight, measured worker starts), what the gate prices a move with
        (:mod:`.costs`; None: priors, and no drain)."""
        topology = problem.topology_id
        now = self.clock()
        self._prune(now, topology)
        fully_placed = bool(problem.current) and all(e.id in problem.current for e in problem.executors)
        if not fully_placed:
            plan = self.runner(problem, initial_algorithm(problem, algorithm))
            # Remembered loads are a real run's, not estimates: a placement made on them is what the first
            # correction would plan, and at the first windows' low rate the correction plans on worse costs.
            self._remember(problem, now).placed_on_estimates = not problem.loads_known
            return plan
        settings = ReplanSettings.of(problem, algorithm)
        with self._lock:
            state = self._states.get(topology)
        if not self.enabled:
            return self._keep(problem, algorithm, "re-planning off in this service (--no-replan)", quiet=True)
        if not settings.enabled:
            return self._keep(problem, algorithm, "re-planning off for this topology (planner.replan: false)")
        if settings.force is not None:
            forced = self._forced(problem, algorithm, now, settings)
            if forced is not None:
                return forced
        if not problem.measured:
            return self._keep(problem, algorithm, "running; no metrics to re-plan on yet: current placement kept")

        if state is not None and now < state.settle_until:
            self._remember(problem, now, planned=False)  # the basis is what the moved placement measures
            return self._keep(problem, algorithm,
                              f"settling after the last re-plan's moves ({state.settle_until - now:.0f} s left of "
                              f"planner.replan.settle.secs {settings.settle_s:g}): current placement kept",
                              quiet=True)
        # The current placement's figures, evaluated once: every gate below compares with them, and at
        # production scale (36k executors) an evaluation takes a fifth of a second.
        current = placement_figures(problem, problem.current, settings.capacity)
        why, wait = _why_now(problem, state, settings, now, current)
        if wait:
            return self._keep(problem, algorithm, wait, quiet=True, figures=current)
        if state is None:
            state = self._remember(problem, now, planned=False)

        left = None if settings.budget is None else max(0, settings.budget - state.moves_used)
        if left == 0:
            return self._keep(problem, algorithm,
                              f"{why}, but the migration budget ({settings.budget} moves per "
                              f"{settings.period_s:g} s) is spent: current placement kept", quiet=True,
                              figures=current)
        return self._replan(problem, algorithm, now, state, settings, why, left, current, context or MoveContext())

    def _replan(self, problem: Problem, algorithm: str, now: float, state: _TopologyState,
                settings: ReplanSettings, why: str, left: int | None, current: Mapping[str, float],
                context: MoveContext) -> Plan:
        """Run the planner on the running topology and keep its placement or take the moves the gates
        allow (module docstring, steps 4-5); ``current``: the current placement's figures."""
        bounded = problem.replace(options=_candidate_options(problem, left, current))
        candidate = self.runner(bounded, algorithm)
        self._replanned(problem, now, state, settings, current)
        decision = decide(problem, candidate.assignments, left, settings, current, bounded,
                           self._correcting(state, settings, current), context)
        cut = len(moves_between(problem.current, candidate.assignments))
        budget_note = ("" if left is None else f" (budget {settings.budget} per {settings.period_s:g} s, "
                       f"{left} left{'; ' + str(cut) + ' wanted' if cut > len(decision.moved) else ''})")
        if decision.verdict is None:
            with self._lock:
                self.counts["kept"] += 1
            kept = self._keep(problem, algorithm, f"re-planned ({why}) with {algorithm}: {decision.reason}; "
                                                  f"current placement kept{budget_note}{decision.note}",
                              figures=current)
            # The parallelism advice stands whatever the placement (its 'now' rate is for the
            # planner's own placement of the running executors).
            return kept.replace(advice=candidate.advice)
        self._moved(state, now, settings, len(decision.moved))
        notes = list(candidate.notes) + [f"re-planned ({why}): {len(decision.moved)} executor(s) move"
                                         f"{budget_note}; {decision.verdict}{decision.note}"]
        after = decision.figures if decision.figures is not None else evaluate(problem, decision.assignments)
        figures = {**after, "moves": float(len(decision.moved))}
        log.info("re-plan %s with %s: %s moves; %s", problem.topology_id, algorithm, len(decision.moved),
                 decision.verdict)
        return candidate.replace(assignments=MappingProxyType(decision.assignments),
                                 figures=MappingProxyType(figures), notes=tuple(notes))

    def _moved(self, state: _TopologyState, now: float, settings: ReplanSettings, moves: int) -> None:
        with self._lock:
            state.moves_used += moves
            state.settle_s = settings.settle_s
            state.settle_until = now + settings.settle_s
            self.counts.update(moved=1, migrations=moves)

    def settle(self, topology_id: str) -> None:
        """The topology's last move is over only now (its drain resumed it): its settling starts again, so
        the first windows of the restarted workers are not compared with the settled basis."""
        with self._lock:
            state = self._states.get(topology_id)
            if state is not None:
                state.settle_until = self.clock() + state.settle_s

    def _forced(self, problem: Problem, algorithm: str, now: float, settings: ReplanSettings) -> Plan | None:
        """The forced move of ``planner.replan.force`` (:mod:`.forced`) when it is due, once; None otherwise."""
        with self._lock:
            state = self._states.get(problem.topology_id)
        if state is None:
            state = self._remember(problem, now, planned=False)
        if state.forced or now - state.created_at < settings.force_after_s:
            return None
        with self._lock:
            state.forced = True
        try:
            assignment, moved = forced_move(problem, str(settings.force))
        except ForceError as error:
            return self._keep(problem, algorithm, f"forced move not made: {error}; current placement kept")
        if not moved:
            return self._keep(problem, algorithm, f"forced move ({settings.force}): every executor it names is "
                                                  f"there already; current placement kept")
        self._moved(state, now, settings, len(moved))
        log.info("re-plan %s: forced move of %s (planner.replan.force)", problem.topology_id, ", ".join(moved))
        return Plan(algorithm=algorithm, assignments=MappingProxyType(assignment),
                    figures=MappingProxyType({**evaluate(problem, assignment), "moves": float(len(moved))}),
                    notes=(f"forced move (planner.replan.force={settings.force}): {len(moved)} executor(s) move "
                           f"({', '.join(moved)}), past every gate (caution, gain, price, budget, the acker rule)",))

    def _replanned(self, problem: Problem, now: float, state: _TopologyState, settings: ReplanSettings,
                   current: Mapping[str, float]) -> None:
        """A re-plan ran: its loads and traffic are the new basis, and whether a node was short of CPU then
        (``current``: the figures of the current placement)."""
        self._remember(problem, now, planned=True)
        pressed = settings.cautious and short_of_cpu(current)
        with self._lock:
            state.pressed = pressed

    def _correcting(self, state: _TopologyState, settings: ReplanSettings, current: Mapping[str, float]) -> bool:
        """Is this the first measured re-plan of a placement made on estimates, to be corrected
        (``planner.replan.first.correction``)? Asked once per placement: the chance is spent either way, but
        for the capacity planners, which keep it while the topology has room (its placement predicted to
        sustain ``CALIBRATION_HEADROOM`` times the rate it serves): a move then buys capacity nobody asks for
        and restarts workers, losing what their bolts hold in memory (``make demo``'s counts)."""
        with self._lock:
            if settings.capacity and current.get("capacity_factor", 0.0) >= CALIBRATION_HEADROOM:
                return False
            correcting, state.placed_on_estimates = settings.first_correction and state.placed_on_estimates, False
        return correcting

    def _prune(self, now: float, offered: str) -> None:
        with self._lock:
            if offered in self._states:
                self._states[offered].seen_at = now
            for topology in [t for t, s in self._states.items() if now - s.seen_at > FORGET_AFTER_S]:
                del self._states[topology]

    def forget(self, topology_id: str) -> None:
        with self._lock:
            self._states.pop(topology_id, None)

    def _remember(self, problem: Problem, now: float, *, planned: bool = True) -> _TopologyState:
        """Record the loads and traffic a (re-)plan used: the basis later metrics are compared with."""
        loads, traffic = _basis(problem)
        with self._lock:
            state = self._states.get(problem.topology_id)
            if state is None:
                state = _TopologyState(loads, traffic, problem.measured, now if planned else float("-inf"),
                                       budget_started_at=now, seen_at=now, created_at=now)
                self._states[problem.topology_id] = state
            else:
                state.loads, state.traffic, state.measured = loads, traffic, problem.measured
                if planned:
                    state.planned_at = now
            return state

    def _keep(self, problem: Problem, algorithm: str, note: str, quiet: bool = False,
              figures: Mapping[str, float] | None = None) -> Plan:
        """The current placement as the plan: the plugin sees no change and does nothing. ``figures``:
        the current placement's, when already evaluated."""
        if not quiet:
            with self._lock:
                state = self._states.get(problem.topology_id)
                if state is None or state.last_note != note:
                    log.info("re-plan %s: %s", problem.topology_id, note)
                if state is not None:
                    state.last_note = note
        figures = evaluate(problem, problem.current) if figures is None else figures
        return Plan(
            algorithm=algorithm,
            assignments=MappingProxyType(dict(problem.current)),
            figures=MappingProxyType({**figures, "moves": 0.0}),
            notes=(note,),
        )


def initial_algorithm(problem: Problem, algorithm: str) -> str:
    """The planner of a topology's first placement: ``planner.initial.algorithm`` when set (a registered
    planner, else :class:`~storm_planner.core.settings.SettingError`), else ``algorithm``."""
    initial = settings.INITIAL_ALGORITHM.read(problem.options.extra)
    if not initial:
        return algorithm
    if initial not in available():
        raise settings.SettingError(f"{settings.INITIAL_ALGORITHM.key}={initial!r}: no such planner (registered: "
                                    f"{', '.join(sorted(available()))})", settings.INITIAL_ALGORITHM.key)
    return str(initial)


def _candidate_options(problem: Problem, left: int | None, current: Mapping[str, float]) -> Options:
    """The options the planner re-plans with: the budget left, and D_CPU when relieving CPU pressure
    (``current``: the current placement's figures).
    Narrowed, never rebuilt: every other option (heap limit, GMA's D_CPU/D_BW, ...) must survive."""
    options = dataclasses.replace(problem.options, max_migrations=left)
    share = _relief_share(problem, current)
    return options if share is None else dataclasses.replace(options, max_cpu_utilisation=share)


def _relief_share(problem: Problem, current: Mapping[str, float]) -> float | None:
    """``max_cpu_utilisation`` for the planner when the current placement is short of CPU and the topology
    fits under ``RELIEF_TARGET_PCT`` of every usable node (other work included); else None (as asked).

    A planner that fills nodes to their whole capacity by measured load reproduces the pressure it was
    asked to relieve (module docstring, step 4); one that honours D_CPU (``gma``, the
    Chatzistergiou & Viglas family: §2.2's load-balancing n.mu) leaves the headroom the gate asks for.
    """
    if not short_of_cpu(current):
        return None
    share = RELIEF_TARGET_PCT / 100.0
    if problem.options.max_cpu_utilisation is not None and problem.options.max_cpu_utilisation <= share:
        return None
    active = [n for n in problem.nodes if not n.draining]
    room = sum(max(0.0, share * n.capacity - n.used_cpu) * n.speed for n in active)
    return share if problem.total_load <= room else None   # else no placement gets every node under it


def _why_now(problem: Problem, state: _TopologyState | None, settings: ReplanSettings,
             now: float, current: Mapping[str, float]) -> tuple[str, str]:
    """(why re-plan now, "") or ("", why wait): a new basis, a node newly short of CPU (``current``: the
    current placement's figures), metrics changed past the threshold, or a period passed. Starts a new
    budget period when one has passed."""
    if state is None:
        return "no earlier plan known to this service", ""
    if now - state.budget_started_at >= settings.period_s:
        state.budget_started_at, state.moves_used = now, 0
    if not state.measured:
        if state.measured_since is None:
            state.measured_since = now
        if settings.trust and now - state.measured_since < settings.period_s:
            # An experiment on a planner's own adaptation re-plans on its period clock: the first windows
            # are warm-up figures, and a move then would fall before its first measured period.
            return "", "measured loads and traffic arrived; under planner.replan.trust the first re-plan waits " \
                       f"for the period ({settings.period_s:g} s after the first metrics)"
        return "measured loads and traffic replace the estimates it was planned on", ""
    pressed = _newly_short_of_cpu(state, settings, current)
    if pressed:
        return pressed, ""
    loads, traffic = _basis(problem)
    moved = max(change(state.loads, loads), change(state.traffic, traffic))
    if moved > settings.threshold:
        return f"metrics changed {moved:.0%} (threshold {settings.threshold:.0%})", ""
    if now - state.planned_at >= settings.period_s:
        return f"{settings.period_s:g} s since the last re-plan (metrics changed {moved:.0%})", ""
    return "", f"metrics changed {moved:.0%} (threshold {settings.threshold:.0%}); current placement kept"


def _newly_short_of_cpu(state: _TopologyState, settings: ReplanSettings, figures: Mapping[str, float]) -> str:
    """Why re-plan now when a node has become short of CPU since the last re-plan ('' otherwise); only under
    ``planner.replan.cautious``, where that pressure is what lets a running topology move.

    The change threshold compares the whole topology's loads, so one node can climb from 73 to 97 % of its
    CPU without crossing it: on the end-to-end bench bargains' i7 did, and was first re-planned a period
    later, inside the measured window. ``figures``: the current placement's."""
    if not settings.cautious:
        return ""
    if state.pressed:
        return ""    # short when last re-planned: the period, or a change past the threshold, re-plans it
    if short_of_cpu(figures):
        return f"a node is short of CPU (busiest at {figures['max_utilisation']:.0f} % of its CPU)"
    return ""
