"""``storm-planner bench topdown-real``: topDown §7.4's real-workload experiments on real Storm (issue #27).

Chatzistergiou & Viglas, *Fast Heuristics for Near-Optimal Task Allocation in Data Stream Processing
over Clusters*, §7.4 "Real workloads": Figs. 6 and 7 plot the IMC gain of TD (``topdown``), TL
(``tasklevel``) and Storm's default allocator on the Twitter trending-topics and the stock-bargains jobs as
node capacity grows from the least that allows an allocation until the algorithms converge; Fig. 9 streams
Twitter while the input rate varies and sets TD-RC (top-down, re-planned when the rate changes) against TD
and Storm's default, both allocated once. Here both run on the cluster of ``bench e2e`` (real daemons, four
supervisors under cgroup CPU quotas behind emulated links), run as root from the repository root::

    flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench topdown-real

``--part capacity``: for every scale of ``--cpu-scales`` a cluster whose supervisors declare their described
CPU times the scale (:func:`storm_planner_bench.e2e.experiment.with_cpu_scale`: the capacity axis; a supervisor
setting, so one cluster per scale) while their cgroup quotas hold each to its described CPU, as the paper
varied its allocator's capacity parameter on unchanged machines (``--scale-quotas``: the quotas scale too,
and above 1.25 they add up to more than the machine's two cores) runs e2e's cells (``--workloads`` × ``--schedulers`` ×
``--repeat``, repetitions interleaved) into ``<out>/capacity/cpu-<scale>/cells.csv`` in e2e's own format:
``bench e2e`` with the command in that folder's ``command.txt`` resumes or reports each one alone.

``--part rates``: one cluster; per scheduler and repetition, one submission of ``--rates-workload`` whose
replay spout's rate goes through ``--rate-schedule`` (:func:`storm_planner_bench.e2e.ramp.run_schedule`:
each step ``--step-settle`` seconds after its change, then ``--step`` seconds measured; every step runs,
whether or not the placement keeps up), one row per step in ``<out>/rates/steps.csv``. The schedulers are
Storm's default, TD (``planner:topdown+noreplan``: ``planner.replan: false``, placed once at submission and
never offered again) and TD-RC (``planner:topdown``: the service re-plans when the measured loads or traffic
move past ``planner.replan.threshold``, 25 %, and, unless ``--cautious``, applies any placement better by
``planner.replan.min.gain`` instead of only one that relieves a node or link short of capacity, the kit's
default: the paper's TD-RC fuses tasks as soon as a lower rate leaves room).

The paper plans TD and Storm's allocator once, at the maximum rate, on the costs measured there. The
kit's TD cannot: with re-planning off its one plan is the first, made at submission before any metrics
exist, on the estimates (each executor's declared CPU, the topology's streams), which no rate changes.
Storm's default ignores the rate too. So the TD line is one rate-blind top-down placement kept throughout,
and TD-RC is the same planner re-planning on measured figures.

IMC gain. The paper's IMC gain is the inter-module communication (bytes between tasks) kept inside
nodes. Here it is measured, not modelled: ``B`` is ``link_bytes_per_tuple``, every byte sent or received
over every supervisor's emulated link in the measured window per tuple acked in it (a tuple between two
supervisors counts on both links; the daemons' heartbeats and the ackers' traffic count too). A
scheduler's IMC gain is ``1 − B_sched / B_default``, ``B_default`` the median over Storm's default's
repetitions at the same scale (or step): the share of default's network traffic per tuple that the
scheduler keeps off the links (0 for default itself; negative: more than default). The report
(:mod:`storm_planner_bench.topdown_real.report`) gives medians over repetitions with the spread.
"""
from __future__ import annotations

import argparse
import json
import math
import signal
import sys
from pathlib import Path
from typing import Any

from storm_planner_bench.common.cluster import run_reporting
from storm_planner_bench.common.report import Benchmark, append_csv_rows, argument, read_csv, stamped_progress
from storm_planner_bench.e2e import experiment as e2e
from storm_planner_bench.e2e.workloads import Scheduler, Workload, parse_scheduler, parse_workloads

