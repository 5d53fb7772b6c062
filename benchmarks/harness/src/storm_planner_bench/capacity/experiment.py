"""``storm-planner bench capacity``: the highest rate each scheduler sustains on real Storm (issue #48).

Run as root (cgroups, network namespaces) from the repository root, one cluster at a time::

    flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench capacity --repeat 3 --out benchmarks/reports/e2e

For every cluster (``--clusters``), workload and arm (``--arms``, with ``--aa``'s A/A pair), ``--repeat``
capacity searches, each one submission (:mod:`.runner`, :mod:`.search`), judged by one rule (:mod:`.rule`)
on latency from the due time (:mod:`.latency`), in a randomised order per round on one commit (:mod:`.order`);
pilots and calibrations first (:mod:`.session`); windows disturbed by load outside the cluster are measured
again (:mod:`.disturbance`). The report (``<out>.md``: with ``--out benchmarks/reports/e2e`` the headline
``benchmarks/reports/e2e.md``) is rewritten after every search (:mod:`.report`); ``--report-only`` rewrites it
alone, ``--estimate`` prints how long the run would take and runs nothing.
"""
from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time
from pathlib import Path
from typing import Any

from storm_planner_bench.capacity.arms import parse_arms
from storm_planner_bench.capacity.disturbance import DISTURBED_CPU
from storm_planner_bench.capacity.measured import DECLARED_SHARE
from storm_planner_bench.capacity.order import check_run, run_order
from storm_planner_bench.capacity.runner import Timing
from storm_planner_bench.capacity.session import PILOT_RESOLUTION, SEARCH_COLUMNS, SEARCHES_FILE, Plan, finished
from storm_planner_bench.capacity.workloads import DEFAULT_WORKLOADS, FEED_RECORDS, QUICK_FEED_RECORDS, parse_workloads
from storm_planner_bench.common.cluster import run_reporting
from storm_planner_bench.common.report import Benchmark, argument, code_version, read_csv, stamped_progress
from storm_planner_bench.e2e.experiment import time_left
from storm_planner_bench.e2e.workloads import check_hook_jar

DEFAULT_OUT = Path("benchmarks/results/capacity")
DEFAULT_CLUSTERS = "benchmarks/e2e/cluster.yaml,benchmarks/e2e/cluster-hetero.yaml"
DEFAULT_ARMS = "default,ras,ras+measured,planner:auto,planner:topdown,planner:albic,planner:gma-repair,planner:hetero"
MESSAGE_TIMEOUT_S = 30.0           # the clusters' topology.message.timeout.secs
CFS_PERIOD_MS = 100.0               # Linux's default, what container runtimes keep (cgroups.CFS_PERIOD_US)
MEMORY_DIR = "memory"                # <out>/memory/<cluster>.json: the planner service's load memory, per cluster
# Settings: (settle, step settle, measure, grace, drain, hold) in seconds, full and --quick.
FULL = (20.0, 15.0, 30.0, 5.0, 60.0, MESSAGE_TIMEOUT_S + 15.0)
QUICK = (5.0, 5.0, 10.0, 3.0, 30.0, 20.0)
# What the estimate assumes beyond the settings (measured on the reference machine): submission to the
# first ack, the drain and kill, reading the time log after each window, a cluster's start.
START_S, END_S, READ_S, CLUSTER_S, PROFILE_S = 60.0, 30.0, 3.0, 120.0, 150.0

_progress = stamped_progress("capacity bench")


def bisect_steps(factor: float, resolution: float) -> int:
    """Bisection steps from a coarse bracket (× factor) to the resolution."""
    return max(0, math.ceil(math.log2((factor - 1.0) / resolution)))


