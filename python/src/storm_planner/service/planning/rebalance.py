"""Automatic rebalance: the service applies a plan's parallelism advice through Nimbus.

Storm fixes a topology's tasks at submission, and the Nimbus plugin can only
place the executors that exist, so a planner that would run more executors of a
component (``hetero`` in ``fixed`` mode) says so in the plan's ``advice``
(:class:`~storm_planner.core.plan.ParallelismAdvice`). A topology that opts in
has the service ask Nimbus for that rebalance itself; Storm then redistributes
the component's tasks over the new executors and offers the topology to the
plugin again, and the planner places the new executors.

Topology options (``planner.*`` keys of the topology conf; types, defaults and ranges in
:mod:`storm_planner.core.settings` and ``docs/settings.md``):

* ``planner.rebalance`` [false] — opt in;
* ``planner.rebalance.min.gain`` [0.10] — the least relative gain of the
  predicted max input rate (advice vs now) worth the restart of the workers;
* ``planner.rebalance.cooldown.secs`` [120] — after a rebalance (applied or
  failed), none for this long;
* ``planner.rebalance.wait.secs`` [Storm's: ``topology.message.timeout.secs``]
  — how long Storm deactivates the topology before it redistributes the tasks.

Nimbus waits on the service during a scheduling round, and a rebalance request
makes Nimbus take its own locks: the request never runs inside a round. The
handler calls :meth:`AutoRebalancer.consider` while planning (a pure decision
and a note for the plan); the request itself is started by
:meth:`AutoRebalancer.after_answer`, which the service's Thrift processor calls
once the answer has gone back to the plugin, in a background thread — at most
one per topology at a time. The thread waits until Nimbus runs the new
executors, and asks once more if it does not: Storm 2.8 can lose a rebalance
when a client reads the topology while Nimbus redistributes its tasks
(:func:`~storm_planner.submit.operations.rebalance_topology`). Every outcome
(``applied``, ``failed``) is a log line and a ``rebalance`` record in the plan
log; a failed request (Nimbus down, topology gone, rebalance lost twice)
changes nothing else. The plan of the round is applied as usual either way.

The service needs Nimbus' address for this (``serve --nimbus HOST:PORT``; the
local cluster passes it); without one the plan notes say why nothing happens.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from storm_planner.core import settings
from storm_planner.core.plan import ParallelismAdvice
from storm_planner.submit.operations import SubmitError, rebalance_topology

log = logging.getLogger("storm_planner.rebalance")

DEFAULT_MIN_GAIN = settings.REBALANCE_MIN_GAIN.default
DEFAULT_COOLDOWN_S = settings.REBALANCE_COOLDOWN_SECS.default
STORM_DEFAULT_WAIT_S = 30       # topology.message.timeout.secs' default: Storm's wait when none is given
CONFIRM_S = 60.0                # after the wait, how long a rebalance may take to show in Nimbus

# (nimbus, topology name, executors per component, wait secs) -> a description of the applied rebalance;
# raises on failure. The real one is _request_through_nimbus below.
Request = Callable[[str, str, Mapping[str, int], "int | None"], str]


@dataclass(frozen=True)
class RebalanceSettings:
    """One topology's ``planner.rebalance*`` options."""

    enabled: bool = False
    min_gain: float = DEFAULT_MIN_GAIN
    cooldown_s: float = DEFAULT_COOLDOWN_S
    wait_secs: int | None = None

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> RebalanceSettings:
        """From topology options (they arrive as strings); an unusable value raises
        :class:`~storm_planner.core.settings.SettingError` naming the key (the service checks them all
        before it plans)."""
        return cls(
            enabled=settings.REBALANCE.read(options),
            min_gain=settings.REBALANCE_MIN_GAIN.read(options),
            cooldown_s=settings.REBALANCE_COOLDOWN_SECS.read(options),
            wait_secs=settings.REBALANCE_WAIT_SECS.read(options),
        )


@dataclass
class TopologyRebalance:
    """What the service remembers per topology: a request under way, and when the next may start."""

    in_flight: bool = False
    next_allowed: float = float("-inf")


@dataclass(frozen=True)
class Decision:
    rebalance: bool
    note: str | None            # for the plan's notes (None: nothing worth saying)


def decide(settings: RebalanceSettings, advice: ParallelismAdvice | None, state: TopologyRebalance | None,
           now: float, *, has_nimbus: bool = True) -> Decision:
    """Rebalance now? Only for an opted-in topology whose advice changes executors, gains enough,
    has no request under way and is past its cooldown."""
    if not settings.enabled or advice is None or not advice.changes:
        return Decision(False, None)
    changes = ", ".join(f"{c} {advice.current.get(c)}->{n}" for c, n in advice.changes.items())
    gain = f"{advice.gain:+.0%} predicted max input rate"
    if advice.gain < settings.min_gain:
        return Decision(False, f"rebalance: {changes} ({gain}) gains less than planner.rebalance.min.gain "
                               f"{settings.min_gain:.0%}: not rebalanced")
    if not has_nimbus:
        return Decision(False, "rebalance: planner.rebalance is on but this service does not know Nimbus "
                               "(serve --nimbus HOST:PORT): not rebalanced")
    if state is not None and state.in_flight:
        return Decision(False, "rebalance: a request for this topology is under way")
    if state is not None and now < state.next_allowed:
        return Decision(False, f"rebalance: {changes} ({gain}) waits for the cooldown "
                               f"({state.next_allowed - now:.0f} s left)")
    return Decision(True, f"rebalance: asking Nimbus for {changes} ({gain}) once this answer is sent")


