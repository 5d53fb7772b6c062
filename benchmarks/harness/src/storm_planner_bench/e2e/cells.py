"""One cell of ``storm-planner bench e2e``: a workload at a rate under one scheduler, once, measured.

A cell switches Nimbus to the cell's scheduler (:func:`~storm_planner.cluster.nimbus_restart.switch_scheduler`),
submits the workload with its replay spout logging every emit, ack and fail
(:mod:`storm_planner.streaming.timelog`), waits for the first acked tuple, lets it run ``settle_s``,
then measures for ``measure_s``: each supervisor's CPU (its cgroup's cpuacct) and its link's bytes
both ways. Then it tells the spout to stop emitting (its stop file), waits up to ``drain_s`` for every
emitted tuple to be acked, reads the placement Nimbus applied and the plans the service answered,
and kills the topology. The figures come from the spout's own times (Storm reports only a mean
complete latency), the time logs of a spout's incarnations merged by message id: the spout resumes from
its checkpoint (:func:`cell_paths`) when a re-plan restarts its worker, so a tuple emitted before the
restart and acked after it counts once, as acked, with its latency from the first emit.
"""
from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner.progress import Progress
from storm_planner.streaming.timelog import STOP_CHECK_S, TupleTimes, read_times
from storm_planner_bench.common.cellfile import save_cell_part
from storm_planner_bench.common.cluster import cpu_seconds, kill_and_wait
from storm_planner_bench.e2e.workloads import HeteroProfileError, Scheduler, Workload, needs_profile

FLUSH_S = 1.5   # a little over the spout's one-second log flush
POLL_S = 2.0
LATENCY_QUANTILES = 101       # kept per cell (0 %, 1 %, ..., 100 %) for the CDF plot


@dataclass
class Timing:
    """How long a cell waits: up to ``start_s`` from submission until Nimbus runs the topology and again
    until its first tuple is acked (Python workers start slowly on a loaded machine), ``settle_s`` after
    the first ack, ``measure_s`` measured, up to ``drain_s`` after the spout stopped for the tuples in
    flight; in a stepped ramp (:mod:`~storm_planner_bench.e2e.ramp`), ``step_s`` after each rate change
    before its window."""

    settle_s: float = 20.0
    measure_s: float = 40.0
    drain_s: float = 60.0
    start_s: float = 180.0
    step_s: float = 20.0


@dataclass
class Bench:
    """The running cluster and what every cell needs."""

    cluster: Any
    accounts: dict[str, Any]          # supervisor -> CpuAccount
    work: Path                        # cells' scratch (sinks, times)
    feeds: dict[str, Path]            # feed kind -> the root its synthetic feeds were built under
    repo: Path
    out: Path                         # the run's folder: each cell's record in its cells.jsonl (common.cellfile)
    progress: Progress
    timing: Timing = field(default_factory=Timing)
    quotas: dict[str, Any] = field(default_factory=dict)   # supervisor -> CpuQuota (profiling lifts one)

    @property
    def nimbus(self) -> str:
        return self.cluster.addresses.nimbus


def run_cell(bench: Bench, workload: Workload, rate: float, scheduler: Scheduler, repetition: int,
             profile: str | None = None) -> dict[str, Any]:
    """Run one cell; returns its row (figures NaN where the topology never ran). ``profile``: the
    workload's profile (JSON text) for the hetero planners (:mod:`storm_planner_bench.e2e.profiles`)."""
    from storm_planner.cluster.nimbus_restart import switch_scheduler
    from storm_planner.submit.operations import SubmitError

    switch_scheduler(bench.cluster, scheduler.nimbus)
    name = cell_name(workload.name, rate, scheduler.label, repetition)
    scratch = bench.work / name
    scratch.mkdir(parents=True, exist_ok=True)
    job = f"e2e-{workload.name}"
    key = {"workload": workload.name, "rate": f"{rate:g}", "scheduler": scheduler.label, "repetition": repetition}
    submitted = time.time()
    try:
        row = submit_workload(bench, workload, rate, scheduler, scratch, job, profile=profile)
    except SubmitError as error:
        bench.progress(f"{scheduler.label}: {workload.name} not running: {error}")
        with contextlib.suppress(Exception):
            kill_and_wait(bench.nimbus, job)
        return {**key, "status": f"not scheduled: {error}"[:300]}
    scheduled = time.time()
    try:
        return {**key, **_measure_running(bench, row.id, scratch, submitted, scheduled, name)}
    finally:
        kill_and_wait(bench.nimbus, job, row.id)


