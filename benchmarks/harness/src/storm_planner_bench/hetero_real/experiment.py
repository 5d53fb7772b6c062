"""``storm-planner bench hetero-real``: ``hetero`` against Storm's own schedulers, measured.

Nasiri et al. §6.2 (Fig. 8) measure on a real three-machine heterogeneous
cluster that their scheduler sustains 7–44 % more throughput than Storm's
default scheduler placing the *same* execution graph (Linear +44 %). This
benchmark does the same on the local multi-process cluster
(:mod:`storm_planner.cluster.launcher`), with every figure read from the real
daemons, and sets ``hetero`` beside Storm's real DefaultScheduler and its
ResourceAwareScheduler:

1. **Profile** (§5.2) the benchmark topology once on one unthrottled
   supervisor with :func:`~storm_planner.profiling.profiler.run_profiling` (or
   read a saved profile, ``--profile``). A CPU quota does not change what one
   tuple costs, so the same ET/MET is used for every machine type.
2. **Plan** before the cluster starts (:mod:`storm_planner_bench.hetero_real.plans`):
   ``hetero`` in search mode (the planner API) chooses the parallelism for the
   three machines; ``hetero-optimal`` in search mode chooses its own, the
   exhaustive optimum, bounded as ``bench hetero`` bounds it (a shape it refuses
   is recorded and its runs skipped); each component's CPU per executor for the
   ResourceAwareScheduler is derived from the profile.
3. **One cluster** of three supervisors with the planner plugin and service.
   Each supervisor is put into a cgroup v1 group whose CFS quota is its
   ``cpu`` (:class:`~storm_planner.profiling.cgroups.CpuQuota`) *before* any
   topology is submitted, so every worker JVM and its Python subprocesses
   inherit the quota. The machines differ in capacity only. Each supervisor's
   declared capacity (``supervisor.cpu.capacity``, what RAS and the planners
   read) is the same ``cpu``: declared and enforced capacity agree.
4. **Placements** (``--placements``, default all five), on hetero's graph unless
   said otherwise; Nimbus is restarted with the placement's scheduler when it
   runs another (:func:`~storm_planner.cluster.nimbus_restart.switch_scheduler`):

   * ``hetero``: Nimbus runs the plugin, ``planner.algorithm: hetero`` (the
     service places the running graph, its fixed-graph mode);
   * ``hetero-optimal``: the plugin, ``planner.algorithm: hetero-optimal``, on
     hetero-optimal's own graph;
   * ``storm-default``: the plugin, the service answering Storm's EvenScheduler
     order (today's comparison, kept);
   * ``default``: Nimbus with Storm's DefaultScheduler, no plugin;
   * ``ras``: Nimbus with Storm's ResourceAwareScheduler. RAS places by declared
     resources, so the topology declares each component's CPU per executor
     (``topology.component.cpu.pcore.percent``): what eq. 7 predicts on the
     profile for one executor of hetero's graph at the input rate hetero's plan
     predicts, what an operator who profiled would declare. When RAS cannot place
     those (their sum is about the cluster's whole capacity), the next share of
     that rate in ``--ras-shares`` is declared; the share RAS ran with is
     recorded. The worker heap limit RAS checks is raised so memory never decides.

   The plugin's placements check that what Nimbus applied (``getTopologyInfo``)
   is what the service planned (``plans.jsonl``); Storm's check that the service
   was not asked.
5. **Measure** each run's highest sustained input rate: the spout reads its
   rate from a file, and the rate climbs a fixed geometric grid
   (:class:`RateSearch`; ``--max-steps`` bounds the steps, a failure measured
   again counting twice). A step is sustained when every component executes at
   least ``--keep-up`` (95 %) of the tuples/s the offered rate implies, over
   the measured windows and in the last one (:func:`judge_step`), read from the
   metrics hook's ZooKeeper windows. Acking is off: a rate step keeps the
   offered load known, where a saturating spout with ``max.spout.pending``
   would add the acker's own CPU and make the sustained rate depend on the
   pending bound. The paper's metric is the throughput there: eq. 2's tuples/s
   of all tasks.
6. **Repetitions**: every placement once in the order given, then again
   (``--repetitions``, ``--pairs`` its old name), so a drift of the host touches
   every placement alike; the load average is recorded per step.
7. **Compare** (:mod:`storm_planner_bench.hetero_real.compare`): per shape and
   placement the median throughput and its spread, the ratios to ``default`` and
   to ``ras``, and whether hetero beats both beyond the spread (every hetero
   repetition above every default and every ras one); when it does not, the
   machines' CPU and throttled share at each placement's highest step say where
   it saturated. The simulator (:mod:`storm_planner.planners.hetero.simulate`)
   evaluates every applied placement under the same profile: predicted vs measured.

Idle executors park (``WaitStrategyPark``, 1 ms) instead of spinning: with
Storm 2's default wait strategy, idle threads burn CPU that eq. 7 cannot see
(``benchmarks/reports/hetero.md``, *Profiling on the real cluster*). The spout
sleeps until its next tuple is due for the same reason. Shuffle grouping is
uniform by default (``topology.disable.loadaware.messaging``), as in the
paper's Storm 0.9.5 and eq. 8; ``--load-aware`` keeps Storm 2's load- and
locality-aware shuffle. Each supervisor is also put into a ``cpuacct`` group, so
every step records each machine's whole CPU beside the CPU the metrics hook
gives its tasks (the part eq. 7 models) and the share of throttled periods.

Outputs under ``--out`` (default ``benchmarks/results/hetero-real``):
``cells.csv`` (table ``runs``, one row per run, and table ``steps``, every rate
step: :mod:`storm_planner_bench.common.results`), ``results.md`` (with the summary
per shape and placement), ``run.json`` (everything, plans and placements
included), ``profile.json``, ``throughput.png``. They are written after every run;
a rerun of the same command into the same folder resumes from ``run.json``
(:mod:`storm_planner_bench.hetero_real.resume`). A published run keeps
``cells.csv`` and ``throughput.png``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from storm_planner.core.jsonfile import read_json
from storm_planner.generators.hetero import TOPOLOGIES
from storm_planner.profiling.cgroups import CpuAccount
from storm_planner.profiling.profiler import supervisor_pid
from storm_planner.progress import Progress, print_progress
from storm_planner_bench.common.report import Benchmark, argument
from storm_planner_bench.hetero_real.driver import (
    Bench,
    BenchSettings,
    Machine,
    Run,
    bench_description,
    machines_of,
)
from storm_planner_bench.hetero_real.plans import ShapePlan, plan_shape
from storm_planner_bench.hetero_real.project import base_options, real_profile, reference_times, write_project
from storm_planner_bench.hetero_real.report import jsonable, write_outputs
from storm_planner_bench.hetero_real.resume import SavedRuns, check_profile, saved_runs
from storm_planner_bench.hetero_real.search import (
    PLACEMENTS,
    BenchError,
    parse_capacities,
    parse_placements,
    parse_shares,
    run_order,
)

# -- profiling --------------------------------------------------------------------------------------------

def profile_reference(settings: BenchSettings, rates: Sequence[float], work_dir: Path,
                      progress: Progress) -> tuple[dict[str, Any], dict[str, Any]]:
    """Profile Linear once on one unthrottled supervisor (no quota): (reference times, profiling report)."""
    from storm_planner.cluster.description import parse_description
    from storm_planner.profiling.profiler import Settings, run_profiling

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

def hetero_real_benchmark(args: argparse.Namespace) -> int:
    import signal
    import sys
    import tempfile

    from storm_planner.cli import CommandError

    # A SIGTERM (e.g. `kill PID` of a background run) unwinds like Ctrl-C: the cluster goes down and the
    # CPU quota groups are removed by the context managers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        settings = settings_from_args(args)
        out = Path(args.out)
        # A rerun of the same command goes on where the last one stopped; a folder of other settings is refused.
        saved = None if args.overwrite else saved_runs(out, settings, _say)
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="storm-planner-hetero-real-") as tmp:
            work_dir = Path(args.work_dir).resolve() if args.work_dir else Path(tmp)
            work_dir.mkdir(parents=True, exist_ok=True)
            report = run_bench(settings, out, work_dir, args, saved)
    except (BenchError, ValueError, OSError) as error:
        raise CommandError(str(error)) from None
    _say(f"wrote {out} ({report['seconds']:.0f} s)")
    print(json.dumps({"report": str(out / "results.md"), "cells": str(out / "cells.csv"),
                      "seconds": round(report["seconds"])}))
    return 0


def settings_from_args(args: argparse.Namespace) -> BenchSettings:
    """The bench's settings from its options; :class:`BenchError` naming the option that is wrong."""
    shapes = [s.strip() for s in args.topologies.split(",") if s.strip()]
    unknown = [s for s in shapes if s not in TOPOLOGIES]
    if unknown or not shapes:
        raise BenchError(f"--topologies: unknown {unknown}; choose from {', '.join(TOPOLOGIES)}")
    try:
        low, mid, high = (int(x) for x in args.rounds.split(","))
    except ValueError:
        raise BenchError(f"--rounds {args.rounds!r}: three whole numbers, e.g. 300,1500,4000") from None
    placements = parse_placements(args.placements)
    run_order(args.repetitions, placements)   # refuses fewer than one repetition
    if args.optimal_max_nodes < 1:
        raise BenchError(f"--optimal-max-nodes {args.optimal_max_nodes}: at least 1")
    if args.max_steps < 1:
        raise BenchError(f"--max-steps {args.max_steps}: at least 1")
    return BenchSettings(shapes=shapes, repetitions=args.repetitions, capacities=parse_capacities(args.capacities),
                         rounds={"lowCompute": low, "midCompute": mid, "highCompute": high},
                         placements=placements, ras_shares=parse_shares(args.ras_shares),
                         optimal_max_nodes=args.optimal_max_nodes, period_s=args.period,
                         measure_windows=args.windows, max_steps=args.max_steps, keep_up=args.keep_up,
                         load_aware=args.load_aware)


