"""Benchmarks of issue #18: ``hetero`` when every instance has a fixed CPU cost (a *base*).

``storm-planner bench hetero-bases EXPERIMENT [--out DIR] [--seed N] [--quick]``, from the
repository root; each experiment writes ``EXPERIMENT.csv``, ``EXPERIMENT.md`` and a plot under
``benchmarks/results/hetero-bases/``. Progress goes to standard error.

* ``random``: the small random instances of ``storm-planner bench hetero`` (2–3 machines of 3
  types, 2–4 components, related and unrelated machines) with a base per (component, machine
  type) drawn from 5–40 % of a core. ``hetero`` against the exhaustive optimum
  (``hetero-optimal``, same instance bound) and, beside it, what the base-blind planner reaches:
  ``hetero`` planning on the same profile with its bases removed (the model before issue #18),
  scored on the true one; ``hetero`` without refinement 5 (``-p polish_nodes=0``), refinements
  1–3 alone (``-p descent=false polish_nodes=0``) and the paper's rules (``-p literal=true``).
* ``clusters``: the paper's topologies on Table IV's clusters and the paper's three machines,
  with the Table III profile plus bases per (component type, machine type) in three ranges
  (5–10, 10–20, 20–40 % of a core) and one where base and speed rank the machines the other way
  round (the fastest machine type has the largest base), and two with the bases measured on this
  machine (``MEASURED_BASES``: Storm's default wait strategy, and parking idle executors). ``hetero`` against the optimum where the
  exhaustive search runs, else against an upper bound: the machine base bound (a mixed-integer
  relaxation that charges a whole base on every machine a component uses; HiGHS' dual bound after
  ``BOUND_SECONDS``) or the base-fluid bound, whichever is lower
  (:mod:`storm_planner.planners.hetero.bounds`); and against the base-blind planner. Against a
  bound the ratio is a floor: the true gap to the optimum is smaller.

Every figure is the closed-form highest sustainable input rate of the model with bases
(:func:`storm_planner.planners.hetero.simulate.max_input_rate`).
"""
from __future__ import annotations

import copy
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storm_planner.core.errors import PlanningError
from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import CLUSTERS, TOPOLOGIES, add_bases, micro_problem, random_problem
from storm_planner.planners import run
from storm_planner.planners.hetero.bounds import fluid_bound, machine_base_bound
from storm_planner.planners.hetero.model import build_model
from storm_planner.planners.hetero.plans import placement_from_assignments
from storm_planner.planners.hetero.simulate import max_input_rate
from storm_planner_bench.common.report import experiments_benchmark, pyplot, stamped_progress, write_csv, write_table

DEFAULT_OUT = Path("benchmarks/results/hetero-bases")
_progress = stamped_progress("hetero-bases bench")

RANDOM_BASES = (5.0, 40.0)              # percent of a core: issue #18's range
CLUSTER_BASES = {"5-10": (5.0, 10.0), "10-20": (10.0, 20.0), "20-40": (20.0, 40.0)}
INVERTED = "inverted"                   # the fastest machine type has the largest base
# Bases measured on this machine by `storm-planner profile` (benchmarks/reports/hetero/profiling/
# profile.json and profile-park.json, the mean over its two machine types), in percent of a core:
# the Python spout and the Python bolt, with Storm's default wait strategy and with parking.
MEASURED_BASES = {"measured-default": {"spout": 5.5, "bolt": 13.3}, "measured-park": {"spout": 4.7, "bolt": 2.0}}
INVERTED_BASE = {"pentium": 40.0, "i5": 20.0, "i3": 5.0}   # Table III: the pentium is fastest, the i3 slowest
OPTIMAL_MAX_NODES = 300_000      # beyond it the exhaustive search gives up and a bound judges
BOUND_SECONDS = 20.0                    # HiGHS' limit for the machine base bound (its dual bound is valid at any time)
VARIANTS = ("hetero", "without the polish", "refinements 1-3", "literal", "base-blind")


def strip_bases(data: dict[str, Any]) -> dict[str, Any]:
    """The same problem with every base removed: what the planner saw before issue #18."""
    blind = copy.deepcopy(data)
    profile = blind["profiles"]
    for by_machine in [*profile.get("component_types", {}).values(),
                       *(entry["times"] for entry in profile["components"].values() if "times" in entry)]:
        for times in by_machine.values():
            if isinstance(times, dict):
                times.pop("base", None)
    return blind


