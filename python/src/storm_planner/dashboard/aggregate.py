"""One time step of a topology's trend, from the task hook's windows: Storm UI's figures (emitted,
transferred, acked, failed, complete latency, per-component processed rate, execute latency and
capacity) computed from the kit's own metrics. Pure functions, no I/O: the unit tests drive them.

**Time steps, not windows.** Each worker publishes its windows on its own clock (its first window
starts when the worker does), so the windows of different workers never line up. A step is a fixed
interval ``[start_ms, end_ms)`` (one metrics period long); every window adds to it the share of its counts
that falls inside it (``overlap / window duration``: counts spread evenly over their window). A worker
whose window straddles two steps adds to both; a window that covers a ZooKeeper outage (the hook keeps
counting and writes one longer window when it can) spreads over every step it covers. A step is only
computed once every task's windows reach past its end (:mod:`.timeline` decides when).

**Capacity** is Storm UI's: ``executed x mean execute latency / step length`` per executor (Storm's
latency is sampled, ``topology.stats.sample.rate``; the mean of the sampled ones stands for every
tuple), the component's the busiest of its executors'. Near 1 the executor is busy all the time and
its input queue grows.

**Complete latency percentiles** come from the spouts' latency buckets (the hook counts each sampled
complete latency in one of about two buckets per doubling, ``docs/metrics.md``): a percentile is
interpolated inside its bucket, so it is within that bucket's width of the true one.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from storm_planner.metrics.windows import TaskWindow

SYSTEM_PREFIX = "__"   # Storm's own components: __acker, __system, __metrics...


def share(window: TaskWindow, start_ms: float, end_ms: float) -> float:
    """The fraction of ``window`` that falls inside ``[start_ms, end_ms)``: its counts' share there."""
    if window.duration_ms <= 0:
        return 1.0 if start_ms <= window.end_ms < end_ms else 0.0
    overlap = min(window.end_ms, end_ms) - max(window.start_ms, start_ms)
    return max(0.0, overlap) / window.duration_ms


def percentile(buckets: Mapping[float | None, float], q: float) -> float | None:
    """The ``q`` quantile (0-1) of latencies counted by bucket (upper bound ms -> count; None: longer
    than every bound), interpolated linearly inside its bucket. Past the last bound it is that bound:
    the buckets cannot say more. None when nothing was counted."""
    total = sum(buckets.values())
    if total <= 0:
        return None
    bounds = sorted(b for b in buckets if b is not None)
    wanted, seen, lower = q * total, 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count > 0 and seen + count >= wanted:
            return lower + (bound - lower) * max(0.0, wanted - seen) / count
        seen += count
        lower = bound
    return lower


@dataclass(frozen=True)
class ComponentStep:
    component: str
    executors: int
    spout: bool
    emitted_per_s: float = 0.0
    executed_per_s: float = 0.0
    acked_per_s: float = 0.0
    failed_per_s: float = 0.0
    execute_latency_ms: float | None = None
    complete_latency_ms: float | None = None
    capacity: float | None = None      # the busiest executor's busy fraction (Storm UI)
    cpu_percent: float = 0.0           # of one core, its executors' threads and subprocesses

    @property
    def system(self) -> bool:
        return self.component.startswith(SYSTEM_PREFIX)


@dataclass(frozen=True)
class Step:
    """A topology's figures over ``[start_ms, end_ms)``; rates per second, latencies in ms."""

    start_ms: int
    end_ms: int
    # Emitted and transferred count every stream, Storm's acker streams included (Storm UI with its system
    # stats shown): they are real tuples between real tasks, and cross the network like the others.
    emitted_per_s: float = 0.0
    transferred_per_s: float = 0.0     # tuples sent to a task (one emit to two tasks counts twice)
    executed_per_s: float = 0.0        # the user bolts' processed tuples (not __acker's)
    acked_per_s: float = 0.0           # at the spouts: tuple trees completed (the throughput)
    failed_per_s: float = 0.0
    complete_latency_ms: float | None = None
    complete_p50_ms: float | None = None
    complete_p99_ms: float | None = None
    inter_worker_per_s: float = 0.0    # tuples sent to a task in another worker
    inter_node_per_s: float = 0.0      # ... on another node (supervisor)
    components: tuple[ComponentStep, ...] = ()
    tasks: int = 0                     # tasks with a window in the step

    @property
    def busiest(self) -> ComponentStep | None:
        """The user component with the highest capacity (Storm's own components left out)."""
        ranked = [(c.capacity, c) for c in self.components if not c.system and c.capacity is not None]
        return max(ranked, key=lambda pair: pair[0])[1] if ranked else None

    def to_dict(self) -> dict:
        busiest = self.busiest
        return {
            "start_ms": self.start_ms, "end_ms": self.end_ms, "tasks": self.tasks,
            **{name: _rounded(getattr(self, name)) for name in _STEP_FIGURES},
            "busiest": busiest.component if busiest else None,
            "busiest_capacity": _rounded(busiest.capacity) if busiest else None,
        }