# +rebalance's cooldown: longer than any cell, so a submission is rebalanced once at most.
ONE_REBALANCE_S = 86_400.0


def submit_workload(bench: Bench, workload: Workload, rate: float, scheduler: Scheduler, scratch: Path, job: str,
                    extra: dict[str, Any] | None = None, profile: str | None = None):
    """Submit ``workload`` at ``rate`` for ``scheduler`` as ``job``, its spout's sink, times, stop file and
    checkpoints under ``scratch`` (:func:`cell_paths`: its replay spouts resume from their checkpoints when
    their worker restarts; with ``+resumable`` the topology is marked ``planner.source.resumable``, so a
    re-plan may restart a spout's worker to relieve a node short of CPU); ``extra`` options go
    on top (``bench albic-real``'s re-planning settings and groupings, the profiling run's single worker).
    ``profile`` reaches the topology as ``planner.hetero.profiles`` for the hetero planners alone
    (:class:`~storm_planner_bench.e2e.workloads.HeteroProfileError` if they have none); a scheduler without
    re-planning (``+noreplan``) sets ``planner.replan: false``, ``+correct`` ``planner.replan.first.correction``,
    ``+remembered`` ``planner.loads.remembered`` (``+remembered-traffic`` also
    ``planner.loads.remembered.cpu: false``), ``+rebalance`` ``planner.rebalance`` with a cooldown of
    ``ONE_REBALANCE_S`` (one rebalance a submission), ``+KEY=VALUE`` ``planner.<algorithm>.KEY``. Returns the submission (its ``id``);
    :class:`~storm_planner.submit.operations.SubmitError` when it does not run within the start timeout."""
    import storm_planner
    from storm_planner.core.settings import (
        HETERO_PROFILES,
        LOADS_REMEMBERED,
        LOADS_REMEMBERED_CPU,
        REBALANCE,
        REBALANCE_COOLDOWN_SECS,
        REPLAN,
        REPLAN_FIRST_CORRECTION,
        SOURCE_RESUMABLE,
    )
    from storm_planner.planners._parameters import option_prefix
    from storm_planner.submit.operations import submit_project

    options = {
        **workload.options(rate),
        **workload.feed_options(bench.feeds[workload.feed_kind]),
        **cell_paths(workload.prefix, scratch),
        # The workers' Python runs this checkout's kit (the spout's time log), whatever the venv holds.
        "topology.environment": {"PYTHONPATH": str(Path(storm_planner.__file__).resolve().parents[1])},
    }
    if scheduler.algorithm:
        options["planner.algorithm"] = scheduler.algorithm
        options.update({option_prefix(scheduler.algorithm) + key: value for key, value in scheduler.params})
    if not scheduler.hook:
        options["planner.metrics.enabled"] = False
    if not scheduler.replan:
        options[REPLAN.key] = False     # placed once: the plugin never offers it for re-planning
    if scheduler.resumable:
        options[SOURCE_RESUMABLE.key] = True
    if scheduler.correct:
        options[REPLAN_FIRST_CORRECTION.key] = True
    if scheduler.remembered:
        options[LOADS_REMEMBERED.key] = True
    if not scheduler.remembered_cpu:
        options[LOADS_REMEMBERED_CPU.key] = False
    if scheduler.rebalance:
        options[REBALANCE.key] = True
        options[REBALANCE_COOLDOWN_SECS.key] = ONE_REBALANCE_S
    if needs_profile(scheduler):
        if not profile:
            raise HeteroProfileError(f"{scheduler.label} needs a profile of {workload.name}: none was made or given")
        options[HETERO_PROFILES.key] = profile
    options.update(extra or {})
    return submit_project(bench.repo / workload.project, nimbus=bench.nimbus, topology=workload.topology,
                          name=job, options=options, wait_active=bench.timing.start_s, progress=lambda message: None)


