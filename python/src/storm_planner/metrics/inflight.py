"""Two readings of the task hook's windows that a move of a running topology waits on: the spouts' tuples
in flight, and the first windows of the workers a move restarted.

**Tuples in flight** (per spout task, from its latest window): the tuple trees the task started (its
emits on ``__ack_init``, one per anchored emit: what Storm's acker tracks) less the trees it was told
were acked or failed, each a total since the task started (``sent[].total`` of the ``__ack_init`` flows,
``acked.total``, ``failed.total``)::

    in flight = sum(__ack_init sent total) - acked total - failed total      (never below 0)

Unanchored emits (no message id) start no tree and are not counted; with ``topology.acker.executors: 0``
Storm acks every emit at once, and nothing is in flight. A spout that is paused (deactivated) starts no
tree, so its count only falls, tree by tree, as the acks (or the timeouts' fails) come. Each window
describes the task at its end: the count is known only for tasks whose latest window ended after the
moment asked about (``since_ms``, e.g. the pause), else it is unknown (None), and a paused topology has
drained when it is known for every spout task and is 0.

**Workers up**: a worker a move restarted is up when a window comes from a task assigned to its slot,
written by a worker on that slot (``worker.node``, ``worker.port``) that started after the move
(``window.start_ms``: when the task registered in its worker) and is not the process that ran there
before (``worker.pid``). The start time of that worker is its first window's ``start_ms`` less the
move's time: how long the new JVM (and its multilang subprocesses) took to run the task.

Pure functions of windows (:class:`~storm_planner.metrics.windows.TaskWindow`), O(windows).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from storm_planner.core.problem import Slot
from storm_planner.core.system_streams import ACK_INIT_STREAM
from storm_planner.metrics.windows import TaskWindow

# Clocks of the service and the workers' hosts differ a little: a window that started this much before
# the move may still be the new worker's (the pid tells them apart where the old one is known).
CLOCK_SKEW_MS = 2000


@dataclass(frozen=True)
class InFlight:
    """The spouts' tuples in flight at their latest windows (``tuples`` None: not every spout task has
    reported since the moment asked about), and the trees they start per second (None: unknown)."""

    tuples: int | None
    rate: float | None
    reported: int          # spout tasks whose latest window ended after ``since_ms``
    tasks: int             # spout tasks with a window at all

    def describe(self) -> str:
        if self.tuples is None:
            return f"in flight unknown ({self.reported} of {self.tasks} spout task(s) reported since)"
        return f"{self.tuples} tuple(s) in flight"


def task_in_flight(window: TaskWindow) -> int:
    """One spout task's trees in flight at the end of ``window`` (module docstring)."""
    started = sum(flow.total for flow in window.sent if flow.stream == ACK_INIT_STREAM)
    return max(0, started - window.acked_total - window.failed_total)


def spout_in_flight(windows: Mapping[int, Sequence[TaskWindow]], spouts: Collection[str],
                    since_ms: float | None = None) -> InFlight:
    """The spouts' tuples in flight (``spouts``: their component ids) from each task's latest window;
    ``since_ms`` (epoch ms): count only windows that ended after it, and say unknown while a spout task
    has none."""
    latest = [ws[-1] for ws in windows.values() if ws and ws[-1].component in spouts]
    fresh = [w for w in latest if since_ms is None or w.end_ms > since_ms]
    rate = None
    timed = [w for w in latest if w.duration_ms > 0]
    if timed:
        rate = sum(sum(f.tuples for f in w.sent if f.stream == ACK_INIT_STREAM) * 1000.0 / w.duration_ms
                   for w in timed)
    tuples = sum(task_in_flight(w) for w in fresh) if latest and len(fresh) == len(latest) else None
    return InFlight(tuples, rate, len(fresh), len(latest))


def slot_pids(windows: Mapping[int, Sequence[TaskWindow]], slots: Collection[Slot]) -> dict[Slot, int]:
    """The worker process each of ``slots`` runs now, as its latest windows name it."""
    pids: dict[Slot, tuple[int, int]] = {}   # slot -> (window end, pid)
    wanted = set(slots)
    for task_windows in windows.values():
        for w in task_windows:
            if w.node is None or w.port is None or w.pid is None:
                continue
            slot = Slot(w.node, w.port)
            if slot in wanted and (slot not in pids or w.end_ms > pids[slot][0]):
                pids[slot] = (w.end_ms, w.pid)
    return {slot: pid for slot, (_, pid) in pids.items()}


def workers_up(windows: Mapping[int, Sequence[TaskWindow]], tasks: Mapping[Slot, Collection[int]],
               moved_ms: float, old_pids: Mapping[Slot, int] | None = None) -> dict[Slot, TaskWindow]:
    """Of the restarted workers (``tasks``: each slot's tasks after the move), those whose first window has
    come (module docstring), each with that window (the earliest seen)."""
    old_pids = old_pids or {}
    up: dict[Slot, TaskWindow] = {}
    for slot, slot_tasks in tasks.items():
        for task in slot_tasks:
            for w in windows.get(task, ()):
                if (w.node, w.port) != (slot.node, slot.port) or w.start_ms < moved_ms - CLOCK_SKEW_MS:
                    continue
                if slot in old_pids and w.pid == old_pids[slot]:
                    continue
                if slot not in up or w.start_ms < up[slot].start_ms:
                    up[slot] = w
    return up


def start_seconds(window: TaskWindow, moved_ms: float) -> float:
    """How long the worker of ``window`` (its first) took to run its task after the move at ``moved_ms``."""
    return max(0.0, (window.start_ms - moved_ms) / 1000.0)