def _say(message: str) -> None:
    """A progress line, timed, on standard error (standard output carries the command's answer)."""
    print_progress(f"{time.strftime('%H:%M:%S')} {message}")


def run_bench(settings: BenchSettings, out: Path, work_dir: Path, args: argparse.Namespace,
              saved: SavedRuns | None = None) -> dict[str, Any]:
    """Profile (or reuse a profile), plan, then run every placement not among ``saved``'s finished runs."""
    from storm_planner.cluster.launcher import local_cluster
    from storm_planner.profiling.cgroups import CpuQuota, detect_emulation

    # A resumed bench counts the earlier sittings' seconds too.
    started = time.monotonic() - (float(saved.report.get("seconds") or 0) if saved else 0.0)
    support = detect_emulation()
    _say(f"emulation on this host: {support.detail}")
    if not support.cgroup_quota:
        raise BenchError(f"machine types cannot be emulated here ({support.detail}): no measurement is made")
    report: dict[str, Any] = {"command": "storm-planner bench hetero-real " + _argv(args),
                              "settings": jsonable(dataclasses.asdict(settings)),
                              "host": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()},
                              "sittings": int(saved.report.get("sittings") or 1) + 1 if saved else 1}
    reference = _reference_times(settings, args, work_dir, report, out if saved else None)
    description = bench_description(settings.capacities, settings.period_s)
    profile = _write_profile(out, reference, [s.meta["machine.type"] for s in description.supervisors], report,
                             saved)
    plans = plan_shapes(settings, machines_of(description), profile, report)
    for shape in settings.shapes:
        write_project(work_dir / f"project-{shape}", shape)

    runs: list[Run] = saved.kept() if saved else []
    in_run_order(runs, settings)
    done = saved.done() if saved else set()
    if saved:
        left = runs_left(settings, plans, done)
        _say(f"resuming: {len(runs)} run(s) saved in {out} are not run again; {left} to run")
        if not left:
            _save(out, runs, report, started)
            return report
    try:
        with local_cluster(description, work_dir / "cluster", free_ports=True, plugin=True, planner=True,
                           ui=False, progress=_say) as cluster:
            bench = Bench(cluster, settings, profile, work_dir, _say)
            if saved:   # a RAS repetition starts at the share the saved ones were placed at
                bench.ras_start.update(saved.ras_start(settings.ras_shares))
            report["cluster"] = {"supervisors": [dataclasses.asdict(m) for m in bench.machines],
                                 "addresses": dataclasses.asdict(cluster.addresses)}
            quotas = {m.machine_type: CpuQuota(f"storm-planner-real-{m.machine_type}-{os.getpid()}", m.capacity)
                      for m in bench.machines}
            entered: list[Any] = []
            try:
                _throttle_supervisors(bench, cluster, quotas, entered)
                for shape in settings.shapes:
                    # Every run's figures are written as it ends: a failure or a stop later loses one run at most.
                    run_shape(bench, plans[shape], settings,
                              lambda run: (runs.append(run), in_run_order(runs, settings),
                                           _save(out, runs, report, started)), done)
            finally:
                bench.reader.close()
                for quota in reversed(entered):
                    quota.__exit__(None, None, None)
        report["host"]["load_avg_end"] = os.getloadavg()
    finally:   # a stop (SIGTERM unwinds as SystemExit) or an error still leaves what was measured
        _save(out, runs, report, started)
    return report


