"""The capacity report's plots, per cluster and workload, under ``<out>``:

* ``<cluster>-<workload>-throughput.png``: every measured step of every arm, processed against offered
  tuples/s (sustained steps filled, missed ones hollow), the diagonal where processed equals offered;
* ``<cluster>-<workload>-latency.png``: per arm, the CDF of latency from the due time at the latency step
  nearest 80 % of RAS's capacity, every repetition's histogram merged (percentile on the x axis as
  HdrHistogram plots it, 50 % to 99.99 %; latency in ms, logarithmic).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from storm_planner_bench.capacity import verdicts as v
from storm_planner_bench.capacity.latency import cdf_ms, decode, merged
from storm_planner_bench.capacity.runner import read_step_records
from storm_planner_bench.capacity.search import LATENCY
from storm_planner_bench.common.report import pyplot, save_figure


def throughput_plot(data: Any, cluster: str, workload: str) -> Path | None:
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7.5, 5))
    top = 0.0
    for k, arm in enumerate(data.arms):
        steps = data.arm_steps(cluster, workload, arm)
        points = [(v.number(s["offered_tps"]), v.number(s["processed_tps"]), s["verdict"] == "sustained")
                  for s in steps]
        points = [p for p in points if math.isfinite(p[0]) and math.isfinite(p[1])]
        if not points:
            continue
        top = max(top, *(max(p[0], p[1]) for p in points))
        kept = [p for p in points if p[2]]
        missed = [p for p in points if not p[2]]
        axis.plot([p[0] for p in kept], [p[1] for p in kept], "o", color=f"C{k % 10}", label=arm, markersize=5)
        axis.plot([p[0] for p in missed], [p[1] for p in missed], "o", color=f"C{k % 10}", markerfacecolor="none",
                  markersize=5)
    if not top:
        plt.close(figure)
        return None
    axis.plot([0, top], [0, top], ":", color="grey", linewidth=1)
    axis.set_xlabel("offered tuples/s")
    axis.set_ylabel("processed tuples/s")
    axis.legend(fontsize=7)
    return save_figure(figure, data.out / f"{cluster}-{workload}-throughput.png",
                       f"{workload} on {cluster}: processed against offered (hollow: not sustained)")


def cdf_plot(data: Any, cluster: str, workload: str, rate: float | None) -> Path | None:
    if rate is None:
        return None
    records = read_step_records(data.out)
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7.5, 5))
    drawn = False
    for k, arm in enumerate(data.arms):
        keys = [(s["cluster"], s["workload"], s["arm"], s["repetition"], s["step"])
                for s in data.arm_steps(cluster, workload, arm, LATENCY) if v.number(s["rate"]) == rate]
        histograms = [decode(records[key]["histograms"]["due"]) for key in keys if key in records]
        if not histograms:
            continue
        latency, shares = cdf_ms(merged(histograms))
        axis.plot([-math.log10(max(1e-6, 1 - s)) for s in shares], latency, "-", color=f"C{k % 10}", label=arm)
        drawn = True
    if not drawn:
        plt.close(figure)
        return None
    ticks = [0.5, 0.9, 0.99, 0.999, 0.9999]
    axis.set_xticks([-math.log10(1 - t) for t in ticks], [f"{t:.2%}".rstrip("0").rstrip(".") for t in ticks])
    axis.set_yscale("log")
    axis.set_xlabel("percentile")
    axis.set_ylabel("latency from the due time, ms")
    axis.legend(fontsize=7)
    return save_figure(figure, data.out / f"{cluster}-{workload}-latency.png",
                       f"{workload} on {cluster}: latency at {rate:g} t/s per spout (80 % of RAS's capacity)")
