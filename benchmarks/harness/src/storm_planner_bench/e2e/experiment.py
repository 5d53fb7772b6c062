"""``storm-planner bench e2e``: every planner against Storm's own schedulers on real Storm (issue #27).

Run as root (cgroups, network namespaces) from the repository root, one cluster at a time::

    flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench e2e \\
        --workloads topk-link --schedulers default,ras,planner:topdown,planner:even --repeat 3

One local multi-process cluster (``benchmarks/e2e/cluster.yaml``: four supervisors of two machine
types under cgroup CPU quotas, each behind an emulated 2 Mbit/s link) runs every cell of the grid
workload × rate × scheduler × repetition. Between cells of different schedulers only Nimbus restarts
(:mod:`storm_planner.cluster.nimbus_restart`); ZooKeeper, the supervisors with their quotas and links
and the planner service stay up, so the schedulers run on the same machines. Repetitions interleave:
every scheduler once, then every scheduler again. What a cell measures is in
:mod:`storm_planner_bench.e2e.cells`; the workloads are in :mod:`storm_planner_bench.e2e.workloads`.

Each finished cell is appended to ``--out``/``cells.csv`` at once; a rerun with the same ``--out``
skips the cells already there (key: workload, rate, scheduler, repetition), so a stopped run resumes.
The report (``<out>.md``, default ``benchmarks/results/e2e.md``, and a plot per workload under
``--out``) is written from ``cells.csv`` after every cell; ``--report-only`` rewrites it alone.

``--rate 200,400,600`` runs every rate (a ramp) and the report adds each scheduler's highest sustained rate;
each rate is a cell of its own (a submission each) unless ``--stepped`` raises one running topology's
rate through them step by step (:mod:`storm_planner_bench.e2e.ramp`: ``--step-settle`` seconds after each
change before its window, the ramp stopped at the first rate not kept up; about half the time).

Settings (defaults): ``--settle`` 20 s after the first acked tuple, ``--measure`` 40 s, ``--drain``
60 s at most for the tuples in flight once the spout stops, ``--start-timeout`` 180 s at most from submission
until the topology runs and again until its first acked tuple, ``--link-mbit`` the description's
link rate (2 Mbit/s) for every link; ``--quick``: 10, 20 and 45 s, each workload's
quick rate and a 30,000-record feed. Each workload's synthetic feeds (World Cup requests, tweets, or
trades and quotes; ``--feed-records``, default 120,000: 400 t/s for five minutes) are built once per
kind with PySpark and kept under the state directory (``$STORM_PLANNER_STATE``/e2e-feeds).

Every cell's replay spouts keep their committed progress under the cell's scratch directory
(``<prefix>.checkpoint_dir``, :mod:`storm_planner.streaming.spout`): when its worker restarts, the spout
resumes where its acked records end, under the same message ids, so the tuples it had in flight are emitted
again (counted as replayed, their latency from the first emit) instead of lost. ``planner:NAME+resumable``
also tells the service so (``planner.source.resumable``): it may then restart a spout's worker to relieve a
node short of CPU (not the default: each such restart stops the source for tens of seconds).

``planner:hetero`` and ``planner:hetero-optimal`` need a profile per workload: profiled on the
cluster before the workload's first hetero cell and kept as ``--out``/profiles/<workload>.json for
later cells and reruns, or given with ``--profiles DIR`` (:mod:`storm_planner_bench.e2e.profiles`).

Beside ``cells.csv``, ``cells.jsonl`` holds a record per cell (:mod:`storm_planner_bench.common.cellfile`): the
latency quantiles of its window, the service's answers, where submission to first ack went and where each
executor ran, task ids included.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import shlex
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from storm_planner_bench.common.cluster import run_reporting
from storm_planner_bench.common.report import (
    Benchmark,
    append_csv,
    argument,
    code_version,
    drop_csv_rows,
    never_started,
    read_csv,
    stamped_progress,
)
from storm_planner_bench.e2e.papers import Capacities
from storm_planner_bench.e2e.workloads import WORKLOADS, Workload, parse_scheduler, parse_workloads

DEFAULT_OUT = Path("benchmarks/results/e2e")
DEFAULT_CLUSTER = Path("benchmarks/e2e/cluster.yaml")
DEFAULT_SCHEDULERS = "default,ras,planner:topdown"
CAPACITIES_FILE = "capacities.json"   # the run's supervisors' CPU (their quotas) and link rate, for --report-only
FEED_RECORDS, QUICK_FEED_RECORDS = 120_000, 30_000
KEY = ("workload", "rate", "scheduler", "repetition")
FIGURES = ("status", "measure_s", "emitted_tps", "processed_tps", "acked_in_window", "latency_mean_ms",
           "latency_p50_ms", "latency_p99_ms", "emitted", "acked", "lost", "failed", "replayed",
           "submit_to_scheduled_s", "submit_to_first_emit_s", "submit_to_first_ack_s", "link_bytes_per_tuple",
           "supervisors_used", "workers_used", "placement", "ackers_on", "workers", "plans", "replans", "migrations",
           "code")

_progress = stamped_progress("e2e bench")


def columns(supervisors: list[str]) -> list[str]:
    """cells.csv's columns: the key, the figures, then per supervisor CPU and link figures."""
    per_node = [f"cpu_{n}_pct" for n in supervisors] + [f"link_{n}_mbit" for n in supervisors]
    per_node += [f"link_{n}_{way}_bytes_per_tuple" for n in supervisors for way in ("out", "in")]
    return [*KEY, *FIGURES, *per_node]