def _save(out: Path, runs: list[Run], report: dict[str, Any], started: float) -> None:
    """The outputs of the runs so far; a write that fails is a warning: the runs still to come go on, and
    an error that is unwinding the bench is not hidden by this one."""
    try:
        write_outputs(out, runs, report, started)
    except Exception as error:
        _say(f"warning: outputs not written ({type(error).__name__}: {error})")


def _reference_times(settings: BenchSettings, args: argparse.Namespace, work_dir: Path,
                     report: dict[str, Any], resumed: Path | None = None) -> dict[str, Any]:
    """Linear's reference times per component: reused from ``--profile`` (or, resuming without it, from the
    folder's ``profile.json``), else profiled now."""
    path = args.profile or (resumed / "profile.json" if resumed else None)
    if path:
        saved = read_json(path)
        reference, report["profiling"] = saved["reference_times"], saved.get("profiling", {"reused": str(path)})
        _say(f"profile reused from {path}")
        return reference
    _say("profiling Linear once on an unthrottled supervisor (a separate, short-lived cluster)")
    rates = [float(x) for x in args.profile_rates.split(",")]
    reference, report["profiling"] = profile_reference(settings, rates, work_dir, _say)
    return reference


def _write_profile(out: Path, reference: dict[str, Any], types: list[str], report: dict[str, Any],
                   saved: SavedRuns | None = None) -> dict[str, Any]:
    """The profile of the machine types from the reference times, written to profile.json and the report;
    refused before it is written when it is not the profile ``saved``'s runs were planned with."""
    profile = real_profile(reference, types)
    if saved:
        check_profile(saved, profile)
    (out / "profile.json").write_text(json.dumps({**profile, "reference_times": reference,
                                                  "profiling": report["profiling"]}, indent=2) + "\n")
    report["profile"] = profile
    _say("reference times (ms per tuple, ET + MET): "
         + ", ".join(f"{k} {v['et'] + v['met']:.3f}" for k, v in reference.items()))
    return profile


