"""Benchmarks of issue #16 (simulation): QEScalor's Figures 2 and 3 and Tables 2 and 3, and QCESA
against the exact optimum of its cost model.

``storm-planner bench qescalor EXPERIMENT [--out DIR] [--seed N] [--quick]``, from the repository
root; each experiment writes ``EXPERIMENT.csv``, ``EXPERIMENT.md`` (and a plot) under
``benchmarks/results/qescalor/``. Progress goes to standard error.

* ``optimality``: random scaling problems (:func:`storm_planner.scaling.generator.random_problem`):
  QCESA's cost against ``qcesa-exact`` (the exact optimum of the cost model) and the best single
  provision (CBA), epochs under capacity, planning time; on smaller problems also against the
  integer program (HiGHS), which must agree with ``qcesa-exact``.
* ``sampling`` (Table 2): DSA and FSSA (steps 2–5) on four synthetic operators (CO1, CO2: compute
  bound; CMO1, CMO2: also memory bound), each sample set fitted by the random forest and judged by
  RMSE and MAE against every level measured (FSSA step 1, the paper's baseline) and by the number
  of samples (SN).
* ``models`` (Table 3): RFR, AdaBoost, GBDT, XGBoost and SVR trained on the DSA samples, tested on the
  step-1 samples, grid search with 10-fold CV, mean RMSE and MAE over 10 repeats.
* ``day`` (Figures 2 and 3): the whole pipeline on one operator (CMO1): DSA samples, the random
  forest's performance for r1..r4, a Holt-Winters forecast of the next day from a week of history,
  schedules by QCESA, ``qcesa-exact`` and CBA with each of r1..r4; cumulative cost over the day
  (Fig. 2) and capacity against the *actual* workload (Fig. 3), with the epochs the forecast left short;
  also QCESA on a forecast raised by its residuals' 95th percentile (not in the paper).
* ``step``: scaling actions until the operator keeps up after a step change of its input rate, with
  the model's performance (the paper) and calibrated by what running instances sustain (ours).
* ``cluster`` (Table 2 on the local cluster; root and cgroup v1 CPU quotas): DSA and FSSA sampling the
  built-in work bolt's throughput under CPU quotas of 0.2-2.0 cores (:mod:`storm_planner.scaling.live.oopser`).
* ``replay`` (local cluster): a compressed day scaled live by ``scale run`` with one provision.
* ``live`` (local cluster, root): the whole loop — a sampling instance inside the running topology,
  the random forest on its samples, ``scale run`` with three provisions enforced per instance and the
  Holt-Winters forecast from the third compressed day (Figure 3 on the cluster;
  :mod:`storm_planner_bench.qescalor.live`).

The simulated operators' curves are synthetic (:func:`~storm_planner.scaling.generator.operator_curve`):
the paper's measurements (DataDock on Kubernetes) are not published; ``cluster``, ``replay`` and ``live``
measure on the local cluster. The models, solvers and forecaster are the real libraries.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner.api import scale
from storm_planner.scaling.forecast import forecast
from storm_planner.scaling.generator import (
    PAPER_PROVISIONS,
    diurnal_rates,
    operator_curve,
    paper_resources,
    random_problem,
)
from storm_planner.scaling.performance import PerformanceModel, compare_models
from storm_planner.scaling.sampling import dsa, fssa
from storm_planner.scaling.scaling_problem import ScalingInstance, read_problem, resolve
from storm_planner.scaling.schedule import Schedule
from storm_planner_bench.common.report import experiments_benchmark, pyplot, stamped_progress, write_table
from storm_planner_bench.qescalor.cluster import bench_cluster, bench_replay
from storm_planner_bench.qescalor.live import bench_live

DEFAULT_OUT = Path("benchmarks/results/qescalor")
_progress = stamped_progress("qescalor bench")

# The sampled path: CPU from 0.1 to 4.0 cores in steps of 0.1 (the minimum step), memory rising with it
# as in the paper's provisions (33.2 MB at 0.6 cores to 33.8 MB at 2.4), so r1..r4 lie on the path: the
# forest, given collinear inputs, splits on either, and a provision off the path is extrapolation.
LEVELS = [(round(0.1 * i, 1), round(33.0 + 0.1 * i / 3, 2)) for i in range(1, 41)]
OPERATORS = {"CO1": ("CO", 11), "CO2": ("CO", 12), "CMO1": ("CMO", 13), "CMO2": ("CMO", 14)}
EPOCHS_PER_DAY = 288   # 5-minute epochs
STARTUP_COST, SHUTDOWN_COST = 0.5, 0.2   # per instance, in price units (r1 costs 0.6 per epoch)
UPPER_QUANTILE = 0.95   # the raised forecast: this quantile of the forecaster's residuals on top


def measured(kind: str, seed: int) -> Callable[[int], float]:
    curve = operator_curve(kind, seed)
    return lambda level: curve(*LEVELS[level])


# -- optimality -----------------------------------------------------------------------------------

def bench_optimality(out: Path, seed: int, quick: bool, command: str, instances: int | None = None,
                     small: int | None = None) -> list[dict[str, Any]]:
    """``instances`` random problems against the exact optimum, ``small`` of them also against the integer
    program (default 200 and 30; ``quick``: 20 and 5)."""
    instances = instances or (20 if quick else 200)
    small = small or (5 if quick else 30)
    per_instance = []
    for i in range(instances):
        data = random_problem(seed * 100_000 + i, epochs=48)
        q, e = scale(data, "qcesa"), scale(data, "qcesa-exact")
        cba = min(scale(data, "cba", resource=r["id"])["cost"] for r in data["resources"])
        short = sum(c < w * (1 - 1e-9) for c, w in zip(q["capacity"], q["workload"]))
        per_instance.append({"instance": i, "qcesa": q["cost"], "exact": e["cost"], "best_cba": cba,
                             "gap": q["cost"] / e["cost"] - 1, "vs_cba": q["cost"] / cba, "short": short,
                             "qcesa_ms": q["solve_ms"], "exact_ms": e["solve_ms"]})
        if (i + 1) % 20 == 0 or quick:
            _progress(f"optimality {i + 1}/{instances}: worst gap so far "
                      f"{max(r['gap'] for r in per_instance):.5f}")
    program_rows = []
    for i in range(small):
        data = random_problem(seed * 100_000 + 50_000 + i, epochs=12, provisions=3)
        e = scale(data, "qcesa-exact")
        started = time.perf_counter()
        ip = scale(data, "scaling-ip", time_limit_s=60)
        program_rows.append({"exact": e["cost"], "ip": ip["cost"], "exact_ms": e["solve_ms"],
                             "ip_ms": (time.perf_counter() - started) * 1000})
    gaps = [r["gap"] for r in per_instance]
    rows = [
        {"comparison": "QCESA / qcesa-exact (48 epochs, 4 provisions)", "instances": instances,
         "worst": max(gaps) + 1, "median": statistics.median(gaps) + 1,
         "count": f"{sum(g <= 0.01 for g in gaps)}/{instances} within 1 %; {sum(g <= 1e-9 for g in gaps)} equal"},
        {"comparison": "QCESA / best single-provision CBA", "instances": instances,
         "worst": max(r["vs_cba"] for r in per_instance), "median": statistics.median(r["vs_cba"] for r in per_instance),
         "count": f"{sum(r['vs_cba'] <= 1 + 1e-9 for r in per_instance)}/{instances} no dearer"},
        {"comparison": "epochs under capacity (QCESA)", "instances": instances,
         "worst": float(max(r["short"] for r in per_instance)), "median": 0.0, "count": "of 48 per instance"},
        {"comparison": "integer program / qcesa-exact (12 epochs, 3 provisions)", "instances": small,
         "worst": max(r["ip"] / r["exact"] for r in program_rows), "median": statistics.median(r["ip"] / r["exact"] for r in program_rows),
         "count": f"{sum(abs(r['ip'] - r['exact']) <= 1e-6 * r['exact'] for r in program_rows)}/{small} equal"},
        {"comparison": "planning ms: QCESA (median, 48 epochs)", "instances": instances,
         "worst": max(r["qcesa_ms"] for r in per_instance), "median": statistics.median(r["qcesa_ms"] for r in per_instance),
         "count": "ms"},
        {"comparison": "planning ms: integer program / qcesa-exact (12 epochs)", "instances": small,
         "worst": max(r["ip_ms"] / r["exact_ms"] for r in program_rows),
         "median": statistics.median(r["ip_ms"] / r["exact_ms"] for r in program_rows), "count": "time ratio"},
    ]
    write_table(out, "optimality", rows, "QCESA against the exact optimum of its cost model and CBA", command, digits=4)
    write_table(out, "optimality-per-instance", per_instance, "per instance", command, digits=4)
    return rows


def _operators(names: tuple[str, ...] | None) -> dict[str, tuple[str, int]]:
    return {name: OPERATORS[name] for name in names} if names else OPERATORS


# -- Table 2: DSA against FSSA --------------------------------------------------------------------

def bench_sampling(out: Path, seed: int, quick: bool, command: str,
                   operators: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """DSA and FSSA on ``operators`` (default: all four)."""
    rows = []
    for name, (kind, curve_seed) in _operators(operators).items():
        measure = measured(kind, curve_seed + 100 * seed)
        baseline = fssa(LEVELS, measure, 1)                  # every level: the paper's reference
        truth = np.array([s[2] for s in baseline])
        sets = {f"FSSA-{k}": fssa(LEVELS, measure, k) for k in (2, 3, 4, 5)}
        sets["DSA"] = dsa(LEVELS, measure)
        for method, samples in sets.items():
            predicted = PerformanceModel(seed=seed).fit(samples).predict([s[:2] for s in baseline])
            error = predicted - truth
            rows.append({"operator": name, "method": method, "SN": len(samples),
                         "RMSE": float(np.sqrt(np.mean(error ** 2))), "MAE": float(np.mean(np.abs(error)))})
        _progress(f"sampling {name}: " + ", ".join(f"{r['method']} {r['RMSE']:.1f}/{r['SN']}"
                                                   for r in rows[-len(sets):]))
    write_table(out, "sampling", rows, "Table 2: DSA vs FSSA (RMSE and MAE in tuples/s, SN samples)", command, digits=1)
    _plot_sampling(out, seed)
    return rows


def _plot_sampling(out: Path, seed: int) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for axis, name in zip(axes, ("CO1", "CMO2")):
        kind, curve_seed = OPERATORS[name]
        measure = measured(kind, curve_seed + 100 * seed)
        every = fssa(LEVELS, measure, 1)
        axis.plot([s[0] for s in every], [s[2] for s in every], color="0.6", label="every level (step 1)")
        samples = dsa(LEVELS, measured(kind, curve_seed + 100 * seed))
        axis.plot([s[0] for s in samples], [s[2] for s in samples], "o", color="C3", label=f"DSA ({len(samples)})")
        axis.set_title(name, fontsize=10)
        axis.set_xlabel("CPU (cores)")
    axes[0].set_ylabel("throughput (tuples/s)")
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "sampling.png", dpi=110)
    plt.close(figure)


# -- Table 3: the model comparison ----------------------------------------------------------------

def bench_models(out: Path, seed: int, quick: bool, command: str, operators: tuple[str, ...] | None = None,
                 repeats: int | None = None, models: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Every model (or ``models``) on ``operators`` (default: all four), ``repeats`` times (10; ``quick``: 2)."""
    rows = []
    for name, (kind, curve_seed) in _operators(operators).items():
        measure = measured(kind, curve_seed + 100 * seed)
        train, test = dsa(LEVELS, measure), fssa(LEVELS, measure, 1)
        for score in compare_models(train, test, repeats=repeats or (2 if quick else 10), models=models):
            rows.append({"operator": name, "model": score.model, "RMSE": score.rmse, "MAE": score.mae})
        _progress(f"models {name}: " + ", ".join(f"{r['model']} {r['RMSE']:.1f}" for r in rows[-5:]))
    write_table(out, "models", rows, "Table 3: models trained on DSA samples, tested on every level "
                                     "(RMSE and MAE in tuples/s, mean of repeats)", command, digits=1)
    return rows