def cell_key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (str(row["workload"]), f"{float(row['rate']):g}", str(row["scheduler"]), str(row["repetition"]))


def finished_cells(path: Path, header: list[str]) -> set[tuple[str, str, str, str]]:
    """Keys of the cells already in ``path`` but those whose topology never acked a tuple (run again);
    an existing file with other columns is refused."""
    if not path.exists():
        return set()
    found, rows = read_csv(path)
    if found != header:
        raise ValueError(f"{path}: its columns are not this cluster's ({', '.join(found)}); "
                         f"use another --out or move the file away")
    return {cell_key(row) for row in rows if not never_started(row)}


def append_cell(path: Path, header: list[str], row: dict[str, Any], code: str = "") -> None:
    """Append one finished cell (the header first when the file is new), with the commit that ran it."""
    append_csv(path, header, {**row, "code": code or row.get("code", "")})


def plan_cells(workloads: list[Workload], schedulers: list[str], repeat: int, rates: list[float] | None,
               quick: bool) -> list[tuple[Workload, float, str, int]]:
    """Every cell in run order: repetitions interleaved (every scheduler once at every rate, then again)."""
    return [(w, rate, s, r) for r in range(1, repeat + 1) for w in workloads
            for rate in (rates or [w.quick_rate if quick else w.rate]) for s in schedulers]


def parse_rates(text: str | None) -> list[float] | None:
    """``--rate``: one rate, or several (a ramp: ``200,400,600``), each positive and finite."""
    if text is None or not str(text).strip():
        return None
    rates = []
    for part in str(text).split(","):
        try:
            rate = float(part)
        except ValueError:
            raise ValueError(f"--rate: {part.strip()!r} is not a number") from None
        if not (0 < rate < 1e6):
            raise ValueError(f"--rate: {part.strip()} must be a positive rate below 1,000,000 tuples/s")
        rates.append(rate)
    return sorted(set(rates))