DEFAULT_OUT = Path("benchmarks/results/topdown-real")
# The paper's axis runs from the least capacity that places a job until the algorithms converge. Every
# executor declares 10 % of a core, so a node takes floor(declared / 10) of them: at 1 the i7s take 4 and the
# i5s 3 (bargains' 12 with ackers need ~0.86, and 0.9 gives the same counts), at 1.5 6 and 5, at 2.25 10
# and 7 (trends' 10 fit one i7). A scale between two of these would repeat a placement.
DEFAULT_SCALES = "1,1.5,2.25"
DEFAULT_WORKLOADS = "trends-link,bargains-link"
DEFAULT_SCHEDULERS = "default,ras,planner:tasklevel,planner:topdown"
DEFAULT_SCHEDULE = "400,200,400,600,300"
DEFAULT_RATE_SCHEDULERS = "default,planner:topdown+noreplan,planner:topdown"
PARTS = ("capacity", "rates")
STEP_KEY = ("workload", "scheduler", "repetition", "step")
# Rough seconds a cell spends beyond its settle and window (submission to first ack; drain, kill and
# Nimbus' restart), and a cluster's start: for the run's time estimate.
CELL_OVERHEAD_S, CLUSTER_START_S = 100.0, 90.0

_progress = stamped_progress("topdown-real bench")


def parse_scales(text: str) -> list[float]:
    """``--cpu-scales``: distinct CPU scales, each a number e2e's ``--cpu-scale`` takes, in rising order."""
    scales = []
    for part in (p.strip() for p in str(text).split(",")):
        try:
            scale = float(part)
        except ValueError:
            raise ValueError(f"--cpu-scales: {part!r} is not a number") from None
        if not (0.05 <= scale <= 20):
            raise ValueError(f"--cpu-scales: {part} must be between 0.05 and 20 (the described CPU times it)")
        scales.append(scale)
    if len(set(scales)) != len(scales):
        raise ValueError(f"--cpu-scales: {text} gives a scale twice")
    return sorted(scales)


def parse_schedule(text: str) -> list[float]:
    """``--rate-schedule``: two rates or more, in the order offered (falling, rising, repeated)."""
    rates = []
    for part in (p.strip() for p in str(text).split(",")):
        try:
            rate = float(part)
        except ValueError:
            raise ValueError(f"--rate-schedule: {part!r} is not a number") from None
        if not (0 < rate < 1e6):
            raise ValueError(f"--rate-schedule: {part} must be a positive rate below 1,000,000 tuples/s")
        rates.append(rate)
    if len(rates) < 2:
        raise ValueError(f"--rate-schedule: {text!r} is one rate; a schedule changes it: 400,200,400")
    return rates


def parse_schedulers(text: str, option: str = "--schedulers") -> list[Scheduler]:
    """e2e's schedulers (``default``, ``ras``, ``planner:NAME`` with e2e's suffixes and ``+KEY=VALUE``), at
    least one."""
    schedulers = [parse_scheduler(s) for s in text.split(",") if s.strip()]
    if not schedulers:
        raise ValueError(f"{option}: none given")
    labels = [s.label for s in schedulers]
    if len(set(labels)) != len(labels):
        raise ValueError(f"{option}: {text} names a scheduler twice")
    return schedulers


def scale_dir(out: Path, scale: float) -> Path:
    """Where one scale's e2e cells go: ``<out>/capacity/cpu-<scale>``."""
    return out / "capacity" / f"cpu-{scale:g}"


def e2e_args(args: argparse.Namespace, scale: float) -> argparse.Namespace:
    """The options of ``bench e2e`` that run one scale's cells (and reproduce them alone)."""
    return argparse.Namespace(
        workloads=args.workloads, schedulers=args.schedulers, repeat=args.repeat, rate=None, stepped=False,
        step_settle=args.step_settle, quick=args.quick, settle=args.settle, measure=args.measure, drain=args.drain,
        start_timeout=args.start_timeout, out=str(scale_dir(Path(args.out), scale)), cluster=args.cluster,
        link_mbit=args.link_mbit, cpu_scale=scale, quotas_as_described=not args.scale_quotas,
        feed_records=args.feed_records, seed=args.seed, profiles=None, report_only=False)


def plan_capacity(args: argparse.Namespace) -> list[tuple[float, argparse.Namespace, list[tuple[Workload, float, str, int]]]]:
    """Per scale of ``--cpu-scales``: its e2e options and its cells in e2e's run order."""
    workloads = parse_workloads(args.workloads)
    labels = [s.label for s in parse_schedulers(args.schedulers)]
    return [(scale, e2e_args(args, scale), e2e.plan_cells(workloads, labels, args.repeat, None, args.quick))
            for scale in parse_scales(args.cpu_scales)]


