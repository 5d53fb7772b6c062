"""``storm-planner bench albic-real``: ALBIC's real-data experiment on real Storm (Madsen et al. §5.4).

Madsen, Zhou & Cao, *Integrative Dynamic Reconfiguration in a Parallel Stream Processing Engine*, §5.4
(Figs. 12-14) runs the airline jobs from an allocation with as little collocation as possible and plots,
per adaptation period, the collocation factor, the load distance, the load index and the migrations:
ALBIC reaches COLA's collocation gradually with a few migrations per period, COLA re-optimises from
scratch and migrates most key groups every time. Here, run as root from the repository root, one cluster
at a time::

    flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench albic-real --job 3 \\
        --schedulers default,ras,potc,planner:albic,planner:cola

Each run submits airline Job N (``topologies/airline``; 2, 3 or 4) on the cluster of ``bench e2e``
(:func:`storm_planner_bench.e2e.experiment.open_bench`: four supervisors under CPU quotas behind emulated links),
replaying a synthetic airline feed whose hot tail numbers and routes change every ``--drift`` seconds
(:class:`~storm_planner.feeds.synthetic.airline.AirlineGenerator`'s ``drift_every``), and measures
``--periods`` periods of ``--period`` seconds after ``--settle``. The schedulers:

* ``planner:albic``, ``planner:cola`` (any ``planner:NAME``): the plugin and the planner service. The
  first placement is ``spread`` (``planner.initial.algorithm``; :mod:`~storm_planner.planners.albic.spread`:
  the k-th executors of consecutive components on different nodes, so the one-to-one pairs extract k →
  plane sums k start apart: the paper's start; ``--start own`` lets the planner place it). Then the
  service re-plans once per period (``planner.replan.period.secs``; the change threshold out of reach)
  and applies the plan as planned (``planner.replan.trust``), within ``--budget`` moves per period for
  every planner but ``cola``, which re-optimises from scratch unbounded, as in the paper;
* ``default``, ``ras``: Storm's DefaultScheduler and ResourceAwareScheduler, placed once;
* ``potc``: DefaultScheduler with Storm's partial key grouping on every fields-grouped edge
  (``partial_key:``, the kit's ``PartialKeyFieldsGrouping``; the paper's PoTC of §5.2): each key split
  over two tasks, no re-planning.

Per period (:mod:`~storm_planner_bench.albic_real.series`): collocation factor from the hook's windows in
ZooKeeper and Nimbus' placement, load distance and load index from the supervisors' cgroup CPU,
migrations from the plan log, link bytes, throughput and p99 from the spout's times. Each run's periods are
appended to ``--out``/``periods.csv`` at once (a rerun skips the runs already there); the report
(:mod:`~storm_planner_bench.albic_real.report`: ``job<N>.csv``, ``.md`` and ``.png`` under ``--out``) is
written after every run, or alone with ``--report-only``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from storm_planner.core.jsonfile import read_json
from storm_planner_bench.common.cluster import run_reporting
from storm_planner_bench.common.report import (
    NEVER_STARTED,
    Benchmark,
    append_csv_rows,
    argument,
    drop_csv_rows,
    never_started,
    read_csv,
    rewrite_csv,
    saved_command,
    stamped_progress,
)
from storm_planner_bench.e2e.workloads import AIRLINE, Scheduler, Workload, parse_scheduler

DEFAULT_OUT = Path("benchmarks/results/albic-real")
DEFAULT_CLUSTER = Path("benchmarks/e2e/cluster.yaml")
# The planners first: Figs. 12-14 set ALBIC against COLA, so a run stopped early still has them.
DEFAULT_SCHEDULERS = "planner:albic,planner:cola,default,potc,ras"
KEY = ("job", "scheduler", "repetition")
FIGURES = ("period", "t_end_s", "status", "seconds", "collocation_factor", "operator_tuples", "load_distance",
           "load_index", "cpu_pct", "cpu_ms_per_tuple", "migrations", "replans", "planned_collocation",
           "link_mbytes", "link_mbit", "processed_tps", "emitted_tps", "latency_p99_ms", "failed", "replayed",
           "latency_due_p99_ms")
# Columns added after the first saved runs: a periods.csv without them is widened on resume (blank there).
ADDED = ("failed", "replayed", "latency_due_p99_ms")
# CPU each executor declares (percent of a core): Storm's default 10 % times Job 3's 19 executors at
# parallelism 4 (31 for Job 4) is more than the e2e cluster's 160 %, and the ResourceAwareScheduler would
# not place the job at all. The planners take it as an executor's load only until metrics arrive.
DECLARED_CPU = 4.0
SAMPLE_S = 5.0        # how often the windows and the placement are read (the hook writes one per 10 s)
SPOUTS = {"flights", "weather"}
_JOB2 = ("flights", "extract", "plane_delays", "store_planes")
_JOB3 = (*_JOB2, "route_delays", "store_routes")
COMPONENTS: dict[int, tuple[str, ...]] = {
    2: _JOB2, 3: _JOB3, 4: (*_JOB3, "weather", "rainscore", "join", "courier", "store_courier")}
# The fields-grouped inputs of each job, as partial key groupings (PoTC).
POTC = {"extract": "partial_key:tail_num", "plane_delays": "partial_key:tail_num",
        "route_delays": "partial_key:origin,dest", "join": "partial_key:origin,dest", "courier": "partial_key:bucket"}

_progress = stamped_progress("albic-real bench")


@dataclass(frozen=True)
class Settings:
    """One run's shape: the job and its parallelism, the offered rate, the periods and the drift."""

    job: int = 3
    rate: float = 40.0   # Job 3 is CPU-bound on the e2e cluster: at 50 t/s DefaultScheduler falls behind
    period_s: float = 120.0
    periods: int = 8
    drift_s: float = 240.0
    budget: int = 3
    parallelism: int = 4
    start: str = "spread"
    settle_s: float = 30.0
    drain_s: float = 60.0
    start_s: float = 180.0
    seed: int = 1

    @property
    def drift_every(self) -> int:
        """Flights between two changes of the hot keys (0: no drift)."""
        return int(round(self.rate * self.drift_s)) if self.drift_s > 0 else 0

    def feed_records(self) -> int:
        """Enough flights for the start, the settle and every period at the rate, with a fifth to spare."""
        seconds = 60.0 + self.settle_s + self.periods * self.period_s
        return int(math.ceil(self.rate * seconds * 1.2))


