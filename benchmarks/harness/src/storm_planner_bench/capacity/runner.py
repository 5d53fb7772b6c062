"""One capacity search on the running cluster: one submission, its rate changed step by step.

The search (:mod:`.search`) asks for a rate; the first ask submits the workload at it (its spouts read their
rate from a file, ``<prefix>.replay_rate_file``), waits for the first acked tuple and lets it settle
``settle_s``; every later ask writes the new rate and lets the topology adjust ``step_s``. Then a window of
``measure_s``: the supervisors' CPU and links (``bench e2e``'s :func:`~storm_planner_bench.e2e.cells.measure_window`),
the host's CPU outside the cluster (:mod:`.disturbance`; a disturbed window is measured again, up to
``reruns`` times, and so is a missed first window that processed more than it was offered: the topology
still catching up the backlog of its start, which RAS's first step of the second capacity run did, p99
9.1 s; a window missed on its p99 alone is measured once more, as RAS's A/A copy's step at 4,136 t/s on trends
in ``capacity-trends-links-1`` would have been: 100 % processed, lag flat, p99 697 ms, where the other copy
went on to 4,756 t/s), the placement at its end; ``grace_s`` later the spouts' time log is read (incrementally)
and the window judged by :func:`~storm_planner_bench.capacity.rule.sustained`, tuples not acked by then
counting at the histogram's top. A recovery hold writes its low rate and waits ``hold_s``.

An arm with ``+rebalance`` lets the service apply its planner's parallelism advice once, before the search
measures: after the first ack the runner waits up to ``REBALANCE_DECIDE_S`` for an answer that asks Nimbus
for a rebalance, then for the rebalance's record in the plan log and the first ack after it, and settles
again. A rebalance deactivates the topology and restarts workers, which no window should straddle.

After each window the feed is checked: a window during which a spout's feed ran dry would read as falling
behind, so it ends the search (its row says so) and asks for a larger feed. When the search ends the spouts stop, the
tuples in flight drain (``drain_s`` at most), and each step's figures are computed again from the final log:
its latency histograms (a tuple never acked now counts at the top as lost), what it processed, and the plans
the service answered during it. A step's row keeps the verdict the search acted on (``verdict``) and the
rule on the drained figures (``verdict_after_drain``).
"""
from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storm_planner.streaming.timelog import FLUSH_S, STOP_CHECK_S, TimesFollower, TupleTimes
from storm_planner_bench.capacity import disturbance
from storm_planner_bench.capacity.arms import Arm, job_name
from storm_planner_bench.capacity.latency import SpoutLag, encode, window_latency
from storm_planner_bench.capacity.rule import Verdict, sustained
from storm_planner_bench.capacity.search import SearchResult, SearchSettings, Step, search
from storm_planner_bench.capacity.verdicts import number
from storm_planner_bench.common.cluster import cpu_seconds, kill_and_wait
from storm_planner_bench.e2e.cells import Bench, Window, _placement, measure_window, wait_first_ack
from storm_planner_bench.e2e.ramp import plans_between
from storm_planner_bench.e2e.workloads import Workload

STEPS_RECORDS = "steps.jsonl"
PLAN_RECORDS = "plans.jsonl"    # the service's answers during each search (the cluster's plan log goes with it)
RECOVERY, DISTURBED, FEED_OUT, CATCHING_UP = "recovery", "disturbed", "feed ran out", "catching up"
P99_ALONE = "p99 alone"     # a window missed on its p99 alone, measured once more
CATCH_UP_SHARE = 1.01   # a first window that processed more than this share of the offered rate is catching up
POLL_S = 2.0
REBALANCE_DECIDE_S = 60.0    # after the first ack: how long an answer has to ask Nimbus for a rebalance
REBALANCE_DONE_S = 240.0     # then how long the rebalance may take: Storm's wait, the new workers' start
ASKING_NIMBUS = "rebalance: asking Nimbus"   # the service's note (storm_planner.service.planning.rebalance)


@dataclass(frozen=True)
class Timing:
    settle_s: float = 20.0
    step_s: float = 15.0
    measure_s: float = 30.0
    grace_s: float = 5.0
    drain_s: float = 60.0
    start_s: float = 180.0
    hold_s: float = 45.0
    reruns: int = 2
    disturbed_cpu: float = disturbance.DISTURBED_CPU


