"""The capacity model against each node: what it predicts a node uses beside what the node measured.

The report's *model's prediction* compares one number per search, the rate; when it is off, this says where.
For a step of a search (``steps.csv``), the placement it ran (the ``workers`` column: per worker its node and
how many executors of each component it held) is evaluated with the calibration's measured problem
(:func:`~storm_planner_bench.capacity.measured.model_of`) at the rate the step processed, and set beside what
the bench measured on each supervisor in the same window:

* **CPU**: ``fixed + f·variable`` of the node's executors and workers (``CapacityModel.demands``), against its
  cgroup's CPU (``cpu_<node>_pct``; every process under the quota: worker JVMs, shell subprocesses, and the
  kernel work charged to them). A node at :data:`~.verdicts.QUOTA_BOUND` of its quota or more measured the quota,
  not the work: it is marked and left out of the fit below.
* **Link**: Mbit/s sent and received (``CapacityModel.link_use``, the hook's payload sizes plus the per-tuple
  overhead), against the bytes the node's link carried each way (``link_<node>_{out,in}_bytes_per_tuple`` ×
  the tuples processed).

:func:`sent_cpu_fit` then asks one question of every sustained step's nodes below their quota: does the CPU
the model misses grow with what the node sends on the wire? It fits ``miss ≈ k · sent Mbit/s`` by least
squares through 0 and reports ``k`` and the root-mean-square miss before and after. It is a diagnosis, not a
cost the planner uses.

The executors of one component are interchangeable here: the ``workers`` column names how many a worker
held, not which, so they are given out in id order. Cost: O(executors + streams × nodes) per step.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storm_planner.core.problem import Problem
from storm_planner_bench.capacity import verdicts as v
from storm_planner_bench.capacity.measured import model_of, with_executors

_WORKER = re.compile(r"(?P<node>[^\s:\[\]]+):(?P<port>\d+)\[(?P<members>[^\]]*)\]")
_MEMBER = re.compile(r"(?P<component>.+)x(?P<count>\d+)")


@dataclass(frozen=True)
class NodeFigures:
    """One node in one step: CPU (% of a core) and link (Mbit/s) as the model predicts and as measured."""

    node: str
    cpu_predicted: float
    cpu_measured: float
    quota: float
    sent_predicted: float
    sent_measured: float
    received_predicted: float
    received_measured: float

    @property
    def at_quota(self) -> bool:
        return self.quota > 0 and self.cpu_measured >= v.QUOTA_BOUND * self.quota

    @property
    def cpu_missed(self) -> float:
        return self.cpu_measured - self.cpu_predicted


def placement_of(workers: str) -> list[dict[str, Any]]:
    """``[{"component", "node", "port"}, ...]``, one per executor, from a step's ``workers`` column."""
    placement = []
    for worker in _WORKER.finditer(workers or ""):
        for member in filter(None, (m.strip() for m in worker["members"].split(","))):
            found = _MEMBER.fullmatch(member)
            if found is None:
                raise ValueError(f"a worker's member {member!r} is not COMPONENTxCOUNT")
            placement += [{"component": found["component"], "node": worker["node"], "port": int(worker["port"])}
                          for _ in range(int(found["count"]))]
    return placement


def with_ids(problem: Problem, placement: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The placement with executor ids: each component's ids in order where the counts match the problem's,
    else ids of the component's own (:func:`~.measured.with_executors` rebuilds the executors then)."""
    ids: dict[str, list[str]] = defaultdict(list)
    for known in problem.executors:
        ids[known.component].append(known.id)
    wanted = Counter(str(p["component"]) for p in placement)
    same = all(len(ids.get(c, ())) == n for c, n in wanted.items())
    taken: Counter[str] = Counter()
    named = []
    for p in placement:
        component = str(p["component"])
        index = taken[component]
        taken[component] += 1
        executor = ids[component][index] if same else f"{component}#{index}"
        named.append({**p, "executor": executor})
    return named


def node_figures(problem: Problem, step: Mapping[str, Any], quotas: Mapping[str, float]) -> list[NodeFigures]:
    """Per node the step's placement used, the model's figures at the rate processed beside the measured ones
    (empty when the step names no placement or processed nothing)."""
    rate = v.number(step.get("processed_tps"))
    reference = float(problem.costs.reference_rate or math.nan)
    rows = [p for p in placement_of(str(step.get("workers") or "")) if not str(p["component"]).startswith("__system")]
    if not rows or not rate > 0 or not reference > 0:
        return []
    named = with_ids(problem, rows)
    problem = with_executors(problem, named)
    model = model_of(problem)
    node_of = {p["executor"]: p["node"] for p in named}
    workers = Counter(node for node, _ in {(p["node"], p["port"]) for p in named})
    factor = rate / reference
    demands = model.demands(node_of, workers)
    return [_figures(node, demands[node], factor, rate, step, quotas.get(node, math.nan)) for node in sorted(demands)]


def _figures(node: str, demand: Any, factor: float, rate: float, step: Mapping[str, Any],
             quota: float) -> NodeFigures:
    def wire(direction: str) -> float:
        return v.number(step.get(f"link_{node}_{direction}_bytes_per_tuple")) * rate * 8e-6

    return NodeFigures(node, demand.fixed + factor * demand.variable, v.number(step.get(f"cpu_{node}_pct")), quota,
                       factor * demand.sent, wire("out"), factor * demand.received, wire("in"))


@dataclass(frozen=True)
class SentFit:
    """``miss ≈ per_mbit · sent`` over ``nodes`` node-steps; root-mean-square miss before and after."""

    nodes: int
    per_mbit: float
    rms_before: float
    rms_after: float


def sent_cpu_fit(figures: Iterable[NodeFigures]) -> SentFit | None:
    """The least-squares ``k`` of ``cpu_missed ≈ k · sent_measured`` over nodes below their quota with finite
    figures; None with fewer than three such nodes or nothing sent."""
    points = [(f.sent_measured, f.cpu_missed) for f in figures if not f.at_quota
              and math.isfinite(f.sent_measured) and math.isfinite(f.cpu_missed)]
    sent_squared = sum(x * x for x, _ in points)
    if len(points) < 3 or sent_squared <= 0:
        return None
    k = sum(x * y for x, y in points) / sent_squared
    before = math.sqrt(sum(y * y for _, y in points) / len(points))
    after = math.sqrt(sum((y - k * x) ** 2 for x, y in points) / len(points))
    return SentFit(len(points), k, before, after)
