"""Each topology's trend over time, kept by the dashboard: the task hook's windows turned into fixed
time steps (:func:`~storm_planner.dashboard.aggregate.step`) as they arrive, and the plan log's plans,
re-plans, rebalances, fallbacks and the phases of each drain before a move as markers on the same time
axis, each with its before/after.

ZooKeeper holds only each task's latest window, so a trend starts when the dashboard does and is kept
in memory: the last ``history`` steps per topology (``--metrics-history``), for at most
:data:`MAX_TOPOLOGIES` topologies (the one updated longest ago is forgotten first).

A step is computed once every task still publishing has a window reaching past its end; a task that
published nothing while others published :data:`GRACE_STEPS` steps' windows (its worker restarting, or
gone) is not waited for. The steps only move on with new windows, so while ZooKeeper is unreachable nothing is
computed from missing data: the trend stops, and the window the hook writes when ZooKeeper is back
(covering the outage) fills the steps it spans.
"""
from __future__ import annotations

import dataclasses
import logging
import statistics
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from storm_planner.dashboard.aggregate import before_after, step
from storm_planner.metrics.loads_and_traffic import executor_tasks
from storm_planner.metrics.network_use import host_link_use
from storm_planner.metrics.windows import TaskWindow

log = logging.getLogger(__name__)

DEFAULT_METRICS_HISTORY = 360     # steps per topology: an hour of 10 s windows
DEFAULT_SETTLE_S = 30.0           # as planner.replan.settle.secs: a moved executor's first windows measure the move
GRACE_STEPS = 3
MAX_TOPOLOGIES = 100
MAX_PENDING_PER_TASK = 64         # windows waiting for their steps, per task
MAX_TASKS = 20_000
MIN_STEP_MS = 1000
MAX_STEP_MS = 3_600_000           # a step is one metrics period (the median of the windows'), within these
FUTURE_TOLERANCE_MS = 60_000      # clocks differ a little; a window ending later than this is ignored


