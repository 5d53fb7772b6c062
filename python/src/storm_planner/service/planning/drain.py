"""Drain before a move: a re-plan that moves executors of a running topology pauses its spouts first.

Every move restarts the workers whose executors change, and what they had in flight dies with them: a
moved acker stalled Top-K for ``topology.message.timeout.secs`` on the local cluster (its trees were lost;
the spout's ``max.spout.pending`` filled with tuples that could only time out: 0 acked, 2,003 failed in a
30 s window). Storm's own ``rebalance`` deactivates the topology and waits before it reassigns; so does
the service now, in five phases, each answered on one of the plugin's offers or run by the service's
drain thread (:class:`DrainCoordinator`):

1. **pause** — the re-planner decided a move (:mod:`storm_planner.adaptation.replan`): the service answers
   the current placement, asks the plugin for the topology again soon (``TopologyPlan.reoffer_ms``), and
   once that answer has gone back (Nimbus is inside a scheduling round until then) deactivates the
   topology through Nimbus (by name). Deactivated spouts are called no more; they still take acks and
   fails, and the kit's replay spouts save their checkpoint.
2. **drain** — the current placement stays while the tuples in flight are acked: per spout task, the trees
   it started less those acked or failed, from its latest metrics window ending after the pause
   (:mod:`storm_planner.metrics.inflight`). Drained at 0, or after ``planner.replan.drain.secs``
   (default 30) with the count at that moment: the move happens anyway, and the note says how many.
3. **move** — the plugin's next offer is answered with the move; it applies it at once.
4. **start** — the restarted workers are up when their first metrics windows come from new processes on
   their slots, at most ``planner.replan.start.secs`` (default 60). Each worker's start (from the move to
   its tasks running) is remembered per node: what the gain gate prices the next move with
   (:class:`~storm_planner.adaptation.costs.StartTimes`).
5. **resume** — the service activates the topology through Nimbus, and the re-planner's settling starts
   again (its basis follows the restarted workers' first windows).

Each phase ends with a ``"drain"`` record in the plan log (``phase``, ``seconds``, ``note``; the drain's
``in_flight``), which the dashboard shows on the topology's timeline.

**Nothing stays deactivated.** The topologies the service deactivated are marked in a store that outlives
it (ZooKeeper with ``serve --zookeeper``, else a file beside the plan log) before Nimbus is asked, and
unmarked once activated: a restarted service activates every marked one first (:meth:`recover`). A drain
whose topology loses executors (a worker died; the plugin places them, or falls back to Storm's scheduler),
whose placement changes under it, whose move the plugin did not apply, or whose plugin stops offering
(``OFFER_WAIT_S`` with no offer: the service unreachable, Nimbus restarted) gives the move up and
resumes. An activation that fails (Nimbus unreachable) is retried, backing off to every 30 s, until it
succeeds or Nimbus says the topology is gone (killed mid-drain); a stopping service activates what it
paused before it exits. Every outcome is logged and recorded.

**Not drained**: with ``planner.replan.drain: false``, without a Nimbus address (``serve --nimbus``) or
without metrics (``serve --zookeeper``: the tuples in flight cannot be counted) the move is answered at
once, as before, and its note says why it was not drained. Nor is a move the topology's flow survives
(:func:`~storm_planner.adaptation.costs.flow_goes_on`, unless ``planner.replan.drain.always``): it
restarts no spout's worker, leaves every bolt and the ackers an executor that can take their tuples, and
the spouts' ``topology.max.spout.pending`` (sent by the plugin) holds every tree it may lose beside those in
flight, so the trees through the other workers go on being acked. A
deactivation that fails moves the topology undrained too (and activates it after, in case Nimbus did
deactivate it). The restarted workers' starts
are measured all the same (phases ``move`` and ``start`` in the plan log).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from storm_planner.adaptation.budget import moves_between
from storm_planner.adaptation.costs import MoveContext, StartTimes, restarted_slots, skips_drain
from storm_planner.adaptation.state import MemoryStateStore, StateStore, StateStoreError
from storm_planner.core import settings
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.metrics.inflight import InFlight, slot_pids, spout_in_flight, start_seconds, workers_up
from storm_planner.metrics.windows import TaskWindow
from storm_planner.service.planning.spout_counts import (
    NimbusControl,
    ThriftNimbus,
    pending_room,
    spout_tasks,
    spouts_of,
    tasks_of,
)
from storm_planner.submit.operations import TopologyGone

log = logging.getLogger("storm_planner.drain")

FRESH_PERIODS = 2.0        # a spout task's window counts for the tuples in flight now if it ended this many periods ago
REOFFER_MS = 1000          # during a drain, the plugin offers the topology again this soon (Nimbus' round permitting)
POLL_S = 0.5               # the drain thread looks at the windows this often
OFFER_WAIT_S = 30.0        # drained, no offer for this long: the plugin stopped offering; resume without the move
UNANSWERED_S = 30.0        # a pause whose answer never reached the plugin (after_answer never came) is dropped
DEACTIVATION_LAG_MS = 1000  # a window must end this long after the pause: the workers see it through ZooKeeper
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)
STOP_RESUME_S = 5.0        # a stopping service tries this long to activate what it paused
MARKERS_KEY = "paused"
PAUSE, DRAIN, MOVE, START, RESUME = "pause", "drain", "move", "start", "resume"

Windows = Callable[[str], Mapping[int, Sequence[TaskWindow]]]


@dataclass(frozen=True)
class DrainSettings:
    enabled: bool = True
    drain_s: float = 30.0
    start_s: float = 60.0
    always: bool = False

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> DrainSettings:
        return cls(settings.REPLAN_DRAIN.read(options), settings.REPLAN_DRAIN_SECS.read(options),
                   settings.REPLAN_START_SECS.read(options), settings.REPLAN_DRAIN_ALWAYS.read(options))


@dataclass
class Drain:
    """One topology's drain (or, not paused, one undrained move whose workers' starts are measured)."""

    topology_id: str
    name: str
    spouts: frozenset[str]
    before: dict[str, Slot]
    plan: Plan                         # the re-planner's plan: the move
    settings: DrainSettings
    paused: bool                       # the spouts are to be paused (False: an undrained move, measured)
    state: str                         # pausing, draining, ready, moved, resuming
    at: float                          # when the current state began (monotonic)
    released: bool = False             # the answer that paused it has gone back to the plugin
    paused_wall: float = 0.0           # when Nimbus deactivated it (epoch s)
    moved_wall: float = 0.0            # when the move was answered (epoch s)
    in_flight: int | None = None
    in_flight_before: int | None = None   # at the decision, before the pause
    restarted: dict[Slot, frozenset[int]] = field(default_factory=dict)   # slot -> its tasks after the move
    old_pids: dict[Slot, int] = field(default_factory=dict)
    starts: dict[Slot, float] = field(default_factory=dict)
    retry: int = 0
    next_try: float = 0.0
    failed_once: bool = False
    why: str = ""                      # why it resumes without having moved, when so


class DrainCoordinator:
    """The drains of the service's topologies (module docstring); thread-safe.

    ``nimbus``: Nimbus' address (None: nothing is drained); ``windows``: a topology's metrics windows by
    task (None: no metrics, nothing is drained); ``record``: writes a plan-log record; ``markers``: where
    the paused topologies are marked (default: memory); ``control``: Nimbus' activate and deactivate
    (default: over Thrift at ``nimbus``); ``on_done``: told a topology id once its drain resumed it;
    ``threaded`` False: no drain thread, :meth:`tick` advances the drains (unit tests, on a fake clock).
    """

    def __init__(self, nimbus: str | None = None, windows: Windows | None = None,
                 record: Callable[[dict[str, Any]], None] | None = None, markers: StateStore | None = None,
                 control: NimbusControl | None = None, on_done: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 poll_s: float = POLL_S, offer_wait_s: float = OFFER_WAIT_S, threaded: bool = True) -> None:
        self.nimbus = nimbus
        self.windows = windows
        self.record = record
        self.markers = markers or MemoryStateStore()
        self.control: NimbusControl | None = control or (ThriftNimbus(nimbus) if nimbus else None)
        self.on_done = on_done
        self.clock, self.wall = clock, wall
        self.poll_s, self.offer_wait_s = poll_s, offer_wait_s
        self.start_times = StartTimes()
        self._pauses: dict[str, float] = {}          # topology name -> its last drain's pause but the start
        self._drains: dict[str, Drain] = {}
        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._pending = threading.local()             # pauses decided by the call this thread answers
        self._thread: threading.Thread | None = None
        self._threaded = threaded
        self._closed = False

    # -- what the handler asks -------------------------------------------------------------------------
    def not_drained(self, options: Mapping[str, Any]) -> str:
        """Why a move of a topology with ``options`` would not be drained ('' when it would)."""
        if not DrainSettings.of(options).enabled:
            return "planner.replan.drain: false"
        if not settings.METRICS_ENABLED.read(options):
            return "planner.metrics.enabled: false: the tuples in flight cannot be counted"
        if not self.nimbus or self.control is None:
            return "this service does not know Nimbus (serve --nimbus HOST:PORT)"
        if self.windows is None:
            return "this service reads no metrics (serve --zookeeper): the tuples in flight cannot be counted"
        return ""

    def context(self, spec: Any, problem: Problem) -> MoveContext:
        """What a move of the topology would cost beyond its problem (:mod:`~storm_planner.adaptation.costs`)."""
        options = dict(spec.options or {})
        why = self.not_drained(options)
        period_s = settings.METRICS_PERIOD_SECS.read(options)
        flight = self._in_flight_now(spec.id, problem, period_s)
        return MoveContext(
            drained=not why, not_drained=why or "drained", pause_s=self._pauses.get(spec.name or spec.id),
            in_flight=None if flight is None else flight.tuples, spout_rate=None if flight is None else flight.rate,
            message_timeout_s=float(getattr(spec, "message_timeout_secs", None) or 30),
            start_times=MappingProxyType(self.start_times.snapshot()),
            metrics_period_s=period_s,
            pending_room=pending_room(spec, problem), drain_always=DrainSettings.of(options).always)

    def drain_of(self, topology_id: str) -> Drain | None:
        with self._lock:
            return self._drains.get(topology_id)

    def steer(self, spec: Any, problem: Problem) -> tuple[Plan, int | None] | None:
        """The answer to an offer of a topology whose drain is under way (None: no drain; plan as usual)."""
        with self._lock:
            drain = self._drains.get(spec.id)
            if drain is None or not drain.paused:
                return None
            if not all(e.id in problem.current for e in problem.executors):
                self._give_up(drain, "the topology lost executors during its drain (a worker or supervisor "
                                     "died): the move is dropped and the spouts resume")
                return None
            return self._steer(drain, problem)

    def begin(self, spec: Any, problem: Problem, plan: Plan,
              context: MoveContext | None = None) -> tuple[Plan, int | None]:
        """The answer to the re-planner's ``plan``: a move of a running topology starts its drain (the
        current placement is answered, and the topology offered again soon), unless the flow goes on
        through it (``context``: what it was priced with; else read now); other plans pass."""
        placed = bool(problem.current) and all(e.id in problem.current for e in problem.executors)
        moved = moves_between(problem.current, plan.assignments) if placed else []
        if not moved:
            return plan, None
        options = dict(spec.options or {})
        why = self.not_drained(options) or skips_drain(problem, plan.assignments,
                                                       context or self.context(spec, problem))
        drain = Drain(spec.id, spec.name or spec.id, spouts_of(problem), dict(problem.current), plan,
                      DrainSettings.of(options), paused=not why, state="pausing", at=self.clock())
        if why:
            self._start_watch(drain, why)
            return plan.replace(notes=plan.notes + (f"not drained: {why}: moved at once",)), None
        flight = self._in_flight(spec.id, drain.spouts)
        drain.in_flight_before = None if flight is None else flight.tuples
        with self._lock:
            self._drains[spec.id] = drain
        self._jobs().append(spec.id)
        note = (f"drain: the spouts pause (Nimbus deactivate) before {len(moved)} executor(s) move; they move once "
                f"the tuples in flight are acked (at most {drain.settings.drain_s:g} s, planner.replan.drain.secs), "
                f"and the spouts resume once the restarted workers report")
        return _kept(problem, plan, (note, *plan.notes)), REOFFER_MS

    def after_answer(self) -> None:
        """The answer of this thread's call has gone back: the pauses it decided may start."""
        ids, self._pending.jobs = self._jobs(), []
        if not ids:
            return
        with self._lock:
            for topology_id in ids:
                if topology_id in self._drains:
                    self._drains[topology_id].released = True
            self._ensure_thread()
            self._wake.notify_all()

    def recover(self) -> None:
        """Resume what an earlier service left paused (its markers): first thing, in the drain thread."""
        try:
            marked = self.markers.load(MARKERS_KEY) or {}
        except StateStoreError as error:
            log.warning("drain: cannot read the paused topologies (%s): none resumed", error)
            return
        if not marked:
            return
        if self.control is None:
            log.warning("drain: %d topology(ies) marked paused (%s) but this service does not know Nimbus: "
                        "activate them by hand", len(marked), ", ".join(sorted(marked)))
            return
        with self._lock:
            for topology_id, mark in marked.items():
                if topology_id in self._drains:
                    continue
                name = str((mark or {}).get("name") or topology_id)
                drain = Drain(topology_id, name, frozenset(), {}, Plan("drain", {}), DrainSettings(),
                              paused=True, state="resuming", at=self.clock(), released=True,
                              why="the service restarted during its drain: the move is not made")
                self._drains[topology_id] = drain
            self._ensure_thread()
            self._wake.notify_all()

    def close(self) -> None:
        """Stop the drain thread; activate what is still paused (a stopping service leaves nothing paused)."""
        with self._lock:
            self._closed = True
            self._wake.notify_all()
            thread, paused = self._thread, [d for d in self._drains.values() if d.paused and d.released]
        if thread is not None:
            thread.join(timeout=2.0)
        deadline = self.clock() + STOP_RESUME_S
        for drain in paused:
            if self.clock() > deadline:
                break
            drain.why = drain.why or "the service is stopping: the move is not made"
            self._resume(drain)

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Wait until no drain is under way (tests); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if not self._drains:
                    return True
            time.sleep(0.02)
        return False

    # -- answering offers --------------------------------------------------------------------------------
    def _steer(self, drain: Drain, problem: Problem) -> tuple[Plan, int | None]:
        if drain.state in ("pausing", "draining"):
            waiting = "pausing the spouts" if drain.state == "pausing" else (
                f"draining: {'in flight unknown yet' if drain.in_flight is None else f'{drain.in_flight} in flight'}")
            return _kept(problem, drain.plan, (f"drain under way ({waiting}): the move waits",)), REOFFER_MS
        if drain.state == "ready":
            if dict(problem.current) != drain.before:
                self._give_up(drain, "the placement changed during the drain: the move is dropped")
                return _kept(problem, drain.plan, (f"drain given up: {drain.why}",)), None
            return self._move(drain, problem), REOFFER_MS
        if drain.state == "moved" and dict(problem.current) != dict(drain.plan.assignments):
            self._give_up(drain, "the plugin did not apply the move (Nimbus runs another placement): "
                                 "the spouts resume")
        note = ("drain: moved; waiting for the restarted workers' first windows" if drain.state == "moved"
                else f"drain: resuming the spouts{f' ({drain.why})' if drain.why else ''}")
        return _kept(problem, drain.plan, (note,)), None

    def _move(self, drain: Drain, problem: Problem) -> Plan:
        now = self.clock()
        self._phase(drain, MOVE, now - drain.at, "the move answered on the plugin's offer")
        drain.state, drain.at, drain.moved_wall = "moved", now, self.wall()
        self._restarting(drain)
        moved = moves_between(problem.current, drain.plan.assignments)
        flight = "in flight unknown" if drain.in_flight is None else f"{drain.in_flight} tuple(s) in flight"
        note = (f"drained: {len(moved)} executor(s) move with {flight}" if drain.in_flight == 0 else
                f"drain: {len(moved)} executor(s) move with {flight} after {drain.settings.drain_s:g} s "
                f"(planner.replan.drain.secs)")
        self._wake.notify_all()
        return drain.plan.replace(notes=drain.plan.notes + (note,))

    def _restarting(self, drain: Drain) -> None:
        """The slots the move restarts, their tasks, and the processes they run now."""
        restarted = restarted_slots(drain.before, drain.plan.assignments)
        drain.restarted = {slot: frozenset(t for e in executors for t in tasks_of(e)) for slot, executors
                           in restarted.items()}
        windows = self._windows(drain.topology_id)
        drain.old_pids = slot_pids(windows, drain.restarted) if windows else {}

    def _start_watch(self, drain: Drain, why: str) -> None:
        """An undrained move: its restarted workers' starts are measured all the same."""
        if self.windows is None:
            return
        drain.state, drain.moved_wall, drain.released = "moved", self.wall(), True
        self._restarting(drain)
        self._phase(drain, MOVE, 0.0, f"not drained ({why}): moved at once")
        with self._lock:
            self._drains.setdefault(drain.topology_id, drain)
            self._ensure_thread()
            self._wake.notify_all()

    # -- the drain thread ----------------------------------------------------------------------------------
    def _ensure_thread(self) -> None:
        if self._threaded and (self._thread is None or not self._thread.is_alive()):
            self._thread = threading.Thread(target=self._run, name="drain", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
            self.tick()
            with self._lock:
                if self._closed:
                    return
                self._wake.wait(self.poll_s)

    def tick(self) -> None:
        """Advance every drain once (the drain thread does, every ``poll_s`` and when woken)."""
        with self._lock:
            drains = list(self._drains.values())
        for drain in drains:
            try:
                self._advance(drain)
            except Exception:  # noqa: BLE001 - one drain's fault must not stop the others' resume
                log.exception("drain of %s failed; it resumes", drain.topology_id)
                if drain.state == "resuming":   # activating itself failed unexpectedly: try again later
                    drain.next_try = self.clock() + RETRY_S[-1]
                else:
                    self._give_up(drain, "the drain failed (see the service's log): the spouts resume")

    def _advance(self, drain: Drain) -> None:
        now = self.clock()
        if drain.state == "pausing":
            self._pause(drain, now)
        elif drain.state == "draining":
            self._check_drained(drain, now)
        elif drain.state == "ready" and now - drain.at > self.offer_wait_s:
            self._give_up(drain, f"no offer came within {self.offer_wait_s:g} s of the drain (the plugin "
                                 f"fell back, or the service or Nimbus is unreachable): the move is not made")
        elif drain.state == "moved":
            self._check_started(drain, now)
        elif drain.state == "resuming" and now >= drain.next_try:
            self._resume(drain)

    def _pause(self, drain: Drain, now: float) -> None:
        if not drain.released:
            if now - drain.at > UNANSWERED_S:
                self._forget(drain, PAUSE, now - drain.at, "the answer never reached the plugin: nothing "
                                                          "was paused, and nothing moves")
            return
        self._mark(drain, True)
        assert self.control is not None   # a paused drain needs Nimbus (not_drained)
        try:
            self.control.deactivate(drain.name)
        except TopologyGone as gone:
            self._mark(drain, False)
            self._forget(drain, PAUSE, self.clock() - drain.at, f"the topology is gone ({gone})")
            return
        except Exception as error:  # noqa: BLE001 - Nimbus unreachable: the move goes ahead undrained
            log.warning("drain: deactivating %s failed (%s): it moves undrained", drain.name, error)
            self._phase(drain, PAUSE, self.clock() - drain.at, f"could not pause the spouts ({_text(error)}): "
                                                               f"the move goes ahead undrained")
            with self._lock:
                if drain.state == "pausing":
                    drain.state, drain.at = "ready", self.clock()
            return
        drain.paused_wall = self.wall()
        before = "" if drain.in_flight_before is None else f"; {drain.in_flight_before} tuple(s) in flight before"
        self._phase(drain, PAUSE, self.clock() - drain.at, f"spouts paused (Nimbus deactivate){before}")
        with self._lock:
            if drain.state == "pausing":   # else given up meanwhile: it resumes
                drain.state, drain.at = "draining", self.clock()

    def _check_drained(self, drain: Drain, now: float) -> None:
        flight = self._in_flight(drain.topology_id, drain.spouts,
                                 drain.paused_wall * 1000 + DEACTIVATION_LAG_MS)
        drain.in_flight = None if flight is None else flight.tuples
        waited = now - drain.at
        if drain.in_flight == 0:
            note = f"0 tuples in flight after {waited:.1f} s"
        elif waited >= drain.settings.drain_s:
            shown = "an unknown number of" if drain.in_flight is None else str(drain.in_flight)
            note = (f"timed out after {drain.settings.drain_s:g} s (planner.replan.drain.secs) with {shown} "
                    f"tuple(s) in flight: the move goes ahead")
        else:
            return
        with self._lock:
            if drain.state != "draining":
                return
            drain.state, drain.at = "ready", now
            self._phase(drain, DRAIN, waited, note)

    def _check_started(self, drain: Drain, now: float) -> None:
        windows = self._windows(drain.topology_id)
        up = workers_up(windows, drain.restarted, drain.moved_wall * 1000, drain.old_pids) if windows else {}
        for slot, window in up.items():
            if slot not in drain.starts:
                drain.starts[slot] = start_seconds(window, drain.moved_wall * 1000)
                self.start_times.record(slot.node, drain.starts[slot])
        waited = now - drain.at
        if len(up) < len(drain.restarted) and waited < drain.settings.start_s:
            return
        starts = ", ".join(f"{slot.node}:{slot.port} in {s:.1f} s" for slot, s in sorted(drain.starts.items()))
        note = (f"{len(up)} of {len(drain.restarted)} restarted worker(s) up" + (f" ({starts})" if starts else "")
                + ("" if len(up) == len(drain.restarted) else
                   f"; the rest not after {drain.settings.start_s:g} s (planner.replan.start.secs)"))
        with self._lock:
            if drain.state != "moved":
                return
            drain.state, drain.at = "resuming", now
            self._phase(drain, START, waited, note)
        if not drain.paused:
            self._done(drain)

    def _resume(self, drain: Drain) -> None:
        assert self.control is not None
        began = drain.at
        try:
            self.control.activate(drain.name)
        except TopologyGone as gone:
            self._mark(drain, False)
            self._forget(drain, RESUME, self.clock() - began, f"the topology is gone ({gone})")
            return
        except Exception as error:  # noqa: BLE001 - retried until Nimbus answers or says the topology is gone
            delay = RETRY_S[min(drain.retry, len(RETRY_S) - 1)]
            drain.retry += 1
            drain.next_try = self.clock() + delay
            if not drain.failed_once:
                drain.failed_once = True
                log.warning("drain: activating %s failed (%s); retrying until it works", drain.name, error)
                self._record(drain, RESUME, self.clock() - began, f"activating failed ({_text(error)}): "
                                                                  f"retrying until Nimbus answers", outcome="retrying")
            return
        self._mark(drain, False)
        self._phase(drain, RESUME, self.clock() - began,
                    "spouts resumed (Nimbus activate)" + (f"; {drain.why}" if drain.why else ""))
        self._done(drain)

    # -- bookkeeping ----------------------------------------------------------------------------------------
    def _give_up(self, drain: Drain, why: str) -> None:
        with self._lock:
            log.warning("drain of %s: %s", drain.name, why)
            drain.why = why
            drain.state, drain.at, drain.next_try = "resuming", self.clock(), 0.0
            if not drain.paused:
                self._drains.pop(drain.topology_id, None)
            self._wake.notify_all()

    def _done(self, drain: Drain) -> None:
        with self._lock:
            self._drains.pop(drain.topology_id, None)
        if drain.paused and drain.paused_wall and not drain.why:
            slowest = max(drain.starts.values(), default=0.0)
            self._pauses[drain.name] = max(0.0, self.wall() - drain.paused_wall - slowest)
        if self.on_done is not None and drain.restarted:
            self.on_done(drain.topology_id)

    def _forget(self, drain: Drain, phase: str, seconds: float, note: str) -> None:
        self._phase(drain, phase, seconds, note, outcome="gone" if "gone" in note else "dropped")
        with self._lock:
            self._drains.pop(drain.topology_id, None)

    def _phase(self, drain: Drain, phase: str, seconds: float, note: str, outcome: str = "ok") -> None:
        log.info("drain %s (%s): %s %.1f s: %s", drain.name, drain.topology_id, phase, seconds, note)
        self._record(drain, phase, seconds, note, outcome)

    def _record(self, drain: Drain, phase: str, seconds: float, note: str, outcome: str = "ok") -> None:
        if self.record is None:
            return
        try:
            self.record({"event": "drain", "topology": drain.topology_id, "name": drain.name, "phase": phase,
                         "seconds": round(seconds, 3), "note": note, "outcome": outcome,
                         "drained": drain.paused, "in_flight": drain.in_flight})
        except Exception:  # noqa: BLE001 - the plan log is a record, not a reason to fail
            log.exception("could not record the drain of %s", drain.name)

    def _mark(self, drain: Drain, paused: bool) -> None:
        """Mark (or unmark) the topology as paused by this service, where a restarted one will look."""
        with self._lock:
            try:
                marked = dict(self.markers.load(MARKERS_KEY) or {})
                if paused:
                    marked[drain.topology_id] = {"name": drain.name, "since": self.wall()}
                else:
                    marked.pop(drain.topology_id, None)
                self.markers.save(MARKERS_KEY, marked)
            except StateStoreError as error:
                log.warning("drain: could not %s %s as paused (%s): a restarted service would not resume it",
                            "mark" if paused else "unmark", drain.name, error)

    def _jobs(self) -> list[str]:
        if not hasattr(self._pending, "jobs"):
            self._pending.jobs = []
        jobs: list[str] = self._pending.jobs
        return jobs

    def _windows(self, topology_id: str) -> Mapping[int, Sequence[TaskWindow]]:
        if self.windows is None:
            return {}
        try:
            return self.windows(topology_id)
        except Exception:  # noqa: BLE001 - metrics trouble: nothing measured this time
            log.exception("drain: reading the windows of %s failed", topology_id)
            return {}

    def _in_flight_now(self, topology_id: str, problem: Problem, period_s: float) -> InFlight | None:
        """The spouts' tuples in flight now: unknown (``tuples`` None) unless every spout task of ``problem``
        has a window that ended within :data:`FRESH_PERIODS` metrics periods (a stale or missing one would
        undercount them, and the count decides whether a move is drained)."""
        if self.windows is None:
            return None
        flight = self._in_flight(topology_id, spouts_of(problem), self.wall() * 1000 - FRESH_PERIODS * period_s * 1000)
        if flight is not None and flight.tasks < spout_tasks(problem):
            return InFlight(None, flight.rate, flight.reported, flight.tasks)
        return flight

    def _in_flight(self, topology_id: str, spouts: frozenset[str], since_ms: float | None = None) -> InFlight | None:
        windows = self._windows(topology_id)
        return spout_in_flight(windows, spouts, since_ms) if windows else None


def _kept(problem: Problem, plan: Plan, notes: tuple[str, ...]) -> Plan:
    """The current placement as the answer, with ``notes``."""
    return Plan(algorithm=plan.algorithm, assignments=MappingProxyType(dict(problem.current)),
                figures=MappingProxyType({"moves": 0.0}), notes=notes)


def _text(error: BaseException) -> str:
    return str(error) or type(error).__name__
