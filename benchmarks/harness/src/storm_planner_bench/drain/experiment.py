"""``storm-planner bench drain``: one forced move of a running topology, drained and not (issue #49).

Run as root (cgroups, network namespaces) from the repository root::

    flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench drain --repeat 3 --out benchmarks/reports/drain

On the quota cluster (``--cluster``), Top-K (``--workload``, ``bench capacity``'s workload) replays at
``--rate`` t/s per spout (default: ``--share`` of RAS's capacity as ``bench capacity`` found it, its
``searches.csv`` under ``--capacity``), placed by ``--scheduler`` (``planner:auto``) with re-planning on.
``planner.replan.force`` moves one executor of each of ``--move``'s components (a count and an acker) to
``--target`` (into a worker of their own there with ``--new-worker``) ``--force-after`` seconds after the first
plan, through the service's drain (arm ``drain``: ``planner.replan.drain.always``), at once (arm
``no-drain``: ``planner.replan.drain: false``), or as the service decides by default (arm ``auto``: at once
when the flow goes on through the move, :func:`storm_planner.adaptation.costs.flow_goes_on`, else drained).
``--repeat`` repetitions of each arm, interleaved (each round in another order), each one submission on the
same cluster:

1. submit (the spouts resumable from their checkpoints, their rate from a rate file, their time log on);
2. wait for the forced move's drain records in the plan log (:mod:`.series`) and for ``--after`` seconds past
   the decision; keep the placement just before the decision and after the move;
3. stop the spouts, wait for the tuples in flight to be acked (``--drain-wait``), read the time log;
4. read what the restarted workers' starts were made of from the supervisors' and workers' logs
   (:mod:`.workerstart`), keep the lines behind it, kill the topology.

Each run appends a row to ``runs.csv``, its per-second series to ``seconds.csv``, its restarted workers'
marks to ``starts.csv`` (a stopped run resumes at the next run); the report (:mod:`.report`) is rewritten
after every run.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from storm_planner_bench.capacity.workloads import FEED_RECORDS, WORKLOADS
from storm_planner_bench.common.cluster import run_reporting
from storm_planner_bench.common.report import (
    Benchmark,
    append_csv_rows,
    argument,
    code_version,
    drop_csv_rows,
    read_csv,
    stamped_progress,
)
from storm_planner_bench.drain import series
from storm_planner_bench.drain import workerstart as ws

DEFAULT_OUT = Path("benchmarks/results/drain")
DEFAULT_CLUSTER = "benchmarks/e2e/cluster.yaml"
DEFAULT_CAPACITY = "benchmarks/reports/e2e,benchmarks/results/capacity"
ARMS = ("drain", "no-drain", "auto")
RUNS_FILE, SECONDS_FILE, STARTS_FILE = "runs.csv", "seconds.csv", "starts.csv"
RUN_COLUMNS = (
    "arm", "repetition", "status", "rate", "scheduler", "target", "force", "started", "topology",
    "intervals", "intervals_without_ack", "empty_at", "longest_gap_s", "longest_gap_from_s",
    "emitted", "acked", "lost", "failed", "replayed", "failed_around", "replayed_around",
    "due_p50_ms", "due_p99_ms", "due_max_ms", "due_tuples", "due_unacked", "due_unemitted",
    *(f"{p}_s" for p in series.PHASES), "stopped_s", "in_flight_before", "in_flight_after_drain",
    "service_starts", "moved", "placement_before", "placement_after", "acked_per_s_before", "acked_per_s_after",
    "notes", "code")
SECOND_COLUMNS = ("arm", "repetition", "second", "acked", "emitted", "failed", "replayed")
START_COLUMNS = ("arm", "repetition", "slot", *(m.replace(" ", "_") + "_s" for m in ws.MARKS), "service_s")
POLL_S = 2.0
_progress = stamped_progress("drain bench")


def run_order(arms: list[str], repeat: int) -> list[tuple[int, str]]:
    """(repetition, arm), interleaved: odd rounds in the arms' order, even rounds reversed."""
    order = []
    for repetition in range(1, repeat + 1):
        order += [(repetition, arm) for arm in (arms if repetition % 2 else arms[::-1])]
    return order