@dataclass(frozen=True)
class Contender:
    """A scheduler of the experiment and the topology options that make it what it is."""

    label: str
    scheduler: Scheduler
    options: dict[str, Any] = field(default_factory=dict)


def job_workload(settings: Settings) -> Workload:
    """Airline Job N as a workload of the e2e harness: every component declaring DECLARED_CPU per executor,
    extract and the key-partitioned operators at ``settings.parallelism`` executors (:func:`job_options`)."""
    job = settings.job
    if job not in COMPONENTS:
        raise ValueError(f"--job {job}: the airline jobs are 2, 3 and 4")
    paths = {"flights_feed": "flights", **({"weather_feed": "weather"} if job == 4 else {})}
    return Workload(name=f"airline-job{job}", project=AIRLINE, topology=f"airline_job{job}", prefix="airline",
                    rate=settings.rate, quick_rate=settings.rate, workers=4, ackers=4,
                    cpu={c: DECLARED_CPU for c in COMPONENTS[job]},
                    about=f"ALBIC Real Job {job} (§5.4) on a drifting airline feed", feed_kind="airline",
                    feed_paths=paths)


def job_options(settings: Settings) -> dict[str, Any]:
    """The executors of extract and of the key-partitioned operators, for every scheduler alike, and the
    ackers' declared CPU (the topology's default for components that declare none)."""
    sums = [c for c in ("extract", "plane_delays", "route_delays", "join", "courier") if c in COMPONENTS[settings.job]]
    return {"topology.component.cpu.pcore.percent": DECLARED_CPU,
            **{f"airline.parallelism.{c}": settings.parallelism for c in sums}}


def replan_options(algorithm: str, settings: Settings) -> dict[str, Any]:
    """The service re-plans once per period and applies the plan as planned; ``cola`` unbounded."""
    options: dict[str, Any] = {
        "planner.replan.trust": True, "planner.replan.period.secs": settings.period_s,
        "planner.replan.threshold": 1000.0,           # the period alone triggers a re-plan
        # A move restarts workers; on a loaded machine they take tens of seconds to come back.
        "planner.replan.settle.secs": min(60.0, settings.period_s / 2),
        "planner.replan.interval.secs": min(10.0, settings.period_s / 4),
    }
    if settings.start != "own":
        options["planner.initial.algorithm"] = settings.start
    if algorithm != "cola":
        options["planner.max.migrations"] = settings.budget
    return options


