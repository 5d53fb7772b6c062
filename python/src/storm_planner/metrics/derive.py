"""From task windows to what planners need: executor loads and executor-pair traffic.

Pure functions (no ZooKeeper): :func:`measure` takes the windows a
:class:`~storm_planner.metrics.store.StoreView` holds and the topology's
executors as Nimbus lists them, and returns a :class:`Measurement`.

* **CPU**: an executor's CPU time in a window is the CPU of the threads that
  ran its tasks (the executor thread, and a shell bolt's reader thread), each
  counted once even when several tasks of the executor list it, plus the CPU
  of its shell subprocesses. CPU percent = 100 x CPU time / window length
  (100 = one core of the machine it ran on).
* **Worker CPU**: a worker JVM spends CPU beyond its executors' threads (netty
  transfer, serialisation, timers, the garbage collector): often as much again.
  Where the hook reports the worker's whole process CPU for a window
  (``cpu.process_ms``), what its executors' threads did not account is spread
  over the worker's executors by the tuples each handled (executed + emitted)
  that window, so a node's measured load is what its workers use
  (``worker_cpu=False``, topology option ``planner.metrics.worker.cpu: false``:
  executor threads only, as the papers measure).
* **Load**: CPU percent x the node's speed (``supervisor.scheduler.meta``
  ``speed``, as the request's nodes give it, else as the worker's own conf
  gave it, else 1): loads are in percent of a reference core, like capacities
  (``Node.effective_capacity``).
* **Traffic**: tuples per second (``planner.metrics.traffic.unit: bytes`` for
  estimated bytes per second) from each source task to each destination task,
  summed into executor pairs, every stream included (acker streams are real
  tuples too); traffic inside one executor is left out.
* Each figure averages the last ``windows`` windows of each task, skipping
  stale ones (ended more than ``stale_after_s`` ago) unless told to use them
  (ZooKeeper unreachable: the last windows are all there is).
* Executors without any usable window get their component's average measured
  load (else the topology's median, else ``fallback_load``); notes say which.
"""
from __future__ import annotations

import re
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from storm_planner.metrics.windows import TaskWindow

DEFAULT_WINDOWS = 3
DEFAULT_STALE_PERIODS = 3.0
MIN_STALE_S = 30.0
DEFAULT_STATE_MB = 1.0

_EXECUTOR_ID = re.compile(r"^\[\s*(-?\d+)\s*-\s*(-?\d+)\s*\]$")


def executor_tasks(executor_id: str) -> range:
    """``"[3-5]"`` -> tasks 3, 4, 5 (Storm's executor naming)."""
    match = _EXECUTOR_ID.match(executor_id)
    if not match:
        raise ValueError(f"executor id {executor_id!r} is not of the form [start-end]")
    start, end = int(match.group(1)), int(match.group(2))
    return range(start, end + 1)


@dataclass(frozen=True)
class ExecutorFigures:
    executor: str
    component: str
    measured: bool
    cpu_percent: float = 0.0        # of one core of the machine(s) it ran on
    load: float = 0.0               # cpu_percent x speed: reference-core percent
    speed: float = 1.0
    node: str | None = None         # where its newest window was measured
    worker: str | None = None
    executed_per_s: float = 0.0
    emitted_per_s: float = 0.0
    execute_latency_ms: float | None = None
    state_mb: float | None = None
    windows: int = 0
    subprocesses: int = 0
    worker_cpu_percent: float = 0.0  # of cpu_percent: its share of the worker's own CPU


@dataclass(frozen=True)
class Measurement:
    topology_id: str
    executors: dict[str, ExecutorFigures]
    traffic: dict[tuple[str, str], float]              # executor pair -> rate
    component_traffic: dict[tuple[str, str], float]    # component pair -> rate
    tuple_bytes: dict[tuple[str, str], float] = field(default_factory=dict)  # component pair -> payload bytes per tuple
    unit: str = "tuples/s"
    period_s: float | None = None
    newest_age_s: float | None = None
    notes: tuple[str, ...] = ()

    @property
    def measured_count(self) -> int:
        return sum(1 for f in self.executors.values() if f.measured)

    @property
    def any_measured(self) -> bool:
        return self.measured_count > 0