def capacity_rate(dirs: str, cluster: str, workload: str) -> tuple[float, str] | None:
    """RAS's capacity of ``workload`` on ``cluster`` (offered t/s) as ``bench capacity`` found it: the median
    of its searches that ran in the first of ``dirs`` (comma-separated) whose ``searches.csv`` has one (the
    repetitions, else the pilot); with where it came from. None when no folder has one."""
    for folder in (d.strip() for d in dirs.split(",") if d.strip()):
        path = Path(folder) / "searches.csv"
        if not path.exists():
            continue
        rows = [r for r in read_csv(path)[1] if r.get("cluster") == cluster and r.get("workload") == workload
                and r.get("arm") == "ras" and r.get("status") == "ran" and _number(r.get("capacity_tps")) > 0]
        repeated = [r for r in rows if r.get("repetition") != "0"]
        searches, kind = (repeated, "its repetitions") if repeated else (rows, "its pilot")
        if searches:
            values = sorted(_number(r["capacity_tps"]) for r in searches)
            found = statistics.median(values)
            return found, (f"RAS's capacity {found:g} t/s on {cluster} ({path}, {kind}: "
                           f"{', '.join(f'{v:g}' for v in values)})")
    return None


def choose_target(description: Any, workload: Any, algorithm: str, rate: float, components: list[str],
                  repo: Path) -> tuple[str, str]:
    """The node the forced move goes to, and why: of the nodes that do not already hold every executor of
    the moved components in the scheduler's first plan (made here offline, on the plugin's submission
    problem), the one whose planned declared CPU leaves it the largest share free (then the larger, then by
    name). Without a plan (a planner that fails offline): the supervisor with the most CPU."""
    from storm_planner.planners import run as plan
    from storm_planner_bench.e2e.submission import cluster_nodes, submission_problem

    supervisors = sorted(description.supervisors, key=lambda s: (-s.cpu, s.name))
    try:
        problem = submission_problem(workload.name, repo, cluster_nodes(description),
                                     {k: str(v) for k, v in workload.options(rate).items()})
        assignment = plan(problem, algorithm).assignments
    except Exception as error:   # noqa: BLE001 - the target is a guess; the run says where the move went
        return supervisors[0].name, f"the largest supervisor ({algorithm} could not plan offline: {error})"
    executors = {e.id: e for e in problem.executors}
    load = {s.name: 0.0 for s in supervisors}
    for executor_id, slot in assignment.items():
        load[slot.node] = load.get(slot.node, 0.0) + (executors[executor_id].cpu or 0.0)
    counts = {c: sum(1 for e in executors.values() if e.component == c) for c in components}

    def full(node: str) -> bool:   # holds every executor of a moved component: nothing of it would move
        return any(sum(1 for e, s in assignment.items() if s.node == node and executors[e].component == c) >= n
                   for c, n in counts.items() if n)

    ranked = sorted((s for s in supervisors if not full(s.name)),
                    key=lambda s: (load[s.name] / s.cpu, -s.cpu, s.name))
    if not ranked:
        return supervisors[0].name, "the largest supervisor (every node holds a moved component whole)"
    best = ranked[0]
    return best.name, (f"{algorithm}'s first plan (offline) leaves {best.name} the most free: "
                       f"{load[best.name]:g} % declared of its {best.cpu:g} %")


