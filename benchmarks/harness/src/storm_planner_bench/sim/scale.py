"""``storm-planner bench scale``: how long the planner service takes on production-sized topologies.

Two measurements, each side by side in one run (time figures on a shared
machine are noisy; compare rows of one run):

* **service round trip**: one ``PlanRequest`` with one topology of ``E``
  executors in ``C`` components joined by shuffle streams, on ``N`` nodes,
  sent through the real Thrift service (``BackgroundServer`` on loopback,
  the same server ``storm-planner serve`` runs) — the time the Nimbus plugin
  waits — with the planner's own solve time beside it. Median of
  ``--repeat`` requests after one warm-up.
* **the Python API on §7.2's pipeline** (Chatzistergiou & Viglas: 4 groups
  × 100 tasks): ``storm_planner.plan(problem_dict, algorithm="topdown")`` calls
  per second against the algorithm alone on a ready ``Problem``.

Writes ``scale.csv`` and ``scale.md`` under ``--out``.

Not yet here (issue #13): Storm's DefaultScheduler and ResourceAwareScheduler
beside the plugin on generated production-sized clusters.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from storm_planner_bench.common.report import Benchmark, argument, command_line, markdown_table, print_progress, publish

DEFAULT_OUT = Path("benchmarks/results/scale")
# (executors, nodes, components): the measured shapes and the 52,000-executor topology.
SHAPES = ((1_000, 100, 5), (10_000, 250, 10), (52_000, 1_000, 10))


def plan_request(executors: int, nodes: int, components: int, algorithm: str, deadline_ms: int = 600_000):
    """A Thrift request: one topology, ``components`` in a shuffle pipeline, executors dealt evenly."""
    from storm_planner.service.transport.contract import planner_thrift as T

    per = [executors // components + (1 if i < executors % components else 0) for i in range(components)]
    names = [f"c{i}" for i in range(components)]
    spec_components = [T.Component(id=n, type="spout" if i == 0 else "bolt", parallelism=p)
                       for i, (n, p) in enumerate(zip(names, per))]
    owners = [n for n, p in zip(names, per) for _ in range(p)]
    spec_executors = [T.Executor(id=f"[{i}-{i}]", component=c) for i, c in enumerate(owners, start=1)]
    streams = [T.Stream(from_component=a, to_component=b, grouping="shuffle") for a, b in zip(names, names[1:])]
    workers = min(nodes * 4, max(1, executors // 20))
    spec = T.TopologySpec(id=f"scale-{executors}", name="scale", components=spec_components, streams=streams,
                          executors=spec_executors, current={}, algorithm=algorithm, num_workers=workers,
                          options={})
    node_list = [T.Node(id=f"sup-{k:04d}", host=f"host-{k:04d}", cpu_capacity=400.0 * (1 + k % 3),
                        memory_mb=65536.0, meta={}, free_ports=list(range(6700, 6704)), used_ports=[])
                 for k in range(nodes)]
    return T.PlanRequest(request_id=f"scale-{executors}-{algorithm}", nodes=node_list, topologies=[spec],
                         deadline_ms=deadline_ms)


def service_round_trips(shapes: Sequence[tuple[int, int, int]], algorithms: Sequence[str], repeat: int,
                        progress=print) -> list[dict[str, Any]]:
    from storm_planner.service.planning.handler import PlannerHandler
    from storm_planner.service.serve import BackgroundServer
    from storm_planner.service.transport.client import connect

    rows = []
    with BackgroundServer(PlannerHandler()) as server, connect(server.host, server.port, timeout_ms=600_000) as client:
        for executors, nodes, components in shapes:
            for algorithm in algorithms:
                request = plan_request(executors, nodes, components, algorithm)
                times, solves = [], []
                for attempt in range(repeat + 1):  # the first is a warm-up
                    started = time.perf_counter()
                    (plan,) = client.plan(request).plans
                    elapsed = time.perf_counter() - started
                    if plan.error:
                        raise RuntimeError(f"{algorithm} on {executors} executors: {plan.error.message}")
                    if attempt:
                        times.append(elapsed * 1000)
                        solves.append(plan.solve_ms or 0.0)
                row = {"executors": executors, "nodes": nodes, "components": components, "algorithm": algorithm,
                       "round_trip_ms": statistics.median(times), "solve_ms": statistics.median(solves),
                       "nodes_used": int(plan.figures.get("nodes_used", 0)),
                       "collocation_factor": round(plan.figures.get("collocation_factor", 0.0), 4)}
                progress(f"{executors:>7} executors, {nodes:>5} nodes, {algorithm:<8} "
                         f"round trip {row['round_trip_ms']:9.1f} ms (solve {row['solve_ms']:8.1f} ms)")
                rows.append(row)
    return rows


def api_rate(seconds: float = 3.0) -> dict[str, float]:
    """§7.2 pipeline: whole ``storm_planner.plan(dict)`` calls/s vs the algorithm alone on a ready Problem."""
    import storm_planner
    from storm_planner.core.problem import Problem
    from storm_planner.generators.topdown import pipeline_job
    from storm_planner.planners.topdown.topdown import TopDownPlanner

    job = pipeline_job()
    problem = Problem.from_dict(job)
    planner = TopDownPlanner()

    def rate(call) -> float:
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            call()
            count += 1
        return count / (time.perf_counter() - started)

    algorithm = rate(lambda: planner.plan(problem))
    api = rate(lambda: storm_planner.plan(job, algorithm="topdown"))
    return {"algorithm_per_s": algorithm, "api_per_s": api, "ratio": algorithm / api}


def write_report(out: Path, rows: list[dict[str, Any]], api: dict[str, float], command: str) -> Path:
    import os
    machine = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end of the run"
    table = [[f"{r['executors']:,}", f"{r['nodes']:,}", r["components"], r["algorithm"], f"{r['round_trip_ms']:.1f}",
              f"{r['solve_ms']:.1f}", r["nodes_used"]] for r in rows]
    lines = [f"Machine: {machine}.", "",
             markdown_table(["executors", "nodes", "components", "algorithm", "round trip ms (median)", "solve ms",
                             "nodes used"], table, right=(0, 1, 2, 4, 5, 6)).rstrip("\n")]
    lines += ["", "§7.2 pipeline (4 groups × 100 tasks), topdown:", "",
              f"- the algorithm alone on a ready Problem: {api['algorithm_per_s']:,.0f} plans/s",
              f"- `storm_planner.plan(dict)`, the whole call: {api['api_per_s']:,.0f} plans/s "
              f"({api['ratio']:.2f}× slower than the algorithm alone)", ""]
    publish(out, "scale", rows, "Planner service at scale", command, text="\n".join(lines))
    return out / "scale.md"


def run(args: argparse.Namespace) -> int:
    shapes = [s for s in SHAPES if s[0] <= args.max_executors]
    progress = print_progress
    rows = service_round_trips(shapes, args.algorithms.split(","), args.repeat, progress)
    api = api_rate()
    progress(f"§7.2 pipeline: algorithm {api['algorithm_per_s']:,.0f}/s, API {api['api_per_s']:,.0f}/s")
    command = command_line(args, "scale")
    path = write_report(Path(args.out), rows, api, command)
    print(path.read_text())
    return 0


BENCHMARKS = (Benchmark("scale", "planner service round trips on production-sized topologies", (
    argument("--algorithms", default="even,topdown", help="comma-separated (default: %(default)s)"),
    argument("--repeat", type=int, default=5, help="requests per row after a warm-up (median)"),
    argument("--max-executors", type=int, default=52_000, help="skip larger shapes"),
    argument("--out", default=str(DEFAULT_OUT), help="output folder (default: %(default)s)"),
), run),)