def estimate(args: argparse.Namespace, searches: int, pilots: int, calibrations: int, profiles: int,
             clusters: int) -> dict[str, float]:
    """Seconds the run should take: per search the start, the steps (latency, two coarse, the bisection) and
    the recovery holds after the misses (one coarse, half the bisection's), the drain; pilots, calibrations,
    profiles and cluster starts on top."""
    step = args.step_settle + args.measure + args.grace + READ_S
    latency = len(latency_shares(args)) if args.pilot else 0
    bisect = bisect_steps(args.factor, args.resolution)
    steps = min(latency + 2 + bisect, args.max_steps)
    search = START_S + args.settle + steps * step + min(1 + bisect / 2, steps - 1) * args.hold + END_S
    pilot_steps = min(3 + bisect_steps(args.factor, PILOT_RESOLUTION), args.max_steps)
    pilot = START_S + args.settle + pilot_steps * step + min(2, pilot_steps - 1) * args.hold + END_S
    calibration = START_S + args.calibration + END_S
    total = (searches * search + pilots * pilot + calibrations * calibration + profiles * PROFILE_S
             + clusters * CLUSTER_S)
    return {"search_s": round(search), "pilot_s": round(pilot), "calibration_s": round(calibration),
            "total_h": round(total / 3600, 1)}


def latency_shares(args: argparse.Namespace) -> tuple[float, ...]:
    shares = tuple(float(s) for s in str(args.latency_shares).split(",") if s.strip())
    if any(not 0 < s < 1.5 for s in shares):
        raise ValueError(f"--latency-shares: shares of RAS's capacity between 0 and 1.5, not {args.latency_shares}")
    return shares


def capacity_command(args: argparse.Namespace) -> str:
    """The command that runs (and resumes) ``args``."""
    parts = ["storm-planner bench capacity", f"--workloads {args.workloads}", f"--arms {args.arms}"]
    parts += [f"--aa {args.aa}"] if args.aa else []
    parts += [f"--clusters {args.clusters}", f"--repeat {args.repeat}", f"--order-seed {args.order_seed}"]
    parts += ["--quick"] if args.quick else []
    parts += ["--no-pilot"] if not args.pilot else [f"--latency-shares {args.latency_shares}"]
    parts += [f"--start-rate {args.start_rate:g}"] if args.start_rate else []
    parts += [f"--factor {args.factor:g} --resolution {args.resolution:g} --max-steps {args.max_steps}"]
    parts += [f"--settle {args.settle:g} --step-settle {args.step_settle:g} --measure {args.measure:g} "
              f"--grace {args.grace:g} --hold {args.hold:g} --drain {args.drain:g}"]
    parts += [f"--calibration {args.calibration:g} --declared-share {args.declared_share:g}"]
    parts += [f"--disturbed-cpu {args.disturbed_cpu:g} --reruns {args.reruns}"]
    parts += [f"--cfs-period-ms {args.cfs_period_ms:g}"]
    parts += [f"--feed-records {args.feed_records}"] if args.feed_records else []
    parts += [f"--seed {args.seed}"] if args.seed != 1 else []
    parts += [f"--profiles {args.profiles}"] if args.profiles else []
    return " ".join(parts)


