"""One cluster's part of a capacity run, on one running cluster: pilots, calibrations, then the searches.

1. **Pilot** (``--pilot``, the default): per workload, one RAS search (repetition 0, no latency steps,
   resolved to :data:`PILOT_RESOLUTION`). Its capacity fixes the latency steps every arm's search starts
   with (50 % and 80 % of it, ``--latency-shares``) and the start of their coarse climb (the first share).
2. **Calibration**: per workload, one submission under ``planner:auto+resumable`` for ``--calibration`` seconds, its
   first half at half RAS's pilot capacity and its second half at 1.5 times it (:data:`CALIBRATION_SHARES`;
   without a pilot, the start rate and three times it). Two rates let the service fit each executor's fixed
   CPU apart from its CPU per tuple (:mod:`storm_planner.metrics.per_tuple`), and they must reach the rates
   the placements will be judged at: a JVM executor's measured CPU at a low rate is mostly Storm's wait
   strategy spinning, which gives way under load, so costs fitted at 25 and 50 % of RAS's capacity
   overstated the spout and the ackers, and ``auto`` planned on them sustained 0.65 times what it did on
   costs remembered from a run up to 8,900 t/s (``benchmarks/reports/capacity-hetero-2.md``). Then the
   planner service's problem log holds the
   measured problem (:mod:`.measured`): ras+measured's declaration and λ\\* come from it. Kept under
   ``<out>/measured/<cluster>/<workload>.json`` for later sittings. Without a problem log (a service not
   started with ``--problem-log``) there is none: ras+measured's searches are skipped (and run when a later
   sitting has one) and λ\\* is left out.
3. **The searches**, in the run's order (:mod:`.order`), each one submission (:mod:`.runner`). Each finished
   search appends its steps to ``steps.csv`` and its result to ``searches.csv`` at once, so a stopped run
   resumes at the next search; a search whose topology never acked a tuple, or that could not run, runs
   again.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storm_planner_bench.capacity import measured as measured_costs
from storm_planner_bench.capacity.arms import Arm, job_name, parse_arm
from storm_planner_bench.capacity.order import Search
from storm_planner_bench.capacity.runner import Context, SearchRun, Timing
from storm_planner_bench.capacity.search import SearchResult, SearchSettings, plan_rates
from storm_planner_bench.common.report import append_csv_rows, drop_csv_rows
from storm_planner_bench.e2e.workloads import HeteroProfileError, Workload, needs_profile

PILOT_RESOLUTION = 0.10
PILOT = 0                  # the pilot's repetition number
# Resumable (the replay spouts keep checkpoints in every submission): auto's one correction may then move the
# spout, so the calibration measures a corrected placement nearer capacity. Not resumable, the 2 Mbit/s
# cluster's calibration kept its declared placement, spread over four nodes, and its two rates processed
# 1,960 and 2,423 t/s: too close to fit the fixed CPU (benchmarks/reports/capacity-links-1).
CALIBRATION_ARM = "planner:auto+resumable"
CALIBRATION_SHARES = (0.5, 1.5)   # the calibration's rates, as shares of RAS's pilot capacity
STEPS_FILE, SEARCHES_FILE = "steps.csv", "searches.csv"
SEARCH_COLUMNS = ("cluster", "workload", "arm", "repetition", "position", "status", "capacity_tps", "bracket_low_tps",
                  "bracket_high_tps", "resolved", "steps", "inversions", "disturbed_windows", "stopped",
                  "start_rate", "latency_rates", "declared", "started", "seconds", "code")


@dataclass
class Plan:
    """How the searches of one cluster run: the knobs, and what the pilots and calibrations found."""

    factor: float
    resolution: float
    max_steps: int
    latency_shares: tuple[float, ...]
    pilot: bool
    start_rates: dict[str, float]                 # workload -> the start rate without a pilot
    calibration_s: float
    declared_share: float
    pilots: dict[str, float] = field(default_factory=dict)            # workload -> RAS's pilot capacity (per spout)
    measured: dict[str, Any] = field(default_factory=dict)            # workload -> (saved fields, problem)

    def settings(self, workload: Workload, pilot: bool = False) -> SearchSettings:
        kept = self.pilots.get(workload.name, 0.0)
        if pilot or not kept:
            return SearchSettings(self.start_rates[workload.name], self.factor,
                                  PILOT_RESOLUTION if pilot else self.resolution, (), self.max_steps)
        latency = plan_rates(kept, self.latency_shares)
        return SearchSettings(latency[0] if latency else kept / 2, self.factor, self.resolution, latency,
                              self.max_steps)


@dataclass
class Sitting:
    """One cluster's run: the bench (cluster up), where rows go, and the searches' context."""

    bench: Any
    cluster: str
    description: Any
    out: Path
    header: list[str]
    timing: Timing
    plan: Plan
    code: str
    progress: Callable[[str], None]
    profiles: Any = None
    done: set[tuple[str, str, str, str]] = field(default_factory=set)

    # -- pilots and calibrations --------------------------------------------------------------------------
    def pilots(self, workloads: Sequence[Workload], results: dict[tuple[str, str, str, str], dict[str, str]]) -> None:
        """Each workload's pilot: from ``searches.csv`` when done, else run now."""
        if not self.plan.pilot:
            return
        arm = parse_arm("ras")
        for workload in workloads:
            key = (self.cluster, workload.name, arm.label, str(PILOT))
            if key not in self.done:
                self.progress(f"pilot: RAS's capacity on {workload.name} ({self.cluster})")
                row = self.search(workload, arm, Search(self.cluster, workload.name, arm.label, PILOT), pilot=True)
                results[key] = {k: str(v) for k, v in row.items()}
            found = _number(results.get(key, {}).get("capacity_tps"))
            if found > 0:
                self.plan.pilots[workload.name] = found / workload.sources

    def calibrate(self, workloads: Sequence[Workload]) -> None:
        """Each workload's measured problem: kept from an earlier sitting, else calibrated now (not with a
        calibration of 0 s)."""
        for workload in workloads:
            path = self.measured_path(workload)
            kept = measured_costs.load_measured(path)
            if kept is None and self.plan.calibration_s > 0:
                kept = self._calibrate(workload, path)
            if kept is not None:
                self.plan.measured[workload.name] = kept

    def measured_path(self, workload: Workload) -> Path:
        return self.out / "measured" / self.cluster / f"{workload.name}.json"

    def _calibrate(self, workload: Workload, path: Path) -> tuple[dict[str, Any], Any] | None:
        from storm_planner.cluster.nimbus_restart import switch_scheduler
        from storm_planner.submit.operations import SubmitError
        from storm_planner_bench.common.cluster import kill_and_wait
        from storm_planner_bench.e2e.cells import submit_workload, wait_first_ack

        log = problem_log_of(self.bench.cluster)
        if log is None:
            self.progress(f"warning: the planner service keeps no problem log here: no measured problem of "
                          f"{workload.name} (ras+measured is skipped, λ* left out)")
            return None
        kept = self.plan.pilots.get(workload.name)
        base = kept if kept else self.plan.start_rates[workload.name] / CALIBRATION_SHARES[0]
        steps = calibration_steps(base, self.plan.calibration_s)
        self.progress(f"calibration: {workload.name} under {CALIBRATION_ARM} at "
                      f"{' then '.join(f'{r:g} t/s for {s:g} s' for r, s in steps)} ({self.cluster})")
        scheduler = parse_arm(CALIBRATION_ARM).scheduler
        switch_scheduler(self.bench.cluster, scheduler.nimbus)
        scratch = self.bench.work / f"{self.cluster}-calibration-{workload.name}"
        scratch.mkdir(parents=True, exist_ok=True)
        rate_file = scratch / "rate"
        rate_file.write_text(f"{steps[0][0]:g}")
        submitted = time.time()
        try:
            submission = submit_workload(self.bench, workload, steps[0][0], scheduler, scratch,
                                         job_name(workload.name),
                                         extra={f"{workload.prefix}.replay_rate_file": str(rate_file)})
        except SubmitError as error:
            self.progress(f"  calibration not running: {error}")
            kill_and_wait(self.bench.nimbus, job_name(workload.name))
            return None
        try:
            if not wait_first_ack(scratch / "times", submitted + self.bench.timing.start_s):
                self.progress("  calibration: no tuple acked")
                return None
            for step_rate, seconds in steps:
                rate_file.write_text(f"{step_rate:g}")
                time.sleep(seconds)
            found = measured_costs.latest_measured(measured_costs.read_problem_log(log, submission.id))
        finally:
            kill_and_wait(self.bench.nimbus, job_name(workload.name), submission.id)
        if found is None:
            self.progress(f"  calibration: the service logged no measured problem of {workload.name}")
            return None
        record, problem = found
        extra = self._computed(problem)
        measured_costs.save_measured(path, record, extra)
        self.progress(f"  measured at {problem.costs.reference_rate:g} t/s: λ* {extra.get('lambda_star_tps')} t/s, "
                      f"ras+measured declared at {extra.get('declaration', {}).get('rate')} t/s")
        return measured_costs.load_measured(path)

    def _computed(self, problem: Any) -> dict[str, Any]:
        """λ* and ras+measured's declaration from a measured problem, on this cluster."""
        extra: dict[str, Any] = {"cluster": self.cluster}
        on_cluster = measured_costs.on_cluster(problem, self.description)
        try:
            extra["lambda_star_tps"] = round(measured_costs.rate_bound(on_cluster), 1)
        except Exception as error:   # noqa: BLE001 - the bound is a figure of the report, not the run's
            self.progress(f"  λ* not computed: {error}")
        capacities = {s.name: s.cpu for s in self.description.supervisors}
        try:
            extra["declaration"] = measured_costs.declaration(problem, capacities, self.plan.declared_share).to_dict()
        except ValueError as error:
            self.progress(f"  ras+measured: {error}")
        return extra

    # -- searches --------------------------------------------------------------------------------------
    def search(self, workload: Workload, arm: Arm, where: Search, pilot: bool = False) -> dict[str, Any]:
        """Run one search and append its rows; returns its ``searches.csv`` row."""
        settings = self.plan.settings(workload, pilot)
        context = Context(self.cluster, where.repetition)
        saved = self.plan.measured.get(workload.name)
        declared = ""
        if saved is not None:
            context.problem = measured_costs.on_cluster(saved[1], self.description)
            context.predict = measured_costs.predicted_rate
        if arm.measured:
            declaration = (saved[0].get("declaration") if saved else None) or {}
            if not declaration:
                return self._not_run(where, settings, "not run: no measured problem to declare from")
            declared = f"{declaration['rate']:g} t/s: " + ", ".join(
                f"{c} {v:g}" for c, v in sorted(declaration["cpu"].items()))
            context.extra.update(measured_costs.Declaration(declaration["rate"], declaration["cpu"]).options(
                workload.prefix))
        if needs_profile(arm.scheduler):
            try:
                context.profile = self.profiles.text(self.bench, workload)
            except HeteroProfileError as error:   # a bad saved profile, or profiling failed: the others run
                return self._not_run(where, settings, f"not run: {error}"[:300])
        started = time.time()
        result, rows = SearchRun(self.bench, workload, arm, context, self.timing).run(settings)
        status = rows[0]["status"] if rows else result.stopped or "not scheduled"
        row = search_row(where, workload, result, settings, status, rows)
        row.update({"declared": declared, "started": round(started), "seconds": round(time.time() - started),
                    "code": self.code})
        self._append(where, rows, row)
        return row

    def _not_run(self, where: Search, settings: SearchSettings, status: str) -> dict[str, Any]:
        self.progress(f"  {where.arm}: {status}")
        row = {"cluster": where.cluster, "workload": where.workload, "arm": where.arm,
               "repetition": where.repetition, "position": where.position, "status": status,
               "start_rate": f"{settings.start_rate:g}", "code": self.code}
        self._append(where, [], row)
        return row

    def _append(self, where: Search, rows: list[dict[str, Any]], row: dict[str, Any]) -> None:
        steps, searches = self.out / STEPS_FILE, self.out / SEARCHES_FILE
        drop_csv_rows(steps, self.header, lambda r: _key(r) == where.key)        # an earlier try's
        drop_csv_rows(searches, list(SEARCH_COLUMNS), lambda r: _key(r) == where.key)
        append_csv_rows(steps, self.header, [{**r, "code": self.code} for r in rows])
        append_csv_rows(searches, list(SEARCH_COLUMNS), [row])