def parse_contenders(text: str, settings: Settings) -> list[Contender]:
    """``--schedulers``: ``default``, ``ras``, ``potc`` and ``planner:NAME`` (with ``bench e2e``'s suffixes
    but ``+nohook``, and ``+KEY=VALUE`` for a planner's parameter); a clear error for others."""
    contenders = []
    for label in (part.strip() for part in text.split(",") if part.strip()):
        if label == "potc":
            groupings = {f"airline.grouping.{c}": g for c, g in POTC.items() if c in COMPONENTS[settings.job]}
            contenders.append(Contender("potc", Scheduler("potc", "default"), groupings))
            continue
        scheduler = parse_scheduler(label)
        if not scheduler.hook:
            raise ValueError(f"--schedulers: {label!r}: the figures need the metrics hook")
        options = replan_options(scheduler.algorithm, settings) if scheduler.algorithm else {}
        contenders.append(Contender(scheduler.label, scheduler, options))
    if not contenders:
        raise ValueError("--schedulers: none given")
    return contenders


def settings_of(args: argparse.Namespace) -> Settings:
    """The run's settings from the command line (``--quick``: short periods at a low rate)."""
    quick = Settings(rate=30.0, period_s=60.0, periods=3, drift_s=60.0, settle_s=30.0, drain_s=45.0)
    base = quick if args.quick else Settings()
    chosen = {"job": args.job, "rate": args.rate, "period_s": args.period, "periods": args.periods,
              "drift_s": args.drift, "budget": args.budget, "parallelism": args.parallelism, "start": args.start,
              "settle_s": args.settle, "drain_s": args.drain, "start_s": args.start_timeout, "seed": args.seed}
    settings = replace(base, **{k: v for k, v in chosen.items() if v is not None})
    for name, value, low in (("--rate", settings.rate, 0.0), ("--period", settings.period_s, 0.0),
                             ("--periods", settings.periods, 0), ("--parallelism", settings.parallelism, 0)):
        if not value > low:
            raise ValueError(f"{name} must be positive, not {value:g}")
    if settings.budget < 0 or settings.drift_s < 0:
        raise ValueError("--budget and --drift must not be negative")
    from storm_planner.planners import available

    if settings.start != "own" and settings.start not in available():
        raise ValueError(f"--start {settings.start!r}: not a planner (or 'own')")
    job_workload(settings)   # checks --job
    return settings


def columns(supervisors: list[str]) -> list[str]:
    return [*KEY, *FIGURES, *(f"load_{n}_pct" for n in supervisors)]


SETTINGS_FILE = "settings.json"


# Settings that shape no figure: a resume may wait longer for a start or a drain.
TIMEOUTS = ("drain_s", "start_s")


def finished_runs(path: Path, header: list[str], settings: Settings) -> set[tuple[str, str, str]]:
    """The (job, scheduler, repetition) runs ``path`` holds that started (a run that never acked a tuple
    is run again); refuses a file of other columns (another cluster) or of other settings
    (``settings.json`` beside it: a --quick run's periods are not these). A file from before some of the
    ADDED columns is widened to the header."""
    if not path.exists():
        return set()
    found, rows = read_csv(path)
    missing = set(header) - set(found)
    if found != [c for c in header if c not in missing] or not missing <= set(ADDED):
        raise ValueError(f"{path}: its columns are not this cluster's; use another --out")
    saved = path.parent / SETTINGS_FILE
    if saved.exists() and _shaping(read_json(saved)) != _shaping(asdict(settings)):   # bounded; a bad file raises
        raise ValueError(f"{path}: ran with the settings in {saved}, not these ({_settings_text(settings)}); "
                         f"use another --out")
    if found != header:
        rewrite_csv(path, header, rows)   # widened: the ADDED columns blank in the rows saved before them
    return {run_key(row) for row in rows if not never_started(row)}


def run_key(row: dict[str, Any]) -> tuple[str, str, str]:
    return str(row["job"]), str(row["scheduler"]), str(row["repetition"])


def _shaping(saved: Any) -> Any:
    return {k: v for k, v in saved.items() if k not in TIMEOUTS} if isinstance(saved, dict) else saved


def _drop_runs(path: Path, header: list[str], runs: set[tuple[str, str, str]]) -> None:
    """``path`` without the rows of ``runs`` (failed starts about to be run again; one Nimbus did not
    schedule, or that ran on a fallback, is an outcome and stays)."""
    if runs:
        drop_csv_rows(path, header, lambda row: run_key(row) in runs)   # whole or not at all


