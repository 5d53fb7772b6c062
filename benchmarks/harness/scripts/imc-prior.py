#!/usr/bin/env python3
"""topDown's first plans of the end-to-end bench's workloads, offline: where the data path and the acker's
messages cross nodes, weighed in tuples and in bytes.

    PYTHONPATH=python/src .venv/bin/python benchmarks/harness/scripts/imc-prior.py [--sizes 60,80,100] [--planners topdown,...]

Each workload of ``storm-planner bench e2e`` (``storm_planner_bench/e2e/workloads.py``) is built as the plugin sends it:
the streamparse topology's graph (``topologies/``), 4 ackers, every executor declaring 10 % of a core,
``topology.workers`` 4, on ``benchmarks/e2e/cluster.yaml``'s supervisors (i7-a, i7-b: 45 %; i5-a, i5-b: 35 %;
speed 1.0; 2 Mbit/s links), and converted by the service's own ``problem_from_thrift`` with no metrics
(the first plan). Each planner's plan is shown as executors per node with:

* ``model t``: tuples crossing nodes per spout tuple, by the planner's own prior (the plan log's ``imc``);
* ``model B``: bytes crossing nodes per spout tuple, the same rates with each user tuple at ``--truth``
  bytes on the wire and each acker message at its default (``ACK_PAYLOAD_BYTES`` + the per-tuple overhead);
* ``data B``: the same bytes for the streams that carry a tuple per input alone (``SPARSE`` and watermark
  streams left out: aggregates a tick emits unanchored, bargains' matches) with the acker's streams they
  imply (Storm sends no ack for an unanchored tuple), at this revision's prior rates. Our reading of the
  topologies' code, not the planner's.
* ``wire B``: ``data B`` plus the watermark streams, at the rates the service's prior gives them (the kit's
  replay spouts send one per record whose event time advanced, bolts pass one on per one received, all
  grouping copies each to every task; ``core.system_streams``), each ``WATERMARK_BYTES`` on the wire and
  unanchored. They are not rare: on bargains they are 8 of the 19 tuples per trade and quote.
* ``kit B`` (bargains only): every stream at the rate the topology's code emits it (``KIT_RATES``, read from
  ``topologies/bargains``: the join sends every released quote on, unanchored; the filter passes ~4 % on).
  With ``--cells`` it is checked against the grid's per-node link bytes (the correlation is printed: 0.93 over
  the 12 bargains cells of the second grid, ``benchmarks/reports/e2e-grid2/cells.csv`` at commit ``e33c893``).

``--save-layouts FILE`` writes the plans' placements (JSON), ``--layouts LABEL=FILE`` evaluates saved ones
beside this revision's plans, on this revision's yardsticks: run the script with another revision's
``python/src`` on ``PYTHONPATH`` and ``--save-layouts`` to compare the two revisions' first plans.

Rows: ``auto`` is the default (``imc_unit`` auto; user streams of unknown size);
``tuples``, ``bytes`` force ``imc_unit``; ``tuple.bytes=N`` sets ``planner.tuple.bytes`` (every user stream N
bytes). RAS's and the other Storm schedulers' placements of the grid (``--cells``) are evaluated beside them.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

from storm_planner.core.system_streams import ACK_PAYLOAD_BYTES, ACKER, acker_streams
from storm_planner.planners.base import run
from storm_planner.profiling.project import load_project_topology
from storm_planner.service.planning.convert import problem_from_thrift
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner_bench.e2e.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parents[3]
SUPERVISORS = [("i7-a", 45.0), ("i7-b", 45.0), ("i5-a", 35.0), ("i5-b", 35.0)]
OVERHEAD = 40.0   # planner.network.tuple.overhead.bytes' default
ACK_BYTES = ACK_PAYLOAD_BYTES + OVERHEAD
# Streams that do not carry an anchored tuple per input: aggregates a tick emits, unanchored (the bolts'
# emit(..., anchors=[])), bargains' join -> filter (every released quote, but unanchored: the filter acks nothing)
# and filter -> sink (the ~4 % that are bargains). Left out of ``data B``; so are watermark streams, which are not
# periodic (one per record: see ``wire B``).
SPARSE = {"count->rank", "rank->total", "count->top", "words->counts", "totals->sections",
          "plane_delays->store_planes", "route_delays->store_routes", "join->filter", "filter->sink"}
WATERMARK = "watermark"
WATERMARK_BYTES = OVERHEAD + 10.0   # one number, no anchor
# bargains as its code emits, per trade and quote: (source, target, stream) -> (rate, bytes). Watermarks: one per
# record (distinct milliseconds), vwap's two tasks each pass each on (2 emits, to both join tasks); acks: trades
# and quotes init + complete, vwap acks a trade, join a vwap tuple and a quote; the join's output is unanchored.
KIT_RATES = {"bargains-link": {
    ("trades", "vwap", "default"): (1.0, 80.0), ("trades", "vwap", WATERMARK): (1.0, WATERMARK_BYTES),
    ("vwap", "join", "default"): (1.0, 80.0), ("vwap", "join", WATERMARK): (2.0, WATERMARK_BYTES),
    ("quotes", "join", "default"): (1.0, 80.0), ("quotes", "join", WATERMARK): (1.0, WATERMARK_BYTES),
    ("join", "filter", "default"): (1.0, 90.0), ("filter", "sink", "default"): (0.04, 80.0),
    ("trades", ACKER, "__ack_init"): (1.0, ACK_BYTES), (ACKER, "trades", "__ack_ack"): (1.0, ACK_BYTES),
    ("quotes", ACKER, "__ack_init"): (1.0, ACK_BYTES), (ACKER, "quotes", "__ack_ack"): (1.0, ACK_BYTES),
    ("vwap", ACKER, "__ack_ack"): (1.0, ACK_BYTES), ("join", ACKER, "__ack_ack"): (2.0, ACK_BYTES),
}}


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


def crossing(problem, node_of, truth: float, data_only: bool, watermarks: bool = False) -> tuple[float, float]:
    """(tuples, bytes) crossing nodes per spout tuple under ``problem``'s prior rates; ``data_only``: the user
    streams less ``SPARSE`` and watermark ones, with the acker's streams those alone imply (core.system_streams);
    ``watermarks`` adds the watermark streams to those, ``WATERMARK_BYTES`` each."""
    spouts = {c.id for c in problem.components if c.type == "spout"}
    spout_rate = sum(s.rate for s in problem.streams
                     if s.source in spouts and s.target != ACKER and s.stream_id == "default")
    streams = problem.streams
    if data_only:
        user = tuple(s for s in streams if ACKER not in (s.source, s.target)
                     and f"{s.source}->{s.target}" not in SPARSE and s.stream_id != WATERMARK)
        streams = user + acker_streams(problem.components, user, tuple_bytes=ACK_BYTES)
        if watermarks:
            streams += tuple(s for s in problem.streams if s.stream_id == WATERMARK)
    flows = [(s, WATERMARK_BYTES if s.stream_id == WATERMARK and data_only
              else ACK_BYTES if ACKER in (s.source, s.target) else truth) for s in streams]
    tuples, size = _across(problem, node_of, flows)
    return tuples / spout_rate, size / spout_rate


def kit_crossing(name: str, problem, node_of) -> float | None:
    """Bytes crossing nodes per spout tuple with every stream at the rate the topology's code emits it
    (``KIT_RATES``), or None for a workload without such a model."""
    rates = KIT_RATES.get(name)
    if rates is None:
        return None
    flows, spout_rate = [], 0.0
    for s in problem.streams:
        rate, size = rates.get((s.source, s.target, s.stream_id), (0.0, 0.0))
        flows.append((s.__class__(s.source, s.target, s.grouping, rate, s.stream_id, size), size))
        if s.stream_id == "default" and problem.component(s.source).type == "spout" and s.target != ACKER:
            spout_rate += rate
    return _across(problem, node_of, flows)[1] / spout_rate


def kit_per_node(name: str, problem, node_of) -> dict[str, float]:
    """Bytes each node sends plus receives per input tuple under ``KIT_RATES`` (the grid's link columns)."""
    rates = KIT_RATES[name]
    members: dict[str, list[str]] = {}
    for e in problem.executors:
        members.setdefault(e.component, []).append(e.id)
    use: dict[str, float] = {}
    spout_rate = 0.0
    for s in problem.streams:
        rate, size = rates.get((s.source, s.target, s.stream_id), (0.0, 0.0))
        if s.stream_id == "default" and problem.component(s.source).type == "spout" and s.target != ACKER:
            spout_rate += rate
        for a, b, share in _pairs(s.grouping, rate, members[s.source], members[s.target]):
            if node_of[a] != node_of[b]:
                use[node_of[a]] = use.get(node_of[a], 0.0) + share * size
                use[node_of[b]] = use.get(node_of[b], 0.0) + share * size
    return {n: v / spout_rate for n, v in use.items()}


def _pairs(grouping: str, rate: float, sources: list[str], targets: list[str]):
    if grouping == "global":
        return [(a, targets[0], rate / len(sources)) for a in sources]
    share = rate / len(sources) if grouping == "all" else rate / (len(sources) * len(targets))
    return [(a, b, share) for a in sources for b in targets]


def _across(problem, node_of, flows) -> tuple[float, float]:
    members: dict[str, list[str]] = {}
    for e in problem.executors:
        members.setdefault(e.component, []).append(e.id)
    tuples = size = 0.0
    for s, bytes_ in flows:
        sources, targets = members.get(s.source, []), members.get(s.target, [])
        if not sources or not targets:
            continue
        across = sum(share for a, b, share in _pairs(s.grouping, s.rate, sources, targets)
                     if a != b and node_of[a] != node_of[b])
        tuples += across
        size += across * bytes_
    return tuples, size


def layout(problem, node_of) -> str:
    comp = {e.id: e.component for e in problem.executors}
    per: dict[str, Counter] = {}
    for e, n in node_of.items():
        per.setdefault(n, Counter())[comp[e]] += 1
    return " ".join(f"{n}[{','.join(f'{c}x{k}' if k > 1 else c for c, k in sorted(per[n].items()))}]"
                    for n in sorted(per))


def from_layout(problem, text: str) -> dict[str, str]:
    """A ``layout`` line (``node[component x count, ...] ...``) back to executor -> node."""
    def counted(part):
        match = re.fullmatch(r"(.+)x(\d+)", part)
        return (match.group(1), int(match.group(2))) if match else (part, 1)
    return _assigned(problem, ((node, *counted(part)) for node, body in re.findall(r"(\S+?)\[([^\]]*)\]", text)
                               for part in body.split(",")))


def from_cells(problem, text: str) -> dict[str, str]:
    """A cells.csv ``workers`` column as executor -> node (executors of a component are interchangeable)."""
    def counted(part):
        component, count = part.rsplit("x", 1)
        return component, int(count)
    return _assigned(problem, ((node, *counted(part)) for node, body in re.findall(r"(\S+?):\d+\[([^\]]*)\]", text)
                               for part in body.split(",") if part))


def _assigned(problem, placed) -> dict[str, str]:
    """(node, component, count) triples as executor -> node, each component's executors taken in turn."""
    free: dict[str, list[str]] = {}
    for e in problem.executors:
        free.setdefault(e.component, []).append(e.id)
    node_of = {}
    for node, component, count in placed:
        for _ in range(count):
            node_of[free[component].pop(0)] = node
    return node_of


def row(problem, name: str, label: str, node_of, truth: float, tail: str = "") -> str:
    t, b = crossing(problem, node_of, truth, False)
    _, d = crossing(problem, node_of, truth, True)
    _, w = crossing(problem, node_of, truth, True, watermarks=True)
    kit = kit_crossing(name, problem, node_of)
    shown = f"{kit:6.1f}" if kit is not None else f"{'':6}"
    return f"  {label:<30} {t:8.3f} {b:8.1f} {d:7.1f} {w:7.1f} {shown}  {layout(problem, node_of)}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workloads", default="trends-link,bargains-link,topk-link,wordcount-link,join-link,"
                                               "airline-link")
    parser.add_argument("--planners", default="topdown,tasklevel,topdown-ls")
    parser.add_argument("--sizes", default="60,70,80,100,200", help="planner.tuple.bytes values to try")
    parser.add_argument("--truth", type=float, default=80.0, help="wire bytes of a user tuple in 'model B'")
    parser.add_argument("--cells", default="", help="a bench cells.csv: the Storm schedulers' placements")
    parser.add_argument("--save-layouts", default="", help="write this revision's plans' placements here (JSON)")
    parser.add_argument("--layouts", action="append", default=[],
                        help="LABEL=FILE: placements another revision saved, evaluated beside (repeatable)")
    args = parser.parse_args()
    cells = []
    if args.cells:
        with open(args.cells, newline="") as file:
            cells = list(csv.DictReader(file))
    others = []
    for entry in args.layouts:
        label, _, path = entry.partition("=")
        others.append((label, json.loads(Path(path).read_text())))
    saved: dict[str, dict[str, str]] = {}
    for name in args.workloads.split(","):
        workload = WORKLOADS[name]
        base = problem_from_thrift(spec(workload), nodes())
        print(f"\n== {name} (user tuple {args.truth:g} B, acker message {ACK_BYTES:g} B, watermark "
              f"{WATERMARK_BYTES:g} B; per spout tuple)")
        print(f"  {'':<30} {'model t':>8} {'model B':>8} {'data B':>7} {'wire B':>7} {'kit B':>6}  placement")
        variants = [("auto", {}, {}), ("tuples", {}, {"imc_unit": "tuples"}),
                    ("bytes", {}, {"imc_unit": "bytes"})]
        variants += [(f"tuple.bytes={s}", {"planner.tuple.bytes": s}, {}) for s in args.sizes.split(",")]
        for planner in args.planners.split(","):
            for label, options, params in variants:
                problem = problem_from_thrift(spec(workload, options), nodes())
                plan = run(problem, planner, **params)
                node_of = {e: s.node for e, s in plan.assignments.items()}
                saved.setdefault(name, {})[f"{planner} {label}"] = layout(base, node_of)
                print(row(base, name, planner + " " + label, node_of, args.truth))
                for other, layouts in others:
                    if f"{planner} {label}" in layouts.get(name, {}):
                        text = layouts[name][f"{planner} {label}"]
                        print(row(base, name, f"  {other}: {planner} {label}", from_layout(base, text), args.truth))
        measured, modelled = [], []
        for cell in cells:
            if cell["workload"] == name:
                node_of = from_cells(base, cell["workers"])
                if not cell["scheduler"].startswith("planner:"):
                    print(row(base, name, "grid " + cell["scheduler"], node_of, args.truth,
                              f"   (measured {cell['link_bytes_per_tuple']} B/t)"))
                if name in KIT_RATES:
                    use = kit_per_node(name, base, node_of)
                    for node, _ in SUPERVISORS:
                        measured.append(float(cell[f"link_{node}_out_bytes_per_tuple"])
                                        + float(cell[f"link_{node}_in_bytes_per_tuple"]))
                        modelled.append(use.get(node, 0.0))
        if len(measured) > 2:
            print(f"  kit B per node against the grid's link bytes ({len(measured) // len(SUPERVISORS)} cells): "
                  f"correlation {statistics.correlation(modelled, measured):.3f}")
    if args.save_layouts:
        Path(args.save_layouts).write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
