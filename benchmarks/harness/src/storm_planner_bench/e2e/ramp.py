"""A stepped rate ramp of ``storm-planner bench e2e --stepped``: one submission, its offered rate raised
step by step, each step measured like a cell.

A ramp of separate cells (``--rate 300,400,500`` alone) submits the workload once per rate and pays
the start-up and the settling each time, about three minutes a rate. A stepped ramp submits it once per
scheduler and repetition: after the first ack and ``settle_s`` at the first rate, each step writes its
rate to the replay spout's rate file (``<prefix>.replay_rate_file``, read every half second), lets the
topology adjust for ``step_s`` (queues fill or drain; the planner service may re-plan on the new loads),
then measures ``measure_s`` exactly as a cell does. The ramp stops at the first step whose window did
not keep up (:func:`clearly_behind`): the rates above it are recorded as not run, and the report counts
them as not sustained. One spout stop and drain close the ramp.

Each step becomes one row of ``cells.csv`` under its own rate, so the report's tables, ratios and
highest sustained rate read a stepped ramp as they read cells. What differs, per step:

- tuples lost: those first emitted during the step (from its rate change until the next one; the
  first step from submission, the last until the spout stopped) and never acked after the drain;
- re-plans and migrations: the plans the service answered during the step, and what they moved;
- the time to the first ack and its phases: the ramp's, on every step.

A step at a rate differs from a cell at that rate: it starts from the placement and queues the lower
rates left, which is how the rate changes under a running topology (topDown §7.4's reconfiguration
under varying rates), and a re-plan during the ramp restarts workers inside a later step.

:func:`run_schedule` is the same machinery for any sequence of rates (falling as well as rising, a rate
repeated) that may run every step whatever happens: ``storm-planner bench topdown-real``'s rate schedule
(topDown §7.4, Fig. 9), its rows keyed by step rather than by rate.
"""
from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.streaming.timelog import TupleTimes, read_times
from storm_planner_bench.common.cluster import kill_and_wait
from storm_planner_bench.e2e.cells import (
    FLUSH_S,
    Bench,
    Window,
    _placement,
    _plans,
    _save_latency_quantiles,
    _save_startup,
    _throughput_and_latency,
    cell_name,
    cell_status,
    drain,
    measure_window,
    save_executors,
    submit_workload,
    wait_first_ack,
)
from storm_planner_bench.e2e.workloads import Scheduler, Workload

# What a step must do to let the ramp go on (the report's own verdict, SUSTAINED_*, reads the drained
# figures): acks in the window at this share of the offered rate, and no p99 above this bound even
# counting every tuple of the window still unacked as acked now (a lower bound of its latency).
KEEP_UP_SHARE, KEEP_UP_P99_MS = 0.99, 1_000.0
NOT_RUN = "not run: the ramp stopped at {rate:g} t/s, which it did not keep up with"


def feed_tuples_needed(rates: Sequence[float], settle_s: float, step_s: float, measure_s: float,
                       start_s: float = 60.0) -> int:
    """Tuples a stepped ramp emits at most: the first rate while it starts (``start_s``, a generous
    start-up to the first ack) and settles, then every rate for its step and window. A feed of fewer
    records may run out mid-ramp (a record makes at least one tuple), which would read as falling behind."""
    first = rates[0] * (start_s + settle_s + measure_s)
    return math.ceil(first + sum(rate * (step_s + measure_s) for rate in rates[1:]))


def run_ramp(bench: Bench, workload: Workload, rates: Sequence[float], scheduler: Scheduler, repetition: int,
             profile: str | None = None) -> list[dict[str, Any]]:
    """Run one stepped ramp; returns a row per rate (figures absent where a step did not run)."""
    keys = [{"workload": workload.name, "rate": f"{rate:g}", "scheduler": scheduler.label, "repetition": repetition}
            for rate in rates]
    names = [cell_name(workload.name, rate, scheduler.label, repetition) for rate in rates]
    rows = run_schedule(bench, workload, rates, scheduler, keys, names, profile=profile)
    for row in rows:
        row.pop(WINDOW_START, None)   # cells.csv has no such columns
        row.pop(WINDOW_MOVES, None)
    return rows