def _settings_text(settings: Settings) -> str:
    return ", ".join(f"{k} {v}" for k, v in asdict(settings).items())


def run(args: argparse.Namespace) -> int:
    from storm_planner_bench.albic_real.report import write_report

    out = Path(args.out)
    if args.report_only:
        written = write_report(out, saved_command(out, sorted(out.glob("job*.md")), _command(args)))
        print(json.dumps({"reports": [str(p) for p in written]}))
        return 0
    settings = settings_of(args)
    contenders = parse_contenders(args.schedulers, settings)
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {args.repeat}")
    command = _command(args)
    ran = run_all(args, out, settings, contenders, command)
    written = write_report(out, command)
    print(json.dumps({"runs": ran, "periods": str(out / "periods.csv"), "reports": [str(p) for p in written]}))
    return 0


def run_all(args: argparse.Namespace, out: Path, settings: Settings, contenders: list[Contender],
            command: str) -> int:
    """Every (scheduler, repetition) not yet in ``periods.csv``, repetitions interleaved, on one cluster."""
    from storm_planner.cluster.description import load_description
    from storm_planner_bench.albic_real.report import write_report
    from storm_planner_bench.e2e.experiment import open_bench, with_links

    description = with_links(load_description(args.cluster), args.link_mbit)
    header = columns([s.name for s in description.supervisors])
    done = finished_runs(out / "periods.csv", header, settings)
    # Only now: a run refused for another cluster or other settings leaves the saved command as it was.
    out.mkdir(parents=True, exist_ok=True)
    (out / "command.txt").write_text(command + "\n")
    todo = [(c, r) for r in range(1, args.repeat + 1) for c in contenders
            if (str(settings.job), c.label, str(r)) not in done]
    _drop_runs(out / "periods.csv", header, {(str(settings.job), c.label, str(r)) for c, r in todo})
    _progress(f"{len(contenders) * args.repeat} runs of Job {settings.job}, {len(todo)} to run "
              f"(~{len(todo) * (settings.periods * settings.period_s + settings.settle_s + 150) / 60:.0f} min)")
    if not todo:
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # leave through the context managers
    out.mkdir(parents=True, exist_ok=True)
    (out / SETTINGS_FILE).write_text(json.dumps(asdict(settings), sort_keys=True) + "\n")
    feeds = {"airline": _feed(settings)}
    timing_args = argparse.Namespace(settle=settings.settle_s, measure=settings.period_s, drain=settings.drain_s,
                                     start_timeout=settings.start_s)
    with open_bench(timing_args, description.with_scheduler(todo[0][0].scheduler.nimbus), out, feeds) as bench:
        for index, (contender, repetition) in enumerate(todo, 1):
            _progress(f"run {index}/{len(todo)}: Job {settings.job}, {contender.label}, repetition {repetition}")
            append_csv_rows(out / "periods.csv", header, run_one(bench, settings, contender, repetition))
            try:   # a report that fails must not stop the runs still to come
                write_report(out, command)
            except Exception as error:
                _progress(f"warning: report not written ({type(error).__name__}: {error}); "
                          "--report-only writes it from periods.csv")
    return len(todo)


def _feed(settings: Settings) -> Path:
    """The drifting airline feed of these settings, built once (PySpark) and kept in the state directory."""
    from storm_planner.cluster.locations import default_state_root
    from storm_planner_bench.common.cluster import build_synthetic_feeds

    records = settings.feed_records()
    root = default_state_root() / "albic-real-feeds" / f"airline-{records}-{settings.seed}-drift{settings.drift_every}"
    if not (root / ".complete").exists():
        build_synthetic_feeds(root, "airline", settings.seed, records, _progress, drift_every=settings.drift_every)
    return root