def rate_on(problem: Problem, plan) -> float:
    """The highest sustainable input rate of ``plan`` under ``problem``'s model (bases included)."""
    model = build_model(problem)
    return max_input_rate(model, placement_from_assignments(problem, model, plan.assignments))


def compare(data: dict[str, Any]) -> dict[str, Any]:
    """Every planner variant on one instance, and the optimum (or an upper bound) to judge them by."""
    problem = Problem.from_dict(data)
    model = build_model(problem)
    started = time.perf_counter()
    hetero = run(problem, "hetero")
    row: dict[str, Any] = {
        "hetero": hetero.figures["max_input_rate"],
        "hetero_ms": round(1000 * (time.perf_counter() - started), 1),
        "polish_complete": int(hetero.figures["polish_complete"]),
        "refinements_1_3": run(problem, "hetero", descent=False, polish_nodes=0).figures["max_input_rate"],
        "no_polish": run(problem, "hetero", polish_nodes=0).figures["max_input_rate"],
        "literal": run(problem, "hetero", literal=True).figures["max_input_rate"],
        "base_blind": rate_on(problem, run(Problem.from_dict(strip_bases(data)), "hetero")),
        "instances": int(hetero.figures["instances"]),
        "base_blind_instances": int(run(Problem.from_dict(strip_bases(data)), "hetero").figures["instances"]),
        "fluid_bound": fluid_bound(model),
    }
    try:
        row["optimal"] = run(problem, "hetero-optimal", max_nodes=OPTIMAL_MAX_NODES).figures["max_input_rate"]
        row["base_bound"] = None
    except PlanningError:              # too large for the exhaustive search: judged by a bound
        row["optimal"] = None
        row["base_bound"] = min(row["fluid_bound"], machine_base_bound(model, BOUND_SECONDS))
    return row


def ratios(row: dict[str, Any]) -> dict[str, Any]:
    """Each variant as a fraction of the reference: the optimum where it ran, else the upper bound."""
    reference = row["optimal"] if row["optimal"] is not None else row["base_bound"]
    judged = "optimum" if row["optimal"] is not None else "base bound"
    share = (lambda value: round(value / reference, 4)) if reference > 0 else (lambda value: 1.0)
    return {"judged by": judged, "reference rate": round(reference, 2), "hetero": share(row["hetero"]),
            "without the polish": share(row["no_polish"]), "refinements 1-3": share(row["refinements_1_3"]),
            "literal": share(row["literal"]), "base-blind": share(row["base_blind"])}


# -- random instances ------------------------------------------------------------------------------

def bench_random(out: Path, seed: int, quick: bool, command: str, count: int = 150) -> list[dict[str, Any]]:
    count = 15 if quick else count
    rows = []
    for kind in ("related", "unrelated"):
        for i in range(count):
            instance = seed * 10_000 + i
            row = compare(random_problem(instance, kind == "related", bases=RANDOM_BASES))
            rows.append({"kind": kind, "instance": instance, **ratios(row), "hetero_ms": row["hetero_ms"],
                         "instances": row["instances"], "base-blind instances": row["base_blind_instances"]})
        mine = [r["hetero"] for r in rows if r["kind"] == kind]
        _progress(f"random {kind}: {len(mine)} instances, hetero/optimum worst {min(mine):.4f}")
    summary = []
    for kind in ("related", "unrelated"):
        group = [r for r in rows if r["kind"] == kind]
        for variant in VARIANTS:
            values = [r[variant] for r in group]
            summary.append({"machines": kind, "planner": variant, "instances": len(values),
                            "worst": min(values), "10th pct": sorted(values)[max(0, len(values) // 10 - 1)],
                            "median": statistics.median(values), "mean": round(statistics.mean(values), 4),
                            "within 1 %": f"{sum(v >= 0.99 for v in values)}/{len(values)}",
                            "under 50 %": sum(v < 0.5 for v in values)})
    write_csv(out / "random-per-instance.csv", rows)
    write_table(out, "random", summary, f"Random small instances with bases of {RANDOM_BASES[0]:g}-{RANDOM_BASES[1]:g} % "
                "of a core: max input rate as a fraction of the exhaustive optimum", command, digits=4)
    _plot_random(out, rows)
    return summary


def _plot_random(out: Path, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7, 3.8))
    for k, variant in enumerate(VARIANTS):
        values = sorted(r[variant] for r in rows)
        axis.plot([100 * (i + 1) / len(values) for i in range(len(values))], values, label=variant, color=f"C{k}")
    axis.axhline(0.99, color="grey", linestyle="--", linewidth=0.8, label="1 % below the optimum")
    axis.set_xlabel("instances (%), worst first")
    axis.set_ylabel("max input rate / optimum")
    axis.set_title("bases 5-40 % of a core: random small instances", fontsize=10)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "random.png", dpi=110)
    plt.close(figure)


