#!/usr/bin/env python3
"""topDown's first plans of the end-to-end bench's workloads, offline: where the data path and the acker's
messages cross nodes, weighed in tuples and in bytes.

    PYTHONPATH=python/src .venv/bin/python scripts/imc-prior.py [--sizes 60,80,100] [--planners topdown,...]

Each workload of ``storm-planner bench e2e`` (``bench/_e2e_workloads.py``) is built as the plugin sends it:
the streamparse topology's graph (``topologies/``), 4 ackers, every executor declaring 10 % of a core,
``topology.workers`` 4, on ``benchmarks/e2e/cluster.yaml``'s supervisors (i7-a, i7-b: 45 %; i5-a, i5-b: 35 %;
speed 1.0; 2 Mbit/s links), and converted by the service's own ``problem_from_thrift`` with no metrics
(the first plan). Each planner's plan is shown as executors per node with:

* ``model t``: tuples crossing nodes per spout tuple, by the planner's own prior (the plan log's ``imc``);
* ``model B``: bytes crossing nodes per spout tuple, the same rates with each user tuple at ``--truth``
  bytes on the wire and each acker message at its default (``ACK_PAYLOAD_BYTES`` + the per-tuple overhead);
* ``data B``: the same bytes for the streams that carry a tuple per input alone (``SPARSE`` and watermark
  streams left out: aggregates a tick emits unanchored, bargains' rare matches) with the acker's streams they
  imply: closer to what grows with the offered rate, which the bench's ``link_bytes_per_tuple`` measures
  (Storm sends no ack for an unanchored tuple). Our reading of the topologies' code, not the planner's.

Rows: ``auto`` is the default (``imc_unit`` auto; user streams of unknown size);
``tuples``, ``bytes`` force ``imc_unit``; ``tuple.bytes=N`` sets ``planner.tuple.bytes`` (every user stream N
bytes). RAS's and the other Storm schedulers' placements of the grid (``--cells``) are evaluated beside them.
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path

from storm_planner.bench._e2e_workloads import WORKLOADS
from storm_planner.core.system_streams import ACK_PAYLOAD_BYTES, ACKER, acker_streams
from storm_planner.planners.base import run
from storm_planner.profiling.project import load_project_topology
from storm_planner.service.contract import planner_thrift as T
from storm_planner.service.convert import problem_from_thrift

ROOT = Path(__file__).resolve().parents[1]
SUPERVISORS = [("i7-a", 45.0), ("i7-b", 45.0), ("i5-a", 35.0), ("i5-b", 35.0)]
OVERHEAD = 40.0   # planner.network.tuple.overhead.bytes' default
ACK_BYTES = ACK_PAYLOAD_BYTES + OVERHEAD
# Streams that do not carry a tuple per input: aggregates a tick emits, unanchored (the bolts' emit(..., anchors=[]))
# and bargains' rare matches (join -> filter -> sink); watermark streams are periodic. Left out of ``data B``.
SPARSE = {"count->rank", "rank->total", "count->top", "words->counts", "totals->sections",
          "plane_delays->store_planes", "route_delays->store_routes", "join->filter", "filter->sink"}
WATERMARK = "watermark"


def nodes():
    return [T.Node(id=n, host=n, cpu_capacity=cpu, memory_mb=2048.0, free_ports=[6700, 6701, 6702], used_ports=[],
                   meta={"speed": "1.0", "machine.type": n[:2], "network.bandwidth.mbit": "2"})
            for n, cpu in SUPERVISORS]


def spec(workload, options=None):
    topology = load_project_topology(ROOT / workload.project, workload.topology)
    parallelism = {c.name: c.hint_for(None) for c in topology.components}
    parallelism[ACKER] = workload.ackers
    kinds = {c.name: c.kind for c in topology.components}
    components = [T.Component(id=c, type=kinds.get(c, "bolt"), parallelism=n, system=c.startswith("__"))
                  for c, n in sorted(parallelism.items())]
    streams = [T.Stream(from_component=source, to_component=c.name, grouping=grouping, stream_id=stream)
               for c in topology.components for source, stream, grouping in c.inputs]
    executors, task = [], 1
    for c in components:   # Storm numbers tasks by sorted component id
        for _ in range(c.parallelism):
            executors.append(T.Executor(id=f"[{task}-{task}]", component=c.id, cpu=10.0, memory_mb=128.0))
            task += 1
    return T.TopologySpec(id=f"e2e-{workload.name}-1", name=f"e2e-{workload.name}", components=components,
                          streams=streams, executors=executors, num_workers=workload.workers,
                          worker_max_heap_mb=768.0, options=dict(options or {}))


def crossing(problem, node_of, truth: float, data_only: bool) -> tuple[float, float]:
    """(tuples, bytes) crossing nodes per spout tuple under ``problem``'s prior rates; ``data_only``: the user
    streams less ``SPARSE`` and watermark ones, with the acker's streams those alone imply (core.system_streams)."""
    members: dict[str, list[str]] = {}
    for e in problem.executors:
        members.setdefault(e.component, []).append(e.id)
    spouts = {c.id for c in problem.components if c.type == "spout"}
    spout_rate = sum(s.rate for s in problem.streams
                     if s.source in spouts and s.target != ACKER and s.stream_id == "default")
    streams = problem.streams
    if data_only:
        user = tuple(s for s in streams if ACKER not in (s.source, s.target)
                     and f"{s.source}->{s.target}" not in SPARSE and s.stream_id != WATERMARK)
        streams = user + acker_streams(problem.components, user, tuple_bytes=ACK_BYTES)
    tuples = size = 0.0
    for s in streams:
        bytes_ = ACK_BYTES if ACKER in (s.source, s.target) else truth
        sources, targets = members.get(s.source, []), members.get(s.target, [])
        if not sources or not targets:
            continue
        if s.grouping == "global":
            pairs = [(a, targets[0]) for a in sources]
            share = s.rate / len(sources)
        elif s.grouping == "all":
            pairs = [(a, b) for a in sources for b in targets]
            share = s.rate / len(sources)
        else:
            pairs = [(a, b) for a in sources for b in targets]
            share = s.rate / (len(sources) * len(targets))
        across = sum(share for a, b in pairs if a != b and node_of[a] != node_of[b])
        tuples += across
        size += across * bytes_
    return tuples / spout_rate, size / spout_rate


