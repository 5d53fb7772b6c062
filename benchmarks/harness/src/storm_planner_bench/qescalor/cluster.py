"""The cluster experiments of ``storm-planner bench qescalor`` (root, cgroup v1 CPU quotas, a local cluster).

* ``cluster`` (Table 2 on the local cluster): DSA and FSSA sampling the built-in work bolt's throughput
  under CPU quotas of 0.2-2.0 cores (:mod:`storm_planner.scaling.live.oopser`).
* ``replay``: a day's diurnal input compressed into minutes, fed to the reliable pipeline of the metrics
  tests (acking on, replays, every tuple's emit and ack time) while ``scale run``'s controller scales its
  ``relay`` (SHA-256 work per tuple) within its task count: instances per epoch, end-to-end latency and
  backlog per epoch, tuples lost, and the cost — the run's own, and offline QCESA against CBA r1..r4 on the
  rates the run measured.
"""
from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner.api import scale
from storm_planner.scaling.generator import diurnal_rates
from storm_planner.scaling.performance import PerformanceModel
from storm_planner_bench.common.report import pyplot, stamped_progress, write_table

_progress = stamped_progress("qescalor bench")


# -- Table 2 on the real cluster -------------------------------------------------------------------

CLUSTER_LEVELS = [(round(0.1 * i, 1), 33.5) for i in range(2, 21)]   # 0.2 .. 2.0 cores
CLUSTER_MEASURE_WINDOWS = 3     # 2-s windows per provision
CLUSTER_TOLERANCE = 0.15        # about the run-to-run spread of one provision's throughput on this machine


def bench_cluster(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    """DSA and FSSA on the local cluster (``storm-planner scale sample``): the work bolt's throughput
    under CPU quotas. FSSA step 1 measures every provision (the baseline); FSSA steps 2-5 are its
    every k-th measurement; DSA runs on its own. Each sample set is fitted by the random forest and
    judged against the baseline, as in Table 2."""
    from storm_planner.cluster import default_description
    from storm_planner.scaling.live.oopser import SamplerSettings, sample_on_cluster

    levels = CLUSTER_LEVELS[::3] if quick else CLUSTER_LEVELS
    runs = {}
    for label, method, tolerance in (("FSSA-1", "fssa", 0.03), ("DSA", "dsa", 0.03),
                                     (f"DSA, tolerance {CLUSTER_TOLERANCE:.0%}", "dsa", CLUSTER_TOLERANCE)):
        settings = SamplerSettings(levels=levels, method=method, step=1, tolerance=tolerance,
                                   measure_windows=CLUSTER_MEASURE_WINDOWS)
        with tempfile.TemporaryDirectory(prefix=f"oopser-{method}-") as work:  # cluster state and logs
            runs[label] = sample_on_cluster(default_description(), settings, Path(work), progress=_progress)
    return write_cluster_report(out, runs, seed, command)


def write_cluster_report(out: Path, runs: dict[str, list[tuple[float, float, float]]], seed: int,
                         command: str) -> list[dict[str, Any]]:
    """Table 2 from the sample sets (label -> (cpu, memory, throughput) samples; ``FSSA-1`` the baseline,
    labels starting ``DSA`` separate runs): ``cluster.csv``/``.md``, ``cluster-samples.csv``/``.md`` and
    ``cluster.png``; returns the table's rows."""
    baseline = runs["FSSA-1"]
    truth = np.array([t for _, _, t in baseline])
    at = {c: t for c, _, t in baseline}
    sets = {f"FSSA-{k}": baseline[::k] + ([] if (len(baseline) - 1) % k == 0 else [baseline[-1]]) for k in (2, 3, 4, 5)}
    sets.update({label: samples for label, samples in runs.items() if label.startswith("DSA")})
    rows = []
    for method, samples in sets.items():
        predicted = PerformanceModel(seed=seed).fit(samples).predict([s[:2] for s in baseline])
        error = predicted - truth
        # How far this set's own measurements lie from the baseline run's at the same provisions:
        # zero for FSSA's subsets of it, the cluster's run-to-run spread for a separate run.
        spread = np.array([t - at[c] for c, _, t in samples if c in at])
        rows.append({"method": method, "SN": len(samples), "RMSE": float(np.sqrt(np.mean(error ** 2))),
                     "MAE": float(np.mean(np.abs(error))),
                     "samples vs baseline RMSE": float(np.sqrt(np.mean(spread ** 2)))})
    write_table(out, "cluster", rows, "Table 2 on the local cluster: the work bolt (2,000 SHA-256 rounds per tuple, "
                f"{CLUSTER_MEASURE_WINDOWS} windows of 2 s per provision) "
                "under CPU quotas of 0.2-2.0 cores; RMSE and MAE (tuples/s) against every provision measured",
                command, digits=1)
    write_table(out, "cluster-samples", [{"method": m, "cpu": c, "throughput": t} for m, run in runs.items()
                                         for c, _, t in run], "The samples", command, digits=1)
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 3.4))
    axis.plot([c for c, _, _ in baseline], truth, "-o", color="0.5", ms=3, label=f"FSSA step 1 ({len(baseline)})")
    for k, (label, samples) in enumerate((name, run) for name, run in runs.items() if name.startswith("DSA")):
        axis.plot([c for c, _, _ in samples], [t for _, _, t in samples], "o^"[k], color=f"C{3 + k}", ms=4,
                  label=f"{label} ({len(samples)})")
    axis.set_xlabel("CPU quota (cores)")
    axis.set_ylabel("work bolt throughput (tuples/s)")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "cluster.png", dpi=110)
    plt.close(figure)
    return rows