# -- Figures 2 and 3: one day of CMO1 -------------------------------------------------------------

def bench_day(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    kind, curve_seed = OPERATORS["CMO1"]
    samples = dsa(LEVELS, measured(kind, curve_seed + 100 * seed))
    model = PerformanceModel(seed=seed).fit(samples)
    performance = dict(zip((r["id"] for r in paper_resources()), map(float, model.predict(PAPER_PROVISIONS))))
    truth = operator_curve(kind, curve_seed + 100 * seed, noise=0.0)
    epochs = 96 if quick else EPOCHS_PER_DAY
    days = [diurnal_rates(epochs, peak=12_000.0, seed=seed * 10 + d) for d in range(8)]
    history, actual = [r for day in days[:7] for r in day], days[7]
    predicted = forecast(history, season=epochs, horizon=epochs)
    upper = forecast(history, season=epochs, horizon=epochs, quantile=UPPER_QUANTILE)
    problem = {"operator": "CMO1", "epoch_s": 86_400 / epochs, "resources": paper_resources(),
               "performance": performance, "startup_cost": STARTUP_COST, "shutdown_cost": SHUTDOWN_COST,
               "workload": [float(w) for w in predicted]}
    schedules = {"QCESA": scale(problem, "qcesa"), "qcesa-exact": scale(problem, "qcesa-exact"),
                 f"QCESA, {UPPER_QUANTILE:.0%} forecast": scale({**problem, "workload": [float(w) for w in upper]})}
    for resource in ("r1", "r2", "r3", "r4"):
        schedules[f"CBA-{resource}"] = scale(problem, "cba", resource=resource)
    true_performance = np.array([truth(*p) for p in PAPER_PROVISIONS])
    counts = {name: Schedule(np.array([[e.get(r, 0) for r in ("r1", "r2", "r3", "r4")] for e in schedule["epochs"]]))
              for name, schedule in schedules.items()}
    rows = []
    for name, schedule in schedules.items():
        true_capacity = counts[name].counts @ true_performance
        rows.append({"algorithm": name, "total cost": schedule["cost"], "running": schedule["running_cost"],
                     "startups": schedule["startups"], "shutdowns": schedule["shutdowns"],
                     "epochs short of the forecast": sum(c < w * (1 - 1e-9) for c, w in zip(schedule["capacity"], predicted)),
                     "short of actual load, planned capacity": sum(c < w for c, w in zip(schedule["capacity"], actual)),
                     "short of actual load, true capacity": int(np.sum(true_capacity < np.array(actual))),
                     "mean capacity / actual load": float(np.mean(true_capacity / np.maximum(actual, 1.0)))})
    accuracy = ", ".join(f"{rid} {performance[rid]:.0f} ({performance[rid] / true_performance[k]:.2f} of the true "
                         f"{true_performance[k]:.0f})" for k, rid in enumerate(("r1", "r2", "r3", "r4")))
    forecast_error = np.abs(predicted - np.array(actual)) / np.maximum(np.array(actual), 1.0)
    _progress("day: " + ", ".join(f"{r['algorithm']} {r['total cost']:.1f}" for r in rows) + f"; {accuracy}" +
              f"; forecast mean abs error {100 * forecast_error.mean():.1f} %")
    write_table(out, "day", rows, f"One day of CMO1 ({epochs} epochs): cost and capacity (Figs. 2 and 3); "
                f"forecast mean absolute error {100 * forecast_error.mean():.1f} %; the model's performance per "
                f"instance (tuples/s): {accuracy}", command, digits=2)
    _plot_day(out, counts, resolve(read_problem(problem)), predicted, actual, true_performance)
    return rows


def _plot_day(out: Path, schedules: dict[str, Schedule], instance: ScalingInstance, predicted, actual,
              true_performance) -> None:
    plt = pyplot()
    figure, (cost_axis, load_axis) = plt.subplots(1, 2, figsize=(11, 3.8))
    for k, (name, schedule) in enumerate(schedules.items()):
        cost_axis.plot(np.cumsum(schedule.epoch_costs(instance)), label=name, color=f"C{k}", lw=1.2)
        if name in ("QCESA", f"QCESA, {UPPER_QUANTILE:.0%} forecast", "CBA-r2"):
            load_axis.step(range(len(schedule.counts)), schedule.counts @ true_performance, where="post",
                           label=f"{name} capacity", color=f"C{k}", lw=1.0)
    load_axis.plot(actual, color="black", lw=0.8, label="actual workload")
    load_axis.plot(predicted, color="0.5", lw=0.8, ls="--", label="forecast")
    cost_axis.set_xlabel("epoch (5 min)")
    cost_axis.set_ylabel("cumulative cost")
    cost_axis.set_title("Fig. 2: total cost", fontsize=10)
    cost_axis.legend(fontsize=7)
    load_axis.set_xlabel("epoch (5 min)")
    load_axis.set_ylabel("tuples/s")
    load_axis.set_title("Fig. 3: performance vs workload", fontsize=10)
    load_axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(out / "day.png", dpi=110)
    plt.close(figure)


# -- convergence after a step change of the input rate ----------------------------------------------

def bench_step(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    """Scaling actions until the operator keeps up after its input rate steps, for several steps.

    Each epoch the controller sees the last epoch's input rate and, for every provision in use, the
    throughput its instances reached (measurable when they are saturated), plans the next epochs with
    QCESA on that rate held flat (a persistence forecast) and applies the first epoch. *open loop*
    (the paper): the model's performance throughout; *calibrated* (ours): each used provision's
    performance replaced by what its instances were measured to sustain. An action is an epoch whose
    instances change; the count stops when the true capacity covers the new rate."""
    kind, curve_seed = OPERATORS["CMO1"]
    samples = dsa(LEVELS, measured(kind, curve_seed + 100 * seed))
    model = dict(zip(("r1", "r2", "r3", "r4"), map(float, PerformanceModel(seed=seed).fit(samples).predict(PAPER_PROVISIONS))))
    truth_curve = operator_curve(kind, curve_seed + 100 * seed, noise=0.0)
    truth = {rid: truth_curve(*p) for rid, p in zip(("r1", "r2", "r3", "r4"), PAPER_PROVISIONS)}
    steps = [(2_000.0, 6_000.0), (6_000.0, 2_000.0), (1_000.0, 10_000.0), (4_000.0, 4_500.0)]
    rows = []
    for calibrated in (False, True):
        for before, after in (steps[:2] if quick else steps):
            actions, keeps_up_at = _run_step(model, truth, before, after, calibrated)
            rows.append({"controller": "calibrated" if calibrated else "open loop (paper)",
                         "rate step": f"{before:.0f} -> {after:.0f}", "actions until it keeps up": actions,
                         "epochs until it keeps up": keeps_up_at})
            _progress(f"step {before:.0f}->{after:.0f} {rows[-1]['controller']}: {actions} actions")
    write_table(out, "step", rows, "Scaling actions after a step change of the input rate (CMO1; DS2's published "
                                   "figure: at most 3; 'never' = not within 20 epochs)", command)
    return rows


def _run_step(model: dict, truth: dict, before: float, after: float, calibrated: bool,
              horizon: int = 6, limit: int = 20) -> tuple[Any, Any]:
    performance = dict(model)
    counts: dict[str, int] = {}
    for _ in range(3):  # settle at the old rate first
        counts = _plan_epoch(performance, counts, before)
        if calibrated:
            performance.update({rid: truth[rid] for rid in counts})
    actions = 0
    for epoch in range(1, limit + 1):
        new = _plan_epoch(performance, counts, after)
        actions += new != counts
        counts = new
        if calibrated:  # what the instances in use were measured to sustain
            performance.update({rid: truth[rid] for rid in counts})
        if sum(truth[rid] * n for rid, n in counts.items()) >= after:
            return actions, epoch
    return "never", "never"


def _plan_epoch(performance: dict, counts: dict, rate: float, horizon: int = 6) -> dict[str, int]:
    problem = {"resources": paper_resources(), "performance": performance, "startup_cost": STARTUP_COST,
               "shutdown_cost": SHUTDOWN_COST, "current": counts, "workload": [rate] * horizon}
    return scale(problem, "qcesa")["epochs"][0]


EXPERIMENTS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "optimality": bench_optimality,
    "sampling": bench_sampling,
    "models": bench_models,
    "day": bench_day,
    "step": bench_step,
    "cluster": bench_cluster,
    "replay": bench_replay,
    "live": bench_live,
}


BENCHMARKS = (experiments_benchmark("qescalor", "QEScalor: QCESA vs CBA and the exact optimum, DSA vs FSSA, "
                                    "the model comparison (Figs. 2-3, Tables 2-3)", EXPERIMENTS, DEFAULT_OUT,
                                    "fewer instances, repeats and epochs (a smoke run)", _progress),)