def cell_paths(prefix: str, scratch: Path) -> dict[str, str]:
    """The replay spouts' files under a cell's ``scratch``: the sink (its done marker beside it), the time
    logs, the stop file, and the checkpoints of their committed progress (per cell, and inside it per run,
    so no cell resumes another's)."""
    return {f"{prefix}.sink": str(scratch / "sink.jsonl"), f"{prefix}.times_dir": str(scratch / "times"),
            f"{prefix}.stop_file": str(scratch / "stop"), f"{prefix}.checkpoint_dir": str(scratch / "checkpoints")}


def cell_name(workload: str, rate: float | str, scheduler: str, repetition: int | str) -> str:
    """A cell's file name: ``topk-link-400-planner-topdown-1``."""
    return f"{workload}-{float(rate):g}-{scheduler.replace(':', '-').replace('+', '-')}-{repetition}"


def _measure_running(bench: Bench, topology_id: str, scratch: Path, submitted: float, scheduled: float,
                     name: str) -> dict[str, Any]:
    times_dir = scratch / "times"
    if not wait_first_ack(times_dir, submitted + bench.timing.start_s):
        status = f"no tuple acked within {bench.timing.start_s:.0f} s of submission"
    else:
        status = "ran"
    time.sleep(bench.timing.settle_s)
    window = measure_window(bench)
    placement = bench.cluster.assignment(topology_id)
    (scratch / "stop").write_text("")
    times = drain(times_dir, bench.timing.drain_s)
    figures = _throughput_and_latency(times, window.begin, window.end, submitted)
    figures.update(window.nodes(figures["acked_in_window"]))
    figures.update(_placement(placement))
    save_executors(bench.out, name, placement)
    figures.update(_plans(bench.cluster.plan_log, topology_id, bench.out, name))
    status = cell_status(status, figures.pop("plan_error"), figures["plans"])
    figures["submit_to_scheduled_s"] = round(scheduled - submitted, 1)
    _save_latency_quantiles(bench.out, name, times, window.begin, window.end)
    _save_startup(bench.out, name,
                  bench.cluster.log_dir / "workers-artifacts" / topology_id, submitted, times)
    bench.progress(f"  {status}: processed {figures['processed_tps']:.0f} t/s of {figures['emitted_tps']:.0f} "
                   f"emitted, p50 {figures['latency_p50_ms']:.0f} ms, p99 {figures['latency_p99_ms']:.0f} ms, "
                   f"lost {figures['lost']}, on {figures['placement']}")
    return {"status": status, "measure_s": round(window.seconds, 1), **figures}


@dataclass(frozen=True)
class Window:
    """A measured window: its wall-clock bounds, each supervisor's CPU seconds and link bytes at both ends."""

    begin: float
    end: float
    cpu_before: dict[str, float]
    cpu_after: dict[str, float]
    bytes_before: dict[str, Any]
    bytes_after: dict[str, Any]

    @property
    def seconds(self) -> float:
        return self.end - self.begin

    def nodes(self, processed: int) -> dict[str, Any]:
        """Per supervisor CPU and link figures over the window (:func:`_nodes`)."""
        return _nodes(self.cpu_before, self.cpu_after, self.bytes_before, self.bytes_after, self.seconds, processed)


def measure_window(bench: Bench) -> Window:
    """Measure for ``bench.timing.measure_s``: the supervisors' CPU and link bytes at both ends."""
    from storm_planner.cluster import network

    links = bench.cluster.network.links if bench.cluster.network else []
    cpu_before, bytes_before = cpu_seconds(bench.accounts), {link.supervisor: network.link_bytes(link) for link in links}
    begin = time.time()
    time.sleep(bench.timing.measure_s)
    end = time.time()
    cpu_after, bytes_after = cpu_seconds(bench.accounts), {link.supervisor: network.link_bytes(link) for link in links}
    return Window(begin, end, cpu_before, cpu_after, bytes_before, bytes_after)