def run(args: argparse.Namespace) -> int:
    from storm_planner.cluster.description import load_description
    from storm_planner_bench.capacity.workloads import parse_workloads
    from storm_planner_bench.drain.report import report_path, write_report
    from storm_planner_bench.e2e.workloads import check_hook_jar, parse_scheduler

    out = Path(args.out)
    if args.report_only:
        print(json.dumps({"report": str(write_report(out) or report_path(out))}))
        return 0
    workload = parse_workloads(args.workload)[0]
    scheduler = parse_scheduler(args.scheduler)
    if not scheduler.algorithm or not scheduler.replan:
        raise ValueError(f"--scheduler: {args.scheduler!r}: a planner that re-plans (the move is the service's)")
    check_hook_jar([scheduler])
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if not arms or any(a not in ARMS for a in arms) or len(set(arms)) != len(arms):
        raise ValueError(f"--arms: {args.arms!r}: some of {', '.join(ARMS)}, each once")
    if args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {args.repeat}")
    extra = parse_sets(args.set)
    description = load_description(args.cluster)
    rate, rate_source = args.rate, "given (--rate)"
    if rate is None:
        found = capacity_rate(args.capacity, description.name, workload.name)
        if found is None:
            raise ValueError(f"--rate: no RAS capacity of {workload.name} on {description.name} in {args.capacity} "
                             f"(searches.csv of bench capacity): give --rate")
        rate = float(f"{args.share * found[0] / workload.sources:.3g}")
        rate_source = f"{args.share:.0%} of {found[1]}"
    components = [c.strip() for c in args.move.split(",") if c.strip()]
    if args.target:
        target, why = args.target, "given (--target)"
    else:
        target, why = choose_target(description, workload, scheduler.algorithm, rate, components, Path.cwd())
    if target not in {s.name for s in description.supervisors}:
        raise ValueError(f"--target: no supervisor {target!r} in {args.cluster}")
    force = f"{args.move}@{target}" + (":new" if args.new_worker else "")
    order = run_order(arms, args.repeat)
    done = {(r["arm"], r["repetition"]) for r in _rows(out / RUNS_FILE) if r.get("status") == "ran"}
    todo = [(rep, arm) for rep, arm in order if (arm, str(rep)) not in done]
    code = code_version()
    command = drain_command(args)
    out.mkdir(parents=True, exist_ok=True)
    (out / "command.txt").write_text(command + "\n")
    setup = {"command": command, "commit": code, "rate": rate, "rate_source": rate_source, "target": target,
             "target_why": why, "force": force, "force_after_s": args.force_after,
             "scheduler": scheduler.label, "workload": workload.name, "cluster": description.name,
             "cluster_file": args.cluster, "options": extra, "before_s": args.before, "after_s": args.after}
    (out / "run.json").write_text(json.dumps(setup, indent=1) + "\n")
    _progress(f"{workload.name} at {rate:g} t/s ({rate_source}) under {scheduler.label} on {description.name}; "
              f"forced move {force} ({why}) {args.force_after:g} s after the first plan; "
              f"{len(todo)} of {len(order)} runs to go (about {len(todo) * _run_estimate(args) / 60:.0f} min)")
    if not todo:
        write_report(out)
        print(json.dumps({"runs_run": 0, "report": str(report_path(out))}))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # leave through the context managers
    feeds = _feeds(args, workload)
    bench_args = argparse.Namespace(settle=0.0, measure=0.0, drain=args.drain_wait, start_timeout=args.start_timeout,
                                    step_settle=0.0)
    from storm_planner_bench.e2e.experiment import open_bench

    ran = 0
    with open_bench(bench_args, description.with_scheduler(scheduler.nimbus), out, feeds) as bench:
        for index, (repetition, arm) in enumerate(todo, 1):
            _progress(f"run {index}/{len(todo)}: {arm}, repetition {repetition}")
            options = {**extra, "planner.replan.force": force,
                       "planner.replan.force.after.secs": args.force_after,
                       "planner.replan.drain": arm != "no-drain", "planner.replan.drain.always": arm == "drain"}
            result = DrainRun(bench, workload, scheduler, arm, repetition, rate, options, args).run()
            save_run(out, arm, repetition, {**result["row"], "target": target, "code": code},
                     result["seconds"], result["starts"], result["lines"], result["plans"])
            ran += 1
            _progress(f"  {summary_line(result['row'])}")
            write_report(out)
    write_report(out)
    print(json.dumps({"runs_run": ran, "runs": str(out / RUNS_FILE), "report": str(report_path(out))}))
    return 0


