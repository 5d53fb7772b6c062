"""``storm-planner bench qescalor live``: the whole QEScalor loop on the local cluster (root, cgroup v1).

1. **OOPSer** inside the running topology: the reliable pipeline's ``relay`` (SHA-256 work per tuple)
   gets one sampling instance under a stressing feed, held to each CPU provision DSA visits
   (:mod:`storm_planner.scaling.live.live_sampler`);
2. **OPRPMer**: the random forest fitted to those samples predicts what one instance sustains under
   each provision r1..r3 of the run;
3. **QECer**: ``scale run``'s controller (told the feed's offered rate, which a saturated relay hides)
   scales ``relay`` over a day's diurnal feed repeated
   ``days`` times, compressed into minutes — from the third day on, with the Holt-Winters forecast of
   the next epochs (season = one day) instead of the recent peak — and every instance runs under
   its provision's CPU quota and memory limit (:mod:`storm_planner.scaling.live.instances`).

Reported per epoch (Figure 3 on the cluster): offered and measured rate, the instances per provision
and their predicted capacity, end-to-end latency (p50/p95) and backlog from the pipeline's emit and
ack times; and the run's cost beside QCESA and CBA with each provision, offline on the measured rates.
"""
from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from storm_planner.api import scale
from storm_planner.scaling.generator import diurnal_rates
from storm_planner.scaling.performance import PerformanceModel
from storm_planner_bench.common.report import pyplot, stamped_progress, write_table
from storm_planner_bench.qescalor.cluster import (
    _feed,
    _scheduled,
    _wait_for,
    epoch_latency,
    plot_latency,
    read_times,
    submit_pipeline,
)

_progress = stamped_progress("qescalor bench")

# relay's work per tuple: ~45 ms of one core (60,000 SHA-256 rounds; measured 1.1 tuples/s at 0.05 cores
# and 6.2 at 0.25), so that relay, not the Python spout (which logs every emit and ack), sets the pace.
RELAY_WORK = 60_000
# Provisions small enough that this 2-core machine runs several saturated instances at once, and
# within the sampled range (a random forest does not extrapolate).
PROVISIONS: list[dict[str, Any]] = [{"id": "r1", "cpu": 0.1, "memory_mb": 512, "price": 0.1},
              {"id": "r2", "cpu": 0.2, "memory_mb": 512, "price": 0.19},
              {"id": "r3", "cpu": 0.3, "memory_mb": 768, "price": 0.27}]
SAMPLE_LEVELS = [(round(0.05 + 0.1 * i, 2), 512.0) for i in range(4)]   # 0.05 .. 0.35 cores
STARTUP, SHUTDOWN = 0.05, 0.02
RELAY_TASKS = 6
# tuples/s while sampling: a third of it is more than a 0.35-core sampler takes (~8), while the two
# regular instances, unthrottled, leave the machine's second core to ZooKeeper, Storm and the spout.
STRESS_RATE = 30.0
PEAK = 18.0           # tuples/s at the day's peak: about 3 instances of r3 (~6 tuples/s each)