# A schedule's rows also say when each step's window began (seconds after the first step's window began),
# and how many executors the plans answered from MOVES_BEFORE_WINDOW_S before it to its end moved: a move
# restarts workers for tens of seconds, so a window with moves near it may measure a placement in transit.
WINDOW_START, WINDOW_MOVES = "window_start_s", "moves_near_window"
MOVES_BEFORE_WINDOW_S = 60.0


def run_schedule(bench: Bench, workload: Workload, rates: Sequence[float], scheduler: Scheduler,
                 keys: Sequence[dict[str, Any]], names: Sequence[str], *, profile: str | None = None,
                 extra: dict[str, Any] | None = None, stop_behind: bool = True) -> list[dict[str, Any]]:
    """One submission of ``workload`` whose offered rate goes through ``rates`` in the order given (a
    schedule may fall and rise again, and repeat a rate), each step measured like a stepped ramp's; returns
    ``keys[i]`` and step i's figures (with :data:`WINDOW_START`) for every step. ``names[i]`` names step
    i's latency quantiles (and the first its start-up and plans). ``extra``: topology options on top of
    the workload's. ``stop_behind``: stop at the first step :func:`clearly_behind` (a ramp) or run every
    step whatever happens (a schedule over time). A topology that never acked a tuple stops either way."""
    from storm_planner.cluster.nimbus_restart import switch_scheduler
    from storm_planner.submit.operations import SubmitError

    if not (len(rates) == len(keys) == len(names)) or not rates:
        raise ValueError(f"a schedule needs a key and a name per rate: {len(rates)} rates, {len(keys)} keys, "
                         f"{len(names)} names")
    switch_scheduler(bench.cluster, scheduler.nimbus)
    scratch = bench.work / f"{names[0]}-ramp"
    scratch.mkdir(parents=True, exist_ok=True)
    rate_file = scratch / "rate"
    rate_file.write_text(f"{rates[0]:g}")
    job = f"e2e-{workload.name}"
    submitted = time.time()
    try:
        submission = submit_workload(bench, workload, rates[0], scheduler, scratch, job, profile=profile,
                                     extra={**(extra or {}), f"{workload.prefix}.replay_rate_file": str(rate_file)})
    except SubmitError as error:
        bench.progress(f"{scheduler.label}: {workload.name} not running: {error}")
        with contextlib.suppress(Exception):
            kill_and_wait(bench.nimbus, job)
        return [{**key, "status": f"not scheduled: {error}"[:300]} for key in keys]
    scheduled = time.time()
    try:
        steps = _steps(bench, submission.id, scratch, rate_file, list(rates), list(names), submitted, scheduled,
                       stop_behind, workload.sources)
    finally:
        kill_and_wait(bench.nimbus, job, submission.id)
    return [{**key, **step} for key, step in zip(keys, steps)]