@dataclass
class Context:
    """What a search needs besides the cluster: the key of its rows and what goes into its submission."""

    cluster: str
    repetition: int
    extra: dict[str, Any] = field(default_factory=dict)      # topology options on top of the workload's
    profile: str | None = None                               # planner:hetero's profile (JSON text)
    problem: Any = None                                      # the measured problem, for the model's prediction
    predict: Callable[[Any, list[dict]], float] | None = None


class _NotRunning(Exception):
    """The topology never acked a tuple (``ran`` False), or the feed is running out: the search cannot go on."""

    def __init__(self, message: str, ran: bool = True) -> None:
        super().__init__(message)
        self.ran = ran


@dataclass
class _Window:
    rate: float
    role: str
    started: float              # when the step's rate was written (the first step: submission)
    window: Window
    outside_pct: float
    placement: list[dict]
    verdict: Verdict
    disturbed: bool
    recovery: bool = False
    catching_up: bool = False   # the submission's first window, missed while it processed a backlog


class SearchRun:
    def __init__(self, bench: Bench, workload: Workload, arm: Arm, context: Context, timing: Timing) -> None:
        self.bench, self.workload, self.arm, self.context, self.timing = bench, workload, arm, context, timing
        self.name = f"{context.cluster}-{workload.name}-{arm.file_name}-{context.repetition}"
        self.scratch = bench.work / self.name
        self.rate_file = self.scratch / "rate"
        self.follower = TimesFollower(self.scratch / "times")
        self.topology_id: str | None = None
        self.submitted = math.nan
        self.windows: list[_Window] = []
        self.feed_records = feed_records(workload, bench.feeds.get(workload.feed_kind))

    # -- the search's two callbacks -----------------------------------------------------------------
    def measure(self, rate: float, role: str) -> bool:
        started = time.time()
        if self.topology_id is None:
            self._submit(rate)
            time.sleep(self.timing.settle_s)
            if self.arm.scheduler.rebalance and self._await_rebalance():
                time.sleep(self.timing.settle_s)
        else:
            self.rate_file.write_text(f"{rate:g}")
            time.sleep(self.timing.step_s)
        first = not self.windows
        confirmed = False   # a p99-alone miss is measured once more, not up to reruns times
        for attempt in range(self.timing.reruns + 1):
            taken = self._window(rate, role, started, first and attempt == 0)
            self.windows.append(taken)
            self._check_feed(taken)
            again = _measure_again(taken, confirmed)
            self.bench.progress(f"    {role} {rate:g} t/s: {taken.verdict.text}"
                                + (f" ({taken.verdict.why})" if taken.verdict.why else "")
                                + (f"; disturbed ({taken.outside_pct:.0f} % of a core outside the cluster)"
                                   if taken.disturbed else "")
                                + ("; catching up its start's backlog" if taken.catching_up else "")
                                + ("; missed on its p99 alone: measured once more" if again == P99_ALONE else ""))
            if again is None or attempt == self.timing.reruns:
                return taken.verdict.sustained
            taken.role = again
            confirmed = confirmed or again == P99_ALONE
        return False   # not reached

    def recover(self, rate: float) -> None:
        started = time.time()
        self.rate_file.write_text(f"{rate:g}")
        self.bench.progress(f"    recovery hold at {rate:g} t/s for {self.timing.hold_s:g} s")
        time.sleep(self.timing.hold_s)
        self.windows.append(_Window(rate, RECOVERY, started, Window(started, time.time(), {}, {}, {}, {}),
                                    math.nan, [], Verdict(True), False, recovery=True))

    # -- one submission -------------------------------------------------------------------------------
    def run(self, settings: SearchSettings) -> tuple[SearchResult, list[dict[str, Any]]]:
        """Search; returns the result and a row per step (recovery holds included)."""
        from storm_planner.cluster.nimbus_restart import switch_scheduler
        from storm_planner.submit.operations import SubmitError

        switch_scheduler(self.bench.cluster, self.arm.scheduler.nimbus)
        self.scratch.mkdir(parents=True, exist_ok=True)
        status = "ran"
        try:
            result = search(self.measure, self.recover, settings)
        except SubmitError as error:
            self.bench.progress(f"  {self.arm.label}: {self.workload.name} not running: {error}")
            result, status = SearchResult(stopped="not scheduled"), f"not scheduled: {error}"[:300]
        except _NotRunning as error:
            self.bench.progress(f"  {error}")
            result = SearchResult([Step(w.rate, w.role, w.verdict.sustained) for w in self.windows
                                   if not w.recovery and w.role not in (DISTURBED, FEED_OUT, CATCHING_UP, P99_ALONE)],
                                  stopped=str(error))
            status = "ran" if error.ran else str(error)
        finally:
            times = self._finish()
        return result, self._rows(times, status)

    def _submit(self, rate: float) -> None:
        from storm_planner_bench.e2e.cells import submit_workload

        self.rate_file.write_text(f"{rate:g}")
        extra = {**self.context.extra, f"{self.workload.prefix}.replay_rate_file": str(self.rate_file)}
        self.submitted = time.time()
        submission = submit_workload(self.bench, self.workload, rate, self.arm.scheduler, self.scratch,
                                     job_name(self.workload.name), extra=extra, profile=self.context.profile)
        self.topology_id = submission.id
        if not wait_first_ack(self.scratch / "times", self.submitted + self.bench.timing.start_s):
            raise _NotRunning(f"no tuple acked within {self.bench.timing.start_s:.0f} s of submission", ran=False)

    def _await_rebalance(self) -> bool:
        """Wait for the rebalance the service decides at the start (see the module docstring); whether one
        was asked for. One that fails or never finishes leaves the search on the executors it has; a topology
        that acks nothing after its rebalance ends the search (:class:`_NotRunning`)."""
        from storm_planner.service.planning.planlog import read_plan_log

        log, topology = self.bench.cluster.plan_log, self.topology_id
        deadline = time.time() + REBALANCE_DECIDE_S
        while not any(ASKING_NIMBUS in note for plan in read_plan_log(log) if plan.get("topology") == topology
                      for note in plan.get("notes") or ()):
            if time.time() >= deadline:
                self.bench.progress(f"    no rebalance asked for within {REBALANCE_DECIDE_S:g} s of the first ack")
                return False
            time.sleep(POLL_S)
        deadline = time.time() + REBALANCE_DONE_S
        while not (done := [r for r in read_plan_log(log, "rebalance") if r.get("topology") == topology]):
            if time.time() >= deadline:
                self.bench.progress(f"    the rebalance did not finish within {REBALANCE_DONE_S:g} s")
                return True
            time.sleep(POLL_S)
        record = done[-1]
        self.bench.progress(f"    rebalance {record.get('outcome')}: {record.get('executors')} "
                            f"({record.get('message', '')})"[:300])
        if not wait_first_ack_after(self.follower, number(record.get("time")), time.time() + self.bench.timing.start_s):
            raise _NotRunning(f"no tuple acked within {self.bench.timing.start_s:.0f} s of the rebalance")
        return True

    def _window(self, rate: float, role: str, started: float, first: bool = False) -> _Window:
        before = self._cpu()
        window = measure_window(self.bench)
        after = self._cpu()
        placement = self.bench.cluster.assignment(self.topology_id)
        time.sleep(self.timing.grace_s)
        times = self.follower.update()
        outside = before.outside_pct(after)
        offered = self.workload.offered(rate)
        figures = step_figures(times, window, offered)
        verdict = sustained(figures)
        return _Window(rate, role, started, window, outside, placement, verdict, outside > self.timing.disturbed_cpu,
                       catching_up=first and catching_up(verdict.sustained, figures["processed_tps"], offered))

    def _cpu(self) -> disturbance.CpuSnapshot:
        return disturbance.snapshot(lambda: cpu_seconds(self.bench.accounts),
                                    lambda: disturbance.daemon_pids(self.bench.cluster.run_dir), time.monotonic)

    def _check_feed(self, taken: _Window) -> None:
        """A window during which a spout's feed ran dry (fewer tuples left than a second's worth) measured the
        feed, not the topology: the search ends there (its step marked so), asking for a larger feed."""
        if self.feed_records is None:
            return
        left = tuples_left(self.follower.times, self.feed_records)
        if left is not None and left < taken.rate:
            taken.role = FEED_OUT
            raise _NotRunning(f"stopped: a spout's feed ran out during the step at {taken.rate:g} t/s "
                              "(give --feed-records more)")

    def _finish(self) -> TupleTimes:
        """Stop the spouts, drain, kill the topology; the final times."""
        if self.topology_id is None:
            with contextlib.suppress(Exception):
                kill_and_wait(self.bench.nimbus, job_name(self.workload.name))
            return self.follower.update()
        (self.scratch / "stop").write_text("")
        try:
            return drain(self.follower, self.timing.drain_s)
        finally:
            kill_and_wait(self.bench.nimbus, job_name(self.workload.name), self.topology_id)

    # -- rows -------------------------------------------------------------------------------------------
    def _rows(self, times: TupleTimes, status: str) -> list[dict[str, Any]]:
        from storm_planner.service.planning.planlog import read_plan_log

        answered = [a for a in read_plan_log(self.bench.cluster.plan_log)
                    if a.get("topology") == self.topology_id and not a.get("error")]
        starts = [w.started for w in self.windows] + [math.inf]
        first = next((w.window.begin for w in self.windows if not w.recovery), math.nan)
        save_plans(self.bench.out, {"cluster": self.context.cluster, "workload": self.workload.name,
                                    "arm": self.arm.label, "repetition": self.context.repetition},
                   answered, first)
        lags = SpoutLag(times)
        rows = []
        for index, taken in enumerate(self.windows):
            key = {"cluster": self.context.cluster, "workload": self.workload.name, "arm": self.arm.label,
                   "repetition": self.context.repetition, "step": index + 1, "rate": f"{taken.rate:g}",
                   "offered_tps": round(self.workload.offered(taken.rate), 1), "role": taken.role,
                   "status": status}
            if taken.recovery:
                rows.append({**key, "verdict": RECOVERY, "measure_s": round(taken.window.seconds, 1)})
                continue
            figures = step_figures(times, taken.window, self.workload.offered(taken.rate), keep=True, lags=lags)
            histograms = figures.pop("_histograms")
            after = sustained(figures)
            figures.update(taken.window.nodes(figures["acked_in_window"]))
            figures.update(_placement(taken.placement))
            figures.update(plans_between(answered, taken.started, starts[index + 1]))
            predicted = (self.context.predict(self.context.problem, taken.placement)
                         if self.context.predict and self.context.problem is not None and taken.placement else math.nan)
            verdict = {DISTURBED: "disturbed: measured again", CATCHING_UP: "catching up its start: measured again",
                       P99_ALONE: "p99 alone: measured again", FEED_OUT: FEED_OUT}.get(taken.role, taken.verdict.text)
            rows.append({**key, "verdict": verdict,
                         "why": taken.verdict.why, "verdict_after_drain": after.text,
                         "outside_cpu_pct": round(taken.outside_pct, 1), "disturbed": int(taken.disturbed),
                         "window_start_s": round(taken.window.begin - first, 1),
                         "measure_s": round(taken.window.seconds, 1),
                         "predicted_tps": round(predicted, 1) if math.isfinite(predicted) else predicted, **figures})
            save_step_record(self.bench.out, key, histograms, taken.placement)
        return rows