# -- the paper's topologies and clusters -----------------------------------------------------------

def cluster_instance(topology: str, cluster: str, bases: str, seed: int) -> dict[str, Any]:
    data = micro_problem(topology, cluster)
    if bases in MEASURED_BASES:
        kinds = dict(TOPOLOGIES[topology]["components"])
        for name, entry in data["profiles"]["components"].items():
            if name not in kinds:
                continue
            times = data["profiles"]["component_types"][entry["type"]]
            base = MEASURED_BASES[bases]["spout" if kinds[name] == "spout" else "bolt"]
            entry["times"] = {m: {**(t if isinstance(t, dict) else {"et": t}), "base": base} for m, t in times.items()}
    elif bases == INVERTED:
        for by_machine in data["profiles"]["component_types"].values():
            for machine, times in by_machine.items():
                times = times if isinstance(times, dict) else {"et": times}
                by_machine[machine] = {**times, "base": INVERTED_BASE[machine]}
    else:
        add_bases(data["profiles"], random.Random(f"{seed}-{topology}-{cluster}-{bases}"), *CLUSTER_BASES[bases])
    return data


def bench_clusters(out: Path, seed: int, quick: bool, command: str, clusters: tuple[str, ...] | None = None,
                   topologies: tuple[str, ...] | None = None,
                   bases_kinds: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """``clusters`` (default all; ``quick``: paper and small) × ``topologies`` (default all) × ``bases_kinds``
    (default every kind of bases)."""
    clusters = clusters or (("paper", "small") if quick else tuple(CLUSTERS))
    rows = []
    for cluster in clusters:
        for topology in topologies or TOPOLOGIES:
            for bases in bases_kinds or (*MEASURED_BASES, *CLUSTER_BASES, INVERTED):
                row = compare(cluster_instance(topology, cluster, bases, seed))
                rows.append({"cluster": cluster, "topology": topology, "bases (% of a core)": bases, **ratios(row),
                             "instances": row["instances"], "base-blind instances": row["base_blind_instances"],
                             "polish complete": row["polish_complete"], "hetero ms": row["hetero_ms"]})
                _progress(f"{cluster} {topology} bases {bases}: hetero {rows[-1]['hetero']:.4f} of the "
                          f"{rows[-1]['judged by']}, base-blind {rows[-1]['base-blind']:.4f}")
    write_table(out, "clusters", rows, "The paper's topologies and clusters (Tables II-IV) with bases: max input rate "
                "as a fraction of the optimum (or of an upper bound where the exhaustive search does not run: a "
                "floor)", command, digits=4)
    _plot_clusters(out, rows)
    return rows


def _plot_clusters(out: Path, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(9, 3.8))
    labels = [f"{r['cluster'][:3]} {r['topology'][:3]} {r['bases (% of a core)']}" for r in rows]
    positions = range(len(rows))
    axis.bar([p - 0.2 for p in positions], [r["hetero"] for r in rows], width=0.4, label="hetero")
    axis.bar([p + 0.2 for p in positions], [r["base-blind"] for r in rows], width=0.4, label="base-blind")
    axis.set_xticks(list(positions), labels, rotation=90, fontsize=6)
    axis.set_ylabel("max input rate / reference")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "clusters.png", dpi=110)
    plt.close(figure)


# -- output ------------------------------------------------------------------------------------------

EXPERIMENTS: dict[str, Callable[..., list[dict[str, Any]]]] = {"random": bench_random, "clusters": bench_clusters}


BENCHMARKS = (experiments_benchmark("hetero-bases", "Nasiri et al. with a fixed CPU cost per instance (issue #18)",
                                    EXPERIMENTS, DEFAULT_OUT, "few instances and the two smallest clusters (a smoke run)",
                                    _progress),)


__all__ = ["BENCHMARKS", "compare", "strip_bases"]
