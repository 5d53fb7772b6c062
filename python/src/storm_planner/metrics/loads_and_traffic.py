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
# Storm 2's default wait strategy: an idle bolt spins through whatever CPU its quota leaves (docs/capacity.md).
SPINNING_WAIT = "WaitStrategyProgressive"

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
    acked_per_s: float = 0.0        # a spout's tuple trees completed: the rate it is really serving
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


@dataclass(frozen=True)
class _Settings:
    """What :func:`measure` was told, in one place for the steps it takes."""

    node_speed: Mapping[str, float]
    last: int
    stale_s: float
    use_stale: bool
    unit: str
    fallback_load: float
    now_ms: float
    worker_cpu: bool


@dataclass
class _Selection:
    """The windows each task contributes, and what was left out or incomplete."""

    usable: dict[int, list[TaskWindow]] = field(default_factory=dict)
    stale_tasks: list[int] = field(default_factory=list)
    unknown_tasks: list[int] = field(default_factory=list)
    partial: dict[int, set] = field(default_factory=lambda: defaultdict(set))
    newest_end: int | None = None


@dataclass
class _Tally:
    """The chosen windows summed per executor, per worker window and per executor pair."""

    by_executor: dict[str, dict[tuple, _Group]] = field(default_factory=lambda: defaultdict(dict))
    counts: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    traffic: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    sizes: dict[tuple[str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0]))   # component pair -> [bytes, tuples]
    latest: dict[str, TaskWindow] = field(default_factory=dict)
    state: dict[str, float] = field(default_factory=dict)
    workers: dict[tuple, _WorkerWindow] = field(default_factory=dict)


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
    period_s = _period(windows)
    settings = _Settings(
        node_speed=node_speed or {},
        last=last,
        stale_s=stale_after_s if stale_after_s is not None
        else max(MIN_STALE_S, DEFAULT_STALE_PERIODS * (period_s or 10.0)),
        use_stale=use_stale,
        unit=unit,
        fallback_load=fallback_load,
        now_ms=time.time() * 1000 if now_ms is None else now_ms,
        worker_cpu=worker_cpu,
    )
    executor_list = list(executors)
    component_of = dict(executor_list)
    task_executor = _task_executors(executor_list)
    selection = _select_windows(windows, task_executor, settings)
    tally = _tally(selection.usable, task_executor, component_of, settings)
    _share_worker_cpu(tally.workers.values())
    figures = {executor: _measured_figures(executor, groups, tally, component_of, settings)
               for executor, groups in tally.by_executor.items()}
    missing = [e for e, _ in executor_list if e not in figures]
    if missing:
        figures.update(_estimate(missing, component_of, figures, settings.fallback_load))
    newest_end = selection.newest_end
    return Measurement(
        topology_id=topology_id,
        executors=figures,
        traffic=dict(tally.traffic),
        component_traffic=_component_traffic(tally.traffic, component_of),
        tuple_bytes={pair: b / n for pair, (b, n) in tally.sizes.items() if n > 0},
        unit="bytes/s" if unit == "bytes" else "tuples/s",
        period_s=period_s,
        newest_age_s=(settings.now_ms - newest_end) / 1000.0 if newest_end else None,
        notes=tuple(_notes(selection, figures, len(executor_list), missing, period_s, settings)),
    )


def _task_executors(executor_list: list[tuple[str, str]]) -> dict[int, str]:
    """Task id -> the executor that runs it."""
    task_executor: dict[int, str] = {}
    for executor_id, _ in executor_list:
        for task in executor_tasks(executor_id):
            task_executor[task] = executor_id
    return task_executor


def _select_windows(windows: Mapping[int, list[TaskWindow]], task_executor: Mapping[int, str],
                    settings: _Settings) -> _Selection:
    """Each known task's last ``settings.last`` fresh windows (stale ones only when told to use them)."""
    selection = _Selection()
    for task, task_windows in windows.items():
        if task not in task_executor:
            selection.unknown_tasks.append(task)
            continue
        ordered = sorted(task_windows, key=lambda w: w.end_ms)
        fresh = [w for w in ordered if settings.now_ms - w.end_ms <= settings.stale_s * 1000]
        chosen = (fresh or (ordered if settings.use_stale else []))[-max(1, settings.last):]
        if not fresh and ordered:
            selection.stale_tasks.append(task)
        if chosen:
            selection.usable[task] = chosen
            selection.newest_end = max(selection.newest_end or 0, chosen[-1].end_ms)
            for w in chosen:
                selection.partial[w.task].update(w.missing)
    return selection