def wait_first_ack_after(follower: TimesFollower, after: float, deadline: float) -> bool:
    """Whether the spouts logged an ack later than ``after`` (epoch s) before ``deadline`` (wall clock)."""
    while time.time() < deadline:
        if any(at > after for at in follower.update().acked.values()):
            return True
        time.sleep(POLL_S)
    return False


def _measure_again(taken: _Window, confirmed: bool) -> str | None:
    """Why a window is measured again (its role then), or None when its verdict stands: disturbed, a start
    catching up, or, once per step, a miss on the p99 alone."""
    if taken.disturbed:
        return DISTURBED
    if taken.catching_up:
        return CATCHING_UP
    if taken.verdict.p99_alone and not confirmed:
        return P99_ALONE
    return None


def catching_up(sustained: bool, processed_tps: float, offered_tps: float) -> bool:
    """Whether a missed window is a topology catching up a backlog (it processed more than it was offered)
    rather than one falling behind."""
    return not sustained and processed_tps > CATCH_UP_SHARE * offered_tps


def step_figures(times: TupleTimes, window: Window, offered: float, keep: bool = False,
                 lags: SpoutLag | None = None) -> dict[str, Any]:
    """A window's figures from the spouts' time log (``keep``: with its encoded histograms under
    ``_histograms``; ``lags``: the log's lags, read once for all its windows)."""
    seconds = window.seconds
    latency = window_latency(times, window.begin, window.end, offered, lags)
    acked = times.acked_between(window.begin, window.end)
    figures: dict[str, Any] = {
        "processed_tps": round(acked / seconds, 1), "emitted_tps": round(times.emitted_between(window.begin, window.end) / seconds, 1),
        "acked_in_window": acked, "failed": times.failed_between(window.begin, window.end),
        "replayed": times.replayed_between(window.begin, window.end), **latency.figures(),
    }
    figures["lost"] = figures["unacked"]
    if keep:
        figures["_histograms"] = {"due": encode(latency.due), "emit_to_ack": encode(latency.emit_to_ack)}
    return {"offered_tps": round(offered, 1), **figures}