@dataclass
class _Group:
    """One window of one executor: its tasks' documents for the same (worker pid, window seq)."""

    duration_ms: int = 0
    thread_ms: dict[int, float] = field(default_factory=dict)
    subprocess_ms: float = 0.0
    worker_ms: float = 0.0     # its share of the worker's CPU beyond the executors' threads
    tuples: int = 0            # executed + emitted: the weight of that share
    speed: float = 1.0
    end_ms: int = 0

    @property
    def cpu_ms(self) -> float:
        return sum(self.thread_ms.values()) + self.subprocess_ms + self.worker_ms


@dataclass
class _WorkerWindow:
    """One window of one worker (pid, seq): its whole process CPU and its executors' windows."""

    process_ms: float = 0.0
    groups: dict[str, _Group] = field(default_factory=dict)   # executor -> its window


def measure(
    topology_id: str,
    windows: Mapping[int, list[TaskWindow]],
    executors: Iterable[tuple[str, str]],
    *,
    node_speed: Mapping[str, float] | None = None,
    last: int = DEFAULT_WINDOWS,
    stale_after_s: float | None = None,
    use_stale: bool = False,
    unit: str = "tuples",
    fallback_load: float = 10.0,
    now_ms: float | None = None,
    worker_cpu: bool = True,
) -> Measurement:
    """Executor loads and traffic of one topology; ``executors`` is (executor id, component)."""
    now_ms = time.time() * 1000 if now_ms is None else now_ms
    node_speed = node_speed or {}
    executor_list = list(executors)
    component_of = dict(executor_list)
    task_executor: dict[int, str] = {}
    for executor_id, _ in executor_list:
        for task in executor_tasks(executor_id):
            task_executor[task] = executor_id

    period_s = _period(windows)
    stale_s = stale_after_s if stale_after_s is not None else max(MIN_STALE_S, DEFAULT_STALE_PERIODS * (period_s or 10.0))
    notes: list[str] = []
    usable: dict[int, list[TaskWindow]] = {}
    stale_tasks, unknown_tasks, partial = [], [], defaultdict(set)
    newest_end = None
    for task, task_windows in windows.items():
        if task not in task_executor:
            unknown_tasks.append(task)
            continue
        ordered = sorted(task_windows, key=lambda w: w.end_ms)
        fresh = [w for w in ordered if now_ms - w.end_ms <= stale_s * 1000]
        chosen = (fresh or (ordered if use_stale else []))[-max(1, last):]
        if not fresh and ordered:
            stale_tasks.append(task)
        if chosen:
            usable[task] = chosen
            newest_end = max(newest_end or 0, chosen[-1].end_ms)
            for w in chosen:
                partial[w.task].update(w.missing)

    by_executor: dict[str, dict[tuple, _Group]] = defaultdict(dict)
    counts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    traffic_amount: dict[tuple[str, str], float] = defaultdict(float)
    sizes: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])   # component pair -> [bytes, tuples]
    traffic_time: dict[int, float] = {}
    latest: dict[str, TaskWindow] = {}
    state: dict[str, float] = {}
    workers: dict[tuple, _WorkerWindow] = {}
    for task, task_windows in usable.items():
        executor = task_executor[task]
        seconds = sum(w.duration_ms for w in task_windows) / 1000.0
        traffic_time[task] = seconds
        for w in task_windows:
            group = by_executor[executor].setdefault((w.pid, w.seq), _Group())
            group.duration_ms = max(group.duration_ms, w.duration_ms)
            group.end_ms = max(group.end_ms, w.end_ms)
            for thread in w.threads:
                group.thread_ms[thread.id] = thread.ms  # shared threads counted once per window
            group.subprocess_ms += w.subprocess_ms
            group.tuples += w.executed + w.emitted
            group.speed = _speed(w, node_speed)
            if worker_cpu and w.process_ms is not None and w.pid is not None:
                worker = workers.setdefault((w.pid, w.seq), _WorkerWindow())
                worker.process_ms = max(worker.process_ms, w.process_ms)
                worker.groups[executor] = group
            counts[executor]["executed"] += w.executed
            counts[executor]["emitted"] += w.emitted
            counts[executor]["latency_sum"] += w.latency_ms_sum
            counts[executor]["latency_samples"] += w.latency_samples
            counts[executor]["subprocesses"] = max(counts[executor]["subprocesses"], w.subprocesses)
            if executor not in latest or w.end_ms > latest[executor].end_ms:
                latest[executor] = w
            for flow in w.sent:
                target = task_executor.get(flow.task)
                if target is None or target == executor:
                    continue
                amount = flow.bytes if unit == "bytes" else flow.tuples
                traffic_amount[(executor, target)] += amount / seconds if seconds > 0 else 0.0
                size = sizes[(component_of[executor], component_of[target])]
                size[0] += flow.bytes
                size[1] += flow.tuples
        newest = task_windows[-1]
        if newest.state_mb is not None:
            state[executor] = state.get(executor, 0.0) + newest.state_mb

    _share_worker_cpu(workers.values())
    figures: dict[str, ExecutorFigures] = {}
    for executor, groups in by_executor.items():
        # Counts add up over the executor's tasks; time adds up over its windows (pid, seq), once each.
        duration_ms = sum(g.duration_ms for g in groups.values())
        cpu_ms = sum(g.cpu_ms for g in groups.values())
        weighted = sum(g.cpu_ms * g.speed for g in groups.values())
        worker_ms = sum(g.worker_ms for g in groups.values())
        seconds = duration_ms / 1000.0
        c = counts[executor]
        w = latest[executor]
        figures[executor] = ExecutorFigures(
            executor=executor,
            component=component_of[executor],
            measured=True,
            cpu_percent=100.0 * cpu_ms / duration_ms if duration_ms > 0 else 0.0,
            load=100.0 * weighted / duration_ms if duration_ms > 0 else 0.0,
            speed=_speed(w, node_speed),
            node=w.node,
            worker=w.worker,
            executed_per_s=c["executed"] / seconds if seconds > 0 else 0.0,
            emitted_per_s=c["emitted"] / seconds if seconds > 0 else 0.0,
            execute_latency_ms=c["latency_sum"] / c["latency_samples"] if c["latency_samples"] else None,
            state_mb=state.get(executor),
            windows=len(groups),
            subprocesses=int(c["subprocesses"]),
            worker_cpu_percent=100.0 * worker_ms / duration_ms if duration_ms > 0 else 0.0,
        )

    missing = [e for e, _ in executor_list if e not in figures]
    if missing:
        estimated = _estimate(missing, component_of, figures, fallback_load)
        figures.update(estimated)
    component_traffic: dict[tuple[str, str], float] = defaultdict(float)
    for (a, b), rate in traffic_amount.items():
        component_traffic[(component_of[a], component_of[b])] += rate

    measured_count = len(executor_list) - len(missing)
    if measured_count:
        age = (now_ms - newest_end) / 1000.0 if newest_end else None
        notes.append(
            f"loads and traffic measured for {measured_count} of {len(executor_list)} executors "
            f"(last {last} windows of {period_s or '?'} s; newest {age:.0f} s old)" if age is not None else
            f"loads and traffic measured for {measured_count} of {len(executor_list)} executors"
        )
    worker_part = sum(f.worker_cpu_percent for f in figures.values() if f.measured)
    if worker_part > 0:
        total = sum(f.cpu_percent for f in figures.values() if f.measured)
        notes.append(f"workers' own CPU (JVM threads beyond the executors': transfer, serialisation, GC) "
                     f"counted in the executors' loads by the tuples they handled: {worker_part:.1f} of "
                     f"{total:.1f} % of a core")
    if missing and measured_count:
        notes.append(f"no usable window for {_listed(missing)}: load estimated from measured executors")
    if stale_tasks:
        notes.append(
            ("used stale windows of tasks " if use_stale else "skipped stale windows of tasks ")
            + f"{_listed(sorted(stale_tasks))} (older than {stale_s:.0f} s)"
        )
    if unknown_tasks:
        notes.append(f"ignored windows of tasks {_listed(sorted(unknown_tasks))}: not tasks of this topology now")
    incomplete = {t: m for t, m in partial.items() if m}
    if incomplete:
        parts = sorted({part for m in incomplete.values() for part in m})
        notes.append(f"partial windows (no {', '.join(parts)}) for tasks {_listed(sorted(incomplete))}: "
                     f"those parts count as zero")
    return Measurement(
        topology_id=topology_id,
        executors=figures,
        traffic=dict(traffic_amount),
        component_traffic=dict(component_traffic),
        tuple_bytes={pair: b / n for pair, (b, n) in sizes.items() if n > 0},
        unit="bytes/s" if unit == "bytes" else "tuples/s",
        period_s=period_s,
        newest_age_s=(now_ms - newest_end) / 1000.0 if newest_end else None,
        notes=tuple(notes),
    )


