"""``storm-planner bench hetero-real``: ``hetero`` against Storm's default placement, measured.

Nasiri et al. §6.3 (Fig. 8) measure on a real three-machine heterogeneous
cluster that their scheduler sustains 7–44 % more throughput than Storm's
default scheduler placing the *same* execution graph (Linear +44 %). This
benchmark does the same on the local multi-process cluster
(:mod:`storm_planner.cluster.launcher`), with every figure read from the real
daemons:

1. **Profile** (§5.2) the benchmark topology once on one unthrottled
   supervisor with :func:`~storm_planner.hetero.profiling.run_profiling` (or
   read a saved profile, ``--profile``). A CPU quota does not change what one
   tuple costs, so the same ET/MET is used for every machine type.
2. **One cluster** of three supervisors with the planner plugin and service.
   Each supervisor is put into a cgroup v1 group whose CFS quota is its
   ``cpu`` (:class:`~storm_planner.hetero.cgroups.CpuQuota`) *before* any
   topology is submitted, so every worker JVM and its Python subprocesses
   inherit the quota. The machines differ in capacity only.
3. **Plan**: ``hetero`` in search mode (the planner API) chooses the
   parallelism for the three machines. The topology is submitted with that
   parallelism and ``planner.algorithm: hetero`` — the service then places the
   running graph (its fixed-graph mode) — and again with
   ``planner.algorithm: storm-default`` (Storm's EvenScheduler order on the
   same graph). Every run checks that what Nimbus applied
   (``getTopologyInfo``) is what the service planned (``plans.jsonl``).
4. **Measure** each run's highest sustained input rate: the spout reads its
   rate from a file, and the rate climbs a fixed geometric grid
   (:class:`RateSearch`). A step is sustained when every component executes at
   least ``--keep-up`` (95 %) of the tuples/s the offered rate implies, over
   the measured windows and in the last one (:func:`judge_step`), read from the
   metrics hook's ZooKeeper windows. Acking is off: a rate step keeps the
   offered load known, where a saturating spout with ``max.spout.pending``
   would add the acker's own CPU and make the sustained rate depend on the
   pending bound.
5. **Noise**: runs alternate hetero, default, hetero, default … (``--pairs``);
   each pair gives a ratio; the load average is recorded per run.
6. **Predict**: the simulator (:mod:`storm_planner.planners.nasiri.simulate`) evaluates
   both applied placements under the same profile: predicted vs measured gain.

Idle executors park (``WaitStrategyPark``, 1 ms) instead of spinning: with
Storm 2's default wait strategy, idle threads burn CPU that eq. 7 cannot see
(``benchmarks/reports/hetero.md``, *Profiling on the real cluster*). The spout
sleeps until its next tuple is due for the same reason. Shuffle grouping is
uniform by default (``topology.disable.loadaware.messaging``), as in the
paper's Storm 0.9.5 and eq. 8; ``--load-aware`` keeps Storm 2's load- and
locality-aware shuffle. Each supervisor is also put into a ``cpuacct`` group, so
every step records each machine's whole CPU beside the CPU the metrics hook
gives its tasks (the part eq. 7 models) and the share of throttled periods.

Outputs under ``--out`` (default ``benchmarks/reports/hetero/real``):
``runs.csv`` (one row per run), ``steps.csv`` (every rate step), ``pairs.csv``,
``results.md``, ``run.json`` (everything, plans and placements included),
``profile.json``, ``throughput.png``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from storm_planner.bench._hetero_real_project import (
    CONF_PREFIX,
    base_options,
    real_profile,
    reference_times,
    write_project,
)
from storm_planner.bench._hetero_real_report import jsonable, write_outputs
from storm_planner.bench._hetero_real_search import (
    BenchError,
    RateSearch,
    Verdict,
    assignment_counts,
    grid_index_below,
    grid_rate,
    judge_step,
    parse_capacities,
    placement_counts,
    placement_differences,
    run_order,
    spouts_of,
)
from storm_planner.generators.nasiri import TOPOLOGIES
from storm_planner.hetero.builtin_project import RATE_FILE_OPTION
from storm_planner.hetero.cgroups import CgroupGroup, throttled_share
from storm_planner.hetero.measurements import WindowFigures, figures_from_window

Progress = Callable[[str], None]

CPUACCT = Path("/sys/fs/cgroup/cpuacct")




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
    from storm_planner.planners.nasiri.model import build_model
    from storm_planner.planners.nasiri.plans import placement_from_assignments
    from storm_planner.planners.nasiri.simulate import simulate

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


def bench_description(capacities: Sequence[float], period_s: int):
    """Three supervisors, one slot each, ``cpu`` = capacity = CPU quota."""
    from storm_planner.cluster.description import parse_description

    return parse_description({
        "name": "hetero-real",
        "storm_version": "2.8.3",
        "host": "127.0.0.1",
        "planner": {"algorithm": "even", "timeout_ms": 5000},
        "heap_mb": {"zookeeper": 256, "nimbus": 384, "supervisor": 256, "ui": 384, "worker": 256},
        "storm": {"nimbus.monitor.freq.secs": 3, "supervisor.worker.timeout.secs": 60,
                  "topology.subprocess.timeout.secs": 60},
        "supervisors": [
            {"name": f"sup-{name}", "cpu": cpu, "memory_mb": 4096, "slots": 1,
             "meta": {"machine.type": name, "speed": "1.0"}}
            for name, cpu in zip(MACHINE_NAMES, capacities)
        ],
    }, source="<bench hetero-real>")


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
        from storm_planner.hetero.profiling import read_windows

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


@dataclass
class Run:
    shape: str
    placement: str
    pair: int
    topology_id: str = ""
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
        return f"{self.shape}-{self.placement}-{self.pair + 1}"

    @property
    def top_step(self) -> "Step | None":
        """The highest sustained step (the one the run's throughput comes from)."""
        kept = [s for s in self.steps if s.verdict.sustained]
        return max(kept, key=lambda s: s.offered) if kept else None

    @property
    def measured_input(self) -> float:
        """Tuples/s the spouts emitted at the highest sustained step."""
        return sum(r for c, r in self.sustained_rates.items() if c in spouts_of(self.shape))

    @property
    def measured_throughput(self) -> float:
        """Eq. 2: the tuples/s all tasks processed at the highest sustained step."""
        return sum(self.sustained_rates.values())

    def row(self) -> dict[str, Any]:
        return {"run": self.name, "topology": self.shape, "placement": self.placement, "pair": self.pair + 1,
                "sustained_offered": self.sustained_offered, "measured_input": round(self.measured_input, 1),
                "measured_throughput": round(self.measured_throughput, 1),
                "predicted_input": round(self.predicted.get("input_rate", 0.0), 1),
                "steps": len(self.steps), "load_avg_mean": round(statistics.mean(self.load_avg), 2) if self.load_avg else "",
                "load_avg_max": round(max(self.load_avg), 2) if self.load_avg else "",
                "plan_check": self.plan_check, "seconds": round(self.seconds),
                "parallelism": " ".join(f"{c}={n}" for c, n in self.parallelism.items()),
                "placement_counts": " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))}


@dataclass
class BenchSettings:
    shapes: Sequence[str]
    pairs: int
    capacities: Sequence[float]
    rounds: Mapping[str, int]
    period_s: int = 3
    settle_windows: int = 1
    measure_windows: int = 3
    keep_up: float = 0.95
    start_fraction: float = 0.4       # first step: this share of the simulator's rate for the placement
    warmup_fraction: float = 0.25
    warmup_windows: int = 5
    load_aware: bool = False          # Storm 2's load/locality-aware shuffle (False: uniform, as the paper's)


class Bench:
    """One cluster, the quotas, and the runs on it."""

    def __init__(self, cluster, settings: BenchSettings, profile: Mapping[str, Any], work_dir: Path,
                 progress: Progress) -> None:
        self.cluster, self.settings, self.profile = cluster, settings, profile
        self.work_dir, self.progress = work_dir, progress
        d = cluster.description
        self.machines = [Machine(s.name, s.meta["machine.type"], s.cpu, s.slot_ports[0]) for s in d.supervisors]
        self.quotas: dict[str, Any] = {}
        self.accounts: dict[str, CpuAccount] = {}
        self.reader = WindowReader(cluster.addresses.zookeeper)

    # -- one run -----------------------------------------------------------------------------------------
    def run(self, shape: str, placement: str, pair: int, parallelism: Mapping[str, int]) -> Run:
        from storm_planner.submit.operations import kill_topology, submit_project

        run = Run(shape, placement, pair, parallelism=dict(parallelism))
        started = time.monotonic()
        rate_file = self.work_dir / f"rate-{run.name}"
        rate_file.write_text("0")
        options = {**base_options(self.settings.period_s, self.settings.rounds, self.settings.load_aware),
                   RATE_FILE_OPTION: str(rate_file), "topology.workers": len(self.machines),
                   "planner.algorithm": placement, "planner.hetero.profiles": json.dumps(self.profile),
                   **{f"{CONF_PREFIX}.parallelism.{c}": n for c, n in parallelism.items()}}
        a = self.cluster.addresses
        self.progress(f"[{run.name}] submitting ({', '.join(f'{c}={n}' for c, n in parallelism.items())}; "
                      f"planner.algorithm {placement})")
        row = submit_project(self.work_dir / f"project-{shape}", nimbus=a.nimbus, name=run.name,
                             options=options, wait_active=240, progress=lambda m: None)
        run.topology_id = row.id
        try:
            self._check_placement(run)
            tasks = len(run.applied)
            # Every task's Python subprocess is up once every task has written a window.
            self.reader.next_windows(run.topology_id, 1, self.settings.period_s, tasks, timeout_s=240)
            self._climb(run, rate_file, tasks)
        finally:
            kill_topology(a.nimbus, run.name, wait_secs=0, progress=lambda m: None)
            run.seconds = time.monotonic() - started
        self.progress(f"[{run.name}] highest sustained offered rate {run.sustained_offered:g}/s "
                      f"(measured input {run.measured_input:.1f}/s, throughput {run.measured_throughput:.1f} "
                      f"tuples/s; predicted input {run.predicted.get('input_rate', 0):.1f}/s) in {run.seconds:.0f} s")
        return run

    def _check_placement(self, run: Run) -> None:
        """What Nimbus applied must be what the planner service answered for this topology."""
        from storm_planner.service.handler import read_plan_log

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
        mapping = {r["executor"]: f"{r['node']}:{r['port']}" for r in applied}
        differences = placement_differences(mapping, last["assignments"])
        if differences:
            raise BenchError(f"{run.name}: Nimbus applied another placement than planned: {differences[:5]}")
        run.applied = applied
        run.plan_check = f"applied == planned ({len(applied)} executors, plan by {last['algorithm']})"
        run.counts = {f"{c}@{n}": k for (c, n), k in sorted(placement_counts(applied).items())}
        run.notes.extend(last.get("notes") or [])
        run.predicted = predicted_rate(run.shape, self.machines, self.profile, applied)
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
        search = RateSearch(start=grid_index_below(s.start_fraction * run.predicted["input_rate"]))
        index: int | None = search.first()
        while index is not None:
            offered = grid_rate(index)
            rate_file.write_text(f"{offered:g}")
            self.reader.next_windows(run.topology_id, s.settle_windows, s.period_s, tasks, timeout)
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
            if verdict.sustained and offered >= run.sustained_offered:
                run.sustained_offered, run.sustained_rates = offered, dict(verdict.rates)
            self.progress(
                f"[{run.name}] offered {offered:g}/s: {'kept up' if verdict.sustained else 'fell behind'} "
                f"(worst {verdict.worst_component} {100 * verdict.worst_share:.0f}% / last window "
                f"{100 * verdict.last_share:.0f}%); throttled "
                + ", ".join(f"{m} {100 * v:.0f}%" for m, v in throttled.items())
                + "; machine CPU % (tasks' share) "
                + ", ".join(f"{m} {machine_cpu.get(m, 0):.0f} ({task_cpu.get(m, 0):.0f})" for m in throttled)
                + f"; load {load:.1f}")
            index = search.record(index, verdict.sustained)
        rate_file.write_text("0")


def _supervisor_pid(cluster, name: str) -> int:
    from storm_planner.cluster import daemons

    for record in daemons.records(cluster.run_dir):
        if record.name == f"supervisor-{name}":
            return record.pid
    raise BenchError(f"no running supervisor {name!r} in {cluster.run_dir}")


class CpuAccount(CgroupGroup):
    """A cgroup v1 ``cpuacct`` group: the CPU time its processes (and their later children) used.

    Beside the quota group, so the machine's whole CPU — worker JVM overhead, serialisation and
    transfer, garbage collection, the supervisor itself — can be compared with the CPU the metrics
    hook attributes to the machine's tasks (the only CPU eq. 7 describes)."""

    def __init__(self, name: str, root: Path = CPUACCT) -> None:
        super().__init__(name, root)

    def usage_ns(self) -> int:
        return int((self.path / "cpuacct.usage").read_text().strip())


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


# -- profiling --------------------------------------------------------------------------------------------

def profile_reference(settings: BenchSettings, rates: Sequence[float], work_dir: Path,
                      progress: Progress) -> tuple[dict[str, Any], dict[str, Any]]:
    """Profile Linear once on one unthrottled supervisor (no quota): (reference times, profiling report)."""
    from storm_planner.cluster.description import parse_description
    from storm_planner.hetero.profiling import Settings, run_profiling

    description = parse_description({
        "name": "hetero-real-profile", "storm_version": "2.8.3", "host": "127.0.0.1",
        "heap_mb": {"zookeeper": 256, "nimbus": 384, "supervisor": 256, "ui": 384, "worker": 256},
        "storm": {"nimbus.monitor.freq.secs": 3, "supervisor.worker.timeout.secs": 60,
                  "topology.subprocess.timeout.secs": 60},
        "supervisors": [{"name": "sup-ref", "cpu": 200, "memory_mb": 4096, "slots": 1,
                         "meta": {"machine.type": "ref", "speed": "1.0"}}],
    }, source="<bench hetero-real profile>")
    project = write_project(work_dir / "profile-project", "linear")
    profiling = Settings(rates=list(rates), check_rates=(), period_s=settings.period_s,
                         spouts=("spout",), emulate=False,
                         options=base_options(settings.period_s, settings.rounds, settings.load_aware))
    result = run_profiling(project, description, profiling, work_dir / "profiling", progress=progress)
    return reference_times(result.profile.to_dict(), "ref"), result.to_dict()


# -- the command --------------------------------------------------------------------------------------------

def add_benchmarks(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser(
        "hetero-real", help="Nasiri et al. Fig. 8 on the real local cluster: hetero vs Storm's default, measured")
    bench.add_argument("--out", default="benchmarks/reports/hetero/real", help="output directory")
    bench.add_argument("--topologies", default="linear", help="comma list of: linear, diamond, star")
    bench.add_argument("--pairs", type=int, default=2, help="hetero/default pairs per topology (A B A B ...)")
    bench.add_argument("--capacities", default="100,50,25",
                       help="cpu of the large, medium and small supervisor (percent of a core; also the quota)")
    bench.add_argument("--rounds", default="300,1500,4000",
                       help="SHA-256 rounds per tuple of the low, mid and high compute bolts")
    bench.add_argument("--profile", help="reuse a profile written by an earlier run (profile.json) "
                                         "instead of profiling")
    bench.add_argument("--profile-rates", default="20,40,80", help="profiling rates (tuples/s)")
    bench.add_argument("--period", type=int, default=3, help="metrics window, s")
    bench.add_argument("--windows", type=int, default=3, help="windows measured per rate step")
    bench.add_argument("--keep-up", type=float, default=0.95,
                       help="share of the implied rate every component must execute for a step to count")
    bench.add_argument("--load-aware", action="store_true",
                       help="keep Storm 2's load- and locality-aware shuffle (default: uniform shuffle, as the "
                            "paper's Storm 0.9.5 and eq. 8)")
    bench.add_argument("--work-dir", help="state directory (default: a temporary one)")
    bench.set_defaults(handler=hetero_real_benchmark)


def hetero_real_benchmark(args: argparse.Namespace) -> int:
    import signal
    import sys
    import tempfile

    from storm_planner.cli import CommandError

    # A SIGTERM (e.g. `kill PID` of a background run) unwinds like Ctrl-C: the cluster goes down and the
    # CPU quota groups are removed by the context managers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        shapes = [s.strip() for s in args.topologies.split(",") if s.strip()]
        unknown = [s for s in shapes if s not in TOPOLOGIES]
        if unknown or not shapes:
            raise BenchError(f"--topologies: unknown {unknown}; choose from {', '.join(TOPOLOGIES)}")
        low, mid, high = (int(x) for x in args.rounds.split(","))
        settings = BenchSettings(shapes=shapes, pairs=args.pairs, capacities=parse_capacities(args.capacities),
                                 rounds={"lowCompute": low, "midCompute": mid, "highCompute": high},
                                 period_s=args.period, measure_windows=args.windows, keep_up=args.keep_up,
                                 load_aware=args.load_aware)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="storm-planner-hetero-real-") as tmp:
            work_dir = Path(args.work_dir).resolve() if args.work_dir else Path(tmp)
            work_dir.mkdir(parents=True, exist_ok=True)
            report = run_bench(settings, out, work_dir, args)
    except (BenchError, ValueError, OSError) as error:
        raise CommandError(str(error)) from None
    print(f"wrote {out} ({report['seconds']:.0f} s)")
    return 0


def _say(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


def run_bench(settings: BenchSettings, out: Path, work_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    from storm_planner.cluster.launcher import local_cluster
    from storm_planner.hetero.cgroups import CpuQuota, detect_emulation

    started = time.monotonic()
    support = detect_emulation()
    _say(f"emulation on this host: {support.detail}")
    if not support.cgroup_quota:
        raise BenchError(f"machine types cannot be emulated here ({support.detail}): no measurement is made")
    report: dict[str, Any] = {"command": "storm-planner bench hetero-real " + _argv(args),
                              "settings": jsonable(dataclasses.asdict(settings)),
                              "host": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}}
    if args.profile:
        saved = json.loads(Path(args.profile).read_text())
        reference, report["profiling"] = saved["reference_times"], saved.get("profiling", {"reused": args.profile})
        _say(f"profile reused from {args.profile}")
    else:
        _say("profiling Linear once on an unthrottled supervisor (a separate, short-lived cluster)")
        rates = [float(x) for x in args.profile_rates.split(",")]
        reference, report["profiling"] = profile_reference(settings, rates, work_dir, _say)
    description = bench_description(settings.capacities, settings.period_s)
    types = [s.meta["machine.type"] for s in description.supervisors]
    profile = real_profile(reference, types)
    (out / "profile.json").write_text(json.dumps({**profile, "reference_times": reference,
                                                  "profiling": report["profiling"]}, indent=2) + "\n")
    report["profile"] = profile
    _say("reference times (ms per tuple, ET + MET): "
         + ", ".join(f"{k} {v['et'] + v['met']:.3f}" for k, v in reference.items()))
    for shape in settings.shapes:
        write_project(work_dir / f"project-{shape}", shape)

    runs: list[Run] = []
    with local_cluster(description, work_dir / "cluster", free_ports=True, plugin=True, planner=True, ui=False,
                       progress=_say) as cluster:
        bench = Bench(cluster, settings, profile, work_dir, _say)
        report["cluster"] = {"supervisors": [dataclasses.asdict(m) for m in bench.machines],
                             "addresses": dataclasses.asdict(cluster.addresses)}
        quotas = {m.machine_type: CpuQuota(f"storm-planner-real-{m.machine_type}-{os.getpid()}", m.capacity)
                  for m in bench.machines}
        entered = []
        try:
            for machine in bench.machines:
                quota = quotas[machine.machine_type].__enter__()
                entered.append(quota)
                # Before any topology: the worker JVMs and their Python subprocesses inherit the group.
                quota.add(_supervisor_pid(cluster, machine.supervisor))
                bench.quotas[machine.machine_type] = quota
                account = CpuAccount(quota.path.name).__enter__()
                entered.append(account)
                account.add(_supervisor_pid(cluster, machine.supervisor))
                bench.accounts[machine.machine_type] = account
                _say(f"{machine.supervisor} in cgroup {quota.path.name}: cfs quota {quota.quota} us per 100000 us "
                     f"(and in cpuacct group {account.path.name})")
            report["plans"] = {}
            for shape in settings.shapes:
                runs.extend(run_shape(bench, shape, settings, report))
                write_outputs(out, runs, report, started)   # keep what was measured if a later shape fails
        finally:
            bench.reader.close()
            for quota in reversed(entered):
                quota.__exit__(None, None, None)
    report["host"]["load_avg_end"] = os.getloadavg()
    write_outputs(out, runs, report, started)
    return report


def run_shape(bench: Bench, shape: str, settings: BenchSettings, report: dict[str, Any]) -> list[Run]:
    """Plan ``shape`` with hetero (search mode), then run hetero and default placements alternately."""
    from storm_planner.planners import run as run_planner

    from storm_planner.core.problem import Problem

    problem = Problem.from_dict(problem_dict(shape, bench.machines, bench.profile))
    plan = run_planner(problem, "hetero", mode="search")
    parallelism = {c: int(n) for c, n in plan.parallelism.items()}
    component_of = {e: e.rsplit("/", 1)[0] for e in plan.assignments}
    search_counts = assignment_counts({e: str(s) for e, s in plan.assignments.items()}, component_of)
    report["plans"][shape] = {
        "parallelism": parallelism, "figures": dict(plan.figures), "notes": list(plan.notes),
        "search_placement": {f"{c}@{n}": k for (c, n), k in sorted(search_counts.items())},
    }
    bench.progress(f"[{shape}] hetero (search mode) chose {parallelism}; predicted max input rate "
                   f"{plan.figures['max_input_rate']:.1f}/s; placement "
                   + " ".join(f"{c}@{n}={k}" for (c, n), k in sorted(search_counts.items())))
    runs = []
    for pair, placement in run_order(settings.pairs):
        runs.append(bench.run(shape, placement, pair, parallelism))
    return runs


def _argv(args: argparse.Namespace) -> str:
    parts = [f"--topologies {args.topologies}", f"--pairs {args.pairs}", f"--capacities {args.capacities}",
             f"--rounds {args.rounds}", f"--period {args.period}", f"--windows {args.windows}",
             f"--keep-up {args.keep_up}", f"--out {args.out}"] + (["--load-aware"] if args.load_aware else [])
    parts.append(f"--profile {args.profile}" if args.profile else f"--profile-rates {args.profile_rates}")
    return " ".join(parts)