def _throttle_supervisors(bench: Bench, cluster: Any, quotas: dict[str, Any], entered: list) -> None:
    """Put each supervisor in its machine type's CPU quota group and a CPU accounting group.

    Each group entered is appended to ``entered``, for the caller to leave in reverse order.
    """
    for machine in bench.machines:
        quota = quotas[machine.machine_type].__enter__()
        entered.append(quota)
        # Before any topology: the worker JVMs and their Python subprocesses inherit the group.
        quota.add(supervisor_pid(cluster, machine.supervisor))
        bench.quotas[machine.machine_type] = quota
        account = CpuAccount(quota.path.name).__enter__()
        entered.append(account)
        account.add(supervisor_pid(cluster, machine.supervisor))
        bench.accounts[machine.machine_type] = account
        _say(f"{machine.supervisor} in cgroup {quota.path.name}: cfs quota {quota.quota} us per {quota.period} us "
             f"(and in cpuacct group {account.path.name})")


def plan_shapes(settings: BenchSettings, machines: Sequence[Machine], profile: dict[str, Any],
                report: dict[str, Any]) -> dict[str, ShapePlan]:
    """Every shape's plans (:func:`~storm_planner_bench.hetero_real.plans.plan_shape`), in the report too."""
    plans = {}
    report["plans"] = {}
    for shape in settings.shapes:
        plan = plan_shape(shape, machines, profile, optimal="hetero-optimal" in settings.placements,
                          optimal_max_nodes=settings.optimal_max_nodes)
        plans[shape] = plan
        report["plans"][shape] = plan.to_dict()
        _say(f"[{shape}] hetero (search mode) chose {plan.parallelism}; predicted max input rate "
             f"{plan.figures['max_input_rate']:.1f}/s; placement "
             + " ".join(f"{k}={v}" for k, v in plan.search_placement.items()))
        if plan.optimal is not None:
            _say(f"[{shape}] hetero-optimal chose {plan.optimal['parallelism']}; predicted max input rate "
                 f"{plan.optimal['figures']['max_input_rate']:.1f}/s ({plan.optimal['seconds']:.1f} s; again on its "
                 f"graph {plan.optimal['graph_seconds']:.1f} s)")
        for placement, why in plan.skipped.items():
            _say(f"[{shape}] {placement} skipped: {why}")
        if "ras" in settings.placements:
            _say(f"[{shape}] RAS declarations (CPU % per executor at share 1): "
                 + ", ".join(f"{c} {v:.1f}" for c, v in plan.declared_cpu.items()))
    return plans


def in_run_order(runs: list[Run], settings: BenchSettings) -> None:
    """Sort ``runs`` as one sitting runs them (a resumed bench's runs join the saved ones in their place)."""
    runs.sort(key=lambda r: (list(settings.shapes).index(r.shape), r.repetition,
                             list(settings.placements).index(r.placement)))


