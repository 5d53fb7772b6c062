"""The per-period figures of ``storm-planner bench albic-real``, from what the real daemons recorded.

Madsen et al., *Integrative Dynamic Reconfiguration in a Parallel Stream Processing Engine*, §5.4
(Figs. 12-14) plots four figures per adaptation period; here each comes from the running cluster, not
from the planner's model:

* **collocation factor**: the share of the tuples the operators (bolts) sent each other in the period
  that stayed on one node. The tuples per task pair are the metrics hook's windows in ZooKeeper (each
  task's ``sent`` flows, every window read once: by task and sequence number); a task's node is where
  Nimbus ran it when the window was read (``getTopologyInfo``). Spouts (the paper's input nodes, separate
  machines there) and Storm's system streams (acks, metrics, ``__``-prefixed) are left out. 1 = every
  operator tuple stayed local; the one-to-one pairs of the airline jobs (extract k and plane sums k)
  are what moves it.
* **load distance** (§4.3.1): the largest difference, in percent points, between a node's load and the
  cluster's average, a node's load being the CPU its cgroup used in the period over its quota (every
  process of the supervisor: the worker JVMs and their Python subprocesses), the average being all
  nodes' CPU over all quotas;
* **load index** (§5, Metrics): "the current average system load divided by the average system load
  right after the initialization phase": the cluster's CPU in the period over its CPU in the first
  measured period of the same run (the settle before it is the initialisation). Below 1: less CPU for
  the same offered rate (collocation saves serialisation); a run that falls behind also uses less, so
  ``cpu_ms_per_tuple`` is kept beside it;
* **migrations**: executors whose slot changed between consecutive plans the service answered in the
  period (the plan log), and how many of those plans moved anything.

Beside them: link bytes both ways over every supervisor's emulated link, tuples acked per second and
the p99 complete latency of the tuples first emitted in the period (the replay spout's own times), the
p99 from the due time of the tuples due in it (``latency_due_p99_ms``: with the time a paused spout held
them back, which a drained re-plan adds and the emit hides), and
the model's collocation factor of the period's last plan (``planned_collocation``: what the planner
expected on its measured problem), to compare with what the cluster did.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from storm_planner.metrics.windows import TaskWindow


def task_nodes(assignment: Iterable[Mapping[str, Any]]) -> dict[int, str]:
    """Task -> node from Nimbus' placement rows (``{"executor": "[3-4]", "node": ...}``)."""
    nodes = {}
    for row in assignment:
        first, _, last = str(row["executor"]).strip("[]").partition("-")
        for task in range(int(first), int(last or first) + 1):
            nodes[task] = str(row["node"])
    return nodes


@dataclass
class Sample:
    """One read during a period: every task's current window and where each task ran then."""

    windows: Mapping[int, TaskWindow]
    node_of: Mapping[int, str]


@dataclass
class Collocation:
    """Operator tuples sent in a period: those that stayed on one node, and all of them."""

    local: int = 0
    total: int = 0
    seen: set[tuple[int, int]] = field(default_factory=set)   # (task, window sequence) already counted

    @property
    def factor(self) -> float:
        return self.local / self.total if self.total else math.nan

    def add(self, sample: Sample, spouts: set[str], begin_ms: float, end_ms: float) -> None:
        """Count the windows of ``sample`` that ended in [begin_ms, end_ms) and were not counted yet."""
        component = {w.task: w.component for w in sample.windows.values()}
        for window in sample.windows.values():
            key = (window.task, window.seq)
            if key in self.seen or not begin_ms <= window.end_ms < end_ms:
                continue
            self.seen.add(key)
            if window.component in spouts or window.component.startswith("__"):
                continue
            here = sample.node_of.get(window.task)
            for flow in window.sent:
                target = component.get(flow.task, "")
                if flow.stream.startswith("__") or not target or target.startswith("__") or target in spouts:
                    continue
                self.total += flow.tuples
                if here is not None and sample.node_of.get(flow.task) == here:
                    self.local += flow.tuples