_STEP_FIGURES = ("emitted_per_s", "transferred_per_s", "executed_per_s", "acked_per_s", "failed_per_s",
                 "complete_latency_ms", "complete_p50_ms", "complete_p99_ms", "inter_worker_per_s",
                 "inter_node_per_s")


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class _Sums:
    """Counts a step gathers for one executor (or component), each window weighted by its share."""

    emitted: float = 0.0
    executed: float = 0.0
    acked: float = 0.0
    failed: float = 0.0
    latency_sum: float = 0.0
    latency_samples: float = 0.0
    complete_sum: float = 0.0
    complete_samples: float = 0.0
    cpu_ms: float = 0.0
    threads: dict = field(default_factory=dict)   # (pid, seq, thread id) -> weighted ms, once per window


def _windows_in_step(windows: Mapping[int, Iterable[TaskWindow]], start_ms: int, end_ms: int
                     ) -> tuple[dict[int, list[tuple[TaskWindow, float]]], dict[int, TaskWindow]]:
    """Per task, its windows that overlap the step with the share of each inside it, and the window
    where the task ran most of the step (where its tuples are sent to)."""
    located: dict[int, TaskWindow] = {}
    in_step: dict[int, list[tuple[TaskWindow, float]]] = {}
    for task, task_windows in windows.items():
        chosen = [(w, share(w, start_ms, end_ms)) for w in task_windows]
        chosen = [(w, s) for w, s in chosen if s > 0]
        if chosen:
            in_step[task] = chosen
            located[task] = max(chosen, key=lambda ws: ws[1])[0]
    return in_step, located


def step(windows: Mapping[int, Iterable[TaskWindow]], start_ms: int, end_ms: int, *,
         executor_of: Mapping[int, str] | None = None, spouts: Iterable[str] | None = None) -> Step:
    """The figures of ``[start_ms, end_ms)`` from task -> its windows (any order, any overlap with the
    step). ``executor_of`` maps a task to its executor (``"[3-4]"``; unknown: each task its own);
    ``spouts`` names the spout components (unknown: those whose tasks emit and never execute)."""
    seconds = (end_ms - start_ms) / 1000.0
    if seconds <= 0:
        raise ValueError(f"a step must have a positive length, got [{start_ms}, {end_ms})")
    executor_of = executor_of or {}
    in_step, located = _windows_in_step(windows, start_ms, end_ms)
    components: dict[str, str] = {}
    per_executor: dict[str, _Sums] = defaultdict(_Sums)
    executors_of: dict[str, set[str]] = defaultdict(set)
    totals = _Sums()
    transferred = inter_worker = inter_node = 0.0
    buckets: dict[float | None, float] = defaultdict(float)
    executed_ever: dict[str, int] = defaultdict(int)
    for task, chosen in in_step.items():
        executor = executor_of.get(task, f"[{task}-{task}]")
        for w, part in chosen:
            components[executor] = w.component
            executors_of[w.component].add(executor)
            executed_ever[w.component] += w.executed_total
            sums = per_executor[executor]
            _add(sums, w, part)
            _add(totals, w, part)
            for bound, count in w.complete_latency_buckets:
                buckets[bound] += part * count
            for flow in w.sent:
                amount = part * flow.tuples
                transferred += amount
                target = located.get(flow.task)
                if target is not None and (target.node, target.worker, target.pid) != (w.node, w.worker, w.pid):
                    inter_worker += amount
                    if target.node != w.node:
                        inter_node += amount
    spout_names = set(spouts) if spouts is not None else {
        c for c in executors_of if not c.startswith(SYSTEM_PREFIX) and executed_ever[c] == 0}
    component_steps = tuple(_component_step(c, sorted(executors_of[c]), per_executor, c in spout_names, seconds)
                            for c in sorted(executors_of))
    spout_steps = [c for c in component_steps if c.spout]
    complete_sum = sum(per_executor[e].complete_sum for c in spout_steps for e in executors_of[c.component])
    complete_samples = sum(per_executor[e].complete_samples for c in spout_steps for e in executors_of[c.component])
    return Step(
        start_ms=start_ms, end_ms=end_ms,
        emitted_per_s=totals.emitted / seconds,
        transferred_per_s=transferred / seconds,
        executed_per_s=sum(c.executed_per_s for c in component_steps if not c.spout and not c.system),
        acked_per_s=sum(c.acked_per_s for c in spout_steps),
        failed_per_s=sum(c.failed_per_s for c in spout_steps),
        complete_latency_ms=complete_sum / complete_samples if complete_samples > 0 else None,
        complete_p50_ms=percentile(buckets, 0.50),
        complete_p99_ms=percentile(buckets, 0.99),
        inter_worker_per_s=inter_worker / seconds,
        inter_node_per_s=inter_node / seconds,
        components=component_steps,
        tasks=len(in_step),
    )