def runs_left(settings: BenchSettings, plans: dict[str, ShapePlan], done: Collection[tuple[str, str, int]]) -> int:
    """How many runs :func:`run_shape` has still to make for every shape."""
    return sum(1 for shape in settings.shapes for repetition, placement in run_order(settings.repetitions,
                                                                                      settings.placements)
               if placement not in plans[shape].skipped and (shape, placement, repetition) not in done)


def run_shape(bench: Bench, plan: ShapePlan, settings: BenchSettings,
              finished: Callable[[Run], Any] = lambda run: None,
              done: Collection[tuple[str, str, int]] = ()) -> list[Run]:
    """Every placement of ``plan``'s shape once, then again (``settings.repetitions``); placements the plan
    skips (hetero-optimal where it could not plan) and runs in ``done`` (shape, placement, repetition: an
    earlier sitting's) are left out. ``finished`` is told of each run as it ends."""
    runs = []
    for repetition, placement in run_order(settings.repetitions, settings.placements):
        if placement in plan.skipped or (plan.shape, placement, repetition) in done:
            continue
        runs.append(bench.run(plan.shape, placement, repetition, plan.parallelism_of(placement),
                              declared=plan.declared_cpu))
        finished(runs[-1])
    return runs


BENCHMARKS = (Benchmark(
    "hetero-real", "Nasiri et al. Fig. 8 on the real local cluster: hetero and hetero-optimal vs Storm's "
                   "DefaultScheduler and ResourceAwareScheduler, measured", (
        argument("--out", default="benchmarks/results/hetero-real", help="output directory"),
        argument("--overwrite", action="store_true",
                 help="replace the results an earlier run left in --out (without it, a rerun of the same "
                      "command resumes: finished runs are kept and not run again; other settings are refused)"),
        argument("--topologies", default="linear", help="comma list of: linear, diamond, star"),
        argument("--placements", default=",".join(PLACEMENTS),
                 help="comma list of: hetero, hetero-optimal, storm-default (the plugin), default (Storm's "
                      "DefaultScheduler), ras (Storm's ResourceAwareScheduler); run in this order. "
                      "Before: hetero,storm-default"),
        argument("--repetitions", "--pairs", dest="repetitions", type=int, default=2,
                 help="runs of every placement per topology, interleaved (A B C A B C ...); --pairs is its old name"),
        argument("--ras-shares", default="1,0.9,0.8,0.7,0.6,0.5",
                 help="ras: shares of hetero's predicted rate at which each executor's CPU is declared, tried in "
                      "turn until RAS places the topology"),
        argument("--optimal-max-nodes", type=int, default=2_000_000,
                 help="hetero-optimal: most search nodes; a shape needing more is recorded and skipped"),
        argument("--capacities", default="100,50,25",
                 help="cpu of the large, medium and small supervisor (percent of a core; also the quota)"),
        argument("--rounds", default="300,1500,4000",
                 help="SHA-256 rounds per tuple of the low, mid and high compute bolts"),
        argument("--profile", help="reuse a profile written by an earlier run (profile.json) instead of profiling"),
        argument("--profile-rates", default="20,40,80", help="profiling rates (tuples/s)"),
        argument("--period", type=int, default=3, help="metrics window, s"),
        argument("--windows", type=int, default=3, help="windows measured per rate step"),
        argument("--max-steps", type=int, default=30,
                 help="rate steps measured per run at most (a failed step measured again counts twice); the "
                      "run's sustained rate is the highest step kept up among them (default: %(default)s)"),
        argument("--keep-up", type=float, default=0.95,
                 help="share of the implied rate every component must execute for a step to count"),
        argument("--load-aware", action="store_true",
                 help="keep Storm 2's load- and locality-aware shuffle (default: uniform shuffle, as the "
                      "paper's Storm 0.9.5 and eq. 8)"),
        argument("--work-dir", help="state directory (default: a temporary one)"),
    ), hetero_real_benchmark),)


def _argv(args: argparse.Namespace) -> str:
    parts = [f"--topologies {args.topologies}", f"--placements {args.placements}",
             f"--repetitions {args.repetitions}", f"--ras-shares {args.ras_shares}",
             f"--optimal-max-nodes {args.optimal_max_nodes}", f"--capacities {args.capacities}",
             f"--rounds {args.rounds}", f"--period {args.period}", f"--windows {args.windows}",
             f"--max-steps {args.max_steps}", f"--keep-up {args.keep_up}",
             f"--out {args.out}"] + (["--load-aware"] if args.load_aware else [])
    parts.append(f"--profile {args.profile}" if args.profile else f"--profile-rates {args.profile_rates}")
    return " ".join(parts)