def run(args: argparse.Namespace) -> int:
    from storm_planner.cluster.description import load_description
    from storm_planner_bench.capacity.report import report_path, write_report

    out = Path(args.out)
    if args.report_only:
        print(json.dumps({"report": str(write_report(out) or report_path(out))}))
        return 0
    workloads = parse_workloads(args.workloads)
    arms = parse_arms(args.arms, args.aa)
    shares = latency_shares(args)
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {args.repeat}")
    if not 1.0 <= args.cfs_period_ms <= 1000.0:
        raise ValueError(f"--cfs-period-ms {args.cfs_period_ms:g}: the kernel takes 1 to 1000 ms")
    clusters = [(path.strip(), load_description(path.strip())) for path in args.clusters.split(",") if path.strip()]
    names = [d.name for _, d in clusters]
    if not clusters or len(set(names)) != len(names):
        raise ValueError(f"--clusters: give each cluster once (names: {', '.join(names) or 'none'})")
    order = run_order(args.order_seed, names, args.repeat, [w.name for w in workloads], [a.label for a in arms])
    needs_hetero = any(a.scheduler.algorithm in ("hetero", "hetero-optimal") for a in arms)
    figures = estimate(args, len(order), len(clusters) * len(workloads) if args.pilot else 0,
                       len(clusters) * len(workloads) if args.calibration > 0 else 0,
                       len(clusters) * len(workloads) if needs_hetero else 0, len(clusters))
    _progress(f"{len(order)} searches ({len(clusters)} clusters × {len(workloads)} workloads × {len(arms)} arms × "
              f"{args.repeat} repetitions); estimate: about {figures['total_h']:g} h (a search about "
              f"{figures['search_s'] / 60:.0f} min, a pilot {figures['pilot_s'] / 60:.0f} min, a calibration "
              f"{figures['calibration_s'] / 60:.0f} min), feeds built once beside")
    if args.estimate:
        print(json.dumps({"searches": len(order), **figures}))
        return 0
    check_hook_jar([a.scheduler for a in arms], calibrates=args.calibration > 0)
    command = capacity_command(args)
    code = code_version()
    check_run(out, code, command, args.order_seed, order, args.allow_other_commit, [a.label for a in arms],
              {"cfs_period_ms": args.cfs_period_ms})
    _progress(f"commit {code}; order seed {args.order_seed} (the order is in {out}/run.json)")
    save_clusters(out, clusters)
    supervisors = sorted({s.name for _, d in clusters for s in d.supervisors})
    header = step_columns(supervisors)
    timing = Timing(args.settle, args.step_settle, args.measure, args.grace, args.drain, args.start_timeout,
                    args.hold, args.reruns, args.disturbed_cpu)
    start_rates = {w.name: args.start_rate or (w.quick_rate if args.quick else w.rate) for w in workloads}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # leave through the context managers
    ran = 0
    for path, description in clusters:
        plan = Plan(args.factor, args.resolution, args.max_steps, shares, args.pilot, dict(start_rates),
                    args.calibration, args.declared_share)
        ran += run_cluster(args, out, path, description, workloads, arms, plan, order, header, timing, code,
                           (ran, len(order)))
    write_report(out)
    print(json.dumps({"searches_run": ran, "searches": str(out / SEARCHES_FILE), "report": str(report_path(out))}))
    return 0


def save_clusters(out: Path, clusters: list[tuple[str, Any]]) -> None:
    """Each cluster's supervisors as the run holds them (CPU quota, link Mbit/s), for the report."""
    from storm_planner_bench.capacity.report import CLUSTERS_FILE
    from storm_planner_bench.e2e.experiment import description_capacities

    path = out / CLUSTERS_FILE
    saved = json.loads(path.read_text()) if path.exists() else {}
    for file, description in clusters:
        capacities = description_capacities(description)
        saved[description.name] = {"path": file, "cpu": dict(capacities.cpu), "link_mbit": dict(capacities.link_mbit)}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")


def step_columns(supervisors: list[str]) -> list[str]:
    """steps.csv's columns: the key, the verdicts, the figures, then per supervisor CPU and link figures."""
    key = ["cluster", "workload", "arm", "repetition", "step", "rate", "offered_tps", "role", "status", "verdict",
           "why", "verdict_after_drain"]
    figures = ["processed_tps", "emitted_tps", "acked_in_window", "due_p50_ms", "due_p99_ms", "due_p999_ms",
               "emit_to_ack_p50_ms", "emit_to_ack_p99_ms", "emit_to_ack_p999_ms", "due_tuples", "unemitted",
               "unacked", "lost", "failed", "replayed", "lag_start_s", "lag_end_s", "outside_cpu_pct", "disturbed",
               "window_start_s", "measure_s", "predicted_tps", "supervisors_used", "workers_used", "placement",
               "ackers_on", "workers", "plans", "replans", "migrations", "link_bytes_per_tuple", "code"]
    per_node = [f"cpu_{n}_pct" for n in supervisors] + [f"link_{n}_mbit" for n in supervisors]
    per_node += [f"link_{n}_{way}_bytes_per_tuple" for n in supervisors for way in ("out", "in")]
    return [*key, *figures, *per_node]