def _tally(usable: Mapping[int, list[TaskWindow]], task_executor: Mapping[int, str],
           component_of: Mapping[str, str], settings: _Settings) -> _Tally:
    """Sum the chosen windows of every task into its executor's windows, counts and traffic."""
    tally = _Tally()
    for task, task_windows in usable.items():
        executor = task_executor[task]
        seconds = sum(w.duration_ms for w in task_windows) / 1000.0
        for w in task_windows:
            _add_cpu(tally, executor, w, settings)
            _add_counts(tally, executor, w)
            _add_traffic(tally, executor, w, seconds, task_executor, component_of, settings.unit)
        newest = task_windows[-1]
        if newest.state_mb is not None:
            tally.state[executor] = tally.state.get(executor, 0.0) + newest.state_mb
    return tally


def _add_cpu(tally: _Tally, executor: str, w: TaskWindow, settings: _Settings) -> None:
    """One task window into its executor's window (pid, seq) and, with worker CPU, its worker's window."""
    group = tally.by_executor[executor].setdefault((w.pid, w.seq), _Group())
    group.duration_ms = max(group.duration_ms, w.duration_ms)
    group.end_ms = max(group.end_ms, w.end_ms)
    for thread in w.threads:
        group.thread_ms[thread.id] = thread.ms  # shared threads counted once per window
    group.subprocess_ms += w.subprocess_ms
    group.tuples += w.executed + w.emitted
    group.speed = _speed(w, settings.node_speed)
    if settings.worker_cpu and w.process_ms is not None and w.pid is not None:
        worker = tally.workers.setdefault((w.pid, w.seq), _WorkerWindow())
        worker.process_ms = max(worker.process_ms, w.process_ms)
        worker.groups[executor] = group


def _add_counts(tally: _Tally, executor: str, w: TaskWindow) -> None:
    """Tuple counts and latency samples add up over the executor's tasks; the newest window is kept."""
    c = tally.counts[executor]
    c["executed"] += w.executed
    c["emitted"] += w.emitted
    c["acked"] += w.acked
    c["latency_sum"] += w.latency_ms_sum
    c["latency_samples"] += w.latency_samples
    c["subprocesses"] = max(c["subprocesses"], w.subprocesses)
    if executor not in tally.latest or w.end_ms > tally.latest[executor].end_ms:
        tally.latest[executor] = w


def _add_traffic(tally: _Tally, executor: str, w: TaskWindow, seconds: float,
                 task_executor: Mapping[int, str], component_of: Mapping[str, str], unit: str) -> None:
    """The window's flows to other executors, as rates over the task's chosen windows (``seconds``)."""
    for flow in w.sent:
        target = task_executor.get(flow.task)
        if target is None or target == executor:
            continue
        amount = flow.bytes if unit == "bytes" else flow.tuples
        tally.traffic[(executor, target)] += amount / seconds if seconds > 0 else 0.0
        size = tally.sizes[(component_of[executor], component_of[target])]
        size[0] += flow.bytes
        size[1] += flow.tuples