def search_row(where: Search, workload: Workload, result: SearchResult, settings: SearchSettings, status: str,
               rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A search's result in offered t/s (every spout's rate together)."""
    kept, missed = result.kept, result.missed
    return {"cluster": where.cluster, "workload": where.workload, "arm": where.arm, "repetition": where.repetition,
            "position": where.position, "status": status,
            "capacity_tps": round(workload.offered(kept), 1) if kept else (0.0 if status == "ran" else ""),
            "bracket_low_tps": round(workload.offered(kept), 1) if status == "ran" else "",
            "bracket_high_tps": round(workload.offered(missed), 1) if math.isfinite(missed) else "",
            "resolved": int(result.resolved(settings.resolution)), "steps": len(result.steps),
            "inversions": result.inversions,
            "disturbed_windows": sum(1 for r in rows if str(r.get("verdict", "")).startswith("disturbed")),
            "stopped": result.stopped, "start_rate": f"{settings.start_rate:g}",
            "latency_rates": " ".join(f"{r:g}" for r in settings.latency_rates)}


def calibration_steps(base: float, seconds: float,
                      shares: Sequence[float] = CALIBRATION_SHARES) -> list[tuple[float, float]]:
    """The calibration's (rate, seconds) steps: an equal part of ``seconds`` at each share of ``base`` (RAS's
    pilot capacity), rates to three significant figures as the searches write them."""
    if not (math.isfinite(base) and base > 0 and math.isfinite(seconds) and seconds > 0 and shares
            and all(math.isfinite(s) and s > 0 for s in shares)):
        raise ValueError(f"a calibration needs a positive rate, duration and shares, not {base!r} t/s for "
                         f"{seconds!r} s at {tuple(shares)!r}")
    return [(float(f"{base * share:.3g}"), seconds / len(shares)) for share in shares]


def finished(rows: Sequence[dict[str, str]]) -> set[tuple[str, str, str, str]]:
    """Keys of the searches done: ran (or not scheduled), not those that never acked or did not run."""
    return {_key(r) for r in rows if not str(r.get("status", "")).startswith(("no tuple acked", "not run"))}


def problem_log_of(cluster: Any) -> Path | None:
    """The planner service's problem log (``serve --problem-log``), where the cluster keeps one."""
    path = getattr(cluster, "problem_log", None)
    return Path(path) if path else None


def _key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (str(row.get("cluster")), str(row.get("workload")), str(row.get("arm")), str(row.get("repetition")))


def _number(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan
