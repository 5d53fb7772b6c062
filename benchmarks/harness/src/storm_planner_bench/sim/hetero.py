"""``storm-planner bench hetero``: Nasiri et al. §6 in simulation.

Three parts, each writing a CSV, a markdown table and a plot under
``benchmarks/results/hetero/`` (``--out``):

* ``clusters`` — Linear, Diamond and Star (:mod:`storm_planner.generators.hetero`)
  on the paper's three-machine cluster and Table IV's small, medium and large
  clusters, profile Table III: ``hetero`` against ``storm-default`` placing the
  same execution graph (the paper's comparison, §6.3): throughput, weighted
  utilisation (eq. 9–10), their gains and the ratio of the gains (Table V);
  instances per component type (Table IV); the gap to ``hetero-optimal`` where
  the exhaustive search runs and to the fluid upper bound everywhere; the
  planning time (median of ``--repeats`` runs, side by side with
  ``storm-default``'s).
* ``tiny`` — every cluster of 2 or 3 machines of the paper's three types,
  with each topology: ``hetero`` against ``hetero-optimal`` with the same
  bound (2 × machines) — every paper-style instance the exhaustive search
  covers at that bound.
* ``random`` — ``--random`` random tiny instances (2–3 machines, 2–4
  components; :func:`storm_planner.generators.hetero.random_problem`) of two kinds: *related* machines (one speed per machine type, as
  Table III nearly is) and *unrelated* ones (every cost drawn on its own):
  ``hetero`` against ``hetero-optimal`` with the same bound (2 × machines).
* the plots: ``throughput_gain.png``, ``utilisation.png``, ``optimal_gap.png``.

Everything is deterministic: the planners use no randomness and the random
instances come from seeds 0 … ``--random`` − 1.
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from storm_planner.core.errors import PlanningError
from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import CLUSTERS, TOPOLOGIES, micro_problem, micro_profile, random_problem
from storm_planner.planners import run
from storm_planner.planners.hetero.bounds import fluid_bound
from storm_planner.planners.hetero.hetero_optimal import optimal_placement
from storm_planner.planners.hetero.model import build_model
from storm_planner.planners.hetero.plans import placement_from_assignments
from storm_planner.planners.hetero.simulate import gain, max_input_rate, simulate
from storm_planner_bench.common.report import Benchmark, argument, markdown_table, publish, pyplot

PAPER_SIMULATED = {  # §6.3, Fig. 10: throughput and utilisation gains over the default scheduler
    "small": ((26, 49), (10, 35)),
    "medium": ((36, 48), (31, 47)),
    "large": ((27, 31), (10, 21)),
}
PAPER_REAL = (7, 44)  # §6.2, Fig. 8: measured on the three-machine cluster
PAPER_TABLE_IV = {  # instances per component type (L, M, H) chosen by the paper's scheduler
    ("small", "linear"): (3, 3, 7), ("small", "diamond"): (12, 5, 7), ("small", "star"): (9, 10, 5),
    ("medium", "linear"): (41, 42, 35), ("medium", "diamond"): (67, 15, 46), ("medium", "star"): (45, 34, 25),
    ("large", "linear"): (201, 156, 341), ("large", "diamond"): (397, 208, 91), ("large", "star"): (327, 156, 206),
}
PAPER_TABLE_V = {  # ratio of throughput gain to utilisation gain
    ("small", "linear"): 1.41, ("small", "diamond"): 2.67, ("small", "star"): 1.15,
    ("medium", "linear"): 1.15, ("medium", "diamond"): 1.03, ("medium", "star"): 1.17,
    ("large", "linear"): 2.68, ("large", "diamond"): 1.95, ("large", "star"): 1.52,
}
OPTIMAL_BOUND = {"paper": 6, "small": 4}  # max instances per component for the exhaustive search
TYPE_SHORT = {"lowCompute": "L", "midCompute": "M", "highCompute": "H"}


def hetero_benchmark(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    parts = set(args.parts.split(","))
    meta: dict[str, Any] = {"command": "storm-planner bench hetero " + _argv(args), "parts": sorted(parts)}
    clusters_rows = random_rows = tiny_rows = None
    command = meta["command"]
    if "clusters" in parts:
        clusters_rows = cluster_experiment(args.clusters.split(","), args.repeats, args.max_nodes)
        publish(out, "clusters", clusters_rows, "hetero against storm-default on the paper's clusters", command,
                text=clusters_markdown(clusters_rows))
    if "tiny" in parts:
        tiny_rows = tiny_experiment(args.max_nodes)
        publish(out, "tiny", tiny_rows, "hetero against the optimum on every cluster of 2-3 of the paper's machines",
                command, text=tiny_markdown(tiny_rows))
    if "random" in parts:
        random_rows = random_experiment(args.random, args.max_nodes)
        publish(out, "random", random_rows, "hetero against the optimum on random tiny instances", command,
                text=random_markdown(random_rows))
    plot(out, clusters_rows, random_rows, tiny_rows)
    meta["seconds"] = round(time.perf_counter() - started, 1)
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {out} in {meta['seconds']} s")
    return 0


# -- clusters ------------------------------------------------------------------------------------------

def cluster_experiment(clusters: list[str], repeats: int, max_nodes: int) -> list[dict[str, Any]]:
    rows = []
    for cluster in clusters:
        for topology in TOPOLOGIES:
            rows.append(cluster_case(cluster, topology, repeats, max_nodes))
            row = rows[-1]
            print(f"{cluster:>6} {topology:<8} throughput {row['throughput_gain']:+6.1f}% "
                  f"utilisation {row['utilisation_gain']:+6.1f}%  gap to optimal {row['optimal_gap']}  "
                  f"to fluid {row['fluid_gap']:.2f}%  hetero {row['hetero_ms']:.1f} ms", flush=True)
    return rows


def cluster_case(cluster: str, topology: str, repeats: int, max_nodes: int) -> dict[str, Any]:
    problem = Problem.from_dict(micro_problem(topology, cluster))
    model = build_model(problem)
    hetero_ms, plan = _timed(lambda: run(problem, "hetero"), repeats)
    graph = dict(plan.parallelism)
    default_ms, default = _timed(lambda: run(problem, "storm-default", parallelism=graph), repeats)
    ours = simulate(model, placement_from_assignments(problem, model, plan.assignments))
    theirs = simulate(model, placement_from_assignments(problem, model, default.assignments))
    literal = run(problem, "hetero", literal=True)  # the paper's rules as written (no refinements)
    plain = run(problem, "hetero", descent=False, polish_nodes=0)    # refinements 1-3 only
    literal_default = run(problem, "storm-default", parallelism=dict(literal.parallelism))
    literal_gain = gain(literal.figures["throughput"],
                        simulate(model, placement_from_assignments(problem, model, literal_default.assignments)).throughput)
    bound = fluid_bound(model)
    row: dict[str, Any] = {
        "cluster": cluster, "topology": topology, "machines": model.n_machines,
        "instances": sum(graph.values()),
        "instances_LMH": "/".join(str(_per_type(problem, graph).get(k, 0)) for k in "LMH"),
        "paper_LMH": "/".join(map(str, PAPER_TABLE_IV.get((cluster, topology), ()))),
        "hetero_throughput": ours.throughput, "default_throughput": theirs.throughput,
        "throughput_gain": gain(ours.throughput, theirs.throughput),
        "hetero_utilisation": ours.weighted_utilisation, "default_utilisation": theirs.weighted_utilisation,
        "utilisation_gain": gain(ours.weighted_utilisation, theirs.weighted_utilisation),
        "fluid_gap": 100 * (1 - ours.input_rate / bound),
        "literal_throughput_gain": literal_gain,
        "literal_utilisation": literal.figures["weighted_utilisation"],
        "literal_fluid_gap": 100 * (1 - literal.figures["max_input_rate"] / bound),
        "no_descent_fluid_gap": 100 * (1 - plain.figures["max_input_rate"] / bound),
        "optimal_bound": "", "optimal_gap": "", "literal_optimal_gap": "", "no_descent_optimal_gap": "",
        "optimal_s": "",
        "hetero_ms": hetero_ms, "default_ms": default_ms,
    }
    row["gain_ratio"] = row["throughput_gain"] / row["utilisation_gain"] if row["utilisation_gain"] else ""
    row["paper_gain_ratio"] = PAPER_TABLE_V.get((cluster, topology), "")
    if cluster in OPTIMAL_BOUND:
        largest = OPTIMAL_BOUND[cluster]
        t = time.perf_counter()
        try:
            placement, _ = optimal_placement(model, [1] * model.n_components, largest, max_nodes)
            best = max_input_rate(model, placement)
            row.update(optimal_bound=largest, optimal_gap=round(100 * (1 - ours.input_rate / best), 2),
                       literal_optimal_gap=round(100 * (1 - literal.figures["max_input_rate"] / best), 2),
                       no_descent_optimal_gap=round(100 * (1 - plain.figures["max_input_rate"] / best), 2),
                       optimal_s=round(time.perf_counter() - t, 1))
        except PlanningError as error:
            row.update(optimal_bound=largest, optimal_gap=f"refused: {error}")
    return row


def _per_type(problem: Problem, graph: dict[str, int]) -> Counter:
    profile = micro_profile()["components"]
    counts: Counter = Counter()
    for component, n in graph.items():
        counts[TYPE_SHORT[profile[component]["type"]]] += n
    return counts


def _timed(action, repeats: int):
    times, result = [], None
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        result = action()
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times), result


def clusters_markdown(rows: list[dict[str, Any]]) -> str:
    main = []
    for r in rows:
        paper = f" ({r['paper_LMH']})" if r["paper_LMH"] else ""
        ratio = f"{r['gain_ratio']:.2f}" if r["gain_ratio"] != "" else "–"
        ratio += f" ({r['paper_gain_ratio']})" if r["paper_gain_ratio"] != "" else ""
        optimal = f"{r['optimal_gap']} (≤{r['optimal_bound']})" if r["optimal_bound"] != "" else "–"
        main.append([r["cluster"], r["topology"], r["machines"], f"{r['instances_LMH']}{paper}",
                     f"{r['throughput_gain']:+.1f}", f"{r['hetero_utilisation']:.1f} / {r['default_utilisation']:.1f}",
                     f"{r['utilisation_gain']:+.1f}", ratio, optimal, f"{r['fluid_gap']:.2f}",
                     f"{r['hetero_ms']:.1f}", f"{r['default_ms']:.1f}"])
    variants = []
    for r in rows:
        optimal = (f"{r['literal_optimal_gap']} / {r['no_descent_optimal_gap']} / {r['optimal_gap']}"
                   if r["optimal_bound"] != "" else "–")
        variants.append([r["cluster"], r["topology"], optimal,
                         f"{r['literal_fluid_gap']:.2f} / {r['no_descent_fluid_gap']:.2f} / {r['fluid_gap']:.2f}",
                         f"{r['literal_utilisation']:.1f} / {r['hetero_utilisation']:.1f}",
                         f"{r['literal_throughput_gain']:+.1f} / {r['throughput_gain']:+.1f}"])
    return (markdown_table(["cluster", "topology", "machines", "instances L/M/H (paper)", "throughput gain %",
                            "weighted util. hetero / default %", "util. gain %", "gain ratio (paper)",
                            "gap to optimal % (bound)", "gap to fluid %", "hetero ms", "default ms"], main)
            + "\nThe paper's rules as written (`-p literal=true`), refinements 1-3 without the descent "
              "(`-p descent=false polish_nodes=0`) and the refined `hetero`:\n\n"
            + markdown_table(["cluster", "topology", "gap to optimal % literal / no descent / refined",
                              "gap to fluid % literal / no descent / refined", "weighted util. % literal / refined",
                              "throughput gain % literal / refined"], variants))


# -- tiny clusters of the paper's machines ---------------------------------------------------------------

def tiny_clusters() -> list[tuple[int, int, int]]:
    return [c for size in (2, 3) for c in itertools.product(range(size + 1), repeat=3) if sum(c) == size]


def tiny_experiment(max_nodes: int) -> list[dict[str, Any]]:
    rows = []
    for counts in tiny_clusters():
        for topology in TOPOLOGIES:
            problem = Problem.from_dict(micro_problem(topology, counts))
            model = build_model(problem)
            largest = 2 * model.n_machines
            plan = run(problem, "hetero")
            plain = run(problem, "hetero", descent=False, polish_nodes=0)
            t = time.perf_counter()
            placement, nodes = optimal_placement(model, [1] * model.n_components, largest, max_nodes)
            best = max_input_rate(model, placement)
            ratio = plan.figures["max_input_rate"] / best
            rows.append({"cluster": "/".join(map(str, counts)), "topology": topology, "bound": largest,
                         "ratio": ratio, "ratio_no_descent": plain.figures["max_input_rate"] / best,
                         "hetero_instances": sum(plan.parallelism.values()),
                         "optimal_instances": int(placement.parallelism.sum()),
                         "optimal_s": round(time.perf_counter() - t, 1), "nodes": nodes})
            print(f"tiny {rows[-1]['cluster']} {topology:<8} hetero/optimal {ratio:.3f} "
                  f"({rows[-1]['optimal_s']} s)", flush=True)
    return rows


def tiny_markdown(rows: list[dict[str, Any]]) -> str:
    table = []
    for cluster in dict.fromkeys(r["cluster"] for r in rows):
        cells = {r["topology"]: r for r in rows if r["cluster"] == cluster}
        table.append([cluster, *(_tiny_cell(cells[t]) for t in TOPOLOGIES)])
    lines = ["hetero / optimal (in brackets: refinements 1-3 only, `-p descent=false polish_nodes=0`)", "",
             markdown_table(["machines pentium/i3/i5", *TOPOLOGIES], table).rstrip("\n")]
    for key, label in (("ratio", "hetero"), ("ratio_no_descent", "without the descent")):
        ratios = [r[key] for r in rows]
        lines.append(f"\n{label}: {len(ratios)} instances, worst {min(ratios):.3f}, "
                     f"mean {statistics.mean(ratios):.3f}, within 4 %: {sum(r >= 0.96 for r in ratios)}/{len(ratios)}.")
    return "\n".join(lines) + "\n"


def _tiny_cell(row: dict[str, Any]) -> str:
    def flagged(ratio: float) -> str:
        return f"{ratio:.3f}" + (" **<0.96**" if ratio < 0.96 else "")
    return f"{flagged(row['ratio'])} ({flagged(row['ratio_no_descent'])})"


# -- random instances -------------------------------------------------------------------------------------

def random_experiment(count: int, max_nodes: int) -> list[dict[str, Any]]:
    rows = []
    for kind in ("related", "unrelated"):
        for seed in range(count):
            problem = Problem.from_dict(random_problem(seed, kind == "related"))
            model = build_model(problem)
            largest = 2 * model.n_machines
            plan = run(problem, "hetero")
            plain = run(problem, "hetero", descent=False, polish_nodes=0)
            t = time.perf_counter()
            placement, nodes = optimal_placement(model, [1] * model.n_components, largest, max_nodes)
            best = max_input_rate(model, placement)
            rows.append({"kind": kind, "seed": seed, "machines": model.n_machines, "components": model.n_components,
                         "bound": largest, "ratio": plan.figures["max_input_rate"] / best,
                         "ratio_no_descent": plain.figures["max_input_rate"] / best,
                         "optimal_s": round(time.perf_counter() - t, 2), "nodes": nodes})
        ratios = [r["ratio"] for r in rows if r["kind"] == kind]
        print(f"random {kind}: {len(ratios)} instances, worst {min(ratios):.3f}, "
              f"mean {statistics.mean(ratios):.3f}, below 0.96: {sum(r < 0.96 for r in ratios)}", flush=True)
    return rows


def random_markdown(rows: list[dict[str, Any]]) -> str:
    table = []
    for kind in ("related", "unrelated"):
        group = sorted((r for r in rows if r["kind"] == kind), key=lambda r: r["ratio"])
        ratios = [r["ratio"] for r in group]
        plain = [r["ratio_no_descent"] for r in group]
        if not ratios:
            continue
        decile = ratios[max(0, len(ratios) // 10 - 1)]
        within = sum(r >= 0.96 for r in ratios)
        worst = ", ".join(str(r["seed"]) for r in group[:3])
        table.append([kind, len(ratios), f"{ratios[0]:.3f}", f"{decile:.3f}", f"{statistics.median(ratios):.3f}",
                      f"{statistics.mean(ratios):.3f}", f"{within}/{len(ratios)}", worst,
                      f"{min(plain):.3f} / {sum(r >= 0.96 for r in plain)}/{len(plain)}"])
    return markdown_table(["kind", "instances", "worst", "10th pct", "median", "mean", "within 4 %", "worst seeds",
                           "without the descent: worst / within 4 %"], table)


# -- plots ----------------------------------------------------------------------------------------------------

def plot(out: Path, clusters_rows, random_rows, tiny_rows=None) -> None:
    plt = pyplot()

    if clusters_rows:
        for key, name, paper_index, label in (
            ("throughput_gain", "throughput_gain.png", 0, "throughput gain over storm-default (%)"),
            ("utilisation_gain", "utilisation.png", 1, "weighted utilisation gain over storm-default (%)"),
        ):
            fig, ax = plt.subplots(figsize=(8, 4))
            clusters = list(dict.fromkeys(r["cluster"] for r in clusters_rows))
            for k, topology in enumerate(TOPOLOGIES):
                values = [next(r[key] for r in clusters_rows if r["cluster"] == c and r["topology"] == topology)
                          for c in clusters]
                ax.bar([i + (k - 1) * 0.27 for i in range(len(clusters))], values, width=0.27, label=topology)
            for i, cluster in enumerate(clusters):
                low, high = PAPER_SIMULATED[cluster][paper_index] if cluster in PAPER_SIMULATED else (
                    PAPER_REAL if paper_index == 0 else (None, None))
                if low is not None:
                    ax.fill_between([i - 0.45, i + 0.45], low, high, color="grey", alpha=0.25,
                                    label="paper" if i == 0 else None)
            ax.set_xticks(range(len(clusters)), clusters)
            ax.set_ylabel(label)
            ax.legend()
            fig.tight_layout()
            fig.savefig(out / name, dpi=120)
            plt.close(fig)
    if random_rows or tiny_rows:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        groups = [(kind, [r for r in random_rows if r["kind"] == kind]) for kind in ("related", "unrelated")
                  if random_rows] + ([("paper profile, 2-3 machines", tiny_rows)] if tiny_rows else [])
        for colour, (label, rows) in enumerate(groups):
            for key, style, suffix in (("ratio", "-", ""), ("ratio_no_descent", ":", ", without descent")):
                ratios = sorted(r[key] for r in rows)
                ax.step(ratios, [(i + 1) / len(ratios) for i in range(len(ratios))], where="post",
                        linestyle=style, color=f"C{colour}", label=label + suffix)
        ax.axvline(0.96, color="grey", linestyle="--", label="4 % below optimal")
        ax.set_xlabel("hetero / hetero-optimal (max input rate)")
        ax.set_ylabel("fraction of instances")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "optimal_gap.png", dpi=120)
        plt.close(fig)


BENCHMARKS = (Benchmark("hetero", "Nasiri et al.: hetero vs Storm's default, optimal, timing", (
    argument("--out", default="benchmarks/results/hetero", help="output directory"),
    argument("--parts", default="clusters,tiny,random", help="comma list of: clusters, tiny, random"),
    argument("--clusters", default=",".join(CLUSTERS), help="comma list of clusters"),
    argument("--repeats", type=int, default=5, help="timing repeats per planner (median)"),
    argument("--random", type=int, default=60, help="random instances per kind"),
    argument("--max-nodes", type=int, default=5_000_000, help="search nodes for hetero-optimal"),
), hetero_benchmark),)


def _argv(args: argparse.Namespace) -> str:
    return (f"--out {args.out} --parts {args.parts} --clusters {args.clusters} --repeats {args.repeats} "
            f"--random {args.random} --max-nodes {args.max_nodes}")