def bench_live(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    from storm_planner.cluster.launcher import running_cluster
    from storm_planner.scaling import ScalingController
    from storm_planner.scaling.live.instances import (
        InstanceProvisions,
        ProvisionEnforcer,
        provisions_from_template,
    )
    from storm_planner.scaling.live.live_sampler import LIVE_SAMPLING_OPTIONS, sample_live
    from storm_planner.scaling.live.oopser import SamplerSettings
    from storm_planner.scaling.live.scale_run import run_scaling

    season, days, epoch_s = (6, 3, 10) if quick else (8, 3, 15)
    rates = [max(0.1 * PEAK, r) for r in diurnal_rates(season, PEAK, seed=seed, noise=0.05, bursts=0)] * days
    with tempfile.TemporaryDirectory(prefix="qescalor-live-") as work_name:
        work = Path(work_name)
        data, rate_file = work / "data", work / "rate"
        data.mkdir()
        rate_file.write_text(f"{STRESS_RATE:g}")
        with running_cluster(work, ui=False, progress=_progress) as cluster:
            a = cluster.addresses
            submit_pipeline(a.nimbus, "live", data, rate_file, work=RELAY_WORK, tasks=RELAY_TASKS, executors=2,
                            message_timeout_s=60, **LIVE_SAMPLING_OPTIONS)
            settings = SamplerSettings(levels=SAMPLE_LEVELS[::2] if quick else SAMPLE_LEVELS, method="dsa",
                                       period_s=2, settle_windows=1, measure_windows=3, tolerance=0.1)
            instance, samples = sample_live(a.nimbus, a.zookeeper, cluster.log_dir, "live", "relay", settings,
                                            progress=_progress)
            performance = _fit_performance(samples, seed)
            template = {"resources": PROVISIONS, "performance": performance, "startup_cost": STARTUP,
                        "shutdown_cost": SHUTDOWN}
            rate_file.write_text(f"{rates[0]:g}")
            time.sleep(2 * epoch_s)  # the backlog the sampling left drains before the first epoch
            started = time.time()
            threading.Thread(target=_feed, args=(rate_file, rates, epoch_s, started), daemon=True).start()
            controller = ScalingController(template, horizon=3, season=season, quantile=0.9)

            def offered() -> float:
                """What the feed offered over the last epoch (a saturated relay processes less: its demand)."""
                now = time.time()
                return sum(_scheduled(rates, epoch_s, started, now - epoch_s * k / 40) for k in range(40)) / 40

            with InstanceProvisions(f"storm-planner-bench-{work.name}") as groups:
                enforce = ProvisionEnforcer(groups, cluster.log_dir, "relay", provisions_from_template(template))
                decisions = run_scaling(a.nimbus, a.zookeeper, "live", "relay", controller, epoch_s, len(rates),
                                        work / "decisions.jsonl", rebalance_wait_secs=0, progress=_progress,
                                        enforce=enforce, offered=offered)
            (data / "stop").write_text("")
            drained = _wait_for(data / "done.txt", 180)
        rows, summary = _rows(data, decisions, rates, started, epoch_s, performance, season, drained)
    sample_rows = [{"task": instance.first_task, **s.to_dict()} for s in samples]
    write_live_report(out, rows, sample_rows, performance, f"The QEScalor loop on the local cluster ({len(rates)} "
                      f"epochs of {epoch_s} s, {days} compressed days of {season} epochs; forecast from day 3): "
                      f"{summary}", command)
    return rows


def write_live_report(out: Path, rows: list[dict[str, Any]], sample_rows: list[dict[str, Any]],
                      performance: dict[str, float], title: str, command: str) -> None:
    """``live-samples``, ``live`` and ``live-costs`` (CSV and markdown) and ``live.png`` from the samples, the
    rows per epoch and the model's performance per provision."""
    write_table(out, "live-samples", sample_rows, "OOPSer in the running topology: the sampling instance of relay "
                f"under each CPU provision DSA visited (feed at {STRESS_RATE:g} tuples/s)", command, digits=3)
    write_table(out, "live", rows, title, command, digits=1)
    costs = _costs(rows, performance)
    write_table(out, "live-costs", costs, "Cost on the rates the run measured: the run's own decisions, QCESA and "
                "CBA with each provision (offline, same model)", command, digits=2)
    _plot(out, rows, sample_rows)


def _fit_performance(samples: list[Any], seed: int) -> dict[str, float]:
    """Tuples/s one instance sustains under each provision, by the model fitted to the samples."""
    model = PerformanceModel(seed=seed).fit([(s.cpu, s.memory_mb, s.throughput) for s in samples])
    performance = dict(zip((p["id"] for p in PROVISIONS),
                           map(float, model.predict([(p["cpu"], p["memory_mb"]) for p in PROVISIONS]))))
    _progress(f"model: one instance sustains {', '.join(f'{k} {v:.1f}' for k, v in performance.items())} tuples/s")
    return performance


def _rows(data: Path, decisions: list[dict], rates: list[float], started: float, epoch_s: float,
          performance: dict[str, float], season: int, drained: bool) -> tuple[list[dict[str, Any]], str]:
    emitted, acked = read_times(data)
    rows = []
    for i, decision in enumerate(decisions):
        counts = decision.get("counts", {})
        enforced = decision.get("provisions") or []
        rows.append({
            "epoch": i + 1, "offered": rates[i], "measured": decision.get("rate") or 0.0,
            "forecast": i >= 2 * season,
            **{rid: counts.get(rid, 0) for rid in performance},
            "capacity": sum(performance[rid] * n for rid, n in counts.items()),
            # Storm's plain shuffle gives every instance an equal share: the slowest one sets the pace.
            "equal-share capacity": sum(counts.values()) * min((performance[rid] for rid, n in counts.items() if n),
                                                               default=0.0),
            "enforced": len(enforced),
            **epoch_latency(emitted, acked, started + i * epoch_s, started + (i + 1) * epoch_s),
            "action": decision["action"],
        })
    lost = len(set(emitted) - set(acked))
    short = sum(1 for r in rows if r["capacity"] < r["offered"])
    short_equal = sum(1 for r in rows if r["equal-share capacity"] < r["offered"])
    errors = sum(1 for d in decisions if d.get("provisions_error"))
    summary = (f"{len(emitted):,} tuples emitted, {lost} never acked ({'drained' if drained else 'NOT drained'}); "
               f"{sum(1 for r in rows if r['action'] == 'rebalance')} rebalances; provisions enforced after "
               f"{sum(1 for r in rows if r['enforced'])} of {len(rows)} decisions ({errors} refused or failed); "
               f"predicted capacity under the offered rate in {short} epochs ({short_equal} counting equal shares)")
    return rows, summary


def _costs(rows: list[dict[str, Any]], performance: dict[str, float]) -> list[dict[str, Any]]:
    measured = [max(r["measured"], 1.0) for r in rows]
    problem = {"resources": PROVISIONS, "performance": performance, "startup_cost": STARTUP,
               "shutdown_cost": SHUTDOWN, "workload": measured}
    prices = {p["id"]: p["price"] for p in PROVISIONS}
    run_cost = 0.0
    previous: dict[str, int] = {}
    for r in rows:
        counts = {rid: r[rid] for rid in performance}
        run_cost += sum(prices[rid] * n for rid, n in counts.items())
        run_cost += sum(STARTUP * max(0, n - previous.get(rid, 0)) + SHUTDOWN * max(0, previous.get(rid, 0) - n)
                        for rid, n in counts.items())
        previous = counts
    result = [{"schedule": "the run (online, forecast)", "cost": run_cost},
              {"schedule": "QCESA offline", "cost": scale(problem, "qcesa")["cost"]}]
    result += [{"schedule": f"CBA-{rid} offline", "cost": scale(problem, "cba", resource=rid)["cost"]}
               for rid in performance]
    return result


def _plot(out: Path, rows: list[dict[str, Any]], samples: list[dict[str, Any]]) -> None:
    plt = pyplot()
    figure, (model, load, latency) = plt.subplots(1, 3, figsize=(14, 3.6))
    model.plot([s["cpu"] for s in samples], [s["throughput"] for s in samples], "o", color="C3")
    model.set_xlabel("sampling instance's CPU quota (cores)")
    model.set_ylabel("tuples/s it executed")
    epochs = [r["epoch"] for r in rows]
    load.plot(epochs, [r["offered"] for r in rows], "k-", label="offered")
    load.plot(epochs, [r["measured"] for r in rows], "k--", label="measured at relay")
    load.step(epochs, [r["capacity"] for r in rows], where="post", color="C0", label="predicted capacity")
    load.step(epochs, [r["equal-share capacity"] for r in rows], where="post", color="C1", ls="--",
              label="equal shares × slowest")
    first_forecast = next((r["epoch"] for r in rows if r["forecast"]), None)
    if first_forecast is not None:
        load.axvline(first_forecast, color="0.6", lw=0.8, ls=":", label="forecast from here")
    load.set_xlabel("epoch")
    load.set_ylabel("tuples/s")
    load.legend(fontsize=8)
    plot_latency(latency, rows, log=True)
    figure.tight_layout()
    figure.savefig(out / "live.png", dpi=110)
    plt.close(figure)