def run(args: argparse.Namespace) -> int:
    from storm_planner_bench.e2e.report import write_report

    out = Path(args.out)
    saved = out / "command.txt"   # the run's command, for a report rewritten with --report-only
    if args.report_only:
        write_report(out, saved.read_text().strip() if saved.exists() else e2e_command(args), saved_capacities(args, out))
        print(json.dumps({"report": str(report_path(out))}))
        return 0
    workloads = parse_workloads(args.workloads)
    schedulers = [parse_scheduler(s) for s in args.schedulers.split(",") if s.strip()]
    labels = [s.label for s in schedulers]
    if twice := sorted({label for label in labels if labels.count(label) > 1}):
        # Two spellings of one scheduler would share a cell's name, and so its checkpoints and time logs.
        raise ValueError(f"--schedulers names {', '.join(twice)} more than once")
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {args.repeat}")
    rates = parse_rates(args.rate)
    cells = plan_cells(workloads, [s.label for s in schedulers], args.repeat, rates, args.quick)
    if getattr(args, "stepped", False):
        check_stepped(args, rates)
    command = e2e_command(args)
    out.mkdir(parents=True, exist_ok=True)
    saved.write_text(command + "\n")
    capacities = run_capacities(args)
    if capacities is not None:
        (out / CAPACITIES_FILE).write_text(capacities.to_json() + "\n")
    ran = run_cells(args, out, cells, {s.label: s for s in schedulers}, command)
    write_report(out, command, capacities)
    print(json.dumps({"cells_run": ran, "cells": str(out / "cells.csv"), "report": str(report_path(out))}))
    return 0


def check_stepped(args: argparse.Namespace, rates: list[float] | None) -> None:
    """``--stepped`` needs several rates, a non-negative ``--step-settle`` and feeds that last the whole
    ramp (a feed that runs out mid-ramp would read as falling behind)."""
    from storm_planner_bench.e2e.ramp import feed_tuples_needed

    if not rates or len(rates) < 2:
        raise ValueError("--stepped needs several rates: --rate 300,400,500")
    if not (0 <= args.step_settle < 3600):
        raise ValueError(f"--step-settle must be between 0 and 3600 s, not {args.step_settle:g}")
    needed = feed_tuples_needed(rates, args.settle, args.step_settle, args.measure)
    records = args.feed_records or (QUICK_FEED_RECORDS if args.quick else FEED_RECORDS)
    if records < needed:
        raise ValueError(f"--stepped: a ramp through {', '.join(f'{r:g}' for r in rates)} t/s emits up to "
                         f"{needed:,} tuples, more than the feeds' {records:,} records: give --feed-records "
                         f"{needed:,} or more")


def plan_ramps(cells: list[tuple[Workload, float, str, int]]) -> list[tuple[Workload, list[float], str, int]]:
    """The cells grouped into stepped ramps, in run order: one per workload, scheduler and repetition, its
    rates rising."""
    ramps: dict[tuple[str, str, int], tuple[Workload, list[float], str, int]] = {}
    for workload, rate, scheduler, repetition in cells:
        ramps.setdefault((workload.name, scheduler, repetition), (workload, [], scheduler, repetition))[1].append(rate)
    return [(w, sorted(rates), s, r) for w, rates, s, r in ramps.values()]


def with_links(description, link_mbit: float | None):
    """The description with every emulated link at ``link_mbit`` (None: as described)."""
    if link_mbit is None:
        return description
    if link_mbit <= 0:
        raise ValueError(f"--link-mbit must be positive, not {link_mbit:g}")
    supervisors = tuple(dataclasses.replace(s, link_mbit=None) for s in description.supervisors)
    return dataclasses.replace(description, supervisors=supervisors,
                               network=dataclasses.replace(description.network, link_mbit=link_mbit))


def with_cpu_scale(description, scale: float | None, quotas: bool = True):
    """The description with every supervisor's declared CPU times ``scale``: topDown's §7.4 axis, the node
    capacity the schedulers see (None: as described). ``quotas``: the nodes have it too (their quotas
    scale); else each stays held to its described CPU, as the paper's machines stayed what they were while
    the allocator's capacity parameter varied.

    Quotas are limits, not reservations: above the machine's cores in total, the nodes also contend for
    the real cores, which the run's CPU columns show."""
    if scale is None:
        return description
    if not (0.05 <= scale <= 20):
        raise ValueError(f"--cpu-scale must be between 0.05 and 20, not {scale:g}")
    supervisors = tuple(dataclasses.replace(s, cpu=s.cpu * scale, quota_cpu=None if quotas else s.held_cpu)
                        for s in description.supervisors)
    return dataclasses.replace(description, supervisors=supervisors)


