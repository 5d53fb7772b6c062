"""Replay a plugin request in process and say where the service's time goes.

``benchmarks/harness/scripts/bench-scale.sh`` with ``BENCH_DUMP_REQUESTS=DIR`` writes every request the
plugin sends (Thrift binary protocol). This reads one back and times, side by side in
one run, decoding it, planning it (``PlannerHandler.plan``, the service's whole work)
and encoding the answer, with the garbage collector paused as the service pauses it; ``--profile N`` prints cProfile's top N functions of planning::

    BENCH_DUMP_REQUESTS=/tmp/requests benchmarks/harness/scripts/bench-scale.sh --clusters production \\
        --schedulers topdown --repeat 1
    .venv/bin/python -m storm_planner_bench.common.profile_request /tmp/requests/request-1.thrift --profile 30

A developer's tool: timings go to standard error, nothing is written.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

from thriftpy2.utils import deserialize, serialize

from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.contract import wire_factories


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m storm_planner_bench.common.profile_request", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("request", type=Path, help="a request-N.thrift file written by the scale benchmark")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions after one warm-up (default 5)")
    parser.add_argument("--algorithm", help="plan every topology with this algorithm instead of the request's")
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="print cProfile's top N functions (cumulative) of one more planning call")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")

    from storm_planner.service.planning.handler import PlannerHandler
    from storm_planner.service.transport.server import collector_paused

    proto = wire_factories()[0]
    data = args.request.read_bytes()
    request = deserialize(T.PlanRequest(), data, proto)
    if args.algorithm:
        for spec in request.topologies:
            spec.algorithm = args.algorithm
    request.deadline_ms = max(request.deadline_ms or 0, 600_000)
    handler = PlannerHandler(isolate=False)
    times: dict[str, list[float]] = {"decode": [], "plan": [], "encode": []}
    try:
        for run in range(args.repeat + 1):
            with collector_paused():  # as the service runs a call
                started = time.perf_counter()
                deserialize(T.PlanRequest(), data, proto)
                decoded = time.perf_counter()
                response = handler.plan(request)
                planned = time.perf_counter()
                serialize(response, proto)
                encoded = time.perf_counter()
            if run:
                times["decode"].append(decoded - started)
                times["plan"].append(planned - decoded)
                times["encode"].append(encoded - planned)
        failed = [p.topology_id for p in response.plans if p.error is not None]
        solve = sum(p.solve_ms or 0.0 for p in response.plans)
        print(f"{args.request.name}: {len(request.topologies)} topologies, {len(request.nodes)} nodes, "
              f"{sum(len(s.executors) for s in request.topologies)} executors; "
              + ", ".join(f"{k} {statistics.median(v) * 1000:.0f} ms" for k, v in times.items())
              + f" (median of {args.repeat}); solve {solve:.0f} ms; failed {len(failed)}", file=sys.stderr)
        if args.profile:
            profiler = cProfile.Profile()
            with collector_paused():
                profiler.runcall(handler.plan, request)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(args.profile)
    finally:
        handler.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