def rate_options(scheduler: Scheduler, cautious: bool) -> dict[str, Any]:
    """Topology options of a scheduler in the rate schedule: a planner that re-plans (TD-RC) applies any
    better placement unless ``cautious`` (module docstring)."""
    from storm_planner.core.settings import REPLAN_CAUTIOUS

    return {REPLAN_CAUTIOUS.key: False} if scheduler.algorithm and scheduler.replan and not cautious else {}


def step_columns(supervisors: list[str]) -> list[str]:
    """steps.csv's columns: the key, the offered rate and the window's start, then e2e's figures."""
    from storm_planner_bench.e2e.ramp import WINDOW_MOVES, WINDOW_START

    return [*STEP_KEY, "rate", WINDOW_START, WINDOW_MOVES, *e2e.columns(supervisors)[len(e2e.KEY):]]


def step_name(workload: str, step: int, scheduler: str, repetition: int) -> str:
    """A step's file name (latency quantiles, plans): ``trends-link-step2-planner-topdown-1``."""
    return f"{workload}-step{step}-{scheduler.replace(':', '-').replace('+', '-')}-{repetition}"


def finished_schedules(path: Path, header: list[str], schedule: list[float]) -> set[tuple[str, str, str]]:
    """(workload, scheduler, repetition) of the runs already in ``path``; a file of other columns or of
    another schedule is refused (its steps would not line up)."""
    if not path.exists():
        return set()
    found, rows = read_csv(path)
    if found != header:
        raise ValueError(f"{path}: its columns are not this cluster's ({', '.join(found)}); use another --out")
    runs: dict[tuple[str, str, str], list[float]] = {}
    for row in rows:
        runs.setdefault((row["workload"], row["scheduler"], row["repetition"]), []).append(float(row["rate"]))
    for run, rates in runs.items():
        if rates != schedule:
            raise ValueError(f"{path}: {run[1]} repetition {run[2]} ran the schedule "
                             f"{','.join(f'{r:g}' for r in rates)}, not {','.join(f'{r:g}' for r in schedule)}: "
                             "use another --out")
    return set(runs)


def estimate_minutes(args: argparse.Namespace, parts: list[str]) -> float:
    """Roughly how long what is left of the run takes on the cluster (CELL_OVERHEAD_S and CLUSTER_START_S
    per cell and cluster, the settles and windows as set; cells and runs already saved left out)."""
    seconds = 0.0
    if "capacity" in parts:
        for _, scale_args, cells in plan_capacity(args):
            done = _saved_keys(Path(scale_args.out) / "cells.csv", e2e.cell_key)
            left = sum(1 for w, rate, s, r in cells if e2e.cell_key(
                {"workload": w.name, "rate": rate, "scheduler": s, "repetition": r}) not in done)
            seconds += (CLUSTER_START_S if left else 0.0) + left * (CELL_OVERHEAD_S + args.settle + args.measure)
    if "rates" in parts:
        schedule = parse_schedule(args.rate_schedule)
        done = _saved_keys(Path(args.out) / "rates" / "steps.csv",
                           lambda row: (row["workload"], row["scheduler"], row["repetition"]))
        (workload,) = parse_workloads(args.rates_workload)
        runs = sum((workload.name, s.label, str(r)) not in done for r in range(1, args.repeat + 1)
                   for s in parse_schedulers(args.rate_schedulers, "--rate-schedulers"))
        one = CELL_OVERHEAD_S + args.settle + len(schedule) * args.step + (len(schedule) - 1) * args.step_settle
        seconds += (CLUSTER_START_S + runs * one) if runs > 0 else 0.0
    return seconds / 60.0


def _saved_keys(path: Path, key) -> set:
    """The keys of the rows a file already holds (none when it is absent or unreadable: an estimate)."""
    try:
        return {key(row) for row in read_csv(path)[1]} if path.exists() else set()
    except (OSError, ValueError, KeyError):
        return set()