def _measured_figures(executor: str, groups: Mapping[tuple, _Group], tally: _Tally,
                      component_of: Mapping[str, str], settings: _Settings) -> ExecutorFigures:
    """An executor's figures from its windows."""
    # Counts add up over the executor's tasks; time adds up over its windows (pid, seq), once each.
    duration_ms = sum(g.duration_ms for g in groups.values())
    cpu_ms = sum(g.cpu_ms for g in groups.values())
    weighted = sum(g.cpu_ms * g.speed for g in groups.values())
    worker_ms = sum(g.worker_ms for g in groups.values())
    seconds = duration_ms / 1000.0
    c = tally.counts[executor]
    w = tally.latest[executor]
    return ExecutorFigures(
        executor=executor,
        component=component_of[executor],
        measured=True,
        cpu_percent=100.0 * cpu_ms / duration_ms if duration_ms > 0 else 0.0,
        load=100.0 * weighted / duration_ms if duration_ms > 0 else 0.0,
        speed=_speed(w, settings.node_speed),
        node=w.node,
        worker=w.worker,
        executed_per_s=c["executed"] / seconds if seconds > 0 else 0.0,
        emitted_per_s=c["emitted"] / seconds if seconds > 0 else 0.0,
        acked_per_s=c["acked"] / seconds if seconds > 0 else 0.0,
        execute_latency_ms=c["latency_sum"] / c["latency_samples"] if c["latency_samples"] else None,
        state_mb=tally.state.get(executor),
        windows=len(groups),
        subprocesses=int(c["subprocesses"]),
        worker_cpu_percent=100.0 * worker_ms / duration_ms if duration_ms > 0 else 0.0,
    )


def _component_traffic(traffic: Mapping[tuple[str, str], float],
                       component_of: Mapping[str, str]) -> dict[tuple[str, str], float]:
    """Executor-pair rates summed into component pairs."""
    component_traffic: dict[tuple[str, str], float] = defaultdict(float)
    for (a, b), rate in traffic.items():
        component_traffic[(component_of[a], component_of[b])] += rate
    return dict(component_traffic)


def _notes(selection: _Selection, figures: Mapping[str, ExecutorFigures], executor_count: int,
           missing: list[str], period_s: float | None, settings: _Settings) -> list[str]:
    """What was measured, estimated, skipped or incomplete, in words for the plan's notes."""
    notes: list[str] = []
    measured_count = executor_count - len(missing)
    if measured_count:
        notes.append(_measured_note(measured_count, executor_count, selection.newest_end, period_s, settings))
    worker_part = sum(f.worker_cpu_percent for f in figures.values() if f.measured)
    if worker_part > 0:
        total = sum(f.cpu_percent for f in figures.values() if f.measured)
        notes.append(f"workers' own CPU (JVM threads beyond the executors': transfer, serialisation, GC) "
                     f"counted in the executors' loads by the tuples they handled: {worker_part:.1f} of "
                     f"{total:.1f} % of a core")
    if missing and measured_count:
        notes.append(f"no usable window for {_listed(missing)}: load estimated from measured executors")
    if selection.stale_tasks:
        notes.append(
            ("used stale windows of tasks " if settings.use_stale else "skipped stale windows of tasks ")
            + f"{_listed(sorted(selection.stale_tasks))} (older than {settings.stale_s:.0f} s)"
        )
    if selection.unknown_tasks:
        notes.append(f"ignored windows of tasks {_listed(sorted(selection.unknown_tasks))}: "
                     f"not tasks of this topology now")
    if _bolts_spin(selection):
        notes.append(f"idle bolts spin while they wait (topology.bolt.wait.strategy {SPINNING_WAIT}, Storm's "
                     "default): below capacity their CPU is mostly waiting, so their costs look higher than "
                     "they are; park them (docs/capacity.md, Waiting executors)")
    incomplete = {t: m for t, m in selection.partial.items() if m}
    if incomplete:
        parts = sorted({part for m in incomplete.values() for part in m})
        notes.append(f"partial windows (no {', '.join(parts)}) for tasks {_listed(sorted(incomplete))}: "
                     f"those parts count as zero")
    return notes


def _bolts_spin(selection: _Selection) -> bool:
    """Whether the windows say the topology's bolts wait with Storm's spinning default."""
    return any(w.waits.get("bolt") == SPINNING_WAIT for ws in selection.usable.values() for w in ws)


def _measured_note(measured_count: int, executor_count: int, newest_end: int | None,
                   period_s: float | None, settings: _Settings) -> str:
    counted = f"loads and traffic measured for {measured_count} of {executor_count} executors"
    if not newest_end:
        return counted
    age = (settings.now_ms - newest_end) / 1000.0
    return f"{counted} (last {settings.last} windows of {period_s or '?'} s; newest {age:.0f} s old)"


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