def load_distance(cpu_s: Mapping[str, float], quota_pct: Mapping[str, float], seconds: float) -> float:
    """Madsen et al.'s load distance (§4.3.1) over the nodes: max |node load - average| in percent points,
    a node's load being its CPU seconds over its quota (percent of a core) for ``seconds``."""
    if seconds <= 0 or not cpu_s:
        return math.nan
    capacity = {n: quota_pct[n] / 100.0 * seconds for n in cpu_s}
    average = 100.0 * sum(cpu_s.values()) / sum(capacity.values())
    return max(abs(100.0 * cpu_s[n] / capacity[n] - average) for n in cpu_s)


def moves(plans: Sequence[Mapping[str, Any]], begin: float, end: float) -> dict[str, Any]:
    """The plans answered in [begin, end) (plan-log records of one topology, oldest first, errors left
    out): executors moved against the plan before each, plans that moved any, and the model's
    collocation factor of the last one (NaN: no plan in the period)."""
    migrations = replans = 0
    planned = math.nan
    previous: Mapping[str, Any] | None = None
    for plan in plans:
        if begin <= float(plan["time"]) < end:
            if previous is not None:
                moved = sum(1 for e, slot in plan["assignments"].items()
                            if previous["assignments"].get(e) not in (None, slot))
                migrations += moved
                replans += moved > 0
            given = (plan.get("figures") or {}).get("collocation_factor")
            planned = float(given) if isinstance(given, (int, float)) else math.nan   # a planned 0 is a figure
        previous = plan
    return {"migrations": migrations, "replans": replans, "planned_collocation": _round(planned, 4)}


@dataclass
class Counters:
    """What the cluster's counters said at one instant: CPU seconds per node, link bytes per node."""

    at: float
    cpu_s: Mapping[str, float]
    link_bytes: Mapping[str, int]


def period_row(before: Counters, after: Counters, quotas: Mapping[str, float], collocation: Collocation,
               times: Any, reference_cpu_s: float | None) -> dict[str, Any]:
    """One period's figures (see the module docstring); ``times`` is the spout's
    :class:`~storm_planner.streaming.timelog.TupleTimes`, ``reference_cpu_s`` the first period's
    cluster CPU per second (None: this is the first period)."""
    seconds = after.at - before.at
    cpu = {n: after.cpu_s[n] - before.cpu_s[n] for n in after.cpu_s}
    cpu_per_s = sum(cpu.values()) / seconds if seconds > 0 else math.nan
    link = sum(after.link_bytes[n] - before.link_bytes[n] for n in after.link_bytes)
    acked = times.acked_between(before.at, after.at)
    latencies = np.array(times.latencies_s(before.at, after.at)) * 1000.0
    from_due = np.array(times.latencies_from_due_s(before.at, after.at)) * 1000.0
    return {
        "seconds": round(seconds, 1),
        "collocation_factor": _round(collocation.factor, 4),
        "operator_tuples": collocation.total,
        "load_distance": _round(load_distance(cpu, quotas, seconds), 2),
        "load_index": _round(cpu_per_s / (reference_cpu_s or cpu_per_s), 3) if cpu_per_s else math.nan,
        "cpu_pct": _round(100.0 * cpu_per_s, 1),
        "cpu_ms_per_tuple": _round(1000.0 * sum(cpu.values()) / acked, 2) if acked else math.nan,
        "link_mbytes": round(link / 1e6, 3),
        "link_mbit": _round(link * 8 / 1e6 / seconds, 3) if seconds > 0 else math.nan,
        "processed_tps": round(acked / seconds, 1) if seconds > 0 else math.nan,
        "emitted_tps": round(times.emitted_between(before.at, after.at) / seconds, 1) if seconds > 0 else math.nan,
        "latency_p99_ms": _round(float(np.percentile(latencies, 99)), 1) if latencies.size else math.nan,
        "latency_due_p99_ms": _round(float(np.percentile(from_due, 99)), 1) if from_due.size else math.nan,
        # A move restarts workers: the tuples in flight time out and the spout replays them.
        "failed": times.failed_between(before.at, after.at),
        "replayed": times.replayed_between(before.at, after.at),
        **{f"load_{n}_pct": _round(100.0 * cpu[n] / (quotas[n] / 100.0 * seconds), 1) for n in sorted(cpu)},
    }


def _round(value: float, digits: int) -> float:
    return round(value, digits) if not math.isnan(value) else math.nan
