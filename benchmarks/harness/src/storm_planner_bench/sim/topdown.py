"""Benchmarks of the group-aware planners against Chatzistergiou & Viglas (CIKM 2014), §7.

``storm-planner bench NAME`` with NAME one of

* ``topdown-random``   §7.3: random jobs (3-7 groups, 17 tasks, 500% cost, fanout
  1/2/3 at 70/25/5%, IMC 5-20 MB/s) on 8 nodes x 100%; total IMC gain of every
  planner as a fraction of the exact optimum;
* ``topdown-speed``    §7.2: a 4 groups x 100 tasks pipeline; allocations per second;
* ``topdown-scale``    1,000 nodes and ~50,000 executors: planning time;
* ``topdown-priority`` §7.1 / Figure 4: prioritisation by relative significance vs
  by IMC, and the task-count sweep.

Each writes a CSV table, a markdown summary and a PNG plot under ``--out``
(default ``benchmarks/results/topdown``, relative to the working directory: run
from the repository root). Times are process CPU times (``time.process_time``),
which a busy shared machine disturbs less than wall-clock time; compare planners
within one run.

The jobs come from :mod:`storm_planner.generators.topdown`.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from storm_planner.generators.topdown import (
    mixed_job,
    pipeline_job,
    priority_job,
    random_job,
    scale_job,
    task_count_job,
)
from storm_planner_bench.common.report import (
    Argument,
    Benchmark,
    argument,
    command_line,
    markdown_table,
    print_progress,
    publish,
    pyplot,
    write_csv,
)

if TYPE_CHECKING:
    from storm_planner.core.problem import Problem

DEFAULT_OUT = Path("benchmarks/results/topdown")
PAPER = {"topdown": 93.1, "tasklevel-imc": 85.9, "tasklevel-imc-source": 85.9}


# ------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------

# name in tables -> (registered planner, parameters)
VARIANTS = {
    "optimal": ("optimal", {}),
    "topdown": ("topdown", {}),
    "topdown-imc": ("topdown", {"priority": "imc"}),
    "tasklevel": ("tasklevel", {}),
    "tasklevel-imc": ("tasklevel", {"priority": "imc"}),
    "tasklevel-imc-source": ("tasklevel", {"priority": "imc", "pair_order": "source"}),
    "topdown-ls": ("topdown-ls", {}),
    "even": ("even", {}),
}


def _problem(data: dict):
    from storm_planner.core.problem import Problem

    return Problem.from_dict(data)


def _run(problem, variant: str):
    from storm_planner.planners import run

    algorithm, params = VARIANTS[variant]
    started = time.process_time()
    plan = run(problem, algorithm, **params)
    return plan, (time.process_time() - started) * 1000.0


# ------------------------------------------------------------------------------------
# §7.3: comparison to the optimum
# ------------------------------------------------------------------------------------

def bench_random(args: argparse.Namespace) -> int:
    variants = [v for v in VARIANTS if v != "optimal"]
    rng = random.Random(args.seed)
    rows, started = [], time.monotonic()
    for index in range(args.graphs):
        data = random_job(rng, seed=index + 1, cost_spread=args.cost_spread)
        problem = _problem(data)
        plan, solve_ms = _run(problem, "optimal")
        row = {"graph": index, "groups": len(problem.components), "edges": len(problem.streams),
               "imc_total": round(plan.figures["imc_total"], 6),
               "optimal": round(plan.figures["imc_gain"], 6), "optimal_ms": round(solve_ms, 3)}
        for variant in variants:
            plan, solve_ms = _run(problem, variant)
            row[variant] = round(plan.figures["imc_gain"], 6)
            row[f"{variant}_ms"] = round(solve_ms, 3)
            row[f"{variant}_overloaded"] = int(plan.figures["overloaded_nodes"])
        rows.append(row)
        if (index + 1) % 100 == 0:
            print_progress(f"topdown-random: {index + 1}/{args.graphs} graphs, "
                      f"{time.monotonic() - started:.0f} s")
    summary = summarise_random(rows, variants, args.bootstrap, args.seed)
    elapsed = time.monotonic() - started
    text = (f"{args.graphs} graphs, generator seed {args.seed}, {elapsed:.0f} s wall.\n\n"
            + markdown_table(
                ["planner", "total gain / optimal", "95% CI (bootstrap)", "paper",
                 "graphs at optimum", "worst graph", "plans over capacity", "mean CPU ms"],
                [[s["variant"], f"{s['ratio']:.2f}%", f"{s['low']:.2f}-{s['high']:.2f}%",
                  f"{PAPER[s['variant']]}%" if s["variant"] in PAPER else "",
                  f"{s['at_optimum']}/{len(rows)}", f"{s['worst']:.1f}%", s["overloaded"],
                  f"{s['ms']:.2f}"] for s in summary])
            + f"\noptimal: mean {statistics.mean(r['optimal_ms'] for r in rows):.1f} CPU ms per graph; "
              f"plans within capacity above the optimum: "
              f"{sum(1 for r in rows for v in variants if r[v] > r['optimal'] + 1e-6 and not r[f'{v}_overloaded'])} "
              f"(must be 0; `even` ignores capacity, so its overloaded plans can exceed it).\n")
    print(publish(Path(args.out), "random", rows, "§7.3 random jobs: IMC gain as a fraction of the optimum",
                  command_line(args), text=text, plot=lambda path: _plot_random(path, rows, summary)))
    return 0


def summarise_random(rows: Sequence[dict], variants: Sequence[str], resamples: int, seed: int) -> list[dict]:
    optimal = np.array([r["optimal"] for r in rows])
    picks = np.random.default_rng(seed).integers(0, len(rows), size=(resamples, len(rows)))
    summary = []
    for variant in variants:
        gains = np.array([r[variant] for r in rows])
        boot = gains[picks].sum(axis=1) / optimal[picks].sum(axis=1) * 100.0
        ratios = np.where(optimal > 0, gains / np.where(optimal > 0, optimal, 1), 1.0)
        summary.append({
            "variant": variant, "ratio": gains.sum() / optimal.sum() * 100.0,
            "low": float(np.percentile(boot, 2.5)), "high": float(np.percentile(boot, 97.5)),
            "at_optimum": int(np.sum(gains >= optimal - 1e-6)), "worst": float(ratios.min() * 100.0),
            "overloaded": sum(r[f"{variant}_overloaded"] > 0 for r in rows),
            "ms": statistics.mean(r[f"{variant}_ms"] for r in rows),
        })
    return summary


def _plot_random(path: Path, rows: Sequence[dict], summary: Sequence[dict]) -> None:
    plt = pyplot()
    figure, (bars, cdf) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [s["variant"] for s in summary]
    values = [s["ratio"] for s in summary]
    errors = [[s["ratio"] - s["low"] for s in summary], [s["high"] - s["ratio"] for s in summary]]
    bars.bar(names, values, yerr=errors, color="tab:blue", capsize=3, label="measured")
    for i, name in enumerate(names):
        if name in PAPER:
            bars.plot([i - 0.4, i + 0.4], [PAPER[name]] * 2, color="tab:red", lw=2,
                      label="paper" if name == "topdown" else None)
    bars.set_ylabel("total IMC gain, % of optimal")
    bars.set_ylim(0, 105)
    bars.tick_params(axis="x", rotation=30)
    bars.legend(loc="lower left")
    bars.set_title(f"§7.3: {len(rows)} random jobs, 8 nodes x 100%")
    optimal = np.array([r["optimal"] for r in rows])
    for name in names:
        ratios = np.sort(np.array([r[name] for r in rows]) / np.where(optimal > 0, optimal, 1))
        cdf.plot(ratios * 100, np.arange(1, len(ratios) + 1) / len(ratios), label=name)
    cdf.set_xlabel("IMC gain of one graph, % of its optimum")
    cdf.set_ylabel("fraction of graphs")
    cdf.legend(fontsize=8)
    cdf.set_title("per-graph distribution")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ------------------------------------------------------------------------------------
# §7.2: throughput
# ------------------------------------------------------------------------------------

def bench_speed(args: argparse.Namespace) -> int:
    from storm_planner.planners import get_planner
    from storm_planner.planners.topdown._groups import job_graph, usable_nodes
    from storm_planner.planners.topdown.tasklevel import task_level
    from storm_planner.planners.topdown.topdown import top_down

    problem = _problem(pipeline_job(args.groups, args.tasks, args.nodes))
    nodes = usable_nodes(problem)
    graph = job_graph(problem)
    graph_links = job_graph(problem, with_links=True)
    calls: dict[str, Callable[[], Any]] = {
        "topdown (algorithm)": lambda: top_down(graph, nodes),
        "tasklevel (algorithm)": lambda: task_level(graph_links, nodes),
        "topdown (plan)": lambda: get_planner("topdown").plan(problem),
        "tasklevel (plan)": lambda: get_planner("tasklevel").plan(problem),
    }
    timelines = _speed_timelines(calls, args.rounds, args.seconds)
    print(_speed_report(args, problem, timelines, Path(args.out)))
    return 0


def _speed_timelines(calls: Mapping[str, Callable[[], Any]], rounds: int, seconds: float) -> dict[str, list[float]]:
    """Per call, the CPU time at which each of its allocations completed."""
    timelines: dict[str, list[float]] = {name: [] for name in calls}
    # Interleave short rounds so that load from other processes hits all alike.
    for round_index in range(rounds):
        for name, call in calls.items():
            timeline = timelines[name]
            offset = timeline[-1] if timeline else 0.0
            started = time.process_time()
            while True:
                call()
                elapsed = time.process_time() - started
                timeline.append(offset + elapsed)
                if elapsed >= seconds / rounds:
                    break
        print_progress(f"topdown-speed: round {round_index + 1}/{rounds}")
    return timelines


def _speed_report(args: argparse.Namespace, problem: Problem, timelines: Mapping[str, list[float]],
                  out: Path) -> str:
    """Write speed.csv, speed.md (allocations per CPU second of each call) and speed.png; return the markdown."""
    rates = {name: len(t) / t[-1] for name, t in timelines.items()}
    rows = [{"call": name, "allocations": len(timeline), "cpu_s": round(timeline[-1], 3),
             "allocations_per_s": round(rates[name], 2)} for name, timeline in timelines.items()]
    ratio_algorithm = rates["topdown (algorithm)"] / rates["tasklevel (algorithm)"]
    ratio_plan = rates["topdown (plan)"] / rates["tasklevel (plan)"]
    text = (f"{len(problem.executors)} executors, "
            f"{problem.traffic_model.pair_count} executor pairs with traffic (computed per component, "
            f"never built); CPU time, "
            f"{args.rounds} interleaved rounds.\n\n"
            + markdown_table(["call", "allocations", "CPU s", "allocations / s"],
                              [[r["call"], r["allocations"], r["cpu_s"], r["allocations_per_s"]] for r in rows])
            + f"\ntopdown / tasklevel: {ratio_algorithm:.0f}x (algorithm), {ratio_plan:.0f}x (plan). "
              f"Paper: 264/s for topDown, about 100x taskLevel; target here >= 2,640/s.\n"
              f"'algorithm' runs Alg. 4 (or 1) on the job graph built once, as the paper's allocator "
              f"holds its job graph; 'plan' is `Planner.plan(problem)`: it also builds the job graph "
              f"from the streams and the slots of the plan.\n")
    return publish(out, "speed", rows, f"§7.2 throughput: {args.groups} groups x {args.tasks} tasks pipeline, "
                   f"{args.nodes} nodes", command_line(args), text=text,
                   plot=lambda path: _speed_plot(args, timelines, path))


def _speed_plot(args: argparse.Namespace, timelines: Mapping[str, list[float]], path: Path) -> None:
    """speed.png: completed allocations against CPU seconds, one line per call (cf. the paper's Figure 5)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for name, timeline in timelines.items():
        axis.plot(timeline, np.arange(1, len(timeline) + 1), label=name)
    axis.set_yscale("log")
    axis.set_xlabel("CPU seconds of the throughput run")
    axis.set_ylabel("completed allocations")
    axis.set_title(f"§7.2 (cf. Figure 5): {args.groups} x {args.tasks} pipeline")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ------------------------------------------------------------------------------------
# scale
# ------------------------------------------------------------------------------------

def bench_scale(args: argparse.Namespace) -> int:
    from storm_planner.planners import get_planner, run

    rows = []
    cases = [("dense", None), ("sparse", args.sparse_targets)]
    for case, targets in cases:
        components = args.components if targets is None else args.sparse_components
        started = time.process_time()
        problem = _problem(scale_job(args.seed, args.nodes, args.executors, components,
                                     sparse_targets=targets))
        build_s = time.process_time() - started
        print_progress(f"topdown-scale: {case}: {len(problem.executors)} executors, "
                  f"{len(problem.traffic)} pairs, built in {build_s:.1f} CPU s")
        for algorithm in args.algorithms:
            started = time.process_time()
            get_planner(algorithm).plan(problem)
            plan_s = time.process_time() - started
            started = time.process_time()
            plan = run(problem, algorithm)
            run_s = time.process_time() - started
            rows.append({"traffic": case, "components": components, "executors": len(problem.executors),
                         "pairs": len(problem.traffic), "nodes": len(problem.nodes), "algorithm": algorithm,
                         "plan_cpu_s": round(plan_s, 3), "run_cpu_s": round(run_s, 3),
                         "imc_gain_pct": round(100 * plan.figures["collocation_factor"], 2),
                         "max_utilisation": round(plan.figures["max_utilisation"], 1),
                         "overloaded_nodes": int(plan.figures["overloaded_nodes"])})
            print_progress(f"topdown-scale: {case} {algorithm}: plan {plan_s:.2f} s, run {run_s:.2f} s")
    text = (f"Seed {args.seed}; CPU seconds; 'plan' is `Planner.plan`, 'run' adds the plan check and the "
            f"evaluator. Target: topdown <= 3 s.\n\n"
            + markdown_table(["traffic", "components", "executor pairs", "algorithm", "plan s", "run s",
                               "IMC collocated", "max util %", "overloaded"],
                              [[r["traffic"], r["components"], r["pairs"], r["algorithm"], r["plan_cpu_s"],
                                r["run_cpu_s"], f"{r['imc_gain_pct']}%", r["max_utilisation"],
                                r["overloaded_nodes"]] for r in rows]))
    print(publish(Path(args.out), "scale", rows, f"Scale: {args.nodes} nodes, {args.executors} executors",
                  command_line(args), text=text, plot=lambda path: _scale_plot(path, rows, args)))
    return 0


def _scale_plot(path: Path, rows: Sequence[dict], args: argparse.Namespace) -> None:
    plt = pyplot()
    figure, (times, gains) = plt.subplots(1, 2, figsize=(11, 4))
    labels = [f"{r['algorithm']}\n{r['traffic']}" for r in rows]
    times.bar(labels, [r["run_cpu_s"] for r in rows], color="tab:blue", label="run")
    times.bar(labels, [r["plan_cpu_s"] for r in rows], color="tab:orange", label="plan")
    times.axhline(3.0, color="tab:red", ls="--", label="3 s target (topdown)")
    times.set_ylabel("CPU seconds")
    times.legend()
    times.tick_params(axis="x", labelsize=7)
    gains.bar(labels, [r["imc_gain_pct"] for r in rows], color="tab:green")
    gains.set_ylabel("IMC collocated, % of total")
    gains.tick_params(axis="x", labelsize=7)
    figure.suptitle(f"{args.nodes} nodes, {args.executors} executors")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ------------------------------------------------------------------------------------
# §7.1: prioritisation and task count (Figure 4)
# ------------------------------------------------------------------------------------

# overlapping curves stay visible: each its own line style and marker size
STYLES = [{"marker": "o", "ls": "-", "ms": 9}, {"marker": "s", "ls": "--", "ms": 7}, {"marker": "^", "ls": ":", "ms": 6},
          {"marker": "v", "ls": "-.", "ms": 5}, {"marker": ".", "ls": "-", "ms": 4}]


def bench_priority(args: argparse.Namespace) -> int:
    out = Path(args.out)
    prioritisation = []
    for step in range(args.steps + 1):
        second = 2.0 * 10.0 - step * 10.0 / args.steps  # from 2x the first pair's IMC down to 1x
        problem = _problem(priority_job(second))
        row = {"second_pair_imc": round(second, 3)}
        for variant in ("tasklevel-imc", "tasklevel", "topdown-imc", "topdown", "optimal"):
            plan, _ = _run(problem, variant)
            row[variant] = round(plan.figures["imc_gain"], 4)
        prioritisation.append(row)

    task_count = []
    for factor in range(1, args.max_factor + 1):
        problem = _problem(task_count_job(factor))
        row = {"second_group_tasks": 10 * factor}
        for variant in ("tasklevel-imc", "tasklevel", "topdown", "topdown-ls", "optimal"):
            plan, _ = _run(problem, variant)
            row[variant] = round(plan.figures["imc_gain"], 4)
        task_count.append(row)
    write_csv(out / "task_count.csv", task_count)

    def table(rows: list[dict]) -> str:
        return markdown_table(list(rows[0]), [list(r.values()) for r in rows])

    text = (f"## (a) prioritisation: pipeline a -> b -> c (10 x 8%, 10 x 8%, 10 x 32%), 6 nodes x 100%; "
            f"IMC(a, b) = 10, IMC(b, c) from 20 down to 10. IMC gain:\n\n{table(prioritisation)}\n"
            f"## (b) task count: a (10 tasks) -> b (10 x factor tasks), each group 200%, "
            f"6 nodes x 80% spare, IMC 100. IMC gain:\n\n{table(task_count)}")
    print(publish(out, "priority", prioritisation, "§7.1 micro-benchmarks (cf. Figure 4)", command_line(args),
                  text=text, plot=lambda path: _priority_plot(path, prioritisation, task_count)))
    return 0


def _priority_plot(path: Path, prioritisation: list[dict], task_count: list[dict]) -> None:
    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    x = [r["second_pair_imc"] for r in prioritisation]
    for (name, label), style in zip((("tasklevel-imc", "TL, by IMC"), ("tasklevel", "TL, by relative significance"),
                                     ("topdown-imc", "TD, by IMC"), ("topdown", "TD, by relative significance"),
                                     ("optimal", "optimal")), STYLES):
        left.plot(x, [r[name] for r in prioritisation], label=label, **style)
    left.invert_xaxis()
    left.set_xlabel("IMC of <b, c> (IMC of <a, b> = 10)")
    left.set_ylabel("IMC gain")
    left.set_title("(a) prioritisation")
    left.legend(fontsize=8)
    x = [r["second_group_tasks"] for r in task_count]
    for (name, label), style in zip((("tasklevel-imc", "TL, by IMC"), ("tasklevel", "TL, by relative significance"),
                                     ("topdown", "TD"), ("topdown-ls", "TD + local search"),
                                     ("optimal", "optimal")), STYLES):
        right.plot(x, [r[name] for r in task_count], label=label, **style)
    right.set_xlabel("tasks of the second group (first: 10)")
    right.set_ylabel("IMC gain")
    right.set_title("(b) impact of task count")
    right.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ------------------------------------------------------------------------------------

def _out() -> Argument:
    return argument("--out", default=str(DEFAULT_OUT), help="output folder (default: %(default)s)")


BENCHMARKS = (
    Benchmark("topdown-random", "§7.3: planners vs the optimum on random jobs", (
        argument("--graphs", type=int, default=2000),
        argument("--seed", type=int, default=1),
        argument("--cost-spread", type=float, default=0.0,
                 help="processing cost per group ~ tasks x U(1-s, 1+s) (default: %(default)s)"),
        argument("--bootstrap", type=int, default=2000, help="bootstrap resamples for the CI"),
        _out(),
    ), bench_random),
    Benchmark("topdown-speed", "§7.2: allocations per second", (
        argument("--groups", type=int, default=4),
        argument("--tasks", type=int, default=100),
        argument("--nodes", type=int, default=10),
        argument("--seconds", type=float, default=10.0, help="CPU seconds per call kind"),
        argument("--rounds", type=int, default=5),
        _out(),
    ), bench_speed),
    Benchmark("topdown-scale", "1,000 nodes, 50,000 executors", (
        argument("--nodes", type=int, default=1000),
        argument("--executors", type=int, default=50_000),
        argument("--components", type=int, default=5000, help="components of the dense case"),
        argument("--sparse-components", type=int, default=100),
        argument("--sparse-targets", type=int, default=4),
        argument("--algorithms", nargs="+", default=["topdown", "tasklevel", "topdown-ls", "even"]),
        argument("--seed", type=int, default=1),
        _out(),
    ), bench_scale),
    Benchmark("topdown-priority", "§7.1: prioritisation and task count (Figure 4)", (
        argument("--steps", type=int, default=10),
        argument("--max-factor", type=int, default=7),
        _out(),
    ), bench_priority),
)


__all__ = ["BENCHMARKS", "mixed_job", "pipeline_job", "priority_job", "random_job", "scale_job",
           "task_count_job"]