class DrainRun:
    """One submission: the workload at ``rate``, its forced move, measured (module docstring)."""

    def __init__(self, bench: Any, workload: Any, scheduler: Any, arm: str, repetition: int, rate: float,
                 options: dict[str, Any], args: argparse.Namespace) -> None:
        self.bench, self.workload, self.scheduler, self.arm = bench, workload, scheduler, arm
        self.repetition, self.rate, self.options, self.args = repetition, rate, options, args
        self.scratch = bench.work / f"drain-{arm}-{repetition}"
        self.job = f"drain-{workload.name}"
        self.topology_id: str | None = None

    def run(self) -> dict[str, Any]:
        from storm_planner.submit.operations import SubmitError
        from storm_planner_bench.common.cluster import kill_and_wait
        from storm_planner_bench.e2e.cells import submit_workload

        self.scratch.mkdir(parents=True, exist_ok=True)
        rate_file = self.scratch / "rate"
        rate_file.write_text(f"{self.rate:g}")
        extra = {**self.options, f"{self.workload.prefix}.replay_rate_file": str(rate_file)}
        key = {"arm": self.arm, "repetition": self.repetition, "rate": f"{self.rate:g}",
               "scheduler": self.scheduler.label, "force": self.options["planner.replan.force"],
               "started": round(time.time())}
        try:
            submission = submit_workload(self.bench, self.workload, self.rate, self.scheduler, self.scratch, self.job,
                                         extra=extra)
        except SubmitError as error:
            with contextlib.suppress(Exception):
                kill_and_wait(self.bench.nimbus, self.job)
            return _empty({**key, "status": f"not scheduled: {error}"[:300]})
        self.topology_id = submission.id
        try:
            return self._measure(key)
        finally:
            kill_and_wait(self.bench.nimbus, self.job, self.topology_id)

    def _measure(self, key: dict[str, Any]) -> dict[str, Any]:
        from storm_planner.service.planning.planlog import read_plan_log
        from storm_planner_bench.e2e.cells import _placement, drain, wait_first_ack

        assert self.topology_id is not None
        times_dir = self.scratch / "times"
        submitted = float(key["started"])
        key["topology"] = self.topology_id
        if not wait_first_ack(times_dir, submitted + self.args.start_timeout):
            return _empty({**key, "status": f"no tuple acked within {self.args.start_timeout:g} s of submission"})
        deadline = submitted + self.args.force_after + self.args.move_timeout
        before: list[dict] = []
        move = None
        while time.time() < deadline:
            records = read_plan_log(self.bench.cluster.plan_log, None)
            move = series.find_move(records, self.topology_id)
            if move is None:
                before = self._assignment() or before
            elif series.complete(move) or (not move.phases and time.time() > move.decided + self.args.after):
                break
            time.sleep(POLL_S)
        after_placement = self._assignment()
        if move is not None and move.phases:
            wait = move.decided + self.args.after + 2.0 - time.time()
            if wait > 0:
                time.sleep(wait)
        (self.scratch / "stop").write_text("")
        times = drain(times_dir, self.args.drain_wait)
        records = read_plan_log(self.bench.cluster.plan_log, None)
        move = series.find_move(records, self.topology_id)
        status = ("ran" if series.complete(move) else
                  "no forced move" if move is None else
                  "forced move not made or not finished: " + _forced_note(records, self.topology_id))[:300]
        t0 = move.decided if move is not None else math.nan
        row: dict[str, Any] = {**key, "status": status, **series.totals(times)}
        seconds: list[dict[str, Any]] = []
        starts: list[dict[str, Any]] = []
        lines: list[str] = []
        if move is not None and math.isfinite(t0):
            args = self.args
            gaps = series.ack_gaps(times, t0, args.before, args.after)
            seconds = series.per_second(times, t0, args.before, args.after)
            phases = series.drain_phases(move)
            row.update(gaps)
            row["empty_at"] = " ".join(f"{s:g}" for s in gaps["empty_at"])
            row.update(series.move_latency(times, t0, self.workload.offered(self.rate)))
            row.update({k: v for k, v in phases.items() if k != "starts"})
            row["service_starts"] = " ".join(f"{slot} {s:g}" for slot, s in sorted(phases["starts"].items()))
            row["failed_around"] = times.failed_between(t0 - args.before, t0 + args.after)
            row["replayed_around"] = times.replayed_between(t0 - args.before, t0 + args.after)
            row["acked_per_s_before"] = round(times.acked_between(t0 - args.before, t0) / args.before, 1)
            row["acked_per_s_after"] = round(times.acked_between(t0 + args.after - 20, t0 + args.after) / 20, 1)
            row["moved"] = _moved(before, after_placement)
            row["placement_before"] = _placement(before)["workers"] if before else ""
            row["placement_after"] = _placement(after_placement)["workers"] if after_placement else ""
            if math.isfinite(move.moved_at) and phases["starts"]:
                log_dir = self.bench.cluster.log_dir
                marks = ws.slot_marks(log_dir, self.topology_id, phases["starts"], move.moved_at)
                starts = [{"slot": slot, **{m.replace(" ", "_") + "_s": _rounded(v) for m, v in found.items()},
                           "service_s": phases["starts"].get(slot)} for slot, found in marks.items()]
                lines = ws.kept_lines(log_dir, self.topology_id, phases["starts"], move.moved_at)
        plans = [r for r in records if r.get("topology") == self.topology_id]   # why each plan placed what
        return {"row": row, "seconds": seconds, "starts": starts, "lines": lines, "plans": plans}

    def _assignment(self) -> list[dict]:
        try:
            return [e for e in self.bench.cluster.assignment(self.topology_id)
                    if not str(e["component"]).startswith("__system")]
        except Exception:   # noqa: BLE001 - Nimbus busy for a moment: the last placement read stays
            return []


