"""The cluster side of ``storm-planner bench hetero-real``: the bench's machines and problems, the
metrics windows it reads, and :class:`Bench`, which runs one placement of one topology and climbs its
input rate until a machine saturates (:mod:`storm_planner_bench.hetero_real.experiment` drives it)."""
from __future__ import annotations

import contextlib
import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storm_planner.generators.hetero import TOPOLOGIES
from storm_planner.profiling.builtin_project import RATE_FILE_OPTION
from storm_planner.profiling.cgroups import CpuAccount, throttled_share
from storm_planner.profiling.measurements import WindowFigures, figures_from_window
from storm_planner.progress import Progress
from storm_planner_bench.hetero_real.project import CONF_PREFIX, base_options, ras_options
from storm_planner_bench.hetero_real.search import (
    PLACEMENTS,
    PLANNED,
    BenchError,
    RateSearch,
    Verdict,
    expected_rates,
    grid_index_below,
    grid_rate,
    judge_step,
    nimbus_scheduler,
    placement_counts,
    placement_differences,
    spouts_of,
)

# -- problems and predictions -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Machine:
    supervisor: str
    machine_type: str
    capacity: float
    port: int


def problem_dict(shape: str, machines: Sequence[Machine], profile: Mapping[str, Any],
                 parallelism: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The planner problem of ``shape`` on ``machines`` (one slot each), executors per ``parallelism``."""
    spec = TOPOLOGIES[shape]
    return {
        "nodes": [{"id": m.supervisor, "capacity": m.capacity, "machine_type": m.machine_type,
                   "slots": [m.port]} for m in machines],
        "topology": {
            "id": f"realbench-{shape}",
            "components": [{"id": name, "type": kind, "executors": int((parallelism or {}).get(name, 1))}
                           for name, kind in spec["components"]],
            "streams": [{"from": s, "to": t, "grouping": "shuffle"} for s, t in spec["streams"]],
        },
        "profiles": dict(profile),
        "options": {"seed": 1, "workers": len(machines)},
    }


def predicted_rate(shape: str, machines: Sequence[Machine], profile: Mapping[str, Any],
                   rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The simulator's highest input rate and throughput for an applied placement (rows of
    ``{"component", "node", "port"}``)."""
    from storm_planner.core.problem import Problem
    from storm_planner.planners.hetero.model import build_model
    from storm_planner.planners.hetero.plans import placement_from_assignments
    from storm_planner.planners.hetero.simulate import simulate

    counts = Counter(row["component"] for row in rows)
    problem = Problem.from_dict(problem_dict(shape, machines, profile, counts))
    model = build_model(problem)
    index: Counter = Counter()
    assignments = {}
    for row in rows:
        assignments[f"{row['component']}/{index[row['component']]}"] = f"{row['node']}:{row['port']}"
        index[row["component"]] += 1
    result = simulate(model, placement_from_assignments(problem, model, assignments))
    return {"input_rate": result.input_rate, "throughput": result.throughput,
            "max_utilisation": result.max_utilisation,
            "utilisation": {m: round(u, 1) for m, u in result.utilisation.items()}}


# -- the cluster ------------------------------------------------------------------------------------------

MACHINE_NAMES = ("large", "medium", "small")
STORM_SCHEDULER_NAMES = {"default": "DefaultScheduler", "ras": "ResourceAwareScheduler"}
# hetero-optimal plans the submitted graph in the service while Nimbus waits: seconds on this host's shapes,
# more than the plugin's default deadline (5 s) for Diamond.
PLANNER_TIMEOUT_MS = 120_000


def bench_description(capacities: Sequence[float], period_s: int):
    """Three supervisors, one slot each, ``cpu`` = capacity = CPU quota."""
    from storm_planner.cluster.description import parse_description

    return parse_description({
        "name": "hetero-real",
        "storm_version": "2.8.3",
        "host": "127.0.0.1",
        "planner": {"algorithm": "even", "timeout_ms": PLANNER_TIMEOUT_MS},
        "heap_mb": {"zookeeper": 256, "nimbus": 384, "supervisor": 256, "ui": 384, "worker": 256},
        "storm": {"nimbus.monitor.freq.secs": 3, "supervisor.worker.timeout.secs": 60,
                  "topology.subprocess.timeout.secs": 60},
        "supervisors": [
            {"name": f"sup-{name}", "cpu": cpu, "memory_mb": 4096, "slots": 1,
             "meta": {"machine.type": name, "speed": "1.0"}}
            for name, cpu in zip(MACHINE_NAMES, capacities)
        ],
    }, source="<bench hetero-real>")


def machines_of(description: Any) -> list[Machine]:
    """The bench's machines: each supervisor of ``description`` with its type, capacity and one slot."""
    return [Machine(s.name, s.meta["machine.type"], s.held_cpu, s.slot_ports[0]) for s in description.supervisors]


class WindowReader:
    """The metrics hook's windows of one topology, read from ZooKeeper with one kazoo client."""

    def __init__(self, zookeeper: str) -> None:
        import logging

        from kazoo.client import KazooClient

        logging.getLogger("kazoo").setLevel(logging.WARNING)
        self.zk = KazooClient(hosts=zookeeper, timeout=10)
        self.zk.start(timeout=15)

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    def current(self, topology_id: str) -> list:
        from storm_planner.metrics.windows import read_windows

        return [w for w in read_windows(self.zk, topology_id) if w.cpu_known]

    def next_windows(self, topology_id: str, count: int, period_s: float, tasks: int,
                     timeout_s: float) -> list[WindowFigures]:
        """The next ``count`` new windows of each of the topology's ``tasks`` tasks."""
        start = {w.task: w.seq for w in self.current(topology_id)}
        seen: dict[tuple[int, int], WindowFigures] = {}
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for w in self.current(topology_id):
                if w.seq > start.get(w.task, -1):
                    seen.setdefault((w.task, w.seq), figures_from_window(w))
            per_task = Counter(task for task, _ in seen)
            if len(per_task) >= tasks and all(n >= count for n in per_task.values()):
                return list(seen.values())
            time.sleep(max(0.5, period_s / 3))
        raise BenchError(f"timed out after {timeout_s:.0f} s waiting for {count} windows of each of the "
                         f"{tasks} tasks of {topology_id} (is the metrics hook jar built?)")


@dataclass
class Step:
    run: str
    offered: float
    index: int
    verdict: Verdict
    load_avg: float
    throttled: Mapping[str, float]           # machine -> share of CFS periods throttled
    machine_cpu: Mapping[str, float] = field(default_factory=dict)   # machine -> CPU % (cpuacct group)
    task_cpu: Mapping[str, float] = field(default_factory=dict)      # machine -> CPU % of its tasks (hook)

    def row(self) -> dict[str, Any]:
        return {"run": self.run, "offered": self.offered, "grid_index": self.index,
                "sustained": self.verdict.sustained, "worst_component": self.verdict.worst_component,
                "worst_share": round(self.verdict.worst_share, 3), "last_share": round(self.verdict.last_share, 3),
                "load_avg_1m": round(self.load_avg, 2),
                **{f"rate_{c}": round(r, 1) for c, r in sorted(self.verdict.rates.items())},
                **{f"throttled_{m}": round(s, 3) for m, s in self.throttled.items()},
                **{f"cpu_{m}": round(v, 1) for m, v in self.machine_cpu.items()},
                **{f"task_cpu_{m}": round(v, 1) for m, v in self.task_cpu.items()}}


# The status of a run whose placement Nimbus changed while it ran (then its figures measure no one placement).
MOVED = "moved while it ran"


def slots_of(applied: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``executor -> "node:port"`` of an applied placement (:meth:`LocalCluster.assignment` rows)."""
    return {r["executor"]: f"{r['node']}:{r['port']}" for r in applied}


def moved_status(before: Iterable[Mapping[str, Any]], now: Iterable[Mapping[str, Any]]) -> str:
    """:data:`MOVED` and the first executors that moved between two applied placements; "" if none did."""
    at_start, at_end = slots_of(before), slots_of(now)
    moved = [f"{e} {at_start.get(e, 'nowhere')} -> {at_end.get(e, 'nowhere')}"
             for e in sorted(set(at_start) | set(at_end)) if at_start.get(e) != at_end.get(e)]
    return f"{MOVED}: {'; '.join(moved[:3])}{' ...' if len(moved) > 3 else ''}" if moved else ""


@dataclass
class Run:
    shape: str
    placement: str
    repetition: int                                        # from 0
    topology_id: str = ""
    status: str = "ran"                                    # else why it has no figures (not scheduled, ...)
    declared_cpu: Mapping[str, float] = field(default_factory=dict)  # ras: per executor, as submitted
    ras_share: float | None = None                         # ras: the share of hetero's rate declared
    parallelism: Mapping[str, int] = field(default_factory=dict)
    applied: list = field(default_factory=list)            # rows: executor, component, node, port
    plan_check: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)  # "component@node" -> executors
    predicted: Mapping[str, Any] = field(default_factory=dict)
    steps: list = field(default_factory=list)
    sustained_offered: float = 0.0
    sustained_rates: Mapping[str, float] = field(default_factory=dict)
    load_avg: list = field(default_factory=list)
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.shape}-{self.placement}-{self.repetition + 1}"

    @property
    def scheduler(self) -> str:
        """The scheduler Nimbus ran: ``planner`` (the plugin), ``default`` or ``resource-aware``."""
        return nimbus_scheduler(self.placement)

    @property
    def measured(self) -> bool:
        """Did the run reach a rate search (its figures are measurements, a 0 included)?"""
        return self.status == "ran"

    @property
    def top_step(self) -> Step | None:
        """The step the run's throughput comes from: the last sustained one at the rate the search counted."""
        kept = [s for s in self.steps if s.verdict.sustained and s.offered == self.sustained_offered]
        return kept[-1] if kept else None

    @property
    def measured_input(self) -> float:
        """Tuples/s the spouts emitted at the highest sustained step."""
        return sum(r for c, r in self.sustained_rates.items() if c in spouts_of(self.shape))

    @property
    def measured_throughput(self) -> float:
        """Eq. 2: the tuples/s all tasks processed at the highest sustained step, each component's rate at
        most what the offered rate asks of it: a step after steps that fell behind drains their backlog
        inside its windows (a RAS sink executed 513/s where 357.6 were offered), which is no steady state."""
        expected = expected_rates(self.shape, self.sustained_offered)
        return sum(min(rate, expected.get(c, rate)) for c, rate in self.sustained_rates.items())

    def row(self) -> dict[str, Any]:
        return {"run": self.name, "topology": self.shape, "placement": self.placement,
                "repetition": self.repetition + 1, "scheduler": self.scheduler, "status": self.status,
                # A run that never ran (RAS placed nothing) has no figures: blank, not 0.
                "sustained_offered": self.sustained_offered if self.measured else "",
                "measured_input": round(self.measured_input, 1) if self.measured else "",
                "measured_throughput": round(self.measured_throughput, 1) if self.measured else "",
                "predicted_input": round(self.predicted["input_rate"], 1) if self.predicted else "",
                "steps": len(self.steps), "load_avg_mean": round(statistics.mean(self.load_avg), 2) if self.load_avg else "",
                "load_avg_max": round(max(self.load_avg), 2) if self.load_avg else "",
                "plan_check": self.plan_check, "seconds": round(self.seconds),
                "parallelism": " ".join(f"{c}={n}" for c, n in self.parallelism.items()),
                "placement_counts": " ".join(f"{k}={v}" for k, v in sorted(self.counts.items())),
                "declared_cpu": " ".join(f"{c}={v:g}" for c, v in self.declared_cpu.items()),
                "ras_share": "" if self.ras_share is None else self.ras_share}


@dataclass
class BenchSettings:
    shapes: Sequence[str]
    repetitions: int
    capacities: Sequence[float]
    rounds: Mapping[str, int]
    placements: Sequence[str] = PLACEMENTS
    ras_shares: Sequence[float] = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)
    ras_wait_s: float = 60.0          # how long RAS may take to place a submission before a lower share
    optimal_max_nodes: int = 2_000_000
    period_s: int = 3
    settle_windows: int = 1
    measure_windows: int = 3
    keep_up: float = 0.95
    start_fraction: float = 0.4       # first step: this share of the simulator's rate for the placement
    warmup_fraction: float = 0.25
    warmup_windows: int = 5
    max_steps: int = 30               # rate steps measured per run at most (RateSearch.max_steps)
    load_aware: bool = False          # Storm 2's load/locality-aware shuffle (False: uniform, as the paper's)


class Bench:
    """One cluster, the quotas, and the runs on it."""

    def __init__(self, cluster, settings: BenchSettings, profile: Mapping[str, Any], work_dir: Path,
                 progress: Progress) -> None:
        self.cluster, self.settings, self.profile = cluster, settings, profile
        self.work_dir, self.progress = work_dir, progress
        d = cluster.description
        self.machines = machines_of(d)
        self.quotas: dict[str, Any] = {}
        self.accounts: dict[str, CpuAccount] = {}
        self.reader = WindowReader(cluster.addresses.zookeeper)
        self.ras_start: dict[str, int] = {}   # shape -> index of the share in ras_shares RAS last placed

    # -- one run -----------------------------------------------------------------------------------------
    def run(self, shape: str, placement: str, repetition: int, parallelism: Mapping[str, int],
            declared: Mapping[str, float] | None = None) -> Run:
        """Run ``placement`` of ``shape`` on ``parallelism`` once: Nimbus switched to the placement's scheduler,
        the topology submitted, its placement checked, its input rate climbed. ``declared``: the CPU per
        executor a RAS run declares at share 1 (:func:`~storm_planner_bench.hetero_real.project.ras_options`).
        A RAS run that no share lets RAS place returns with its ``status`` saying so and no steps."""
        from storm_planner.cluster.nimbus_restart import switch_scheduler
        from storm_planner.submit.operations import kill_topology

        switch_scheduler(self.cluster, nimbus_scheduler(placement))
        run = Run(shape, placement, repetition, parallelism=dict(parallelism))
        started = time.monotonic()
        self._wait_slots_free()
        rate_file = self.work_dir / f"rate-{run.name}"
        rate_file.write_text("0")
        options = self._options(run, rate_file)
        row = self._submit_ras(run, options, declared or {}) if placement == "ras" else self._submit(run, options)
        if row is None:
            run.seconds = time.monotonic() - started
            self.progress(f"[{run.name}] {run.status}")
            return run
        run.topology_id = row.id
        try:
            if placement in PLANNED:
                self._check_placement(run)
            else:
                self._storm_placement(run)
            tasks = len(run.applied)
            # Every task's Python subprocess is up once every task has written a window.
            self.reader.next_windows(run.topology_id, 1, self.settings.period_s, tasks, timeout_s=240)
            self._climb(run, rate_file, tasks)
            self._check_still_placed(run)
        finally:
            kill_topology(self.cluster.addresses.nimbus, run.name, wait_secs=0, progress=lambda m: None)
            run.seconds = time.monotonic() - started
        self.progress(f"[{run.name}] highest sustained offered rate {run.sustained_offered:g}/s "
                      f"(measured input {run.measured_input:.1f}/s, throughput {run.measured_throughput:.1f} "
                      f"tuples/s; predicted input {run.predicted.get('input_rate', 0):.1f}/s) in {run.seconds:.0f} s")
        return run

    def _options(self, run: Run, rate_file: Path) -> dict[str, Any]:
        """The topology options every placement shares, and the planner's for the plugin's placements."""
        options: dict[str, Any] = {
            **base_options(self.settings.period_s, self.settings.rounds, self.settings.load_aware),
            RATE_FILE_OPTION: str(rate_file), "topology.workers": len(self.machines),
            **{f"{CONF_PREFIX}.parallelism.{c}": n for c, n in run.parallelism.items()}}
        if run.placement in PLANNED:
            options.update({"planner.algorithm": run.placement, "planner.hetero.profiles": json.dumps(self.profile)})
        if run.placement == "hetero-optimal":   # the service's search bounded as the bench's was
            options["planner.hetero-optimal.max_nodes"] = self.settings.optimal_max_nodes
        return options

    def _submit(self, run: Run, options: Mapping[str, Any], wait_s: float = 240.0) -> Any:
        """Submit ``run``'s topology; its row once Nimbus has assigned workers (SubmitError after ``wait_s``)."""
        from storm_planner.submit.operations import submit_project

        who = (f"planner.algorithm {run.placement}" if run.placement in PLANNED
               else f"Storm's {STORM_SCHEDULER_NAMES[run.placement]}")
        self.progress(f"[{run.name}] submitting ({', '.join(f'{c}={n}' for c, n in run.parallelism.items())}; {who})")
        return submit_project(self.work_dir / f"project-{run.shape}", nimbus=self.cluster.addresses.nimbus,
                              name=run.name, options=dict(options), wait_active=wait_s, progress=lambda m: None)

    def _submit_ras(self, run: Run, options: Mapping[str, Any], declared: Mapping[str, float]) -> Any:
        """Submit a RAS run with the declarations at the first share of ``ras_shares`` RAS can place (from the
        share an earlier repetition of the shape ran with); None when none can be placed."""
        from storm_planner.submit.operations import SubmitError, kill_topology

        shares = self.settings.ras_shares
        wait = self.settings.ras_wait_s
        for index in range(self.ras_start.get(run.shape, 0), len(shares)):
            extra = ras_options(declared, shares[index], run.parallelism)
            run.ras_share = shares[index]
            run.declared_cpu = {c: extra[f"{CONF_PREFIX}.cpu.{c}"] for c in run.parallelism
                                if f"{CONF_PREFIX}.cpu.{c}" in extra}
            try:
                row = self._submit(run, {**options, **extra}, wait)
            except SubmitError as error:
                self.progress(f"[{run.name}] RAS placed no worker within {wait:.0f} s declaring "
                              f"{shares[index]:g} of hetero's rate: {error}")
                with contextlib.suppress(SubmitError):
                    kill_topology(self.cluster.addresses.nimbus, run.name, wait_secs=0, progress=lambda m: None)
                continue
            self.ras_start[run.shape] = index
            return row
        run.ras_share, run.declared_cpu = None, {}
        run.status = (f"not scheduled: RAS placed no worker within {wait:.0f} s at any declared share "
                      f"({', '.join(f'{s:g}' for s in shares)} of hetero's predicted rate)")
        return None

    def _check_placement(self, run: Run) -> None:
        """What Nimbus applied must be what the planner service answered for this topology."""
        from storm_planner.service.planning.planlog import read_plan_log

        deadline = time.monotonic() + 60
        plans: list = []
        while time.monotonic() < deadline:
            plans = [p for p in read_plan_log(self.cluster.plan_log) if p["topology"] == run.topology_id]
            applied = self.cluster.assignment(run.topology_id)
            if plans and applied and not plans[-1]["error"]:
                mapping = {r["executor"]: f"{r['node']}:{r['port']}" for r in applied}
                if not placement_differences(mapping, plans[-1]["assignments"]):
                    break
            time.sleep(1)
        if not plans:
            raise BenchError(f"{run.name}: the planner service answered no plan for {run.topology_id}")
        last = plans[-1]
        if last["error"]:
            raise BenchError(f"{run.name}: the planner refused: {last['error']}")
        if last["algorithm"] != run.placement:
            raise BenchError(f"{run.name}: planned by {last['algorithm']}, expected {run.placement}")
        applied = self.cluster.assignment(run.topology_id)
        differences = placement_differences(slots_of(applied), last["assignments"])
        if differences:
            raise BenchError(f"{run.name}: Nimbus applied another placement than planned: {differences[:5]}")
        run.applied = applied
        run.plan_check = f"applied == planned ({len(applied)} executors, plan by {last['algorithm']})"
        run.notes.extend(last.get("notes") or [])
        self._record_placement(run)

    def _wait_slots_free(self, timeout_s: float = 90.0) -> None:
        """Wait until no worker holds a slot's port. Nimbus drops a killed topology before its workers have
        exited; a worker of the next run on a slot still held fails to bind, the supervisor does not start
        it again before its start timeout (120 s), and Nimbus then moves its executors elsewhere: a run
        measured another placement than it checked (diamond-hetero-3, 28 Nov 2026)."""
        from storm_planner.cluster.probes import port_free

        d = self.cluster.description
        ports = [port for supervisor in d.supervisors for port in supervisor.slot_ports]
        deadline = time.monotonic() + timeout_s
        while busy := [port for port in ports if not port_free(d.host, port)]:
            if time.monotonic() > deadline:
                self.progress(f"warning: slot port(s) {busy} still held {timeout_s:.0f} s after the last run")
                return
            time.sleep(1)

    def _check_still_placed(self, run: Run) -> None:
        """A run whose executors Nimbus moved while it ran measured another placement: its status says so
        (:data:`MOVED`), and its figures count in no comparison; a resumed bench runs it again."""
        run.status = moved_status(run.applied, self.cluster.assignment(run.topology_id)) or run.status
        if run.status != "ran":
            self.progress(f"[{run.name}] {run.status}")

    def _storm_placement(self, run: Run) -> None:
        """The placement Storm's own scheduler applied; the planner service must not have been asked."""
        from storm_planner.service.planning.planlog import read_plan_log

        deadline = time.monotonic() + 60
        applied: list = []
        while not applied and time.monotonic() < deadline:
            applied = self.cluster.assignment(run.topology_id)
            if not applied:
                time.sleep(1)
        if not applied:
            raise BenchError(f"{run.name}: Nimbus reports no placement of {run.topology_id}")
        if any(p["topology"] == run.topology_id for p in read_plan_log(self.cluster.plan_log)):
            raise BenchError(f"{run.name}: the planner service planned {run.topology_id}, so Nimbus did not run "
                             f"Storm's {STORM_SCHEDULER_NAMES[run.placement]}")
        run.applied = applied
        run.plan_check = (f"placed by Storm's {STORM_SCHEDULER_NAMES[run.placement]} ({len(applied)} executors; "
                          "no plan asked of the service)")
        self._record_placement(run)

    def _record_placement(self, run: Run) -> None:
        run.counts = {f"{c}@{n}": k for (c, n), k in sorted(placement_counts(run.applied).items())}
        run.predicted = predicted_rate(run.shape, self.machines, self.profile, run.applied)
        self.progress(f"[{run.name}] {run.plan_check}: {' '.join(f'{k}={v}' for k, v in run.counts.items())}; "
                      f"simulator: {run.predicted['input_rate']:.1f}/s, utilisation {run.predicted['utilisation']}")

    def _climb(self, run: Run, rate_file: Path, tasks: int) -> None:
        s = self.settings
        timeout = 60 + 10 * s.period_s * (s.settle_windows + s.measure_windows)
        # Warm up below the start: a new worker JVM compiles its hot code first, which under a small
        # quota takes tens of seconds and would fail the first step for a reason that does not last.
        warm = grid_rate(grid_index_below(s.warmup_fraction * run.predicted["input_rate"]))
        rate_file.write_text(f"{warm:g}")
        self.reader.next_windows(run.topology_id, s.warmup_windows, s.period_s, tasks, timeout)
        self.progress(f"[{run.name}] warmed up at {warm:g}/s for {s.warmup_windows} windows")
        node_of_task = {int(r["executor"].strip("[]").split("-")[0]): r["node"] for r in run.applied}
        machine_of_node = {m.supervisor: m.machine_type for m in self.machines}
        search = RateSearch(start=grid_index_below(s.start_fraction * run.predicted["input_rate"]),
                            max_steps=s.max_steps)
        index: int | None = search.first()
        while index is not None:
            offered = grid_rate(index)
            rate_file.write_text(f"{offered:g}")
            # Settle: each task's window already running when the rate changed is not one of them (its first
            # new window began a moment after the write, before the spout read the new rate).
            self.reader.next_windows(run.topology_id, s.settle_windows + 1, s.period_s, tasks, timeout)
            before = {m: q.throttled() for m, q in self.quotas.items()}
            used_before = {m: a.usage_ns() for m, a in self.accounts.items()}
            clock = time.monotonic()
            windows = self.reader.next_windows(run.topology_id, s.measure_windows, s.period_s, tasks, timeout)
            elapsed_ns = (time.monotonic() - clock) * 1e9
            machine_cpu = {m: 100.0 * (a.usage_ns() - used_before[m]) / elapsed_ns for m, a in self.accounts.items()}
            load = os.getloadavg()[0]
            run.load_avg.append(load)
            throttled = {m: throttled_share(before[m], q.throttled()) for m, q in self.quotas.items()}
            task_cpu = {machine_of_node[n]: v for n, v in machine_task_cpu(windows, node_of_task).items()}
            verdict = judge_step(windows, run.shape, offered, s.keep_up)
            step = Step(run.name, offered, index, verdict, load, throttled, machine_cpu, task_cpu)
            run.steps.append(step)
            self.progress(
                f"[{run.name}] offered {offered:g}/s: {'kept up' if verdict.sustained else 'fell behind'} "
                f"(worst {verdict.worst_component} {100 * verdict.worst_share:.0f}% / last window "
                f"{100 * verdict.last_share:.0f}%); throttled "
                + ", ".join(f"{m} {100 * v:.0f}%" for m, v in throttled.items())
                + "; machine CPU % (tasks' share) "
                + ", ".join(f"{m} {machine_cpu.get(m, 0):.0f} ({task_cpu.get(m, 0):.0f})" for m in throttled)
                + f"; load {load:.1f}")
            counted = search.best
            index = search.record(index, verdict.sustained)
            if search.best is not None and search.best != counted and grid_rate(search.best) == offered:
                # The search counts this step sustained (a pass right after a fail at its rate counts only
                # when the next measurement passes too): its rates are the run's.
                run.sustained_offered, run.sustained_rates = offered, dict(verdict.rates)
        rate_file.write_text("0")


def machine_task_cpu(windows: Iterable[WindowFigures], node_of_task: Mapping[int, str]) -> dict[str, float]:
    """CPU percent of one core the metrics hook attributes to each machine's tasks (thread + Python
    subprocess), each task's CPU over the time its own windows cover."""
    per_task: dict[int, list[WindowFigures]] = {}
    for w in windows:
        if w.task in node_of_task and w.duration_ms > 0:
            per_task.setdefault(w.task, []).append(w)
    found: dict[str, float] = {}
    for task, own in per_task.items():
        node = node_of_task[task]
        found[node] = found.get(node, 0.0) + 100.0 * sum(w.cpu_ms for w in own) / sum(w.duration_ms for w in own)
    return found
