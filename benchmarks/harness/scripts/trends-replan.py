#!/usr/bin/env python3
"""The end-to-end bench's trends cell rebuilt offline: each node's utilisation by the planner's model and by
its CPU quota, for topdown's layout, RAS's, and the re-plan's; then the re-plan over many splits of the
measured node loads between executors (the plan log gives node figures only).

    PYTHONPATH=python/src .venv/bin/python benchmarks/harness/scripts/trends-replan.py

Builders: ``tests/service/test_trends_replan.py`` (the service's own conversion of the bench's request).
"by quota" is what the executors' CPU (% of the host's cores) makes of each supervisor's quota, an executor
costing the same wherever it runs: true on the bench, whose supervisors share one host's cores. "declared"
speeds are those of the bench's e2e-fix run (i7 1.5, i5 1.0); "equal" speeds are what its quotas emulate,
and what benchmarks/e2e/cluster.yaml declares since.
"""
from __future__ import annotations

import itertools
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "service"))

import test_trends_replan as trends  # noqa: E402

from storm_planner.adaptation.budget import moves_between  # noqa: E402
from storm_planner.adaptation.replan import Replanner  # noqa: E402
from storm_planner.core.evaluate import utilisations  # noqa: E402
from storm_planner.core.problem import Executor, Slot  # noqa: E402
from storm_planner.metrics.measured import MeasuredTopology  # noqa: E402
from storm_planner.service.planning.convert import problem_from_thrift  # noqa: E402

QUOTA = {"i7-a": 45.0, "i7-b": 45.0, "i5-a": 35.0, "i5-b": 35.0}
SPEEDS = {"declared": {"i7-a": 1.5, "i7-b": 1.5, "i5-a": 1.0, "i5-b": 1.0}, "equal": dict.fromkeys(QUOTA, 1.0)}
RAS = {"[1-1]": "i7-a:25892", "[2-2]": "i7-a:25892", "[3-3]": "i7-b:25893", "[4-4]": "i7-b:25893",
       "[5-5]": "i7-a:25892", "[6-6]": "i7-b:25893", "[7-7]": "i7-b:25893", "[8-8]": "i5-a:25897",
       "[9-9]": "i5-a:25897", "[10-10]": "i7-a:25892"}   # cells.csv's placement column


def node_of(assignment) -> dict[str, str]:
    return {e: (s.node if isinstance(s, Slot) else s.split(":")[0]) for e, s in assignment.items()}


def problem(cpu: dict[str, float], speed: dict[str, float]):
    trends.SUPERVISORS = [(n, c, speed[n], port) for n, c, _, port in trends.SUPERVISORS]
    where = node_of(trends.FIRST_PLAN)
    executors = tuple(Executor(e, trends.COMPONENT[e], cpu[e] * speed[where[e]], 1.0, 128.0, 10.0)
                      for e in trends.COMPONENT)
    sizes = {("tweets", "count"): 80.0, ("count", "rank"): 90.0, ("rank", "total"): 400.0,
             ("__acker", "tweets"): 60.0, **{(c, "__acker"): 60.0 for c in ("tweets", "count", "rank", "total")}}
    measured = MeasuredTopology(executors=executors, traffic=trends.measured_traffic(), tuple_bytes=sizes)
    return problem_from_thrift(trends.spec(trends.FIRST_PLAN), trends.nodes(), measured)


def by_quota(cpu: dict[str, float], assignment) -> dict[str, float]:
    used = dict.fromkeys(QUOTA, 0.0)
    for e, n in node_of(assignment).items():
        used[n] += cpu[e]
    return {n: 100 * used[n] / QUOTA[n] for n in QUOTA}


def row(label: str, figures: dict[str, float]) -> str:
    return f"  {label:<22}" + "".join(f"{n} {figures[n]:5.1f}  " for n in QUOTA)


def show(speed_name: str) -> None:
    p = problem(trends.MEASURED_CPU, SPEEDS[speed_name])
    print(f"speeds {speed_name}: % of each node's CPU")
    for label, assignment in (("topdown now", trends.FIRST_PLAN), ("RAS", RAS)):
        print(row(f"{label}, model", utilisations(p, node_of(assignment))))
        print(row(f"{label}, by quota", by_quota(trends.MEASURED_CPU, assignment)))
    plan = Replanner().plan(p, "topdown")
    print(f"  re-plan: {plan.notes[-1]}")
    print(row("re-planned, model", utilisations(p, node_of(plan.assignments))))
    print(row("re-planned, by quota", by_quota(trends.MEASURED_CPU, plan.assignments)))


def sweep(speed_name: str) -> None:
    """Every split of the plan log's node loads (i7-a 42.2, i7-b 28.5, i5-a 31.2 % of a core) over a grid."""
    out: Counter[str] = Counter()
    for tweets, count, acker_b, total, acker_c in itertools.product((12, 18, 24), (8, 11, 14), (6, 12, 18), (3, 6),
                                                                    (8, 13, 18)):
        acker_a, rank, count_c = (42.2 - tweets - count) / 2, (28.5 - acker_b - total) / 2, 31.2 - acker_c
        if min(acker_a, rank, count_c) <= 0.5:
            continue
        cpu = {"[10-10]": tweets, "[5-5]": count, "[3-3]": acker_a, "[4-4]": acker_a, "[1-1]": acker_b,
               "[7-7]": rank, "[8-8]": rank, "[9-9]": total, "[2-2]": acker_c, "[6-6]": count_c}
        p = problem(cpu, SPEEDS[speed_name])
        plan = Replanner().plan(p, "topdown")
        moved = moves_between(p.current, plan.assignments)
        out["splits"] += 1
        if not moved:
            out["kept"] += 1
            continue
        busiest = max(by_quota(cpu, plan.assignments).values())
        out["busiest by quota < 85 %" if busiest < 85 else "85-90 %" if busiest < 90 else
            "90-100 %" if busiest <= 100 else "> 100 %"] += 1
        out[f"{len(moved)} moves"] += 1
    print(f"sweep, speeds {speed_name}: " + ", ".join(f"{k} {v}" for k, v in sorted(out.items())))


if __name__ == "__main__":
    for name in SPEEDS:
        show(name)
    for name in SPEEDS:
        sweep(name)