def drain(follower: TimesFollower, drain_s: float) -> TupleTimes:
    """The times once every emitted tuple was acked (two reads a flush apart agree), or after ``drain_s``
    (``bench e2e``'s :func:`~storm_planner_bench.e2e.cells.drain`, read incrementally)."""
    begun = time.monotonic()
    deadline, settled = begun + drain_s, begun + STOP_CHECK_S + FLUSH_S + POLL_S
    while True:
        times = follower.update()
        if not times.never_acked() and time.monotonic() >= settled:
            time.sleep(FLUSH_S + 0.5)
            times = follower.update()
            if not times.never_acked():
                return times
        if time.monotonic() >= deadline:
            time.sleep(FLUSH_S + 0.5)
            return follower.update()
        time.sleep(POLL_S)


def feed_records(workload: Workload, root: Path | None) -> int | None:
    """The fewest records of the feeds the workload's spouts replay (their ``_feed.json``), None if unknown."""
    if root is None:
        return None
    counts = []
    for path in workload.feed_options(root).values():
        summary = Path(path) / "_feed.json"
        if Path(path).is_dir():
            try:
                counts.append(int(json.loads(summary.read_text())["records"]))
            except (OSError, ValueError, KeyError, TypeError):
                return None
    return min(counts) if counts else None