def run(args: argparse.Namespace) -> int:
    from storm_planner_bench.topdown_real.report import report_path, write_report

    out = Path(args.out)
    saved = out / "command.txt"
    if args.report_only:
        write_report(out, saved.read_text().strip() if saved.exists() else _command(args))
        print(json.dumps({"report": str(report_path(out))}))
        return 0
    parts = list(PARTS) if args.part == "both" else [args.part]
    _check(args, parts)
    command = _command(args)
    out.mkdir(parents=True, exist_ok=True)
    saved.write_text(command + "\n")
    _progress(f"about {estimate_minutes(args, parts):.0f} min on the cluster for what is not yet saved")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # leave through the context managers
    ran: dict[str, int] = {}
    if "capacity" in parts:
        ran["capacity_cells_run"] = run_capacity(args, out, command)
    if "rates" in parts:
        ran["rate_runs"] = run_rates(args, out, command)
    write_report(out, command)
    print(json.dumps({**ran, "report": str(report_path(out))}))
    return 0


def _check(args: argparse.Namespace, parts: list[str]) -> None:
    """Every option of the parts to run, before any cluster starts."""
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {args.repeat}")
    for name, value in (("--settle", args.settle), ("--measure", args.measure), ("--step", args.step),
                        ("--step-settle", args.step_settle), ("--drain", args.drain)):
        if not (0 <= value < 3600) or (name in ("--measure", "--step") and value == 0):
            raise ValueError(f"{name} must be between 0 and 3600 s (a window more than 0), not {value:g}")
    if "capacity" in parts:
        for _, scale_args, _ in plan_capacity(args):
            _same_nodes(Path(scale_args.out), e2e.run_description(scale_args))
    if "rates" in parts:
        if len(parse_workloads(args.rates_workload)) != 1:
            # Checked here, not hours later when the capacity part is done and the schedule starts.
            raise ValueError(f"--rates-workload takes one workload, not {args.rates_workload!r}")
        parse_schedule(args.rate_schedule)
        parse_schedulers(args.rate_schedulers, "--rate-schedulers")
        if args.rates_cpu_scale is not None and not (0.05 <= args.rates_cpu_scale <= 20):
            raise ValueError(f"--rates-cpu-scale must be between 0.05 and 20, not {args.rates_cpu_scale:g}")
        _schedule_records(args)
        # A steps.csv of other columns or another schedule is refused now, not hours later.
        _same_nodes(Path(args.out) / "rates", _rates_description(args))
        supervisors = [s.name for s in _rates_description(args).supervisors]
        finished_schedules(Path(args.out) / "rates" / "steps.csv", step_columns(supervisors),
                           parse_schedule(args.rate_schedule))


def run_capacity(args: argparse.Namespace, out: Path, command: str) -> int:
    """Every scale's cells not yet in its cells.csv, a cluster per scale; returns how many ran."""
    from storm_planner_bench.topdown_real.report import write_report

    schedulers = {s.label: s for s in parse_schedulers(args.schedulers)}
    ran = 0
    for scale, scale_args, cells in plan_capacity(args):
        folder = Path(scale_args.out)
        _progress(f"CPU scale {scale:g}: {folder}")
        folder.mkdir(parents=True, exist_ok=True)
        own = e2e.e2e_command(scale_args)
        (folder / "command.txt").write_text(own + "\n")
        _save_nodes(folder, e2e.run_description(scale_args))
        ran += e2e.run_cells(scale_args, folder, cells, schedulers, own)
        write_report(out, command)
    return ran


def _same_nodes(folder: Path, description) -> None:
    """Refuse a folder whose cells ran on other nodes (another scale, or quotas scaled where these are not):
    its cells would be skipped as done and reported as these."""
    path = folder / "nodes.json"
    if not path.exists():
        return
    from storm_planner_bench.topdown_real.report import saved_nodes

    try:
        declared, held = saved_nodes(folder)
    except (OSError, ValueError, AttributeError) as error:
        raise ValueError(f"{path}: not the nodes a run saved ({error}); use another --out") from None
    now = {s.name: s.cpu for s in description.supervisors}, {s.name: s.held_cpu for s in description.supervisors}
    if (declared, held) != now:
        raise ValueError(f"{path}: its cells ran on nodes declaring {declared} and held to {held}, not "
                         f"{now[0]} and {now[1]} (--scale-quotas differs?); use another --out")


def _save_nodes(folder: Path, description) -> None:
    """Each supervisor's declared CPU and the CPU its quota held it to (% of a core) as run, for the report's
    capacity axis."""
    (folder / "nodes.json").write_text(json.dumps({
        "declared": {s.name: s.cpu for s in description.supervisors},
        "held": {s.name: s.held_cpu for s in description.supervisors}}) + "\n")