def cell_status(status: str, refused: str, plans: int) -> str:
    """A cell that ran without one plan from the service while it refused one ran on the plugin's fallback,
    DefaultScheduler: its figures are that placement's, not the planner's, and its status says so."""
    if status == "ran" and refused and not plans:
        return f"ran on DefaultScheduler's placement: the planner answered {refused}"[:300]
    return status


def wait_first_ack(times_dir: Path, deadline: float) -> bool:
    """Whether the spout logged an acked tuple before ``deadline`` (wall clock)."""
    while time.time() < deadline:
        if times_dir.is_dir() and read_times(times_dir).acked:
            return True
        time.sleep(POLL_S)
    return False


def drain(times_dir: Path, drain_s: float) -> TupleTimes:
    """The spout's times once every tuple it emitted was acked, or after ``drain_s``.

    The spout flushes its log every second, so "all acked" counts only when it still holds after a
    further flush: a last emit (the stop file is seen a moment late) may be logged after its check, its
    ack a flush later; reading once more without waiting again counted it as lost. Nor does it count
    before the spout can have seen the stop file and logged its last emits (``STOP_CHECK_S`` then
    ``FLUSH_S``): two reads a flush apart could both come before them. At the deadline the log is read
    once more a flush later, so the acks still in the spout's buffer are not counted as lost.
    """
    if not times_dir.is_dir():
        return TupleTimes()
    begun = time.monotonic()
    deadline, settled = begun + drain_s, begun + STOP_CHECK_S + FLUSH_S + POLL_S
    while True:
        times = read_times(times_dir)
        if not times.never_acked() and time.monotonic() >= settled:
            time.sleep(FLUSH_S)
            times = read_times(times_dir)
            if not times.never_acked():
                return times
        if time.monotonic() >= deadline:
            time.sleep(FLUSH_S)
            return read_times(times_dir)
        time.sleep(POLL_S)


def _throughput_and_latency(times: TupleTimes, begin: float, end: float, submitted: float) -> dict[str, Any]:
    seconds = end - begin
    latencies = np.array(times.latencies_s(begin, end)) * 1000.0
    first_emit = min(times.emitted.values(), default=math.nan)
    first_ack = min(times.acked.values(), default=math.nan)
    acked_in_window = times.acked_between(begin, end)
    return {
        "emitted_tps": round(times.emitted_between(begin, end) / seconds, 1),
        "processed_tps": round(acked_in_window / seconds, 1),
        "acked_in_window": acked_in_window,
        "latency_mean_ms": _rounded(latencies.mean() if latencies.size else math.nan),
        "latency_p50_ms": _rounded(np.percentile(latencies, 50) if latencies.size else math.nan),
        "latency_p99_ms": _rounded(np.percentile(latencies, 99) if latencies.size else math.nan),
        "emitted": len(times.emitted), "acked": len(times.acked),
        "lost": times.never_acked(), "failed": times.failed, "replayed": times.replayed,
        "submit_to_first_emit_s": _rounded(first_emit - submitted),
        "submit_to_first_ack_s": _rounded(first_ack - submitted),
    }


def _nodes(cpu_before, cpu_after, bytes_before, bytes_after, seconds: float, processed: int) -> dict[str, Any]:
    """Per supervisor: CPU % of a core, link Mbit/s both ways, link bytes per processed tuple out and in."""
    row: dict[str, Any] = {}
    total = 0
    for name in sorted(cpu_after):
        row[f"cpu_{name}_pct"] = round(100.0 * (cpu_after[name] - cpu_before[name]) / seconds, 1)
    for name in sorted(bytes_after):
        sent = bytes_after[name].sent - bytes_before[name].sent
        received = bytes_after[name].received - bytes_before[name].received
        total += sent + received
        row[f"link_{name}_mbit"] = round((sent + received) * 8 / 1e6 / seconds, 3)
        row[f"link_{name}_out_bytes_per_tuple"] = _rounded(sent / processed if processed else math.nan)
        row[f"link_{name}_in_bytes_per_tuple"] = _rounded(received / processed if processed else math.nan)
    row["link_bytes_per_tuple"] = _rounded(total / processed if processed else math.nan)
    return row