def tuples_left(times: TupleTimes, records: int) -> float | None:
    """Tuples the spout tasks' feeds have left at the pace they turned records into tuples so far (the least
    over tasks); ids are ``<task>/<task index>:<record>:<position>``. None before any emit."""
    used: dict[str, int] = {}
    tuples: dict[str, int] = {}
    for key in times.emitted:
        task, _, message = key.rpartition("/")
        parts = message.split(":")
        if len(parts) == 3 and parts[1].isdigit():
            used[task] = max(used.get(task, 0), int(parts[1]) + 1)
            tuples[task] = tuples.get(task, 0) + 1
    if not used:
        return None
    return min(max(0, records - used[t]) * tuples[t] / used[t] for t in used)


def save_step_record(out: Path, key: Mapping[str, Any], histograms: Mapping[str, str], placement: list[dict]) -> None:
    """Append a step's histograms and placement to ``<out>/steps.jsonl`` (one line a step)."""
    record = {"key": {k: key[k] for k in ("cluster", "workload", "arm", "repetition", "step")},
              "rate": key["rate"], "role": key["role"], "histograms": dict(histograms),
              "executors": [{k: e[k] for k in ("executor", "component", "node", "port")} for e in placement
                            if not str(e["component"]).startswith("__system")]}
    out.mkdir(parents=True, exist_ok=True)
    with (out / STEPS_RECORDS).open("a") as handle:
        handle.write(json.dumps(record) + "\n")


def save_plans(out: Path, key: Mapping[str, Any], answered: list[dict[str, Any]], first: float) -> None:
    """Append the service's answers during one search to ``<out>/plans.jsonl``, one line each: ``t_s``, seconds
    from the first measured window (negative: before it), the executors it moved, its figures and notes. What
    says which gate moved what, once the cluster and its plan log are gone."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / PLAN_RECORDS).open("a") as handle:
        before: Mapping[str, Any] = {}
        for plan in answered:
            assignments = plan.get("assignments") or {}
            moved = sum(1 for e, slot in assignments.items() if before.get(e) not in (None, slot))
            at = number(plan.get("time")) - first
            handle.write(json.dumps({"key": dict(key), "t_s": round(at, 1) if math.isfinite(at) else None,
                                     "moved": moved, "figures": plan.get("figures") or {},
                                     "notes": plan.get("notes") or []}) + "\n")
            before = assignments


def read_step_records(out: Path) -> dict[tuple[str, str, str, str, str], dict[str, Any]]:
    """Every step's record by (cluster, workload, arm, repetition, step) as text; the last of a key counts
    (a search run again appends anew)."""
    found: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
    path = out / STEPS_RECORDS
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
            k = record["key"]
            found[(str(k["cluster"]), str(k["workload"]), str(k["arm"]), str(k["repetition"]), str(k["step"]))] = record
        except (ValueError, KeyError, TypeError):
            continue
    return found