def _schedule_records(args: argparse.Namespace) -> int:
    """Feed records the schedule needs (every step's tuples, a tenth to spare, rounded up to 10,000);
    ``--feed-records`` below that is refused."""
    from storm_planner_bench.e2e.ramp import feed_tuples_needed

    needed = feed_tuples_needed(parse_schedule(args.rate_schedule), args.settle, args.step_settle, args.step)
    if args.feed_records is not None:
        if args.feed_records < needed:
            raise ValueError(f"--rate-schedule emits up to {needed:,} tuples, more than --feed-records "
                             f"{args.feed_records:,}: give {needed:,} or more")
        return int(args.feed_records)
    return int(math.ceil(1.1 * needed / 10_000) * 10_000)


def _rates_description(args: argparse.Namespace):
    """The rate schedule's cluster: ``--cluster`` with ``--link-mbit`` and ``--rates-cpu-scale``."""
    from storm_planner.cluster.description import load_description

    return e2e.with_cpu_scale(e2e.with_links(load_description(args.cluster), args.link_mbit),
                              args.rates_cpu_scale, quotas=args.scale_quotas)


def run_rates(args: argparse.Namespace, out: Path, command: str) -> int:
    """Every (scheduler, repetition) of the rate schedule not yet in steps.csv, on one cluster."""
    from storm_planner_bench.e2e.ramp import run_schedule
    from storm_planner_bench.topdown_real.report import write_report

    (workload,) = parse_workloads(args.rates_workload)
    schedule = parse_schedule(args.rate_schedule)
    schedulers = parse_schedulers(args.rate_schedulers, "--rate-schedulers")
    description = _rates_description(args)
    folder = out / "rates"
    header = step_columns([s.name for s in description.supervisors])
    done = finished_schedules(folder / "steps.csv", header, schedule)
    todo = [(s, r) for r in range(1, args.repeat + 1) for s in schedulers
            if (workload.name, s.label, str(r)) not in done]
    _progress(f"rate schedule {','.join(f'{r:g}' for r in schedule)} t/s: {len(todo)} runs to go")
    if not todo:
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    _save_nodes(folder, description)
    timing = argparse.Namespace(settle=args.settle, measure=args.step, drain=args.drain,
                                start_timeout=args.start_timeout, step_settle=args.step_settle)
    feeds = e2e.workload_feeds(argparse.Namespace(feed_records=_schedule_records(args), quick=False, seed=args.seed),
                       {workload.feed_kind})
    with e2e.open_bench(timing, description.with_scheduler(todo[0][0].nimbus), folder, feeds) as bench:
        for index, (scheduler, repetition) in enumerate(todo, 1):
            _progress(f"run {index}/{len(todo)}: {workload.name}, {scheduler.label}, repetition {repetition}")
            keys = [{"workload": workload.name, "scheduler": scheduler.label, "repetition": repetition,
                     "step": step, "rate": f"{rate:g}"} for step, rate in enumerate(schedule, 1)]
            names = [step_name(workload.name, step, scheduler.label, repetition) for step in range(1, len(schedule) + 1)]
            rows = run_schedule(bench, workload, schedule, scheduler, keys, names,
                                extra=rate_options(scheduler, args.cautious), stop_behind=False)
            append_csv_rows(folder / "steps.csv", header, rows)   # all of a run's steps, or none
            write_report(out, command)
    return len(todo)


def _command(args: argparse.Namespace) -> str:
    parts = ["storm-planner bench topdown-real"]
    parts += [f"--part {args.part}"] if args.part != "both" else []
    if args.part in ("both", "capacity"):
        parts += [f"--cpu-scales {args.cpu_scales}", f"--workloads {args.workloads}", f"--schedulers {args.schedulers}",
                  f"--measure {args.measure:g}"]
    parts += ["--scale-quotas"] if args.scale_quotas else []
    if args.part in ("both", "rates"):
        parts += [f"--rates-workload {args.rates_workload}", f"--rate-schedule {args.rate_schedule}",
                  f"--rate-schedulers {args.rate_schedulers}", f"--step {args.step:g}",
                  f"--step-settle {args.step_settle:g}"]
        parts += ["--cautious"] if args.cautious else []
        parts += [f"--rates-cpu-scale {args.rates_cpu_scale:g}"] if args.rates_cpu_scale is not None else []
    parts += [f"--repeat {args.repeat}", f"--settle {args.settle:g}", f"--drain {args.drain:g}"]
    parts += ["--quick"] if args.quick else []
    parts += [f"--start-timeout {args.start_timeout:g}"] if args.start_timeout != 180.0 else []
    parts += [f"--cluster {args.cluster}"] if args.cluster != str(e2e.DEFAULT_CLUSTER) else []
    parts += [f"--link-mbit {args.link_mbit:g}"] if args.link_mbit else []
    parts += [f"--feed-records {args.feed_records}"] if args.feed_records else []
    parts += [f"--seed {args.seed}"] if args.seed != 1 else []
    return " ".join(parts)


