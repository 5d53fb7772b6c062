"""Benchmarks of issue #4: Madsen et al.'s MILP and ALBIC against Flux and COLA.

``storm-planner bench albic EXPERIMENT [--out DIR] [--seed N] [--quick]``, from the
repository root; each experiment writes ``EXPERIMENT.csv``, ``EXPERIMENT.md`` and
``EXPERIMENT.png`` under ``benchmarks/results/albic/``:

* ``solve-time`` (§5.1, Figs. 2-4): load distance against the solver's time limit
  for 20/40/60 nodes with 300/600/900 executors, after a load fluctuation on a
  fraction of the nodes, for two migration budgets; ``milp`` against ``flux`` at
  the same budget. Also the warm start alone (time 0: the greedy incumbent).
* ``drift`` (§5.2.1, Fig. 7): 20 nodes, 300 executors, 13 migrations per round,
  executor loads drifting over many rounds; load distance after each round's
  migrations for ``milp``, ``flux`` and no rebalancing.
* ``scale-in`` (§5.1, Fig. 5): 60 nodes / 900 executors, 10 nodes marked for
  removal, 1 or 5 nodes overloaded (100%), 20 migrations per round: integrated
  scale-in (``milp``) against "drain first" (``milp`` with ``scale_in=drain_first``).
* ``collocation`` (§5.3, Fig. 11): ``albic`` against ``cola`` on 20/400/10,
  40/800/20 and 60/1200/30 nodes/executors/operators with half the executors
  communicating one-to-one, 10 migrations per period, the loads of 20% of the
  executors changing each period; collocation factor, load distance, load index
  and migrations per period. ALBIC starts from a random placement (cold) and
  from COLA's placement (the paper's recommended use, §5.4).

The workloads come from :mod:`storm_planner.generators.albic`.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storm_planner.core.evaluate import load_distance
from storm_planner.core.problem import Problem
from storm_planner.generators.albic import (
    CollocationWorkload,
    drifting_loads,
    fluctuate,
    fluctuation_problem,
    problem_dict,
    scale_in_problem,
)
from storm_planner.planners import run
from storm_planner_bench.common.report import experiments_benchmark, pyplot, stamped_progress, write_table

DEFAULT_OUT = Path("benchmarks/results/albic")


_progress = stamped_progress("albic bench")


# -- §5.1 solve time against load distance -----------------------------------------------

def bench_solve_time(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    from storm_planner.planners.albic import _milp_model as model
    from storm_planner.planners.albic._descent import greedy_descent
    from storm_planner.planners.albic._units import start_placement

    sizes = [(20, 300)] if quick else [(20, 300), (40, 600), (60, 900)]
    limits = [0.5, 2.0] if quick else [0.5, 1.0, 2.0, 5.0, 10.0]
    varies_levels = [0.2] if quick else [0.2, 0.5]
    rows = []
    for nodes, executors in sizes:
        budgets = [13] if quick else [nodes // 2 + 3, 2 * nodes]   # 13/40 at 20 nodes, 23/80, 33/120
        for varies in varies_levels:
            for budget in budgets:
                data = fluctuation_problem(nodes, executors, varies=varies, budget=budget, seed=seed)
                problem = Problem.from_dict(data)
                before = load_distance(problem, {e: s.node for e, s in problem.current.items()})
                flux = run(problem, "flux")
                balance = model.build_model(problem, [(e.id,) for e in problem.executors],
                                            start_placement(problem), None, budget, None)
                greedy = greedy_descent(balance, tuple(u.start for u in balance.units))
                base = dict(nodes=nodes, executors=executors, varies=varies, budget=budget,
                            before=round(before, 3), flux=round(flux.figures["load_distance"], 3),
                            flux_migrations=int(flux.figures["migrations"]))
                rows.append({**base, "solver": "warm start", "time_limit_s": 0.0, "solve_s": 0.0,
                             "milp": round(model.distance(balance, greedy), 3), "milp_migrations": -1})
                for solver in ("cbc", "highs"):
                    for limit in limits + ([20.0] if nodes >= 60 and solver == "cbc" else []):
                        if solver == "highs" and limit not in (2.0, 5.0) and not quick:
                            continue  # HiGHS at two limits only, to keep the run short
                        _progress(f"solve-time {nodes}x{executors} varies={varies} budget={budget} "
                                  f"{solver} {limit:g}s")
                        plan = run(problem, "milp", solver=solver, time_limit_s=limit)
                        rows.append({**base, "solver": solver, "time_limit_s": limit,
                                     "solve_s": round(plan.solve_ms / 1000.0, 2),
                                     "milp": round(plan.figures["load_distance"], 3),
                                     "milp_migrations": int(plan.figures["migrations"])})
    write_table(out, "solve-time", rows, "§5.1: load distance against solve time (milp vs flux)", command)
    _plot_solve_time(out, rows)
    return rows


def _plot_solve_time(out: Path, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    sizes = sorted({(r["nodes"], r["executors"]) for r in rows})
    figure, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
    for axis, (nodes, executors) in zip(axes[0], sizes):
        cases = sorted({(r["varies"], r["budget"]) for r in rows if r["nodes"] == nodes})
        for k, (varies, budget) in enumerate(cases):
            mine = [r for r in rows if r["nodes"] == nodes and r["varies"] == varies and r["budget"] == budget]
            cbc = sorted((r["solve_s"], r["milp"]) for r in mine if r["solver"] in ("cbc", "warm start"))
            color = f"C{k}"
            axis.plot([t for t, _ in cbc], [d for _, d in cbc], "o-", color=color,
                      label=f"milp (CBC) {varies:.0%} nodes, budget {budget}")
            highs = sorted((r["solve_s"], r["milp"]) for r in mine if r["solver"] == "highs")
            if highs:
                axis.plot([t for t, _ in highs], [d for _, d in highs], "s", color=color, mfc="none")
            axis.axhline(mine[0]["flux"], color=color, linestyle="--", linewidth=1)
        axis.set_title(f"{nodes} nodes, {executors} executors (dashed: flux)")
        axis.set_xlabel("solve time (s)")
        axis.set_ylabel("load distance (% points)")
        axis.set_yscale("log")
        axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(out / "solve-time.png", dpi=120)
    plt.close(figure)


# -- §5.2 drifting loads over many rounds -------------------------------------------------

def bench_drift(out: Path, seed: int, quick: bool, command: str, rounds: int = 25,
                sigmas: tuple[float, ...] = (0.05, 0.1, 0.2), phi: float = 0.9,
                time_limit_s: float = 5.0) -> list[dict[str, Any]]:
    """Loads drift as base × exp(x), x an AR(1) with coefficient ``phi`` and noise ``sigma`` (ours)."""
    rounds = 5 if quick else rounds
    sigmas = sigmas[:1] if quick else sigmas
    time_limit_s = 1.0 if quick else time_limit_s
    rows = []
    for sigma in sigmas:
        data = fluctuation_problem(20, 300, varies=0.0, budget=13, seed=seed, time_limit_s=time_limit_s)
        base = [e["load"] for e in data["executors"]]
        ids = [e["id"] for e in data["executors"]]
        start = {e: s.split(":")[0] for e, s in data["current"].items()}
        placement = {"milp": dict(start), "flux": dict(start), "none": dict(start)}
        for round_, loads in enumerate(drifting_loads(base, rounds, sigma, phi, seed), start=1):
            row: dict[str, Any] = {"sigma": sigma, "round": round_}
            for algorithm, node_of in placement.items():
                problem = Problem.from_dict(problem_dict(20, loads, node_of, data["options"], ids=ids))
                if algorithm == "none":
                    row["none"] = round(load_distance(problem, node_of), 3)
                    continue
                _progress(f"drift sigma={sigma} round {round_}/{rounds} {algorithm}")
                plan = run(problem, algorithm)
                placement[algorithm] = plan.nodes
                row[algorithm] = round(plan.figures["load_distance"], 3)
                row[f"{algorithm}_before"] = round(load_distance(problem, node_of), 3)
                row[f"{algorithm}_migrations"] = int(plan.figures["migrations"])
                row[f"{algorithm}_solve_s"] = round(plan.solve_ms / 1000.0, 2)
            rows.append(row)
    write_table(out, "drift", rows, "§5.2: load distance per round, 20 nodes, 300 executors, 13 migrations",
                 command)
    plt = pyplot()
    figure, axes = plt.subplots(1, len(sigmas), figsize=(7 * len(sigmas), 4), squeeze=False)
    for axis, sigma in zip(axes[0], sigmas):
        mine = [r for r in rows if r["sigma"] == sigma]
        for algorithm, style in (("milp", "o-"), ("flux", "s-"), ("none", ":")):
            axis.plot([r["round"] for r in mine], [r[algorithm] for r in mine], style, label=algorithm,
                      markersize=3)
        axis.set_xlabel("round")
        axis.set_ylabel("load distance after migrations (% points)")
        axis.set_title(f"20 nodes / 300 executors, 13 migrations per round, drift sigma {sigma}")
        axis.legend()
    figure.tight_layout()
    figure.savefig(out / "drift.png", dpi=120)
    plt.close(figure)
    return rows


# -- §5.1 scale-in: integrated against drain first ---------------------------------------

def bench_scale_in(out: Path, seed: int, quick: bool, command: str, rounds: int = 14,
                   time_limit_s: float = 5.0) -> list[dict[str, Any]]:
    nodes, executors, marked = (20, 300, 4) if quick else (60, 900, 10)
    rounds = 4 if quick else rounds
    time_limit_s = 1.0 if quick else time_limit_s
    rows = []
    for overloaded in (1, 5):
        data = scale_in_problem(nodes, executors, marked, overloaded, budget=20, seed=seed,
                                time_limit_s=time_limit_s)
        ids = [e["id"] for e in data["executors"]]
        loads = [e["load"] for e in data["executors"]]
        draining = list(range(nodes - marked, nodes))
        for mode in ("integrated", "drain_first"):
            node_of = {e: s.split(":")[0] for e, s in data["current"].items()}
            for round_ in range(1, rounds + 1):
                problem = Problem.from_dict(problem_dict(nodes, loads, node_of, data["options"],
                                                          draining=draining, ids=ids))
                _progress(f"scale-in OL{overloaded} {mode} round {round_}/{rounds}")
                plan = run(problem, "milp", scale_in=mode)
                node_of = plan.nodes
                left = sum(1 for n in node_of.values() if int(n[1:]) >= nodes - marked)
                rows.append({"overloaded": overloaded, "mode": mode, "round": round_,
                             "load_distance": round(plan.figures["load_distance"], 3),
                             "max_utilisation": round(plan.figures["max_utilisation"], 2),
                             "executors_on_marked": left,
                             "drain_load": round(plan.figures["drain_load"], 2),
                             "migrations": int(plan.figures["migrations"]),
                             "solve_s": round(plan.solve_ms / 1000.0, 2)})
    write_table(out, "scale-in", rows, f"§5.1 scale-in: {nodes} nodes, {executors} executors, {marked} marked, "
                 "20 migrations per round", command)
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    for k, overloaded in enumerate((1, 5)):
        for mode, style in (("integrated", "o-"), ("drain_first", "s--")):
            mine = [r for r in rows if r["overloaded"] == overloaded and r["mode"] == mode]
            axes[0].plot([r["round"] for r in mine], [r["load_distance"] for r in mine], style, color=f"C{k}",
                         label=f"OL{overloaded} {mode}", markersize=3)
            axes[1].plot([r["round"] for r in mine], [r["executors_on_marked"] for r in mine], style,
                         color=f"C{k}", label=f"OL{overloaded} {mode}", markersize=3)
    axes[0].set_ylabel("load distance (% points)")
    axes[0].set_yscale("log")
    axes[1].set_ylabel("executors left on nodes marked for removal")
    for axis in axes:
        axis.set_xlabel("round")
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out / "scale-in.png", dpi=120)
    plt.close(figure)
    return rows


# -- §5.3 ALBIC against COLA --------------------------------------------------------------

def run_collocation(workload: CollocationWorkload, algorithm: str, start: dict[str, str], periods: int,
                    seed: int, budget: int, time_limit_s: float, reference_load: float | None = None,
                    progress: Callable[[str], None] = lambda m: None) -> list[dict[str, Any]]:
    """Periods of (load change, plan, apply); figures measured after the migrations.

    The load index is the system load over ``reference_load`` (default: the load at ``start``),
    the paper's "average system load right after the initialization phase".
    """
    rng = random.Random(seed)
    factors = [1.0] * len(workload.base)
    node_of = dict(start)
    initial_load = reference_load or sum(workload.loads(workload.base, node_of))
    options = {"max_migrations": budget, "time_limit_s": time_limit_s, "seed": seed}
    state: dict[str, Any] | None = None
    rows = []
    for period in range(1, periods + 1):
        base = fluctuate(workload.base, factors, rng)
        problem = workload.problem(base, node_of, options)
        params = {"state": state} if algorithm == "albic" and state else {}
        plan = run(problem, algorithm, **params)
        state = dict(plan.state) if plan.state else state
        node_of = plan.nodes
        after = workload.problem(base, node_of, options)
        rows.append({"period": period,
                     "collocation_factor": round(plan.figures["collocation_factor"], 4),
                     "load_distance": round(load_distance(after, node_of), 3),
                     "load_index": round(after.total_load / initial_load, 4),
                     "migrations": int(plan.figures["migrations"]),
                     "solve_s": round(plan.solve_ms / 1000.0, 2)})
        progress(f"period {period}/{periods}: cf {rows[-1]['collocation_factor']:.3f} "
                 f"ld {rows[-1]['load_distance']:.2f} mig {rows[-1]['migrations']}")
    return rows


def bench_collocation(out: Path, seed: int, quick: bool, command: str, periods: int = 40,
                      time_limit_s: float = 5.0) -> list[dict[str, Any]]:
    configs = [(20, 400, 10)] if quick else [(20, 400, 10), (40, 800, 20), (60, 1200, 30)]
    periods = 4 if quick else periods
    time_limit_s = 1.0 if quick else time_limit_s
    rows = []
    for nodes, executors, operators in configs:
        workload = CollocationWorkload.build(nodes, executors, operators, one_to_one=0.5, seed=seed)
        random_start = workload.random_placement(seed)
        cola_start = run(workload.problem(workload.base, random_start, {"seed": seed}), "cola").nodes
        # Every run's load index is against the same reference: the random initial placement.
        reference = sum(workload.loads(workload.base, random_start))
        runs = (("cola", "cola", random_start), ("albic", "albic (cold)", random_start),
                ("albic", "albic (from cola)", cola_start))
        for algorithm, label, start in runs:
            def progress(message: str, label=label, size=f"{nodes}/{executors}/{operators}") -> None:
                _progress(f"collocation {size} {label} {message}")
            for row in run_collocation(workload, algorithm, start, periods, seed, budget=10,
                                       time_limit_s=time_limit_s, reference_load=reference, progress=progress):
                rows.append({"nodes": nodes, "executors": executors, "operators": operators,
                             "run": label, **row})
    write_table(out, "collocation", rows, "§5.3: albic vs cola, half the executors one-to-one, "
                 "10 migrations per period", command)
    _plot_collocation(out, rows)
    return rows


def _plot_collocation(out: Path, rows: list[dict[str, Any]]) -> None:
    plt = pyplot()
    configs = sorted({(r["nodes"], r["executors"], r["operators"]) for r in rows})
    metrics = ("collocation_factor", "load_distance", "load_index", "migrations")
    figure, axes = plt.subplots(len(configs), 4, figsize=(16, 3.2 * len(configs)), squeeze=False)
    for row_axes, config in zip(axes, configs):
        for axis, metric in zip(row_axes, metrics):
            for k, label in enumerate(("cola", "albic (cold)", "albic (from cola)")):
                mine = [r for r in rows if (r["nodes"], r["executors"], r["operators"]) == config
                        and r["run"] == label]
                axis.plot([r["period"] for r in mine], [r[metric] for r in mine], color=f"C{k}", label=label)
            axis.set_title(f"{config[0]}/{config[1]}/{config[2]}: {metric.replace('_', ' ')}", fontsize=9)
            axis.set_xlabel("period")
            if metric in ("migrations", "load_distance"):
                axis.set_yscale("symlog")
        row_axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(out / "collocation.png", dpi=110)
    plt.close(figure)


# -- command line ------------------------------------------------------------------------------

EXPERIMENTS = {
    "solve-time": bench_solve_time,
    "drift": bench_drift,
    "scale-in": bench_scale_in,
    "collocation": bench_collocation,
}


BENCHMARKS = (experiments_benchmark("albic", "Madsen et al.: milp/albic vs flux/cola (§5.1-5.3)", EXPERIMENTS,
                                    DEFAULT_OUT, "small sizes and few rounds (a smoke run)", _progress),)