def run_cluster(args: argparse.Namespace, out: Path, path: str, description: Any, workloads: list, arms: list,
                plan: Plan, order: list, header: list[str], timing: Timing, code: str,
                progress_of: tuple[int, int]) -> int:
    """One cluster's pilots, calibrations and searches; returns how many searches ran."""
    from storm_planner_bench.capacity.report import write_report
    from storm_planner_bench.capacity.session import Sitting
    from storm_planner_bench.e2e.experiment import open_bench, workload_feeds
    from storm_planner_bench.e2e.profiles import HeteroProfiles, cluster_machine_types

    cluster = description.name
    rows = read_csv(out / SEARCHES_FILE)[1] if (out / SEARCHES_FILE).exists() else []
    results = {(r["cluster"], r["workload"], r["arm"], r["repetition"]): r for r in rows}
    done = finished(rows)
    todo = [s for s in order if s.cluster == cluster and s.key not in done]
    if not todo:
        _progress(f"{cluster}: every search done")
        return 0
    _progress(f"{cluster} ({path}): {len(todo)} searches to run")
    feeds = workload_feeds(argparse.Namespace(feed_records=args.feed_records or (
        QUICK_FEED_RECORDS if args.quick else FEED_RECORDS), quick=args.quick, seed=args.seed),
        {w.feed_kind for w in workloads})
    bench_args = argparse.Namespace(settle=args.settle, measure=args.measure, drain=args.drain,
                                    start_timeout=args.start_timeout, step_settle=args.step_settle)
    by_name = {w.name: w for w in workloads}
    by_label = {a.label: a for a in arms}
    # The service's load memory lives with the run: a run resumed in another sitting plans auto's first rounds
    # on what the calibration and the searches before measured, as the uninterrupted run would.
    memory = (out / MEMORY_DIR / f"{cluster}.json").resolve()   # the service runs in another folder
    with open_bench(bench_args, description.with_scheduler("resource-aware"), out, feeds,
                    load_memory=memory, cfs_period_us=round(args.cfs_period_ms * 1000)) as bench:
        profiles = HeteroProfiles(out / "profiles" / cluster, cluster_machine_types(description),
                                  Path(args.profiles) if args.profiles else None)
        sitting = Sitting(bench, cluster, description, out, header, timing, plan, code, _progress, profiles, done)
        sitting.pilots(workloads, results)
        profiles.top_rates.update(plan.pilots)     # hetero's profile climbs towards RAS's capacity
        sitting.calibrate(workloads)
        before, total = progress_of
        # Time left from this cluster's searches alone: timed from the run's start, the feeds, pilots and
        # calibrations before them (40 min of 1 h 50) made the first estimate 4 h 38 min where 68 min were left.
        searching = time.monotonic()
        for index, search in enumerate(todo, 1):
            left = time_left(searching, index - 1, len(todo))
            _progress(f"search {before + index}/{total}: {cluster}, round {search.repetition} ({search.position}), "
                      f"{search.workload} under {search.arm}{left + ' on this cluster' if left else ''}")
            row = sitting.search(by_name[search.workload], by_label[search.arm], search)
            _progress(f"  {search.arm} on {search.workload}: {_capacity_text(row)}")
            write_report(out)
    return len(todo)


def _capacity_text(row: dict[str, Any]) -> str:
    if row.get("status") != "ran":
        return str(row.get("status"))
    high = row.get("bracket_high_tps")
    return f"sustains {row.get('capacity_tps')} t/s" + (f", misses {high}" if high not in ("", None) else "")