def _steps(bench: Bench, topology_id: str, scratch: Path, rate_file: Path, rates: list[float], names: list[str],
           submitted: float, scheduled: float, stop_behind: bool, sources: int = 1) -> list[dict[str, Any]]:
    """Each step's figures (``sources``: spouts replaying at the rate each, so the topology is offered
    ``rate x sources``)."""
    times_dir = scratch / "times"
    status = "ran"
    if not wait_first_ack(times_dir, submitted + bench.timing.start_s):
        status = f"no tuple acked within {bench.timing.start_s:.0f} s of submission"
    time.sleep(bench.timing.settle_s)
    taken: list[tuple[float, Window, list[dict]]] = []   # (the step's start, its window, the placement after)
    for index, rate in enumerate(rates):
        started = time.time()
        if index:
            rate_file.write_text(f"{rate:g}")
            bench.progress(f"  step {index + 1}/{len(rates)}: {rate:g} t/s")
            time.sleep(bench.timing.step_s)
        window = measure_window(bench)
        taken.append((started if index else -math.inf, window, bench.cluster.assignment(topology_id)))
        time.sleep(FLUSH_S)   # the window's last acks reach the spout's log
        offered = rate * sources
        if status != "ran" or (stop_behind and clearly_behind(read_times(times_dir), window, offered, time.time())):
            break
    (scratch / "stop").write_text("")
    times = drain(times_dir, bench.timing.drain_s)
    found = _plans(bench.cluster.plan_log, topology_id, bench.out, names[0])
    answered = [a for a in read_plan_log(bench.cluster.plan_log) if a["topology"] == topology_id and not a.get("error")]
    bounds = [start for start, _, _ in taken] + [math.inf]
    first_window = taken[0][1].begin
    rows = []
    for index, (start, window, placement) in enumerate(taken):
        figures = _throughput_and_latency(times, window.begin, window.end, submitted)
        figures.update(window.nodes(figures["acked_in_window"]))
        figures.update(_placement(placement))
        figures.update(step_counts(times, start, bounds[index + 1]))
        figures.update(plans_between(answered, start, bounds[index + 1]))
        figures["submit_to_scheduled_s"] = round(scheduled - submitted, 1)
        _save_latency_quantiles(bench.out, names[index], times, window.begin, window.end)
        save_executors(bench.out, names[index], placement)
        if index == 0:
            _save_startup(bench.out, names[0],
                          bench.cluster.log_dir / "workers-artifacts" / topology_id, submitted, times)
        bench.progress(f"  {rates[index]:g} t/s: processed {figures['processed_tps']:.0f} t/s, p99 "
                       f"{figures['latency_p99_ms']:.0f} ms, lost {figures['lost']}, on {figures['placement']}")
        near = plans_between(answered, window.begin - MOVES_BEFORE_WINDOW_S, window.end)["migrations"]
        rows.append({"status": cell_status(status, found["plan_error"], found["plans"]),
                     "measure_s": round(window.seconds, 1), WINDOW_START: round(window.begin - first_window, 1),
                     WINDOW_MOVES: near, **figures})
    stopped = rates[len(taken) - 1]
    why = NOT_RUN.format(rate=stopped) if status == "ran" else f"not run: {status}"
    return rows + [{"status": why} for _ in rates[len(taken):]]


def clearly_behind(times: TupleTimes, window: Window, rate: float, now: float) -> bool:
    """Whether a step's window fell behind beyond doubt: acks in it below ``KEEP_UP_SHARE`` of ``rate``,
    or a p99 above ``KEEP_UP_P99_MS`` counting each tuple of the window not yet acked as acked ``now``."""
    if times.acked_between(window.begin, window.end) < KEEP_UP_SHARE * rate * window.seconds:
        return True
    latencies = [(times.acked.get(m, now) - at) * 1000.0 for m, at in times.emitted.items()
                 if window.begin <= at < window.end]
    return bool(latencies) and float(np.percentile(latencies, 99)) > KEEP_UP_P99_MS


def lost_between(times: TupleTimes, start: float, stop: float) -> int:
    """Tuples first emitted in [start, stop) and never acked."""
    return sum(1 for m, at in times.emitted.items() if start <= at < stop and m not in times.acked)


def step_counts(times: TupleTimes, start: float, stop: float) -> dict[str, int]:
    """A step's own tuple counts (the time log covers the whole ramp): tuples first emitted in [start, stop),
    how many of them were acked and lost, and the fails and replays that happened in it."""
    emitted, lost = times.emitted_between(start, stop), lost_between(times, start, stop)
    return {"emitted": emitted, "acked": emitted - lost, "lost": lost,
            "failed": times.failed_between(start, stop), "replayed": times.replayed_between(start, stop)}


def plans_between(answered: list[dict[str, Any]], start: float, stop: float) -> dict[str, Any]:
    """Of the service's plans for a topology (in order, each with its ``time``): those answered in
    [start, stop), how many of them re-planned (came after the first), and the executors they moved."""
    plans = replans = moved = 0
    for index, plan in enumerate(answered):
        if not start <= float(plan.get("time", math.nan)) < stop:
            continue
        plans += 1
        if index:
            replans += 1
            before = answered[index - 1]["assignments"]
            moved += sum(1 for e, slot in plan["assignments"].items() if before.get(e) not in (None, slot))
    return {"plans": plans, "replans": replans, "migrations": moved}