def _handler(args: argparse.Namespace) -> int:
    quick = (10.0, 20.0, 45.0) if args.quick else (90.0, 40.0, 60.0)
    args.settle = quick[0] if args.settle is None else args.settle
    args.measure = quick[1] if args.measure is None else args.measure
    args.drain = quick[2] if args.drain is None else args.drain
    return run_reporting("bench topdown-real", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("topdown-real", "topDown §7.4 on real Storm: IMC gain of topdown, tasklevel and Storm's "
                                        "schedulers as node capacity grows, and under a varying rate (root)", (
    argument("--part", choices=[*PARTS, "both"], default="both",
             help="capacity (Figs. 6-7), rates (Fig. 9) or both (default: %(default)s)"),
    argument("--cpu-scales", default=DEFAULT_SCALES,
             help="capacity: every supervisor's declared CPU times each (default: %(default)s)"),
    argument("--scale-quotas", action="store_true",
             help="the scales (--cpu-scales, --rates-cpu-scale) multiply the supervisors' cgroup quotas too "
                  "(default: each stays held to its described CPU, as the paper's machines stayed what they were)"),
    argument("--workloads", default=DEFAULT_WORKLOADS, help="capacity: e2e workloads (default: %(default)s)"),
    argument("--schedulers", default=DEFAULT_SCHEDULERS,
             help="capacity: e2e schedulers, comma-separated (default: %(default)s)"),
    argument("--measure", type=float, default=None, help="capacity: seconds measured per cell (default 40; --quick 20)"),
    argument("--rates-workload", default="trends-link", help="rates: the workload streamed (default: %(default)s)"),
    argument("--rate-schedule", default=DEFAULT_SCHEDULE,
             help="rates: tuples/s offered, step after step, in this order (default: %(default)s)"),
    argument("--rate-schedulers", default=DEFAULT_RATE_SCHEDULERS,
             help="rates: schedulers; +noreplan places once (TD), planner:NAME re-plans (TD-RC) "
                  "(default: %(default)s)"),
    argument("--step", type=float, default=40.0, help="rates: seconds measured per step (default: %(default)s)"),
    argument("--step-settle", type=float, default=80.0,
             help="rates: seconds after each rate change before its window, for re-plans to land "
                  "(default: %(default)s)"),
    argument("--cautious", action="store_true",
             help="rates: TD-RC keeps the service's cautious re-planning (moves only to relieve a shortage)"),
    argument("--rates-cpu-scale", type=float, default=None,
             help="rates: the cluster's CPU times this (default: as described)"),
    argument("--repeat", type=int, default=2, help="repetitions, interleaved (default: %(default)s)"),
    argument("--quick", action="store_true", help="capacity: each workload's quick rate and short cells"),
    argument("--settle", type=float, default=None, help="seconds after the first ack (default 90; --quick 10)"),
    argument("--drain", type=float, default=None, help="most seconds waited for the tuples in flight "
                                                       "(default 60; --quick 45)"),
    argument("--start-timeout", type=float, default=180.0,
             help="most seconds from submission until the topology runs, and again until its first ack "
                  "(default: %(default)s)"),
    argument("--out", default=str(DEFAULT_OUT), help="cells, steps and plots (default: %(default)s); the report "
                                                     "is <out>.md"),
    argument("--cluster", default=str(e2e.DEFAULT_CLUSTER), help="cluster description (default: %(default)s)"),
    argument("--link-mbit", type=float, default=None, help="every emulated link at this rate (default: the "
                                                           "description's)"),
    argument("--feed-records", type=int, default=None,
             help="synthetic records per feed (default: capacity e2e's, rates what the schedule needs)"),
    argument("--seed", type=int, default=1),
    argument("--report-only", action="store_true", help="rewrite the report from what is there, run nothing"),
), _handler),)