def layout(problem, node_of) -> str:
    comp = {e.id: e.component for e in problem.executors}
    per: dict[str, Counter] = {}
    for e, n in node_of.items():
        per.setdefault(n, Counter())[comp[e]] += 1
    return " ".join(f"{n}[{','.join(f'{c}x{k}' if k > 1 else c for c, k in sorted(per[n].items()))}]"
                    for n in sorted(per))


def from_cells(problem, text: str) -> dict[str, str]:
    """A cells.csv ``workers`` column as executor -> node (executors of a component are interchangeable)."""
    free: dict[str, list[str]] = {}
    for e in problem.executors:
        free.setdefault(e.component, []).append(e.id)
    node_of = {}
    for node, body in re.findall(r"(\S+?):\d+\[([^\]]*)\]", text):
        for part in body.split(","):
            if not part:
                continue
            component, count = part.rsplit("x", 1)
            for _ in range(int(count)):
                node_of[free[component].pop(0)] = node
    return node_of


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workloads", default="trends-link,bargains-link,topk-link,wordcount-link,join-link,"
                                               "airline-link")
    parser.add_argument("--planners", default="topdown,tasklevel,topdown-ls")
    parser.add_argument("--sizes", default="60,70,80,100,200", help="planner.tuple.bytes values to try")
    parser.add_argument("--truth", type=float, default=80.0, help="wire bytes of a user tuple in 'model B'")
    parser.add_argument("--cells", default="", help="a bench cells.csv: the Storm schedulers' placements")
    args = parser.parse_args()
    cells = []
    if args.cells:
        with open(args.cells, newline="") as file:
            cells = list(csv.DictReader(file))
    for name in args.workloads.split(","):
        workload = WORKLOADS[name]
        base = problem_from_thrift(spec(workload), nodes())
        print(f"\n== {name} (user tuple {args.truth:g} B, acker message {ACK_BYTES:g} B; per spout tuple)")
        print(f"  {'':<30} {'model t':>8} {'model B':>8} {'data B':>7}  placement")
        variants = [("auto", {}, {}), ("tuples", {}, {"imc_unit": "tuples"}),
                    ("bytes", {}, {"imc_unit": "bytes"})]
        variants += [(f"tuple.bytes={s}", {"planner.tuple.bytes": s}, {}) for s in args.sizes.split(",")]
        for planner in args.planners.split(","):
            for label, options, params in variants:
                problem = problem_from_thrift(spec(workload, options), nodes())
                plan = run(problem, planner, **params)
                node_of = {e: s.node for e, s in plan.assignments.items()}
                t, b = crossing(base, node_of, args.truth, False)
                _, d = crossing(base, node_of, args.truth, True)
                print(f"  {planner + ' ' + label:<30} {t:8.3f} {b:8.1f} {d:7.1f}  {layout(base, node_of)}")
        for row in cells:
            if row["workload"] == name and not row["scheduler"].startswith("planner:"):
                node_of = from_cells(base, row["workers"])
                t, b = crossing(base, node_of, args.truth, False)
                _, d = crossing(base, node_of, args.truth, True)
                print(f"  {'grid ' + row['scheduler']:<30} {t:8.3f} {b:8.1f} {d:7.1f}  {layout(base, node_of)}"
                      f"   (measured {row['link_bytes_per_tuple']} B/t)")


if __name__ == "__main__":
    sys.exit(main())
