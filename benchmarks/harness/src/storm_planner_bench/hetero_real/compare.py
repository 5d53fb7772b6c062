"""``bench hetero-real``'s comparison of placements: medians, spreads, ratios and the verdict.

The paper's metric is the highest sustained throughput (eq. 2: the tuples/s all tasks process) of each
run. Per shape and placement: the median over its repetitions and its spread (lowest to highest); the
ratio of medians to Storm's DefaultScheduler (``default``) and to its ResourceAwareScheduler (``ras``),
with the spread of the ratio (lowest over highest to highest over lowest). hetero **beats both beyond
the spread** when every hetero repetition sustained more than every default and every ras repetition.
When it does not, or to see why it does, each placement's highest sustained steps say where it
saturated: each machine's CPU (its cpuacct group) and share of throttled CFS periods, means over the
repetitions.

``runs`` are :class:`storm_planner_bench.hetero_real.driver.Run` records; a run whose ``status`` is not
``ran`` (RAS could not place it) has no figure and counts in ``not_run``. Pure: no cluster here.
"""
from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BASELINES = ("default", "ras")          # Storm's own schedulers, the ratios' denominators
SATURATED = 0.5                         # a machine throttled in at least this share of periods is saturated


@dataclass(frozen=True)
class Spread:
    """The measured figures of one placement's repetitions."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return float(statistics.median(self.values))

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)


def ratio(numerator: Spread, denominator: Spread) -> dict[str, float] | None:
    """The ratio of medians and its spread (lowest / highest to highest / lowest); None when the denominator
    has no positive figure."""
    if not denominator.values or denominator.low <= 0 or not numerator.values:
        return None
    return {"median": numerator.median / denominator.median, "low": numerator.low / denominator.high,
            "high": numerator.high / denominator.low}


def verdict(hetero: Spread, baselines: Mapping[str, Spread]) -> dict[str, Any]:
    """Does every hetero repetition sustain more than every repetition of each baseline? ``beats`` is None when
    hetero or a baseline has no measured run (nothing to judge)."""
    missing = [name for name in BASELINES if not baselines.get(name, Spread(())).values]
    if not hetero.values or missing:
        absent = (["hetero"] if not hetero.values else []) + missing
        return {"beats": None, "reason": f"not judged: no measured run of {', '.join(absent)}"}
    best_name = max(BASELINES, key=lambda name: baselines[name].high)
    best = baselines[best_name].high
    if hetero.low > best:
        return {"beats": True, "reason": (
            f"every hetero repetition ({_range(hetero)}) above every default ({_range(baselines['default'])}) "
            f"and every ras one ({_range(baselines['ras'])})")}
    return {"beats": False, "reason": (
        f"hetero's lowest repetition ({hetero.low:.1f}) is not above {best_name}'s highest ({best:.1f})")}


def _range(spread: Spread) -> str:
    return f"{spread.low:.1f}" if spread.low == spread.high else f"{spread.low:.1f}–{spread.high:.1f}"


def top_step_load(runs: Sequence[Any]) -> dict[str, dict[str, float]]:
    """Per machine, the mean over ``runs`` of its CPU percent and throttled share at each run's highest
    sustained step (where the run's throughput comes from)."""
    steps = [r.top_step for r in runs if r.top_step is not None]
    machines = list(dict.fromkeys(m for s in steps for m in s.throttled))
    return {m: {"cpu": statistics.mean(s.machine_cpu.get(m, 0.0) for s in steps),
                "throttled": statistics.mean(s.throttled.get(m, 0.0) for s in steps)} for m in machines}


def saturated(load: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The machines throttled in at least :data:`SATURATED` of their periods at the top steps."""
    return [m for m, figures in load.items() if figures["throttled"] >= SATURATED]


def placement_figures(runs: Sequence[Any]) -> dict[str, Any]:
    """One placement's runs of one shape: measured throughput (spread), offered rates, the simulator's figures,
    the machines at the top steps, and the runs that did not run."""
    measured = [r for r in runs if r.measured]
    throughput = Spread(tuple(r.measured_throughput for r in measured))
    load = top_step_load(measured)
    predicted = [r.predicted for r in measured if r.predicted]
    return {
        "runs": len(measured), "not_run": [r.status for r in runs if not r.measured],
        "throughput": throughput, "offered": [r.sustained_offered for r in measured],
        "predicted_input": statistics.median(p["input_rate"] for p in predicted) if predicted else None,
        "predicted_throughput": statistics.median(p["throughput"] for p in predicted) if predicted else None,
        "load": load, "saturated": saturated(load),
        "ras_shares": sorted({r.ras_share for r in measured if r.ras_share is not None}, reverse=True),
    }


def summaries(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """Per shape, in run order: each placement's figures (:func:`placement_figures`) with its ratios to
    ``default`` and ``ras``, and hetero's :func:`verdict`."""
    found = []
    for shape in dict.fromkeys(r.shape for r in runs):
        own = [r for r in runs if r.shape == shape]
        placements = {p: placement_figures([r for r in own if r.placement == p])
                      for p in dict.fromkeys(r.placement for r in own)}
        for figures in placements.values():
            figures["ratios"] = {b: ratio(figures["throughput"], placements[b]["throughput"])
                                 for b in BASELINES if b in placements}
        empty = Spread(())
        judged = verdict(placements["hetero"]["throughput"] if "hetero" in placements else empty,
                         {b: placements[b]["throughput"] if b in placements else empty for b in BASELINES})
        found.append({"topology": shape, "placements": placements, "verdict": judged})
    return found


def summary_rows(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """summary.csv: one row per shape and placement."""
    rows = []
    for shape in summary:
        for placement, f in shape["placements"].items():
            t: Spread = f["throughput"]
            row: dict[str, Any] = {
                "topology": shape["topology"], "placement": placement, "runs": f["runs"],
                "not_run": len(f["not_run"]), "throughput": " ".join(f"{v:.1f}" for v in t.values),
                "throughput_median": round(t.median, 1) if t.values else "",
                "throughput_min": round(t.low, 1) if t.values else "",
                "throughput_max": round(t.high, 1) if t.values else ""}
            for baseline in BASELINES:
                r = f["ratios"].get(baseline)
                row.update({f"x_{baseline}": round(r["median"], 3) if r else "",
                            f"x_{baseline}_low": round(r["low"], 3) if r else "",
                            f"x_{baseline}_high": round(r["high"], 3) if r else ""})
            row["predicted_throughput"] = "" if f["predicted_throughput"] is None else round(f["predicted_throughput"], 1)
            row["beats_default_and_ras"] = ("" if placement != "hetero" or shape["verdict"]["beats"] is None
                                            else shape["verdict"]["beats"])
            row["saturated"] = " ".join(f["saturated"])
            row["ras_shares"] = " ".join(f"{s:g}" for s in f["ras_shares"])
            for machine, load in f["load"].items():
                row[f"cpu_{machine}"] = round(load["cpu"], 1)
                row[f"throttled_{machine}"] = round(load["throttled"], 3)
            rows.append(row)
    return rows