def run_one(bench, settings: Settings, contender: Contender, repetition: int) -> list[dict[str, Any]]:
    """One run: submit, settle, measure every period, drain, kill; its rows (one status row when it never
    ran)."""
    from storm_planner.cluster.nimbus_restart import switch_scheduler
    from storm_planner.submit.operations import SubmitError
    from storm_planner_bench.common.cluster import kill_and_wait
    from storm_planner_bench.e2e.cells import cell_name, submit_workload

    switch_scheduler(bench.cluster, contender.scheduler.nimbus)
    key = {"job": settings.job, "scheduler": contender.label, "repetition": repetition}
    name = cell_name(f"job{settings.job}", settings.rate, contender.label, repetition)
    scratch = bench.work / name
    scratch.mkdir(parents=True, exist_ok=True)
    job = f"albic-job{settings.job}"
    options = {**job_options(settings), **contender.options}
    try:
        submitted = submit_workload(bench, job_workload(settings), settings.rate, contender.scheduler, scratch, job,
                                    options)
    except SubmitError as error:
        bench.progress(f"{contender.label}: Job {settings.job} not running: {error}")
        with contextlib.suppress(Exception):
            kill_and_wait(bench.nimbus, job)
        return [{**key, "period": 0, "status": f"not scheduled: {error}"[:300]}]
    try:
        rows = _measure(bench, settings, submitted.id, scratch, name)
    finally:
        kill_and_wait(bench.nimbus, job, submitted.id)
    return [{**key, **row} for row in rows]


def _measure(bench, settings: Settings, topology_id: str, scratch: Path, name: str) -> list[dict[str, Any]]:
    """Wait for the first ack and the settle, then read the counters at every period's edge and the
    windows every SAMPLE_S; after the drain, one row per period."""
    from storm_planner_bench.albic_real.series import Collocation
    from storm_planner_bench.e2e.cells import drain, wait_first_ack

    times_dir = scratch / "times"
    if not wait_first_ack(times_dir, time.time() + settings.start_s):
        # Nothing to measure: waiting out every period would cost the whole run's time for a status row.
        return [{"period": 0, "status": f"{NEVER_STARTED[0]} {settings.start_s:.0f} s"}]
    status = "ran"
    time.sleep(settings.settle_s)
    edges = [_counters(bench)]
    collocations = [Collocation() for _ in range(settings.periods)]
    for period in range(settings.periods):
        end = edges[0].at + (period + 1) * settings.period_s
        while time.time() < end:
            _sample(bench, topology_id, collocations, edges, settings)
            time.sleep(max(0.0, min(SAMPLE_S, end - time.time())))
        edges.append(_counters(bench))
        bench.progress(f"  period {period + 1}/{settings.periods}: collocation "
                       f"{collocations[period].factor:.2f} of {collocations[period].total} operator tuples")
    (scratch / "stop").write_text("")
    time.sleep(SAMPLE_S + 10.0)          # the last windows of the last period reach ZooKeeper
    _sample(bench, topology_id, collocations, edges, settings)
    times = drain(times_dir, settings.drain_s)
    plans, status = planned(_plans(bench, topology_id, name), status)
    return _rows(bench, settings, edges, collocations, times, plans, status)


def planned(answers: list[dict[str, Any]], status: str) -> tuple[list[dict[str, Any]], str]:
    """The service's plans among its ``answers`` for a run, and the run's status: a planner whose every
    plan was refused ran on the plugin's fallback, DefaultScheduler's placement, and its status says so."""
    from storm_planner_bench.e2e.cells import cell_status

    plans = [p for p in answers if not p.get("error")]
    refused = next((str(p["error"]) for p in answers if p.get("error")), "")
    return plans, cell_status(status, refused, len(plans))


def _sample(bench, topology_id: str, collocations, edges, settings: Settings) -> None:
    """Read every task's window and where the tasks run; count the windows into the periods they ended in."""
    from storm_planner.metrics.windows import fetch_windows
    from storm_planner_bench.albic_real.series import Sample, task_nodes

    try:
        sample = Sample(fetch_windows(bench.cluster.addresses.zookeeper, topology_id),
                        task_nodes(bench.cluster.assignment(topology_id)))
    except Exception as error:   # a read that fails (Nimbus restarting a worker, ZooKeeper busy) is skipped
        bench.progress(f"  windows or placement not read: {type(error).__name__}: {error}"[:300])
        return
    begin = edges[0].at
    for k, collocation in enumerate(collocations):
        collocation.add(sample, SPOUTS, 1000.0 * (begin + k * settings.period_s),
                        1000.0 * (begin + (k + 1) * settings.period_s))


def _counters(bench):
    from storm_planner.cluster import network
    from storm_planner_bench.albic_real.series import Counters
    from storm_planner_bench.common.cluster import cpu_seconds

    links = bench.cluster.network.links if bench.cluster.network else []
    link_bytes = {}
    for link in links:
        counted = network.link_bytes(link)
        link_bytes[link.supervisor] = counted.sent + counted.received
    return Counters(time.time(), cpu_seconds(bench.accounts), link_bytes)