@dataclass(frozen=True)
class _Job:
    topology_id: str
    name: str
    advice: ParallelismAdvice
    settings: RebalanceSettings


def _request_through_nimbus(nimbus: str, name: str, executors: Mapping[str, int], wait_secs: int | None) -> str:
    """Request, then wait until Nimbus runs the new executors (asking again if Storm lost the request).
    The first plan of a topology comes before Nimbus has written its assignment, so the request
    waits for that first."""
    wait = STORM_DEFAULT_WAIT_S if wait_secs is None else wait_secs
    return rebalance_topology(nimbus, name, executors, wait_secs=wait_secs, wait_applied=wait + CONFIRM_S,
                              wait_assigned=CONFIRM_S, progress=log.info).describe()


class AutoRebalancer:
    """Decides per planned topology, and runs accepted rebalances after the answer is sent."""

    def __init__(self, nimbus: str | None = None, record: Callable[[dict[str, Any]], None] | None = None,
                 request: Request = _request_through_nimbus, clock: Callable[[], float] = time.monotonic) -> None:
        self.nimbus = nimbus
        self.record = record            # writes one plan-log record (PlanLog.event)
        self.request = request
        self.clock = clock
        self._states: dict[str, TopologyRebalance] = {}
        self._lock = threading.Lock()
        self._pending = threading.local()  # jobs decided by the call this thread is answering
        self.outcomes: Counter[str] = Counter(applied=0, failed=0)   # rebalances requested, by outcome

    def consider(self, topology_id: str, name: str, options: Mapping[str, Any],
                 advice: ParallelismAdvice | None) -> str | None:
        """Decide for one planned topology; a job that is due waits for :meth:`after_answer`.
        Returns a note for the plan (or None)."""
        settings = RebalanceSettings.of(options)
        if not settings.enabled:
            return None
        now = self.clock()
        with self._lock:
            self._forget_idle(now)
            state = self._states.setdefault(topology_id, TopologyRebalance())
            decision = decide(settings, advice, state, now, has_nimbus=bool(self.nimbus))
            if decision.rebalance:
                state.in_flight = True
        if decision.rebalance:
            assert advice is not None  # decide() rebalances only on advice
            self._jobs().append(_Job(topology_id, name, advice, settings))
        return decision.note

    def after_answer(self) -> None:
        """Start the rebalances decided while answering the current call, each in its own thread."""
        jobs, self._pending.jobs = self._jobs(), []
        for job in jobs:
            threading.Thread(target=self._run, args=(job,), daemon=True, name=f"rebalance-{job.name}").start()

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """Wait until no rebalance is decided or under way, its record written (tests); False on timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if not any(state.in_flight for state in self._states.values()):
                    return True
            time.sleep(0.02)
        return False

    def _forget_idle(self, now: float) -> None:
        """Topologies with no request under way and their cooldown over tell nothing: drop them
        (killed topologies would otherwise stay forever)."""
        for topology_id in [t for t, s in self._states.items() if not s.in_flight and s.next_allowed <= now]:
            del self._states[topology_id]

    def _jobs(self) -> list[_Job]:
        if not hasattr(self._pending, "jobs"):
            self._pending.jobs = []
        jobs: list[_Job] = self._pending.jobs  # this thread's (a threading.local)
        return jobs

    def _run(self, job: _Job) -> None:
        executors = job.advice.changes
        record = {
            "topology": job.topology_id, "name": job.name, "executors": executors,
            "current": {c: job.advice.current.get(c) for c in executors},
            "predicted_gain": job.advice.gain if math.isfinite(job.advice.gain) else None,
            "wait_secs": job.settings.wait_secs,
        }
        try:
            assert self.nimbus is not None  # decide() rebalances only with a Nimbus (has_nimbus)
            message = self.request(self.nimbus, job.name, executors, job.settings.wait_secs)
            record.update(outcome="applied", message=message)
            log.info("rebalance %s (%s): %s", job.name, job.topology_id, message)
        except Exception as error:  # noqa: BLE001 - a failed rebalance costs a log line, nothing more
            # SubmitError messages are written for people already; others get their type in front.
            record.update(outcome="failed", message=str(error) if isinstance(error, SubmitError)
                          else f"{type(error).__name__}: {error}")
            log.warning("rebalance %s (%s) failed: %s", job.name, job.topology_id, record["message"])
        try:
            if self.record is not None:
                self.record({"event": "rebalance", **record})
        except Exception:  # noqa: BLE001 - the plan log is a record, not a reason to fail
            log.exception("could not write the rebalance record of %s", job.name)
        finally:
            # The request waited until Nimbus ran the new executors (or gave up): the cooldown starts now.
            with self._lock:
                self.outcomes[str(record["outcome"])] += 1
                state = self._states.setdefault(job.topology_id, TopologyRebalance())
                state.in_flight = False
                state.next_allowed = self.clock() + job.settings.cooldown_s