def _placement(assignment: list[dict]) -> dict[str, Any]:
    """Executors per supervisor and per worker, as Nimbus reports them (``getTopologyInfo``)."""
    per_worker: dict[tuple[str, int], Counter] = {}
    for executor in assignment:
        per_worker.setdefault((executor["node"], executor["port"]), Counter())[executor["component"]] += 1
    per_node = Counter(executor["node"] for executor in assignment if not executor["component"].startswith("__system"))
    ackers = Counter(executor["node"] for executor in assignment if executor["component"] == "__acker")
    workers = " ".join(f"{node}:{port}[{','.join(f'{c}x{n}' for c, n in sorted(counts.items()) if c != '__system')}]"
                       for (node, port), counts in sorted(per_worker.items()))
    return {"supervisors_used": len(per_node), "workers_used": len(per_worker),
            "placement": " ".join(f"{node}:{n}" for node, n in sorted(per_node.items())),
            "ackers_on": " ".join(f"{node}:{n}" for node, n in sorted(ackers.items())),
            "workers": workers}


def _plans(plan_log: Path, topology_id: str, out: Path, cell: str) -> dict[str, Any]:
    """Plans the service answered for the topology: re-plans after the first, executors they moved. The
    answers (placements, figures, notes) are kept in the cell's record (``plans``), to see why."""
    from storm_planner.service.planning.planlog import read_plan_log

    answers = [p for p in read_plan_log(plan_log) if p["topology"] == topology_id]
    save_cell_part(out, cell, "plans", answers)
    plans = [p for p in answers if not p.get("error")]
    errors = [str(p["error"]) for p in answers if p.get("error")]
    moved = sum(sum(1 for e, slot in later["assignments"].items() if earlier["assignments"].get(e) not in (None, slot))
                for earlier, later in zip(plans, plans[1:]))
    return {"plans": len(plans), "replans": max(0, len(plans) - 1), "migrations": moved,
            "plan_error": errors[0] if errors else ""}


def save_executors(out: Path, cell: str, assignment: list[dict]) -> None:
    """Where each executor ran, task ids included, in the cell's record (``executors``): cells.csv counts
    components per node and worker, but a fields grouping on skewed keys loads one task more than another,
    and only the task ids say which of them shares a node with its source."""
    save_cell_part(out, cell, "executors", [{k: e[k] for k in ("executor", "component", "node", "port")}
                                            for e in assignment if not e["component"].startswith("__system")])


def _save_latency_quantiles(out: Path, cell: str, times: TupleTimes, begin: float, end: float) -> None:
    latencies = np.array(times.latencies_s(begin, end)) * 1000.0
    quantiles = np.percentile(latencies, np.linspace(0, 100, LATENCY_QUANTILES)).round(2).tolist() \
        if latencies.size else []
    save_cell_part(out, cell, "latency", quantiles)


def _save_startup(out: Path, cell: str, topology_dir: Path, submitted: float, times: TupleTimes) -> None:
    """Where submission -> first ack went (:mod:`~storm_planner_bench.common.startup`), in the cell's record."""
    from storm_planner_bench.common.startup import startup_phases

    phases = startup_phases(topology_dir, submitted, min(times.emitted.values(), default=math.nan),
                            min(times.acked.values(), default=math.nan))
    save_cell_part(out, cell, "startup", {k: (None if math.isnan(v) else v) for k, v in phases.items()})


def _rounded(value: float, digits: int = 1) -> float:
    return round(float(value), digits) if not math.isnan(value) else math.nan