def _add(sums: _Sums, w: TaskWindow, part: float) -> None:
    sums.emitted += part * w.data_emitted     # as Storm UI counts by default: Storm's own streams left out
    sums.executed += part * w.data_executed
    sums.acked += part * w.acked
    sums.failed += part * w.failed
    sums.latency_sum += part * w.latency_ms_sum
    sums.latency_samples += part * w.latency_samples
    sums.complete_sum += part * w.complete_latency_ms_sum
    sums.complete_samples += part * w.complete_latency_samples
    sums.cpu_ms += part * w.subprocess_ms
    for thread in w.threads:   # the tasks of one executor share its thread: counted once per window
        sums.threads[(w.pid, w.seq, thread.id)] = part * thread.ms


def _component_step(component: str, executors: list[str], per_executor: Mapping[str, _Sums], spout: bool,
                    seconds: float) -> ComponentStep:
    mine = [per_executor[e] for e in executors]
    samples = sum(s.latency_samples for s in mine)
    complete_samples = sum(s.complete_samples for s in mine)
    capacities = [_capacity(s, seconds) for s in mine]
    known = [c for c in capacities if c is not None]
    return ComponentStep(
        component=component, executors=len(executors), spout=spout,
        emitted_per_s=sum(s.emitted for s in mine) / seconds,
        executed_per_s=sum(s.executed for s in mine) / seconds,
        acked_per_s=sum(s.acked for s in mine) / seconds,
        failed_per_s=sum(s.failed for s in mine) / seconds,
        execute_latency_ms=sum(s.latency_sum for s in mine) / samples if samples > 0 else None,
        complete_latency_ms=sum(s.complete_sum for s in mine) / complete_samples if complete_samples > 0 else None,
        capacity=max(known) if known and not spout else None,
        cpu_percent=100.0 * sum(s.cpu_ms + sum(s.threads.values()) for s in mine) / (seconds * 1000.0),
    )


def _capacity(sums: _Sums, seconds: float) -> float | None:
    """Storm UI's capacity of one executor: executed x mean execute latency / the step's length."""
    if sums.latency_samples <= 0:
        return 0.0 if sums.executed <= 0 else None
    return sums.executed * (sums.latency_sum / sums.latency_samples) / (seconds * 1000.0)


BEFORE_AFTER_FIGURES = ("acked_per_s", "executed_per_s", "complete_p99_ms", "inter_node_per_s", "busiest_capacity")


def before_after(steps: list[dict], at_ms: float, *, settle_ms: float, previous_ms: float | None = None,
                 next_ms: float | None = None, span: int = 6) -> dict:
    """Did the change at ``at_ms`` help? The mean of each figure over the (at most ``span``) steps before
    it (after the previous change had settled) and over the steps after it settled (``settle_ms`` after
    it, before the next change). ``steps`` are :meth:`Step.to_dict` dicts, oldest first. A figure no
    step of a side knows is None; ``settled`` says whether any step after it has settled yet."""
    low = previous_ms + settle_ms if previous_ms is not None else float("-inf")
    before = [s for s in steps if low <= s["start_ms"] and s["end_ms"] <= at_ms][-span:]
    high = next_ms if next_ms is not None else float("inf")
    after = [s for s in steps if s["start_ms"] >= at_ms + settle_ms and s["end_ms"] <= high][:span]
    return {"before": _means(before), "after": _means(after), "before_steps": len(before),
            "after_steps": len(after), "settled": bool(after)}


def _means(steps: list[dict]) -> dict[str, float | None]:
    means = {}
    for name in BEFORE_AFTER_FIGURES:
        values = [s[name] for s in steps if s.get(name) is not None]
        means[name] = round(sum(values) / len(values), 4) if values else None
    return means