def run_description(args: argparse.Namespace):
    """The cluster description the run uses: ``--cluster`` with ``--link-mbit``, ``--cpu-scale`` and
    ``--quotas-as-described``."""
    from storm_planner.cluster.description import load_description

    return with_cpu_scale(with_links(load_description(args.cluster), args.link_mbit), args.cpu_scale,
                          quotas=not getattr(args, "quotas_as_described", False))


def description_capacities(description) -> Capacities:
    """Each supervisor's CPU (what its quota holds it to) and link rate (its own, else the network's)."""
    return Capacities(cpu={s.name: s.held_cpu for s in description.supervisors},
                      link_mbit={s.name: s.link_mbit or description.network.link_mbit for s in description.supervisors})


def saved_capacities(args: argparse.Namespace, out: Path) -> Capacities | None:
    """The capacities the run saved beside its cells (its own description, whatever the flags now), else
    those of the cluster its saved command names (``--cluster``, ``--link-mbit``, ``--cpu-scale`` in
    ``command.txt``: a run older than the saved capacities), else the flags' description's."""
    path = out / CAPACITIES_FILE
    if path.exists():
        try:
            return Capacities.read(path)
        except (OSError, ValueError) as error:
            _progress(f"warning: {error}; using the capacities of {args.cluster}")
    command = out / "command.txt"
    return run_capacities(with_cluster_flags(args, command.read_text()) if command.exists() else args)


def with_cluster_flags(args: argparse.Namespace, command: str) -> argparse.Namespace:
    """``args`` with the cluster a saved command ran on: its ``--cluster``, ``--link-mbit``, ``--cpu-scale``
    and ``--quotas-as-described`` (each absent one at its default), the flags given now left aside."""
    words = shlex.split(command)
    given = {word: words[i + 1] for i, word in enumerate(words[:-1])
             if word in ("--cluster", "--link-mbit", "--cpu-scale")}
    try:
        link_mbit = float(given["--link-mbit"]) if "--link-mbit" in given else None
        cpu_scale = float(given["--cpu-scale"]) if "--cpu-scale" in given else None
    except ValueError:
        return args   # not a command this bench wrote: the flags given now
    return argparse.Namespace(**{**vars(args), "cluster": given.get("--cluster", str(DEFAULT_CLUSTER)),
                                 "link_mbit": link_mbit, "cpu_scale": cpu_scale,
                                 "quotas_as_described": "--quotas-as-described" in words})


def run_capacities(args: argparse.Namespace) -> Capacities | None:
    """The capacities of the run's description, or None (with a warning) when it cannot be read: the report
    then gives the spreads in absolute units."""
    try:
        return description_capacities(run_description(args))
    except (OSError, ValueError) as error:
        _progress(f"warning: {args.cluster}: {error}; the report gives CPU and link spreads without capacities")
        return None


def time_left(started: float, done: int, total: int, now: float | None = None) -> str:
    """``"; about 2 h 5 min left"`` from the mean time of the ``done`` items since ``started``
    (monotonic seconds); empty before the first is done."""
    if done <= 0 or total <= done:
        return ""
    seconds = ((time.monotonic() if now is None else now) - started) / done * (total - done)
    minutes = max(1, round(seconds / 60))
    return f"; about {minutes // 60} h {minutes % 60} min left" if minutes >= 60 else f"; about {minutes} min left"


def report_path(out: Path) -> Path:
    return out.parent / f"{out.name}.md"


def cells_to_run(path: Path, header: list[str], cells):
    """The cells not yet in ``path``, in run order; the rows of those that never acked a tuple go, as
    they run again."""
    done = finished_cells(path, header)
    todo = [c for c in cells if (c[0].name, f"{c[1]:g}", c[2], str(c[3])) not in done]
    again = {(c[0].name, f"{c[1]:g}", c[2], str(c[3])) for c in todo}
    if drop_csv_rows(path, header, lambda row: cell_key(row) in again):
        _progress("cells whose topology never acked a tuple run again")
    _progress(f"{len(cells)} cells, {len(cells) - len(todo)} already in {path}, {len(todo)} to run")
    return todo


