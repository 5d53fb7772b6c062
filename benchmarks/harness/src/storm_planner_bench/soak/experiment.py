"""``storm-planner bench soak``: an hour of faults on the local cluster while one topology runs and re-plans
(issue #49, item 4). Run as root from the repository root, one cluster at a time::

    flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench soak --out benchmarks/results/soak

One local multi-process cluster (``--cluster``, default ``benchmarks/e2e/cluster.yaml``: four supervisors
under cgroup CPU quotas, each in a network namespace behind an emulated 2 Mbit/s link) runs one workload
(``--workload``, World Cup Top-K) under the plugin with ``planner.algorithm: auto``, re-planning on and
``planner.source.resumable: true``: its replay spout keeps its committed progress
(``<prefix>.checkpoint_dir``) and resumes from it whenever its worker restarts, so no tuple need be lost.
For ``--duration`` seconds (3600) after its first ack and 30 s of settling:

* its offered rate changes every ``--step`` seconds (240) to a seeded rate between ``--low`` and ``--high``
  (20 %, 80 %) of ``--sustained``, a rate the topology sustains on this cluster (400 t/s for Top-K: every
  scheduler kept up with it in ``benchmarks/reports/e2e.md``), through the spout's rate file;
* each fault of ``--faults`` (all six: :mod:`.faults`) is injected ``--per-kind`` times (3) on a seeded
  timetable (:mod:`.schedule`), one at a time, each undone and waited out before the next; a progress line
  says when each is injected and how it ended; a watchdog (between faults and while one is waited out)
  starts again any daemon that died by itself (a ``crash``, a finding);
* one move is forced once (``--force-move``, ``count`` to the supervisor holding fewest of its executors,
  ``--force-after`` a third of the way in: ``planner.replan.force``), so that at least one drained re-plan
  happens among the faults (a fixed target such as the last supervisor may hold them all already: the
  first two hours' forced move moved nothing);
* the service's process, the logs' sizes and Nimbus are sampled (:mod:`.monitor`).

Then the spout stops, its tuples in flight drain (``--drain``, 180 s at most), the topology is killed, the
cluster stops and the report is written (:mod:`.report`, :mod:`.analysis`): ``<out>.md`` (default
``benchmarks/results/soak.md``), ``<out>/cells.csv``, ``<out>/throughput.png`` and ``<out>/service.png``.
Everything the report needs is written under ``--out`` as the run goes (``run.json``, ``faults.csv``,
``rates.csv``, ``service.csv``, ``nimbus.csv``, the spout's time logs, the cluster's logs), so a run stopped
by SIGTERM, Ctrl-C or an error undoes the fault under way (SIGCONT to a stopped service, a cut link up),
stops the cluster (every daemon, namespace and cgroup it made) and still writes its report, marked as
interrupted; ``--report-only`` writes it again from those files. A run does not resume: a new one needs
another ``--out``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from storm_planner_bench.common.cluster import run_reporting
from storm_planner_bench.common.report import (
    Benchmark,
    append_csv,
    argument,
    code_version,
    saved_command,
    stamped_progress,
)
from storm_planner_bench.soak.faults import FAULT_COLUMNS, FaultSettings, Injector
from storm_planner_bench.soak.report import FAULTS, NIMBUS, RATES, RUN, SERVICE, read_run, save_run, write_report
from storm_planner_bench.soak.schedule import (
    KINDS,
    PlannedFault,
    RateStep,
    fault_timetable,
    feed_records,
    parse_kinds,
    rate_schedule,
)

DEFAULT_OUT = Path("benchmarks/results/soak")
DEFAULT_CLUSTER = Path("benchmarks/e2e/cluster.yaml")
# Rates every scheduler kept up with on the bench's cluster: e2e.md (Top-K), e2e-ramp-trends.md (trends).
SUSTAINED = {"topk-link": 400.0, "trends-link": 2300.0}
SCHEDULER = "planner:auto+resumable"
SETTLE_S = 30.0          # after the first ack, before the soak's clock starts
START_GUESS_S = 60.0     # submission to the first ack, roughly: where planner.replan.force.after.secs starts
_progress = stamped_progress("soak")


@dataclass(frozen=True)
class SoakConfig:
    workload: str
    duration_s: float
    step_s: float
    sustained: float
    low: float
    high: float
    kinds: tuple[str, ...]
    per_kind: int
    warmup_s: float
    tail_s: float
    force: str | None
    force_after_s: float
    faults: FaultSettings
    sample_s: float
    drain_s: float
    start_timeout_s: float
    seed: int
    cluster: str

    def schedule(self) -> list[RateStep]:
        return rate_schedule(self.seed, self.duration_s, self.step_s, self.sustained, self.low, self.high)

    def timetable(self) -> list[PlannedFault]:
        return fault_timetable(self.seed, self.duration_s, self.kinds, self.per_kind, self.warmup_s, self.tail_s)


def config_from(args: argparse.Namespace, description) -> SoakConfig:
    """The run's settings from its arguments and the cluster it runs on (the plugin's deadline sets the hang)."""
    from storm_planner_bench.e2e.workloads import WORKLOADS

    if args.workload not in SUSTAINED or args.workload not in WORKLOADS:
        raise ValueError(f"--workload: one of {', '.join(SUSTAINED)}, not {args.workload!r}")
    if not 60 <= args.duration <= 24 * 3600:
        raise ValueError(f"--duration must be between 60 s and a day, not {args.duration:g}")
    if args.per_kind < 0 or not 0 < args.low <= args.high <= 1.5 or args.step <= 0 or args.sample <= 0:
        raise ValueError("--per-kind must be >= 0, 0 < --low <= --high <= 1.5, --step and --sample positive")
    kinds = parse_kinds(args.faults)
    if "link-cut" in kinds and not description.network.emulated:
        raise ValueError(f"--faults link-cut needs a cluster with an emulated network; {args.cluster} has none")
    deadline_s = description.planner_timeout_ms / 1000
    hang_s = args.hang if args.hang is not None else deadline_s + 10
    if hang_s <= deadline_s:
        raise ValueError(f"--hang must exceed the plugin's deadline ({deadline_s:g} s), not {hang_s:g}")
    force = args.force_move or "count@*"
    force = None if force.strip().lower() == "none" else force
    return SoakConfig(
        workload=args.workload, duration_s=args.duration, step_s=args.step,
        sustained=args.sustained or SUSTAINED[args.workload], low=args.low, high=args.high, kinds=kinds,
        per_kind=args.per_kind, warmup_s=args.warmup if args.warmup is not None else min(120.0, 0.15 * args.duration),
        tail_s=args.tail if args.tail is not None else min(240.0, 0.25 * args.duration), force=force,
        force_after_s=args.force_after if args.force_after is not None else args.duration / 3,
        faults=FaultSettings(hang_s=hang_s, supervisor_down_s=args.supervisor_down, link_cut_s=args.link_cut,
                             service_down_s=args.service_down),
        sample_s=args.sample, drain_s=args.drain, start_timeout_s=args.start_timeout, seed=args.seed,
        cluster=args.cluster)


def run(args: argparse.Namespace) -> int:
    from storm_planner.cluster.description import load_description

    out = Path(args.out)
    if args.report_only:
        command = saved_command(out, [out.parent / f"{out.name}.md"], soak_command(args))
        print(json.dumps({"report": str(write_report(out, command))}))
        return 0
    description = load_description(args.cluster)
    config = config_from(args, description)
    schedule, timetable = config.schedule(), config.timetable()
    if (out / RUN).exists():
        raise ValueError(f"{out} holds a run already: --report-only reports it again; give another --out")
    out.mkdir(parents=True, exist_ok=True)
    command = soak_command(args)
    (out / "command.txt").write_text(command + "\n")
    record: dict[str, Any] = {"command": command, "code": code_version(), "status": "starting",
                              "duration_s": config.duration_s, "config": asdict(config),
                              "schedule": [asdict(s) for s in schedule], "timetable": [asdict(f) for f in timetable],
                              "message_timeout_s": float(description.storm.get("topology.message.timeout.secs", 30))}
    save_run(out, record)
    _progress(f"{len(timetable)} faults ({', '.join(config.kinds)}) and {len(schedule)} rate steps over "
              f"{config.duration_s:g} s; {out}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # leave through the finally blocks
    try:
        soak(config, description, out, record, schedule, timetable)
        record["status"] = "finished"
    except BaseException as error:
        record["status"] = (f"interrupted ({type(error).__name__})" if isinstance(error, (KeyboardInterrupt, SystemExit))
                            else f"failed: {type(error).__name__}: {error}")[:300]
        raise
    finally:
        save_run(out, record)
        _report_anyway(out, command)
    print(json.dumps({"report": str(out.parent / f"{out.name}.md"), "status": record["status"]}))
    return 0


def _report_anyway(out: Path, command: str) -> None:
    """The report of what the run left (a run stopped in the middle too); a report that fails says why."""
    if not read_run(out).get("start"):
        _progress("no report: the soak never started (see the lines above)")
        return
    try:
        _progress(f"report: {write_report(out, command)}")
    except Exception as error:  # noqa: BLE001 - the run's own outcome matters more
        _progress(f"the report could not be written: {type(error).__name__}: {error}")


def soak(config: SoakConfig, description, out: Path, record: dict[str, Any], schedule: list[RateStep],
         timetable: list[PlannedFault]) -> None:
    """Start the cluster, submit the topology, run the schedule and the faults, drain, stop."""
    from storm_planner_bench.e2e.experiment import open_bench, workload_feeds
    from storm_planner_bench.e2e.workloads import WORKLOADS

    workload = WORKLOADS[config.workload]
    records = feed_records(schedule, config.duration_s, START_GUESS_S + SETTLE_S + config.drain_s)
    feeds = built_feed(workload.feed_kind, records, config.seed) or workload_feeds(
        argparse.Namespace(feed_records=records, quick=False, seed=config.seed), {workload.feed_kind})
    timing = argparse.Namespace(settle=SETTLE_S, measure=0.0, drain=config.drain_s, start_timeout=config.start_timeout_s)
    with open_bench(timing, description.with_scheduler("planner"), out, feeds=feeds, cluster_dir=out / "cluster",
                    progress=_progress) as bench:
        injector = Injector(bench.cluster, config.faults, _progress, config.seed, quotas=bench.quotas,
                            accounts=bench.accounts)
        Soak(config, bench, injector, out, record, schedule, timetable, workload).run()


def built_feed(kind: str, records: int, seed: int) -> dict[str, Path] | None:
    """The smallest feed of ``kind`` and ``seed`` already built (by any bench) with at least ``records``
    records, by kind; None when there is none (any synthetic feed of the kind serves: the soak measures
    nothing of its content)."""
    import re

    from storm_planner.cluster.locations import default_state_root

    found = []
    for path in (default_state_root() / "e2e-feeds").glob(f"{kind}-*-{seed}"):
        match = re.fullmatch(rf"{re.escape(kind)}-(\d+)-{seed}", path.name)
        if match and int(match.group(1)) >= records and (path / ".complete").exists():
            found.append((int(match.group(1)), path))
    return {kind: min(found)[1]} if found else None


class Soak:
    """One soak on a running bench cluster: :meth:`run` submits, runs the hour, drains and kills the topology."""

    def __init__(self, config: SoakConfig, bench, injector: Injector, out: Path, record: dict[str, Any],
                 schedule: list[RateStep], timetable: list[PlannedFault], workload) -> None:
        self.config, self.bench, self.injector, self.out, self.record = config, bench, injector, out, record
        self.schedule, self.timetable, self.workload = schedule, timetable, workload
        # absolute: Storm runs the components in the topology's resources directory, where a relative
        # sink or times path (an --out given relative to the repository) would point nowhere
        self.scratch = out.resolve() / "topology"
        self.job = f"soak-{workload.name}"
        self.start = math.nan

    def run(self) -> None:
        from storm_planner_bench.common.cluster import kill_and_wait

        topology = self._submit()
        samplers = self._samplers(topology)
        rates = RateChanger(self.scratch / "rate", self.out / RATES, self.schedule, self.start)
        try:
            rates.start()
            self._faults()
            self._until(self.start + self.config.duration_s)
            rates.stop()
            self._drain(topology)
        finally:
            rates.stop()
            for sampler in samplers:
                sampler.stop()
            with contextlib.suppress(Exception):
                kill_and_wait(self.bench.nimbus, self.job, topology)

    def _submit(self) -> str:
        from storm_planner.core.settings import REPLAN_FORCE, REPLAN_FORCE_AFTER_SECS
        from storm_planner_bench.e2e.cells import submit_workload, wait_first_ack
        from storm_planner_bench.e2e.workloads import parse_scheduler

        self.scratch.mkdir(parents=True, exist_ok=True)
        (self.scratch / "rate").write_text(f"{self.schedule[0].rate:g}")
        extra: dict[str, Any] = {f"{self.workload.prefix}.replay_rate_file": str(self.scratch / "rate")}
        if self.config.force:
            extra[REPLAN_FORCE.key] = self.config.force
            extra[REPLAN_FORCE_AFTER_SECS.key] = START_GUESS_S + SETTLE_S + self.config.force_after_s
        submitted = time.time()
        submission = submit_workload(self.bench, self.workload, self.schedule[0].rate, parse_scheduler(SCHEDULER),
                                     self.scratch, self.job, extra=extra)
        self.injector.topology_id = submission.id
        self.record.update(topology=submission.id, submitted=submitted, scheduler=SCHEDULER)
        if not wait_first_ack(self.scratch / "times", submitted + self.config.start_timeout_s):
            raise RuntimeError(f"no tuple acked within {self.config.start_timeout_s:g} s of submission")
        self.record["first_ack"] = time.time()
        _progress(f"{submission.id} acks tuples ({self.record['first_ack'] - submitted:.0f} s after submission); "
                  f"settling {SETTLE_S:g} s")
        time.sleep(SETTLE_S)
        self.start = self.record["start"] = self.injector.start = time.time()
        self.injector.on_crash = self._save_fault
        self.record["status"] = "running"
        save_run(self.out, self.record)
        return submission.id

    def _samplers(self, topology: str) -> list:
        from storm_planner_bench.soak.monitor import NimbusProbe, ServiceSampler

        samplers = [ServiceSampler(self.bench.cluster, self.out / SERVICE, self.config.sample_s),
                    NimbusProbe(self.bench.cluster, self.out / NIMBUS, lambda: topology)]
        for sampler in samplers:
            sampler.start()
        return samplers

    def _faults(self) -> None:
        for planned in self.timetable:
            self._until(self.start + planned.at_s)
            try:
                fault = self.injector.inject(planned)
            finally:
                if self.injector.current is not None:   # stopped in the middle: recorded as far as it went
                    self._save_fault(self.injector.current)
            self._save_fault(fault)
            late = (fault.injected - self.start) - planned.at_s
            _progress(f"fault {planned.index}/{len(self.timetable)} ({fault.kind}"
                      f"{', ' + fault.target if fault.target else ''}): {fault.outcome}; down {_s(fault.undone - fault.injected)}, "
                      f"back {_s(fault.recovered - fault.undone)} and cluster healthy {_s(fault.healthy - fault.undone)} "
                      f"after the undo" + (f"; {late:.0f} s late" if late > 5 else "")
                      + (f"; {fault.detail}" if fault.detail else ""))

    def _until(self, when: float) -> None:
        """Sleep until ``when`` (Unix seconds), the watchdog looking at the daemons every ``faults.WATCH_S``; it
        looks once even when ``when`` has passed (a fault that ran late must not skip it)."""
        self.injector.watch()
        while time.time() < when:
            self.injector.watch_if_due()
            time.sleep(max(0.0, min(1.0, when - time.time())))

    def _save_fault(self, fault) -> None:
        append_csv(self.out / FAULTS, FAULT_COLUMNS, fault.row(self.start))

    def _drain(self, topology: str) -> None:
        from storm_planner.submit.operations import list_topologies
        from storm_planner_bench.e2e.cells import drain

        (self.scratch / "stop").write_text("")
        self.record["end"] = time.time()
        save_run(self.out, self.record)
        _progress(f"the soak is over: the spout stops; draining (at most {self.config.drain_s:g} s)")
        times = drain(self.scratch / "times", self.config.drain_s)
        self.record["drained"] = time.time()
        self.record["unacked_after_drain"] = times.never_acked()
        with contextlib.suppress(Exception):
            self.record["final_status"] = next(t.status for t in list_topologies(self.bench.nimbus) if t.id == topology)
        save_run(self.out, self.record)
        _progress(f"drained: {len(times.emitted):,} emitted, {len(times.acked):,} acked, {times.never_acked():,} "
                  f"never acked, {times.failed:,} failed, {times.replayed:,} replayed")


class RateChanger(threading.Thread):
    """Writes each step's rate to the spout's rate file at its time, and a row of ``rates.csv``."""

    def __init__(self, rate_file: Path, table: Path, schedule: list[RateStep], start: float) -> None:
        super().__init__(name="soak-rates", daemon=True)
        self.rate_file, self.table, self.schedule, self.began = rate_file, table, schedule, start
        self._stopped = threading.Event()

    def run(self) -> None:
        for k, step in enumerate(self.schedule):
            if self._stopped.wait(max(0.0, self.began + step.at_s - time.time())):
                return
            self.rate_file.write_text(f"{step.rate:g}")
            append_csv(self.table, ("time", "at_s", "rate"), {"time": round(time.time(), 2), "at_s": step.at_s,
                                                               "rate": step.rate})
            _progress(f"rate step {k + 1}/{len(self.schedule)}: {step.rate:g} t/s")

    def stop(self) -> None:
        self._stopped.set()
        if self.is_alive():
            self.join(timeout=10)


def _s(seconds: float) -> str:
    return f"{seconds:.1f} s" if math.isfinite(seconds) else "never"


def soak_command(args: argparse.Namespace) -> str:
    """The ``storm-planner bench soak`` command that runs ``args`` (its options that differ from the defaults)."""
    parts = ["storm-planner bench soak"]
    for flag, value, default in (
            ("--workload", args.workload, "topk-link"), ("--duration", args.duration, 3600.0),
            ("--step", args.step, 240.0), ("--sustained", args.sustained, None), ("--low", args.low, 0.2),
            ("--high", args.high, 0.8), ("--faults", args.faults, "all"), ("--per-kind", args.per_kind, 3),
            ("--warmup", args.warmup, None), ("--tail", args.tail, None), ("--force-move", args.force_move, None),
            ("--force-after", args.force_after, None), ("--hang", args.hang, None),
            ("--supervisor-down", args.supervisor_down, 20.0), ("--service-down", args.service_down, 5.0),
            ("--link-cut", args.link_cut, 20.0), ("--sample", args.sample, 5.0), ("--drain", args.drain, 180.0),
            ("--start-timeout", args.start_timeout, 300.0), ("--cluster", args.cluster, str(DEFAULT_CLUSTER)),
            ("--seed", args.seed, 1)):
        if value != default:
            parts.append(f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}")
    return " ".join(parts)


def _handler(args: argparse.Namespace) -> int:
    return run_reporting("bench soak", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("soak", "an hour of faults: one topology re-planning under supervisor, service, ZooKeeper, "
                                "Nimbus and link faults, nothing lost (root)", (
    argument("--workload", default="topk-link", help=f"one of {', '.join(SUSTAINED)} (default: %(default)s)"),
    argument("--duration", type=float, default=3600.0, help="seconds of faults after the first ack (default: %(default)s)"),
    argument("--step", type=float, default=240.0, help="seconds between rate changes (default: %(default)s)"),
    argument("--sustained", type=float, default=None,
             help="tuples/s the topology sustains on the cluster (default: " +
                  ", ".join(f"{w} {r:g}" for w, r in SUSTAINED.items()) + ")"),
    argument("--low", type=float, default=0.2, help="lowest rate, as a share of --sustained (default: %(default)s)"),
    argument("--high", type=float, default=0.8, help="highest rate, as a share of --sustained (default: %(default)s)"),
    argument("--faults", default="all", help=f"comma-separated, of {', '.join(KINDS)} (default: all)"),
    argument("--per-kind", type=int, default=3, help="injections of each fault kind (default: %(default)s)"),
    argument("--warmup", type=float, default=None, help="seconds before the first fault (default: 120, or 15 %% of "
                                                        "a shorter run)"),
    argument("--tail", type=float, default=None, help="seconds after the last fault's slot (default: 240, or 25 %% "
                                                      "of a shorter run)"),
    argument("--force-move", default=None, help="planner.replan.force for one drained move ('none': no forced move; "
                                                "default: count@*, the supervisor holding fewest counts)"),
    argument("--force-after", type=float, default=None, help="seconds into the soak of the forced move, roughly "
                                                             "(default: a third of --duration)"),
    argument("--hang", type=float, default=None, help="seconds the service stays stopped (default: the plugin's "
                                                      "deadline + 10)"),
    argument("--supervisor-down", type=float, default=20.0, help="seconds a killed supervisor stays down "
                                                                 "(default: %(default)s)"),
    argument("--service-down", type=float, default=5.0, help="seconds a killed service stays down "
                                                             "(default: %(default)s)"),
    argument("--link-cut", type=float, default=20.0, help="seconds a link stays down (default: %(default)s)"),
    argument("--sample", type=float, default=5.0, help="seconds between samples of the service (default: %(default)s)"),
    argument("--drain", type=float, default=180.0, help="most seconds waited for the tuples in flight at the end "
                                                        "(default: %(default)s)"),
    argument("--start-timeout", type=float, default=300.0, help="most seconds from submission to the first ack "
                                                                "(default: %(default)s)"),
    argument("--cluster", default=str(DEFAULT_CLUSTER), help="cluster description (default: %(default)s)"),
    argument("--seed", type=int, default=1),
    argument("--out", default=str(DEFAULT_OUT), help="the run's files (default: %(default)s); the report is <out>.md"),
    argument("--report-only", action="store_true", help="write the report again from --out's files, run nothing"),
), _handler),)