def _plans(bench, topology_id: str, name: str) -> list[dict[str, Any]]:
    """The service's answers for the topology, refusals included (kept in the run's record in the run's
    cells.jsonl, ``plans``)."""
    from storm_planner.service.planning.planlog import read_plan_log
    from storm_planner_bench.common.cellfile import save_cell_part

    answers = [p for p in read_plan_log(bench.cluster.plan_log) if p["topology"] == topology_id]
    save_cell_part(bench.out, name, "plans", answers)
    return answers


def _rows(bench, settings: Settings, edges, collocations, times, plans, status: str) -> list[dict[str, Any]]:
    from storm_planner_bench.albic_real.series import moves, period_row

    quotas = {s.name: s.held_cpu for s in bench.cluster.description.supervisors}
    rows: list[dict[str, Any]] = []
    reference = None
    for k, collocation in enumerate(collocations):
        before, after = edges[k], edges[k + 1]
        row = period_row(before, after, quotas, collocation, times, reference)
        if reference is None:
            reference = row["cpu_pct"] / 100.0
        rows.append({"period": k + 1, "t_end_s": round(after.at - edges[0].at, 1), "status": status, **row,
                     **moves(plans, before.at, after.at)})
    return rows


def _command(args: argparse.Namespace) -> str:
    parts = ["storm-planner bench albic-real", f"--job {args.job or 3}", f"--schedulers {args.schedulers}",
             f"--repeat {args.repeat}"]
    parts += ["--quick"] if args.quick else []
    for flag, value in (("--rate", args.rate), ("--period", args.period), ("--periods", args.periods),
                        ("--drift", args.drift), ("--budget", args.budget), ("--parallelism", args.parallelism),
                        ("--start", args.start), ("--settle", args.settle), ("--drain", args.drain),
                        ("--link-mbit", args.link_mbit)):
        parts += [f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"] if value is not None else []
    parts += [f"--cluster {args.cluster}"] if args.cluster != str(DEFAULT_CLUSTER) else []
    parts += [f"--seed {args.seed}"] if args.seed != 1 else []
    return " ".join(parts)


def _handler(args: argparse.Namespace) -> int:
    return run_reporting("bench albic-real", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("albic-real", "Madsen et al. §5.4 on real Storm: ALBIC against COLA, PoTC and Storm's "
                                      "schedulers on an airline job under a drifting key skew (root)", (
    argument("--job", type=int, default=None, help="airline Real Job 2, 3 or 4 (default 3)"),
    argument("--schedulers", default=DEFAULT_SCHEDULERS,
             help="comma-separated: default, ras, potc, planner:NAME (with bench e2e's suffixes but +nohook; "
                  "+KEY=VALUE sets one of the planner's parameters: planner:albic+max_pl=50) (default: %(default)s)"),
    argument("--period", type=float, default=None, help="seconds per adaptation period (default 120; --quick 60)"),
    argument("--periods", type=int, default=None, help="periods measured (default 8; --quick 3)"),
    argument("--drift", type=float, default=None,
             help="seconds between two changes of the feed's hot planes and routes (0: none; default 240, "
                  "--quick 60)"),
    argument("--budget", type=int, default=None, help="moves per period of every planner but cola (default 3)"),
    argument("--rate", type=float, default=None, help="flights per second offered (default 40; --quick 30)"),
    argument("--parallelism", type=int, default=None,
             help="executors of extract and of each key-partitioned operator (default 4)"),
    argument("--start", default=None, help="planner of the planners' first placement, or 'own' (default spread)"),
    argument("--repeat", type=int, default=1, help="repetitions, interleaved (default: %(default)s)"),
    argument("--quick", action="store_true", help="3 periods of 60 s at 30 flights/s"),
    argument("--settle", type=float, default=None, help="seconds after the first ack before the first period "
                                                        "(default 30)"),
    argument("--drain", type=float, default=None, help="most seconds waited for the tuples in flight (default 60)"),
    argument("--start-timeout", type=float, default=None, help="most seconds until the first ack (default 180)"),
    argument("--out", default=str(DEFAULT_OUT), help="periods.csv and the reports (default: %(default)s)"),
    argument("--cluster", default=str(DEFAULT_CLUSTER), help="cluster description (default: %(default)s)"),
    argument("--link-mbit", type=float, default=None, help="every emulated link at this rate (default: the "
                                                           "description's)"),
    argument("--seed", type=int, default=1),
    argument("--report-only", action="store_true", help="rewrite the reports from periods.csv, run nothing"),
), _handler),)