# -- a fluctuating replay, scaled live ---------------------------------------------------------------

# The reliable pipeline of the metrics tests (numbers -> relay -> sink): acking on, replays after a
# failure or a restart, and every tuple's emit and ack time in <dir>/times.txt. Run from the repository root.
PIPELINE = Path("tests/metrics/fixtures/pipeline")
RELAY_WORK = 4000          # SHA-256 rounds per tuple in relay: ~2-4 ms of one core in its Python process
RELAY_TASKS = 6
INSTANCE_RATE = 150.0      # tuples/s the controller assumes one relay executor sustains (calibrated as it runs)
REPLAY_PEAK = 360.0        # tuples/s at the peak: within what this 2-core machine processes (~450 at 4,000 rounds)
PRICE, STARTUP, SHUTDOWN = 1.0, 0.5, 0.2


def bench_replay(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    from storm_planner.cluster.launcher import running_cluster
    from storm_planner.scaling import ScalingController
    from storm_planner.scaling.live.scale_run import run_scaling

    epochs, epoch_s = (8, 15) if quick else (16, 20)
    rates = [max(30.0, r) for r in diurnal_rates(epochs, REPLAY_PEAK, seed=seed, noise=0.0, bursts=0)]
    template = {"resources": [{"id": "executor", "cpu": 1.0, "memory_mb": 256, "price": PRICE}],
                "performance": {"executor": INSTANCE_RATE}, "startup_cost": STARTUP, "shutdown_cost": SHUTDOWN}
    with tempfile.TemporaryDirectory(prefix="qescalor-replay-") as work_name:
        work = Path(work_name)
        data, rate_file = work / "data", work / "rate"
        data.mkdir()
        rate_file.write_text(f"{rates[0]:g}")
        with running_cluster(work, ui=False, progress=_progress) as cluster:
            a = cluster.addresses
            submit_pipeline(a.nimbus, "replay", data, rate_file, work=RELAY_WORK, tasks=RELAY_TASKS, executors=1,
                            message_timeout_s=30)
            started = time.time()
            feeder = threading.Thread(target=_feed, args=(rate_file, rates, epoch_s, started), daemon=True)
            feeder.start()
            controller = ScalingController(template, horizon=3)

            def offered() -> float:
                """What the feed offered over the last epoch (its schedule, averaged over the window)."""
                now = time.time()
                return float(np.mean([_scheduled(rates, epoch_s, started, now - epoch_s * k / 40) for k in range(40)]))

            decisions = run_scaling(a.nimbus, a.zookeeper, "replay", "relay", controller, epoch_s, epochs,
                                    work / "decisions.jsonl", rebalance_wait_secs=0, offered=offered,
                                    progress=_progress)
            (data / "stop").write_text("")
            drained = _wait_for(data / "done.txt", 180)
        rows, summary = _replay_rows(data, decisions, rates, started, epoch_s, drained)
    write_replay_report(out, rows, f"A compressed day ({epochs} epochs of {epoch_s} s) on the local cluster, "
                        f"relay scaled live by scale run: {summary}", command)
    return rows


def write_replay_report(out: Path, rows: list[dict[str, Any]], title: str, command: str) -> None:
    """``replay.csv``/``.md`` and ``replay.png`` from the rows per epoch; ``replay-costs.csv``/``.md`` (QCESA
    and CBA offline on the measured rates) where ``cluster-samples.csv`` gives a performance model."""
    write_table(out, "replay", rows, title, command, digits=1)
    costs = _offline_costs(out, [r["measured"] for r in rows])
    if costs:
        write_table(out, "replay-costs", costs, "Offline on the rates the replay measured: QCESA against CBA with "
                    "each of r1..r4, performance from the random forest on the cluster samples", command, digits=2)
    _plot_replay(out, rows)


def submit_pipeline(nimbus: str, name: str, data: Path, rate_file: Path, *, work: int, tasks: int, executors: int,
                    message_timeout_s: int, **options) -> None:
    """The reliable pipeline with ``work`` SHA-256 rounds per tuple in ``relay`` (``executors`` over ``tasks``),
    fed at the rate ``rate_file`` holds, metrics every 2 s, no re-planning."""
    from storm_planner.submit.operations import submit_project

    submit_project(PIPELINE.resolve(), nimbus=nimbus, name=name, wait_active=180, progress=_progress, options={
        "pipeline.dir": str(data), "pipeline.rate_file": str(rate_file), "pipeline.work": work,
        "pipeline.tasks.relay": tasks, "pipeline.parallelism.relay": executors, "topology.workers": 2,
        "planner.metrics.period.secs": 2, "planner.replan": False, "topology.message.timeout.secs": message_timeout_s,
        "topology.max.spout.pending": 2000, **options})


def _scheduled(rates: list[float], epoch_s: float, started: float, at: float) -> float:
    return rates[min(len(rates) - 1, max(0, int((at - started) // epoch_s)))]


def _feed(rate_file: Path, rates: list[float], epoch_s: float, started: float) -> None:
    for i, rate in enumerate(rates):
        time.sleep(max(0.0, started + i * epoch_s - time.time()))
        rate_file.write_text(f"{rate:g}")


def _wait_for(path: Path, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(1)
    return False


def _replay_rows(data: Path, decisions: list[dict], rates: list[float], started: float, epoch_s: float,
                 drained: bool) -> tuple[list[dict[str, Any]], str]:
    emitted, acked = read_times(data)
    seen = {int(x) for x in (data / "seen.txt").read_text().split() if x.isdigit()}
    rows = []
    for i, decision in enumerate(decisions):
        rows.append({"epoch": i + 1, "offered": rates[i], "measured": decision.get("rate") or 0.0,
                     "instances": decision.get("executors_after", decision.get("executors_before", 0)),
                     "action": decision["action"],
                     **epoch_latency(emitted, acked, started + i * epoch_s, started + (i + 1) * epoch_s)})
    lost = len(set(emitted) - set(acked))
    unseen = len(set(emitted) - seen)
    instances = [r["instances"] for r in rows]
    steps = np.diff([instances[0]] + instances)
    cost = PRICE * sum(instances) + STARTUP * float(np.clip(steps, 0, None).sum()) + SHUTDOWN * float(np.clip(-steps, 0, None).sum())
    summary = (f"{len(emitted):,} tuples emitted, {lost} never acked, {unseen} never seen by the sink "
               f"({'drained' if drained else 'NOT drained within 180 s'}); instances {min(instances)}-{max(instances)}, "
               f"{sum(1 for r in rows if r['action'] == 'rebalance')} rebalances; cost {cost:.1f} "
               f"(price {PRICE} per instance-epoch, startup {STARTUP}, shutdown {SHUTDOWN})")
    return rows, summary


def read_times(data: Path) -> tuple[dict[int, float], dict[int, float]]:
    """The pipeline's first emit and ack time of every tuple id (``<dir>/times.txt``)."""
    emitted: dict[int, float] = {}
    acked: dict[int, float] = {}
    for line in (data / "times.txt").read_text().splitlines():
        kind, ident, at = line.split()
        (emitted if kind == "e" else acked).setdefault(int(ident), float(at))
    return emitted, acked


def epoch_latency(emitted: dict[int, float], acked: dict[int, float], begin: float, end: float) -> dict[str, float]:
    """End-to-end latency (p50, p95) of the tuples emitted in [begin, end), and those unacked at ``end``."""
    latencies = np.array([acked[t] - e for t, e in emitted.items() if begin <= e < end and t in acked])
    return {"latency p50 ms": 1000 * float(np.median(latencies)) if len(latencies) else 0.0,
            "latency p95 ms": 1000 * float(np.percentile(latencies, 95)) if len(latencies) else 0.0,
            "backlog at end": sum(1 for t, e in emitted.items() if e < end and acked.get(t, np.inf) >= end)}


def plot_latency(axis, rows: list[dict[str, Any]], log: bool = False) -> None:
    """The p50 and p95 end-to-end latency per epoch."""
    epochs = [r["epoch"] for r in rows]
    axis.plot(epochs, [r["latency p50 ms"] for r in rows], label="p50")
    axis.plot(epochs, [r["latency p95 ms"] for r in rows], label="p95")
    if log:
        axis.set_yscale("log")
    axis.set_xlabel("epoch")
    axis.set_ylabel("end-to-end latency (ms)")
    axis.legend(fontsize=8)


def _offline_costs(out: Path, measured: list[float]) -> list[dict[str, Any]]:
    """QCESA and CBA r1..r4 on the measured rates, with r1..r4's performance predicted from the cluster
    samples (``cluster-samples.csv`` of the ``cluster`` experiment; none: skipped)."""
    import csv

    from storm_planner.scaling.generator import PAPER_PROVISIONS, paper_resources

    path = out / "cluster-samples.csv"
    if not path.exists() or not any(measured):
        return []
    samples = [(float(r["cpu"]), 33.5, float(r["throughput"])) for r in csv.DictReader(path.open())
               if r["method"] == "FSSA-1"]
    model = PerformanceModel(seed=0).fit(samples)
    performance = dict(zip(("r1", "r2", "r3", "r4"), map(float, model.predict(PAPER_PROVISIONS))))
    problem = {"resources": paper_resources(), "performance": performance, "startup_cost": STARTUP,
               "shutdown_cost": SHUTDOWN, "workload": [float(r) for r in measured]}
    rows = [{"algorithm": "QCESA", "cost": scale(problem, "qcesa")["cost"]},
            {"algorithm": "qcesa-exact", "cost": scale(problem, "qcesa-exact")["cost"]}]
    rows += [{"algorithm": f"CBA-{rid}", "cost": scale(problem, "cba", resource=rid)["cost"]} for rid in performance]
    return rows


def _plot_replay(out: Path, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    figure, (load, latency) = plt.subplots(1, 2, figsize=(10, 3.6))
    epochs = [r["epoch"] for r in rows]
    load.plot(epochs, [r["offered"] for r in rows], "k-", label="offered")
    load.plot(epochs, [r["measured"] for r in rows], "k--", label="measured at relay")
    load.step(epochs, [r["instances"] * INSTANCE_RATE for r in rows], where="post", color="C0",
              label=f"instances × {INSTANCE_RATE:g}")
    load.set_xlabel("epoch")
    load.set_ylabel("tuples/s")
    load.legend(fontsize=8)
    plot_latency(latency, rows)
    figure.tight_layout()
    figure.savefig(out / "replay.png", dpi=110)
    plt.close(figure)