def _share_worker_cpu(workers: Iterable[_WorkerWindow]) -> None:
    """Spread each worker window's CPU beyond its executors' threads over its executors, by tuples.

    Every task of a worker writes its document of a window with the same ``process_ms``; what the
    threads its executors list used is subtracted (each thread once); a negative rest (the samples
    are taken a moment apart) counts as none.
    """
    for worker in workers:
        groups = [worker.groups[executor] for executor in sorted(worker.groups)]
        threads: dict[int, float] = {}
        for group in groups:
            threads.update(group.thread_ms)
        rest = worker.process_ms - sum(threads.values())
        if rest <= 0:
            continue
        total = sum(group.tuples for group in groups)
        for group in groups:
            group.worker_ms += rest * (group.tuples / total if total > 0 else 1.0 / len(groups))


def _estimate(missing: list[str], component_of: Mapping[str, str], figures: Mapping[str, ExecutorFigures],
              fallback_load: float) -> dict[str, ExecutorFigures]:
    by_component: dict[str, list[float]] = defaultdict(list)
    for f in figures.values():
        by_component[f.component].append(f.load)
    everything = [f.load for f in figures.values()]
    median = statistics.median(everything) if everything else fallback_load
    estimated = {}
    for executor in missing:
        component = component_of[executor]
        loads = by_component.get(component)
        load = sum(loads) / len(loads) if loads else median
        estimated[executor] = ExecutorFigures(executor=executor, component=component, measured=False,
                                              cpu_percent=load, load=load)
    return estimated


def _speed(window: TaskWindow, node_speed: Mapping[str, float]) -> float:
    if window.node and window.node in node_speed:
        return float(node_speed[window.node])
    try:
        speed = float(window.meta.get("speed", 1.0))
    except (TypeError, ValueError):
        return 1.0
    return speed if speed > 0 else 1.0


def _period(windows: Mapping[int, list[TaskWindow]]) -> float | None:
    periods = [w.period_s for ws in windows.values() for w in ws if w.period_s]
    return round(statistics.median(periods), 3) if periods else None


def _listed(items: list, limit: int = 6) -> str:
    shown = ", ".join(str(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def change(before: Mapping[str, float], after: Mapping[str, float]) -> float:
    """Relative change between two figure maps: sum |after - before| / max(sum before, sum after)."""
    keys = set(before) | set(after)
    scale = max(sum(before.values()), sum(after.values()))
    if scale <= 0:
        return 0.0
    return sum(abs(after.get(k, 0.0) - before.get(k, 0.0)) for k in keys) / scale