def run_cells(args: argparse.Namespace, out: Path, cells, schedulers: dict, command: str) -> int:
    """Run the cells not yet in ``cells.csv`` on one cluster; returns how many ran."""
    from storm_planner_bench.e2e.cells import run_cell
    from storm_planner_bench.e2e.profiles import (
        HeteroProfiles,
        cluster_machine_types,
        hetero_optimal_note,
    )
    from storm_planner_bench.e2e.ramp import run_ramp
    from storm_planner_bench.e2e.report import write_report
    from storm_planner_bench.e2e.workloads import needs_profile
    description = run_description(args)
    capacities = description_capacities(description)
    header = columns([s.name for s in description.supervisors])
    todo = cells_to_run(out / "cells.csv", header, cells)
    if not todo:
        return 0
    code = code_version()
    _progress(f"code: {code}")
    saved = getattr(args, "profiles", None)
    top_rates: dict[str, float] = {}
    for workload, rate, _, _ in cells:
        top_rates[workload.name] = max(rate, top_rates.get(workload.name, 0.0))
    profiles = HeteroProfiles(out / "profiles", cluster_machine_types(description), Path(saved) if saved else None,
                              top_rates)
    hetero = {c[0].name: c[0] for c in todo if needs_profile(schedulers[c[2]])}
    profiles.check(hetero.values())   # a bad saved profile is refused before the cluster starts
    optimal = {c[0].name: c[0] for c in todo if schedulers[c[2]].algorithm == "hetero-optimal"}
    for note in filter(None, map(hetero_optimal_note, optimal.values())):
        _progress(f"warning: {note}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # leave through the context managers
    # Nimbus starts with the first cell's scheduler: one restart fewer.
    with open_bench(args, description.with_scheduler(schedulers[todo[0][2]].nimbus), out) as bench:
        if getattr(args, "stepped", False):
            # A ramp runs whole: the rates a stopped run left out are run again from the first.
            pending = {(w.name, label, repetition) for w, _, label, repetition in todo}
            wanted = {(w.name, f"{rate:g}", label, str(repetition)) for w, rate, label, repetition in todo}
            ramps = plan_ramps([c for c in cells if (c[0].name, c[2], c[3]) in pending])
            started = time.monotonic()
            for index, (workload, rates, label, repetition) in enumerate(ramps, 1):
                _progress(f"ramp {index}/{len(ramps)}: {workload.name} at {', '.join(f'{r:g}' for r in rates)} t/s, "
                          f"{label}, repetition {repetition}{time_left(started, index - 1, len(ramps))}")
                profile = profiles.text(bench, workload) if workload.name in hetero else None
                for row in run_ramp(bench, workload, rates, schedulers[label], repetition, profile=profile):
                    if cell_key(row) in wanted:   # the steps already saved stay as they were
                        append_cell(out / "cells.csv", header, row, code)
                write_report(out, command, capacities)
            return len(todo)
        started = time.monotonic()
        for index, (workload, rate, label, repetition) in enumerate(todo, 1):
            _progress(f"cell {index}/{len(todo)}: {workload.name} at {rate:g} t/s, {label}, repetition {repetition}"
                      f"{time_left(started, index - 1, len(todo))}")
            profile = profiles.text(bench, workload) if workload.name in hetero else None
            row = run_cell(bench, workload, rate, schedulers[label], repetition, profile=profile)
            append_cell(out / "cells.csv", header, row, code)
            write_report(out, command, capacities)
    return len(todo)


@contextlib.contextmanager
def open_bench(args: argparse.Namespace, description, out: Path, feeds: dict[str, Path] | None = None,
               cluster_dir: Path | None = None, progress=None, load_memory: Path | None = None,
               cfs_period_us: int | None = None):
    """The cluster, its quotas and the feeds (by kind; default: each workload's of ``args.workloads``,
    built once), for the whole run. ``args`` gives ``settle``, ``measure``, ``drain`` and ``start_timeout``.
    The cluster's state and logs are in ``cluster_dir`` (kept after the run), else in a temporary folder;
    ``progress`` (default: e2e's) says how the cluster starts; ``load_memory``: the file where the planner
    service keeps each topology name's measured loads (default: the cluster's ZooKeeper, gone with it);
    ``cfs_period_us``: the CPU quotas' period (default: Linux's 100 ms). Also the cluster of
    ``storm-planner bench albic-real`` and ``bench soak``."""
    from storm_planner.cluster import local_cluster, network
    from storm_planner_bench.common.cluster import node_quotas
    from storm_planner_bench.e2e.cells import Bench, Timing

    network.check_available()
    say = progress or _progress
    if feeds is None:
        feeds = workload_feeds(args, {workload.feed_kind for workload in parse_workloads(args.workloads)})
    timing = Timing(settle_s=args.settle, measure_s=args.measure, drain_s=args.drain, start_s=args.start_timeout,
                    step_s=getattr(args, "step_settle", 20.0))
    with tempfile.TemporaryDirectory(prefix="e2e-bench-") as work, contextlib.ExitStack() as stack:
        cluster = stack.enter_context(local_cluster(description, cluster_dir or Path(work) / "cluster",
                                                    free_ports=True, ui=False, dashboard=False, progress=say,
                                                    load_memory=load_memory))
        quotas: dict = {}
        accounts = node_quotas(cluster, stack, "e2e", say, quotas=quotas, period_us=cfs_period_us)
        yield Bench(cluster=cluster, accounts=accounts, work=Path(work) / "cells", feeds=feeds,
                    repo=Path.cwd(), out=out, progress=say, timing=timing, quotas=quotas)


def workload_feeds(args: argparse.Namespace, kinds: set[str]) -> dict[str, Path]:
    """The synthetic feeds of each kind the workloads replay, built once per (kind, records, seed) and kept
    for later runs (``args``: ``feed_records``, ``quick``, ``seed``)."""
    from storm_planner.cluster.locations import default_state_root
    from storm_planner_bench.common.cluster import build_synthetic_feeds

    records = args.feed_records or (QUICK_FEED_RECORDS if args.quick else FEED_RECORDS)
    feeds = {}
    for kind in sorted(kinds):
        root = default_state_root() / "e2e-feeds" / f"{kind}-{records}-{args.seed}"
        legacy = kind == "worldcup" and (root / "catalogue.jsonl").exists() and (root / "requests").is_dir()
        if not ((root / ".complete").exists() or legacy):
            build_synthetic_feeds(root, kind, args.seed, records, _progress)
        feeds[kind] = root
    return feeds


def e2e_command(args: argparse.Namespace) -> str:
    """The ``storm-planner bench e2e`` command that runs ``args`` (also ``bench topdown-real``'s per scale)."""
    parts = ["storm-planner bench e2e", f"--workloads {args.workloads}", f"--schedulers {args.schedulers}",
             f"--repeat {args.repeat}"]
    parts += [f"--rate {args.rate}"] if args.rate else []
    parts += [f"--stepped --step-settle {args.step_settle:g}"] if getattr(args, "stepped", False) else []
    parts += ["--quick"] if args.quick else []
    parts += [f"--settle {args.settle:g} --measure {args.measure:g} --drain {args.drain:g}"]
    parts += [f"--start-timeout {args.start_timeout:g}"] if args.start_timeout != 180.0 else []
    parts += [f"--cluster {args.cluster}"] if args.cluster != str(DEFAULT_CLUSTER) else []
    parts += [f"--link-mbit {args.link_mbit:g}"] if args.link_mbit else []
    parts += [f"--cpu-scale {args.cpu_scale:g}"] if args.cpu_scale else []
    parts += ["--quotas-as-described"] if args.cpu_scale and getattr(args, "quotas_as_described", False) else []
    parts += [f"--feed-records {args.feed_records}"] if args.feed_records else []
    parts += [f"--seed {args.seed}"] if args.seed != 1 else []
    parts += [f"--profiles {args.profiles}"] if getattr(args, "profiles", None) else []
    return " ".join(parts)


def _handler(args: argparse.Namespace) -> int:
    quick = (10.0, 20.0, 45.0) if args.quick else (20.0, 40.0, 60.0)
    args.settle = quick[0] if args.settle is None else args.settle
    args.measure = quick[1] if args.measure is None else args.measure
    args.drain = quick[2] if args.drain is None else args.drain
    return run_reporting("bench e2e", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("e2e", "Storm's DefaultScheduler and ResourceAwareScheduler against the plugin's planners on "
                               "a real local cluster (root)", (
    argument("--workloads", default="topk-link", help=f"comma-separated, of {', '.join(WORKLOADS)} "
                                                      "(default: %(default)s)"),
    argument("--schedulers", default=DEFAULT_SCHEDULERS,
             help="comma-separated: default, ras, planner:NAME, each with +nohook (no metrics hook); planner:NAME "
                  "with +noreplan (placed once), +resumable (a relief may restart the spout's worker) or +correct "
                  "(the first measured re-plan may move for traffic: planner.replan.first.correction) or +remembered "
                  "(the first plan on the loads an earlier planner cell of the workload measured; "
                  "+remembered-traffic: its rates and tuple sizes only), and +KEY=VALUE for any of the planner's "
                  "parameters (a variant under its own label: planner:albic+max_pl=50) (default: %(default)s)"),
    argument("--rate", default=None, help="tuples/s for every workload (default: each workload's own); "
                                          "several, comma-separated, make a ramp: the report then gives "
                                          "each scheduler's highest sustainable rate"),
    argument("--stepped", action="store_true",
             help="with several --rate values: one submission per scheduler and repetition, its rate raised "
                  "through them step by step, stopped at the first rate not kept up (default: a submission "
                  "per rate)"),
    argument("--step-settle", type=float, default=20.0,
             help="with --stepped: seconds after each rate change before its window (default: %(default)s)"),
    argument("--repeat", type=int, default=1, help="repetitions, interleaved (default: %(default)s)"),
    argument("--quick", action="store_true", help="short cells at each workload's quick rate"),
    argument("--settle", type=float, default=None, help="seconds after the first ack (default 20; --quick 10)"),
    argument("--measure", type=float, default=None, help="seconds measured (default 40; --quick 20)"),
    argument("--drain", type=float, default=None, help="most seconds waited for the tuples in flight "
                                                       "(default 60; --quick 45)"),
    argument("--start-timeout", type=float, default=180.0,
             help="most seconds from submission until the topology runs, and again until its first "
                  "acked tuple (default: %(default)s)"),
    argument("--out", default=str(DEFAULT_OUT), help="cells.csv and plots (default: %(default)s); "
                                                     "the report is <out>.md"),
    argument("--cluster", default=str(DEFAULT_CLUSTER), help="cluster description (default: %(default)s)"),
    argument("--link-mbit", type=float, default=None,
             help="every emulated link at this rate (default: the description's, 2 Mbit/s)"),
    argument("--cpu-scale", type=float, default=None,
             help="every supervisor's declared CPU and quota times this (topDown's node-capacity axis; "
                  "default: as described)"),
    argument("--quotas-as-described", action="store_true",
             help="with --cpu-scale: only what the supervisors declare scales; their quotas stay the "
                  "described CPU"),
    argument("--feed-records", type=int, default=None, help=f"synthetic records per feed (default "
                                                            f"{FEED_RECORDS:,}; --quick {QUICK_FEED_RECORDS:,})"),
    argument("--seed", type=int, default=1),
    argument("--profiles", default=None, metavar="DIR",
             help="saved profiles for planner:hetero and planner:hetero-optimal, DIR/<workload>.json "
                  "(default: profile each workload on the cluster once, kept under <out>/profiles)"),
    argument("--report-only", action="store_true", help="rewrite the report from cells.csv, run nothing"),
), _handler),)