def _empty(row: dict[str, Any]) -> dict[str, Any]:
    return {"row": row, "seconds": [], "starts": [], "lines": [], "plans": []}


def _forced_note(records: list[dict[str, Any]], topology_id: str) -> str:
    notes = [str(n) for r in records if r.get("topology") == topology_id and r.get("event", "plan") == "plan"
             for n in r.get("notes", ()) if "forced move" in str(n) or "drain" in str(n)]
    return notes[-1] if notes else "no note"


def _moved(before: list[dict], after: list[dict]) -> str:
    """The executors whose node or port changed: ``component[tasks] node:port -> node:port``."""
    was = {e["executor"]: e for e in before}
    moved = []
    for e in after:
        old = was.get(e["executor"])
        if old is not None and (old["node"], old["port"]) != (e["node"], e["port"]):
            moved.append(f"{e['component']}{e['executor']} {old['node']}:{old['port']} -> {e['node']}:{e['port']}")
    return "; ".join(sorted(moved))


def save_run(out: Path, arm: str, repetition: int, row: dict[str, Any], seconds: list[dict[str, Any]],
             starts: list[dict[str, Any]], lines: list[str], plans: Sequence[dict[str, Any]] = ()) -> None:
    """Replace the run's rows (an earlier try's) with these; keep its log lines and its topology's plan-log
    records (each plan's placement and notes, the drain's phases) under ``logs/``."""
    mine = lambda r: (r.get("arm"), r.get("repetition")) == (arm, str(repetition))   # noqa: E731
    for name, columns, rows in ((RUNS_FILE, RUN_COLUMNS, [row]), (SECONDS_FILE, SECOND_COLUMNS, seconds),
                                (STARTS_FILE, START_COLUMNS, starts)):
        drop_csv_rows(out / name, list(columns), mine)
        append_csv_rows(out / name, list(columns), [{k: v for k, v in {"arm": arm, "repetition": repetition, **r}.items()
                                                     if k in columns} for r in rows])
    if lines or plans:
        (out / "logs").mkdir(parents=True, exist_ok=True)
    if lines:
        (out / "logs" / f"{arm}-{repetition}.log").write_text("\n".join(lines) + "\n")
    if plans:
        (out / "logs" / f"{arm}-{repetition}-plans.jsonl").write_text(
            "".join(json.dumps(record, sort_keys=True) + "\n" for record in plans))


def summary_line(row: dict[str, Any]) -> str:
    if row.get("status") != "ran":
        return str(row.get("status"))
    return (f"{row['intervals_without_ack']} of {row['intervals']} 5 s intervals without an ack (longest gap "
            f"{row['longest_gap_s']:g} s); lost {row['lost']}, failed {row['failed']}, replayed {row['replayed']}; "
            f"stopped {row['stopped_s']:g} s (pause {row['pause_s']:g}, drain {row['drain_s']:g}, "
            f"start {row['start_s']:g}); p99 from due {row['due_p99_ms']:g} ms; moved {row.get('moved') or '?'}")


def parse_sets(items: list[str] | None) -> dict[str, Any]:
    """``--set KEY=VALUE`` topology options, values read as ``storm-planner submit --option`` reads them
    (YAML: ``2`` an int, ``10.5`` a float, ``true`` a bool). An integer stays one: Storm refuses a float
    where it wants an int (``topology.max.spout.pending`` as 100000.0 kills the spout's executor)."""
    from storm_planner.submit.operations import parse_options

    for item in items or []:
        key, equals, _ = item.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"--set: {item!r} is not KEY=VALUE")
    return parse_options(list(items or []))