def _handler(args: argparse.Namespace) -> int:
    timings = QUICK if args.quick else FULL
    for name, value in zip(("settle", "step_settle", "measure", "grace", "drain", "hold"), timings):
        if getattr(args, name) is None:
            setattr(args, name, value)
    return run_reporting("bench capacity", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("capacity", "the highest rate each scheduler sustains on a real local cluster, to 5 %, "
                                    "with an A/A noise floor, RAS on measured CPU and the LP bound λ* (root)", (
    argument("--workloads", default=DEFAULT_WORKLOADS, help="comma-separated (default: %(default)s)"),
    argument("--arms", default=DEFAULT_ARMS,
             help="comma-separated: default, ras, ras+measured, planner:NAME, each with bench e2e's suffixes "
                  "(+nohook, ...), or LABEL#2 for a second copy (default: %(default)s)"),
    argument("--aa", default="ras", help="the arm run twice, as LABEL and LABEL#2: the noise floor; an arm that "
                                         "learns nothing across submissions ('' for none; default: %(default)s)"),
    argument("--clusters", default=DEFAULT_CLUSTERS, help="comma-separated cluster descriptions (default: %(default)s)"),
    argument("--repeat", type=int, default=3, help="repetitions per arm, interleaved (default: %(default)s)"),
    argument("--order-seed", type=int, default=1, help="seed of each round's order (default: %(default)s)"),
    argument("--no-pilot", dest="pilot", action="store_false",
             help="no pilot RAS search per workload: no latency steps, each search climbs from --start-rate"),
    argument("--latency-shares", default="0.5,0.8",
             help="latency steps at these shares of RAS's pilot capacity (default: %(default)s)"),
    argument("--start-rate", type=float, default=None,
             help="each spout's rate where a search without a pilot starts (default: the workload's e2e rate)"),
    argument("--factor", type=float, default=1.4, help="coarse step factor (default: %(default)s)"),
    argument("--resolution", type=float, default=0.05, help="bracket width to stop at (default: %(default)s)"),
    argument("--max-steps", type=int, default=16, help="most steps of one search (default: %(default)s)"),
    argument("--settle", type=float, default=None, help=f"s after the first ack (default {FULL[0]:g}; --quick {QUICK[0]:g})"),
    argument("--step-settle", type=float, default=None,
             help=f"s after a rate change before its window (default {FULL[1]:g}; --quick {QUICK[1]:g})"),
    argument("--measure", type=float, default=None, help=f"s per window (default {FULL[2]:g}; --quick {QUICK[2]:g})"),
    argument("--grace", type=float, default=None,
             help=f"s after a window before it is judged (default {FULL[3]:g}; --quick {QUICK[3]:g})"),
    argument("--drain", type=float, default=None, help=f"most s for the drain (default {FULL[4]:g}; --quick {QUICK[4]:g})"),
    argument("--hold", type=float, default=None,
             help=f"s of a recovery hold (default {FULL[5]:g}: the message timeout and 15; --quick {QUICK[5]:g})"),
    argument("--start-timeout", type=float, default=180.0, help="most s to the first ack (default: %(default)s)"),
    argument("--calibration", type=float, default=150.0,
             help="s a calibration runs under planner:auto; 0: none (no ras+measured, no λ*) (default: %(default)s)"),
    argument("--declared-share", type=float, default=DECLARED_SHARE,
             help="ras+measured: share of the supervisors' CPU the declared total fills (default: %(default)s)"),
    argument("--disturbed-cpu", type=float, default=DISTURBED_CPU,
             help="a window with more CPU used outside the cluster (%% of a core) is measured again "
                  "(default: %(default)s)"),
    argument("--reruns", type=int, default=2, help="most times a disturbed window, or a missed first one still catching up its "
                                                   "start, is measured again; a window missed on its p99 alone is "
                                                   "measured once more (0: none) (default: %(default)s)"),
    argument("--quick", action="store_true", help="short windows, each workload's quick rate, small feeds"),
    argument("--feed-records", type=int, default=None,
             help=f"synthetic records per feed (default {FEED_RECORDS:,}; --quick {QUICK_FEED_RECORDS:,})"),
    argument("--seed", type=int, default=1, help="the feeds' seed"),
    argument("--profiles", default=None, metavar="DIR", help="saved profiles for planner:hetero (DIR/<workload>.json)"),
    argument("--out", default=str(DEFAULT_OUT), help="steps.csv, searches.csv, plots; the report is <out>.md "
                                                     "(default: %(default)s)"),
    argument("--cfs-period-ms", type=float, default=CFS_PERIOD_MS,
             help="the CFS period of the supervisors' CPU quotas, 1 to 1000 ms; a run keeps one (default: Linux's "
                  "%(default)g; benchmarks/reports/cfs-period.md)"),
    argument("--allow-other-commit", action="store_true", help="resume a run started on another commit"),
    argument("--estimate", action="store_true", help="print the run's estimated duration, run nothing"),
    argument("--report-only", action="store_true", help="rewrite the report from the run's files, run nothing"),
), _handler),)

__all__ = ["BENCHMARKS", "SEARCH_COLUMNS", "estimate", "run"]