@dataclass
class TopologyTimeline:
    """One topology's steps (dicts, oldest first) and the windows not yet used up."""

    history: int = DEFAULT_METRICS_HISTORY
    step_ms: int | None = None
    next_start_ms: int | None = None
    latest: Any = None            # the newest Step (with per-component figures)

    def __post_init__(self) -> None:
        self.steps: deque[dict] = deque(maxlen=max(1, self.history))
        self.pending: dict[int, dict[tuple, TaskWindow]] = {}
        self.latest_windows: dict[int, TaskWindow] = {}
        self.previous_windows: dict[int, TaskWindow] = {}   # the one before: two give a host link's rate
        self.first_start_ms: int | None = None              # the earliest window start ever fed
        self.ignored = 0                                    # windows from the future, left out

    def feed(self, windows: Mapping[int, Iterable[TaskWindow]], *, executor_of: Mapping[int, str] | None = None,
             spouts: Iterable[str] | None = None, now_ms: float | None = None) -> int:
        """Take the windows seen (any already taken are ignored); compute every step now complete.
        Returns the number of new steps. A window ending more than a minute after ``now_ms`` (a
        worker's clock far off, or a forged document) is ignored and counted (``ignored``)."""
        latest_allowed = (time.time() * 1000 if now_ms is None else now_ms) + FUTURE_TOLERANCE_MS
        for task, task_windows in windows.items():
            if task not in self.pending and len(self.pending) >= MAX_TASKS:
                continue
            kept = self.pending.setdefault(task, {})
            for w in task_windows:
                if self.next_start_ms is not None and w.end_ms <= self.next_start_ms:
                    continue   # used up already
                if w.end_ms > latest_allowed:
                    self.ignored += 1
                    continue
                newest = self.latest_windows.get(task)
                lost = lost_window(newest, w) if newest is not None else None
                if lost is not None and (self.next_start_ms is None or lost.end_ms > self.next_start_ms):
                    kept[(lost.pid, -lost.seq, lost.start_ms, lost.end_ms)] = lost
                kept[(w.pid, w.seq, w.start_ms, w.end_ms)] = w
                if self.first_start_ms is None or w.start_ms < self.first_start_ms:
                    self.first_start_ms = w.start_ms
                newest = self.latest_windows.get(task)
                if newest is None or w.end_ms > newest.end_ms:
                    self.latest_windows[task] = w
                    if newest is not None:
                        self.previous_windows[task] = newest
            if len(kept) > MAX_PENDING_PER_TASK:
                for key in sorted(kept, key=lambda k: kept[k].end_ms)[:len(kept) - MAX_PENDING_PER_TASK]:
                    del kept[key]
        if not any(self.pending.values()):
            return 0
        if self.step_ms is None:
            periods = [w.period_s for ws in self.pending.values() for w in ws.values()]
            self.step_ms = min(MAX_STEP_MS, max(MIN_STEP_MS, int(round(statistics.median(periods) * 1000))))
        if self.next_start_ms is None:
            # From where every task has a window: earlier steps would miss the tasks not seen yet.
            first = max(min(w.start_ms for w in ws.values()) for ws in self.pending.values() if ws)
            self.next_start_ms = -(-first // self.step_ms) * self.step_ms
        return self._advance(self.step_ms, self.next_start_ms, executor_of, set(spouts) if spouts is not None else None)

    def _horizon(self, step_ms: int) -> int:
        """Where every task still publishing has windows up to. A task counts as stopped once another
        task published windows for GRACE_STEPS steps after its last one ended (its worker restarting, or
        gone); not merely when its last window is old: after a ZooKeeper outage every task's first window
        is a long one reaching back to before the outage, and they arrive one after another."""
        latest = self.latest_windows.values()
        newest_start = max(w.start_ms for w in latest)
        active = [w.end_ms for w in latest if newest_start < w.end_ms + (GRACE_STEPS - 1) * step_ms]
        return min(active) if active else max(w.end_ms for w in latest)

    def _advance(self, step_ms: int, start_ms: int, executor_of: Mapping[int, str] | None,
                 spouts: set[str] | None) -> int:
        """Every step from ``start_ms`` (``next_start_ms``) complete by the horizon; ``next_start_ms`` follows."""
        horizon, added = self._horizon(step_ms), 0
        if horizon - start_ms > self.history * step_ms:
            # More than the history holds (a long outage, a window covering days): only the last steps.
            self.next_start_ms = start_ms = (horizon - self.history * step_ms) // step_ms * step_ms
        while start_ms + step_ms <= horizon:
            start, end = start_ms, start_ms + step_ms
            windows = {task: list(ws.values()) for task, ws in self.pending.items()}
            computed = step(windows, start, end, executor_of=executor_of, spouts=spouts)
            if computed.tasks:
                self.steps.append(computed.to_dict())
                self.latest = computed
                added += 1
            self.next_start_ms = start_ms = end
            for ws in self.pending.values():
                for key in [k for k, w in ws.items() if w.end_ms <= end]:
                    del ws[key]
        return added


def lost_window(before: TaskWindow, after: TaskWindow) -> TaskWindow | None:
    """The window(s) read too late to be seen between ``before`` and ``after`` of one task (ZooKeeper
    holds only a task's latest window: a reader late by a period misses one), rebuilt from the counters'
    totals since the worker started: what ``after`` counts in total beyond ``before``'s total and its own
    tuples. Latencies are taken as ``after``'s; CPU is not known. None when nothing is missing, or the
    worker restarted in between (its totals started again: the gap is downtime)."""
    if after.start_ms <= before.end_ms or after.pid != before.pid or after.pid is None:
        return None
    emitted = after.emitted_total - after.emitted - before.emitted_total
    executed = after.executed_total - after.executed - before.executed_total
    acked = after.acked_total - after.acked - before.acked_total
    failed = after.failed_total - after.failed - before.failed_total
    if min(emitted, executed, acked, failed) < 0:
        return None
    earlier = {(f.stream, f.task): f.total for f in before.sent}
    sent = tuple(dataclasses.replace(f, tuples=f.total - f.tuples - earlier.get((f.stream, f.task), 0), bytes=0)
                 for f in after.sent if f.total - f.tuples - earlier.get((f.stream, f.task), 0) > 0)
    ratio = executed / after.executed if after.executed else 0.0
    complete = acked / after.acked if after.acked else 0.0
    return dataclasses.replace(
        after, seq=after.seq - 1, start_ms=before.end_ms, end_ms=after.start_ms, threads=(), subprocess_ms=0.0,
        emitted=emitted, executed=executed, acked=acked, failed=failed, sent=sent, received=(),
        latency_ms_sum=after.latency_ms_sum * ratio, latency_samples=round(after.latency_samples * ratio),
        complete_latency_ms_sum=after.complete_latency_ms_sum * complete,
        complete_latency_samples=round(after.complete_latency_samples * complete),
        complete_latency_buckets=tuple((b, round(n * complete)) for b, n in after.complete_latency_buckets),
        missing=(*after.missing, "cpu"))


def task_executors(executor_components: Mapping[str, str]) -> dict[int, str]:
    """Task -> executor (``"[3-4]"``) from Nimbus' executors; names not of that form are left out."""
    result = {}
    for executor in executor_components:
        try:
            tasks = executor_tasks(executor)
        except ValueError:
            continue
        if len(tasks) <= MAX_TASKS:
            result.update({task: executor for task in tasks})
    return result


class Trends:
    """The timelines of every topology the metrics store knows, fed by a background thread every
    ``poll_s`` (so no window is missed while nobody has the page open)."""

    def __init__(self, store_of: Callable[[], Any], topology_info: Callable[[str], Mapping[str, Any]],
                 *, history: int = DEFAULT_METRICS_HISTORY, poll_s: float = 1.0) -> None:
        self.store_of = store_of               # the MetricsStore (None: no ZooKeeper given)
        self.topology_info = topology_info     # Nimbus' view of a topology: executor_components, spouts
        self.history = history
        self.poll_s = poll_s
        self._timelines: OrderedDict[str, TopologyTimeline] = OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Trends:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="dashboard-trends", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - the thread must outlive anything one poll meets
                log.exception("dashboard trends: poll failed")

    def poll(self) -> None:
        store = self.store_of()
        if store is None:
            return
        for topology in store.topologies():
            view = store.view(topology)
            if not view.windows:
                continue
            info = self.topology_info(topology) or {}
            with self._lock:
                timeline = self._timelines.get(topology)
                if timeline is None:
                    timeline = self._timelines[topology] = TopologyTimeline(self.history)
                    while len(self._timelines) > MAX_TOPOLOGIES:
                        self._timelines.popitem(last=False)
                if timeline.feed(view.windows, executor_of=task_executors(info.get("executor_components") or {}),
                                 spouts=info.get("spouts")):
                    self._timelines.move_to_end(topology)

    def host_links(self) -> dict[str, float]:
        """Supervisor -> Mbit/s its host's interfaces carried (both directions), from the newest two
        windows of a task there (any topology's): the link's whole use, Storm's tuples and the rest."""
        with self._lock:
            histories = [{task: [t.previous_windows[task], w] if task in t.previous_windows else [w]
                          for task, w in t.latest_windows.items()} for t in self._timelines.values()]
        return {node: traffic.total_mbit for node, traffic in host_link_use(histories).items()}

    def timeline(self, topology: str) -> TopologyTimeline | None:
        with self._lock:
            return self._timelines.get(topology)

    def topologies(self) -> list[str]:
        with self._lock:
            return list(self._timelines)


# --- plans on the time axis -------------------------------------------------------------------------

KEPT_NOTE = "current placement kept"   # the re-planner's note when it leaves a running topology as it is


def plan_markers(records: Iterable[Mapping[str, Any]], topology: str, limit: int) -> list[dict]:
    """The plan log's changes of ``topology``, oldest first, at most ``limit`` (the newest): its first
    plan, each re-plan (a new placement, or executors moved), each rebalance, each fallback to Storm's
    DefaultScheduler and each phase of a drain before a move (pause, drain, move, start, resume: its
    ``phase`` and ``seconds``, at the phase's end), with the reason to show on hover. Rounds that left the
    placement as it was (the re-planner's answers to Nimbus' periodic offers: the same assignments, no
    moves; a drain's answers while it waits) change nothing and are counted on the next marker
    (``kept_rounds``) instead."""
    markers: list[dict] = []
    placed: dict | None = None   # the topology's placement as the last plan left it
    kept = 0
    for record in records:
        if record.get("topology") != topology or not isinstance(record.get("time"), (int, float)):
            continue
        event = record.get("event", "plan")
        notes = [n for n in record.get("notes") or [] if isinstance(n, str)]
        moves = (record.get("figures") or {}).get("moves")
        extra: dict[str, Any] = {}
        if event == "rebalance":
            kind = "rebalance"
            reason = f"{record.get('executors') or {}} -> {record.get('outcome')}: {record.get('message') or ''}"
        elif event == "drain":
            kind, extra = "drain", _drain_phase(record)
            reason = f"{extra['phase']} {extra['seconds']:.1f} s: {record.get('note') or ''}"
        elif event != "plan":
            continue
        elif record.get("error") is not None:
            error = record["error"]
            kind, reason = "fallback", f"{error.get('kind')}: {error.get('message')}"
        elif not moves and _unchanged(record, placed, notes):
            kept += 1
            continue
        else:
            kind = "re-plan" if placed is not None else "plan"
            placed = dict(record.get("assignments") or {})
            reason = "; ".join(notes) or "(no notes)"
        markers.append({"time": record["time"], "kind": kind, "algorithm": record.get("algorithm"),
                        "reason": reason[:2000], "kept_rounds": kept, "moves": moves, **extra})
        kept = 0
    return markers[-limit:]


def _drain_phase(record: Mapping[str, Any]) -> dict[str, Any]:
    """A drain record's phase and duration, as the marker carries them."""
    seconds = record.get("seconds")
    return {"phase": str(record.get("phase") or "?"),
            "seconds": float(seconds) if isinstance(seconds, (int, float)) else 0.0,
            "outcome": record.get("outcome")}


def _unchanged(record: Mapping[str, Any], placed: dict | None, notes: list[str]) -> bool:
    """The plan leaves the placement as it was: the same assignments as the last plan, or (a record
    written without its assignments, too long for the log) the re-planner's note saying so."""
    if placed is None:
        return False
    if record.get("assignments"):
        return dict(record["assignments"]) == placed
    return any(KEPT_NOTE in n for n in notes)


def with_before_after(markers: list[dict], steps: list[dict], settle_s: float) -> list[dict]:
    """Each marker with the mean figures of the steps before it and after it settled."""
    result = []
    for i, marker in enumerate(markers):
        previous = markers[i - 1]["time"] * 1000 if i > 0 else None
        following = markers[i + 1]["time"] * 1000 if i + 1 < len(markers) else None
        result.append({**marker, **before_after(steps, marker["time"] * 1000, settle_ms=settle_s * 1000,
                                                previous_ms=previous, next_ms=following)})
    return result