def drain_command(args: argparse.Namespace) -> str:
    """The command that runs (and resumes) ``args``."""
    parts = ["storm-planner bench drain", f"--workload {args.workload}", f"--cluster {args.cluster}",
             f"--scheduler {args.scheduler}", f"--arms {args.arms}", f"--repeat {args.repeat}"]
    parts += [f"--rate {args.rate:g}"] if args.rate is not None else [f"--share {args.share:g} --capacity {args.capacity}"]
    parts += [f"--move {args.move}"] + ([f"--target {args.target}"] if args.target else [])
    parts += ["--new-worker"] if args.new_worker else []
    parts += [f"--force-after {args.force_after:g} --before {args.before:g} --after {args.after:g}"]
    parts += [f"--set {s}" for s in args.set or []]
    parts += [f"--feed-records {args.feed_records}"] if args.feed_records != FEED_RECORDS else []
    return " ".join(parts)


def _run_estimate(args: argparse.Namespace) -> float:
    """Seconds one run should take: submission to the move, the move and its minute after, the drain, the kill."""
    return args.force_after + args.after + 20.0 + 30.0


def _feeds(args: argparse.Namespace, workload: Any) -> dict[str, Path]:
    from storm_planner_bench.e2e.experiment import workload_feeds

    return workload_feeds(argparse.Namespace(feed_records=args.feed_records, quick=False, seed=args.seed),
                          {workload.feed_kind})


def _rows(path: Path) -> list[dict[str, str]]:
    return read_csv(path)[1] if path.exists() else []


def _number(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def _rounded(value: float) -> float | str:
    return round(value, 2) if math.isfinite(value) else ""


def _handler(args: argparse.Namespace) -> int:
    return run_reporting("bench drain", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("drain", "a forced move of a running Top-K at 80 % of its capacity, drained and not: acks "
                                 "per second around it, stalls, tuples lost, the drain's phases (root)", (
    argument("--workload", default="topk-link", help=f"one of {', '.join(WORKLOADS)} (default: %(default)s)"),
    argument("--cluster", default=DEFAULT_CLUSTER, help="the cluster description (default: %(default)s)"),
    argument("--scheduler", default="planner:auto", help="a planner:NAME that re-plans (default: %(default)s)"),
    argument("--arms", default=",".join(ARMS), help="some of drain (always), no-drain and auto (the service decides) (default: %(default)s)"),
    argument("--repeat", type=int, default=3, help="repetitions per arm, interleaved (default: %(default)s)"),
    argument("--rate", type=float, default=None, help="each spout's rate, t/s (default: --share of RAS's capacity)"),
    argument("--share", type=float, default=0.8, help="share of RAS's capacity the rate is (default: %(default)s)"),
    argument("--capacity", default=DEFAULT_CAPACITY,
             help="comma-separated bench capacity output folders (searches.csv) to read RAS's capacity from, the "
                  "first that has it (default: %(default)s)"),
    argument("--move", default="count,__acker",
             help="components one executor each of which the forced move moves (default: %(default)s)"),
    argument("--target", default=None, help="the node they move to (default: the one the first plan leaves freest)"),
    argument("--new-worker", action="store_true",
             help="the moved executors start a worker of their own on the target (its lowest free slot), so that "
                  "no worker already there restarts for them (default: they join its worker without a spout)"),
    argument("--force-after", type=float, default=120.0,
             help="s after the first plan the forced move is made (default: %(default)s)"),
    argument("--before", type=float, default=series.BEFORE_S, help="s before the move shown (default: %(default)s)"),
    argument("--after", type=float, default=series.AFTER_S, help="s after the move shown (default: %(default)s)"),
    argument("--move-timeout", type=float, default=240.0,
             help="most s after --force-after for the move to finish (default: %(default)s)"),
    argument("--drain-wait", type=float, default=60.0,
             help="most s for the tuples in flight once the spouts stop (default: %(default)s)"),
    argument("--start-timeout", type=float, default=180.0, help="most s to the first ack (default: %(default)s)"),
    argument("--set", action="append", metavar="KEY=VALUE",
             help="a topology option on top of the workload's, for both arms (repeatable)"),
    argument("--feed-records", type=int, default=FEED_RECORDS, help="synthetic records per feed (default: %(default)s)"),
    argument("--seed", type=int, default=1, help="the feed's seed"),
    argument("--out", default=str(DEFAULT_OUT), help="runs.csv, seconds.csv, starts.csv, the plot; the report is "
                                                     "<out>.md (default: %(default)s)"),
    argument("--report-only", action="store_true", help="rewrite the report from the run's files, run nothing"),
), _handler),)

__all__ = ["BENCHMARKS", "run"]
