"""What the kit measured for a topology, turned into the benchmark's baselines and its bound.

**The measured problem.** The planner service, started with ``--problem-log FILE``, writes one JSON line per
planned topology per round: ``{"time", "topology", "name", "algorithm", "problem"}``, the problem file its
planner saw. Once the workers' metrics arrive, that problem carries ``costs`` with ``origin: "measured"``
(:mod:`storm_planner.core.costs`): every executor's CPU at the ``reference_rate`` the spouts were measured at
(shell subprocesses included), each component's ``executor_fixed`` CPU and the worker JVM's ``worker_fixed``.
The bench takes that line for each workload from a calibration submission on the same cluster
(:func:`latest_measured`) and keeps it under ``<out>/measured/<cluster>/<workload>.json``.

**ras+measured** (:func:`declaration`): per component, CPU per tuple = (its executors' CPU − their fixed CPU) /
reference rate. An operator declares, per executor, the fixed CPU plus its share of the component's per-tuple
CPU at a *declaration rate* λ_d. The bench chooses λ_d so that the declared total fills
:data:`DECLARED_SHARE` (90 %) of the supervisors' declared CPU: RAS then packs every component in proportion
to what it costs, and the topology still fits. If first-fit-decreasing cannot pack those executors on the
supervisors, λ_d falls by 5 % until it can, so RAS never refuses the topology. The acker is declared through
``topology.acker.cpu.pcore.percent``.

**λ\\*** (:func:`rate_bound`): :func:`~storm_planner.planners.capacity.bound.factor_bound` of the measured
problem on the cluster's nodes as the bench holds them (each supervisor's quota, slots, and link where the
problem has none), any number of workers, times the reference rate.

**The model's prediction** (:func:`predicted_rate`): for the placement an arm ran (executor → node, and
workers per node), ``CapacityModel.factor × reference rate``. Where the arm ran another parallelism than the
calibration (a rebalance added executors), the problem's executors are rebuilt per component from the
placement's, each with the component's fixed CPU and its tasks' share of the per-tuple CPU (an even share
where the ids do not give the tasks), its traffic taken from the streams.
"""
from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.problem import Component, Executor, Node, Problem
from storm_planner.core.tasks import tasks_of

DECLARED_SHARE = 0.90
ACKER = "__acker"
ACKER_CPU_KEY = "topology.acker.cpu.pcore.percent"
MAX_LINE_BYTES = 32 << 20
MIN_DECLARED = 1.0        # % of a core: the least an executor is declared at


def read_problem_log(path: Path | None, topology: str | None = None) -> list[dict[str, Any]]:
    """The problem log's records (of ``topology`` when given), in order; a line that is not such a record
    (cut, too long, not JSON) is skipped. A log that does not exist is empty."""
    if path is None or not Path(path).is_file():
        return []
    found = []
    with Path(path).open("rb") as handle:
        for raw in handle:
            if len(raw) > MAX_LINE_BYTES or not raw.endswith(b"\n"):
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if (isinstance(record, dict) and isinstance(record.get("problem"), dict)
                    and (topology is None or record.get("topology") == topology)):
                found.append(record)
    return found


def measured_problem(record: Mapping[str, Any]) -> Problem | None:
    """The record's problem when its costs are measured at a positive reference rate, else None."""
    try:
        problem = Problem.from_dict(record["problem"])
    except (StormPlannerError, KeyError, TypeError, ValueError):
        return None
    costs = problem.costs
    return problem if costs.origin == "measured" and (costs.reference_rate or 0) > 0 else None


def latest_measured(records: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], Problem] | None:
    """The last record with a measured problem, and that problem."""
    last = None
    for record in records:
        problem = measured_problem(record)
        if problem is not None:
            last = (record, problem)
    return last


@dataclass(frozen=True)
class ComponentCost:
    executors: int
    fixed: float          # CPU % of one executor at zero rate
    per_tuple: float      # CPU % of the whole component per offered tuple/s

    def per_executor(self, rate: float) -> float:
        return self.fixed + self.per_tuple * rate / self.executors


def component_costs(problem: Problem) -> dict[str, ComponentCost]:
    """Per component with executors (Storm's own but the acker left out), its measured costs."""
    rate = float(problem.costs.reference_rate or 0.0)
    fixed_of = problem.costs.executor_fixed
    by_component: dict[str, list[float]] = defaultdict(list)
    for executor in problem.executors:
        by_component[executor.component].append(executor.load)
    costs = {}
    for component, loads in sorted(by_component.items()):
        if component.startswith("__") and component != ACKER:
            continue
        fixed = max(0.0, float(fixed_of.get(component, 0.0)))
        variable = sum(max(0.0, load - fixed) for load in loads)
        costs[component] = ComponentCost(len(loads), fixed, variable / rate if rate > 0 else 0.0)
    return costs


@dataclass(frozen=True)
class Declaration:
    """ras+measured's declared CPU: per component, what each executor declares (% of a core)."""

    rate: float                          # the declaration rate λ_d (offered t/s)
    cpu: Mapping[str, float] = field(default_factory=dict)
    share: float = DECLARED_SHARE        # of the supervisors' declared CPU the declared total fills

    def options(self, prefix: str) -> dict[str, Any]:
        """The topology options that declare it (``<prefix>.cpu.<component>``, the acker's key)."""
        options: dict[str, Any] = {f"{prefix}.cpu.{c}": v for c, v in self.cpu.items() if c != ACKER}
        if ACKER in self.cpu:
            options[ACKER_CPU_KEY] = self.cpu[ACKER]
        return options

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "cpu": dict(self.cpu), "share": self.share}


def declaration(problem: Problem, capacities: Mapping[str, float], share: float = DECLARED_SHARE) -> Declaration:
    """ras+measured's declaration (module docstring) for the supervisors' declared CPU ``capacities``."""
    costs = component_costs(problem)
    fixed = sum(c.fixed * c.executors for c in costs.values())
    variable = sum(c.per_tuple for c in costs.values())
    room = share * sum(capacities.values())
    if variable <= 0 or room <= fixed:
        raise ValueError(f"the measured costs cannot be declared: fixed CPU {fixed:.1f} %, per tuple {variable:.4g} % "
                         f"(room {room:.1f} %)")
    rate = (room - fixed) / variable
    for _ in range(100):
        cpu = {c: max(MIN_DECLARED, round(cost.per_executor(rate), 1)) for c, cost in costs.items()}
        if packs([cpu[c] for c, cost in costs.items() for _ in range(cost.executors)], capacities):
            actual = sum(cpu[c] * cost.executors for c, cost in costs.items()) / sum(capacities.values())
            return Declaration(round(rate, 1), cpu, round(actual, 3))
        rate *= 0.95
    raise ValueError("no declaration of the measured costs packs on the supervisors")


def packs(items: Iterable[float], capacities: Mapping[str, float]) -> bool:
    """Whether first-fit-decreasing places every item (an executor's declared CPU) on the nodes."""
    room = dict(capacities)
    for item in sorted(items, reverse=True):
        node = next((n for n in sorted(room, key=lambda n: -room[n]) if room[n] >= item - 1e-9), None)
        if node is None:
            return False
        room[node] -= item
    return True


def on_cluster(problem: Problem, description: Any) -> Problem:
    """The problem on the cluster's supervisors as the bench holds them: each one's quota and slots, its link
    where the problem gives none, nothing held by other work (one topology runs at a time)."""
    from storm_planner.cluster.description import ClusterDescription

    assert isinstance(description, ClusterDescription)
    network = description.network
    given = {n.id: n for n in problem.nodes}
    nodes = []
    for sup in description.supervisors:
        old = given.get(sup.name) or Node(sup.name)
        link = sup.link_mbit or (network.link_mbit if network.emulated else None)
        nodes.append(replace(old, capacity=sup.held_cpu, slots=tuple(sup.slot_ports), memory=sup.memory_mb,
                             used_cpu=0.0, used_memory=0.0, draining=False,
                             bandwidth=old.bandwidth if old.bandwidth is not None else link))
    return problem.replace(nodes=tuple(nodes))


def model_of(problem: Problem) -> Any:
    from storm_planner.planners.capacity.model import CapacityModel
    from storm_planner.planners.capacity.planner import DEFAULT_WORKER_FIXED

    worker = problem.costs.worker_fixed
    return CapacityModel(problem, problem.costs.executor_fixed, DEFAULT_WORKER_FIXED if worker is None else worker)


def rate_bound(problem: Problem) -> float:
    """λ*: the LP bound's factor times the reference rate (offered t/s), any number of workers."""
    from storm_planner.planners.capacity.bound import factor_bound
    from storm_planner.planners.capacity.model import UNBOUNDED

    factor = factor_bound(model_of(problem), None)
    return math.inf if factor >= UNBOUNDED else factor * float(problem.costs.reference_rate or math.nan)


def predicted_rate(problem: Problem, placement: Iterable[Mapping[str, Any]]) -> float:
    """The model's sustainable rate (offered t/s) for a placement (``{"executor", "component", "node",
    "port"}`` per executor, as Nimbus reports it); NaN without one."""
    from storm_planner.planners.capacity.model import UNBOUNDED

    rows = [p for p in placement if not str(p["component"]).startswith("__system")]
    if not rows:
        return math.nan
    node_of = {str(p["executor"]): str(p["node"]) for p in rows}
    workers = Counter(node for node, _ in {(str(p["node"]), p["port"]) for p in rows})
    problem = with_executors(problem, rows)
    factor = model_of(problem).factor(node_of, workers)
    return math.inf if factor >= UNBOUNDED else factor * float(problem.costs.reference_rate or math.nan)


def with_executors(problem: Problem, placement: Sequence[Mapping[str, Any]]) -> Problem:
    """The problem with the placement's executors: as it is when they are the same, else rebuilt per
    component (module docstring)."""
    ids = {str(p["executor"]) for p in placement}
    if ids == set(problem.executor_ids):
        return problem
    costs = component_costs(problem)
    rate = float(problem.costs.reference_rate or 0.0)
    template = {e.component: e for e in problem.executors}
    counts = Counter(str(p["component"]) for p in placement)
    shares = task_shares(placement)
    executors = []
    for p in placement:
        component, executor = str(p["component"]), str(p["executor"])
        cost = costs.get(component)
        old = template.get(component)
        share = shares.get(executor, 1 / counts[component])
        load = cost.fixed + cost.per_tuple * rate * share if cost else (old.load if old else 0.0)
        executors.append(Executor(executor, component, load, memory=old.memory if old else 0.0))
    components = tuple(replace(c, executors=counts.get(c.id, c.executors)) if isinstance(c, Component) else c
                       for c in problem.components)
    return problem.replace(executors=tuple(executors), components=components, traffic=(), current={})


def task_shares(placement: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per executor, its share of its component's tuples: its tasks over the component's, for components whose
    executors are all named by task range (Storm's ids: after a rebalance three executors of four tasks run
    two, one and one); the others are left out (an even share)."""
    tasks: dict[str, dict[str, int | None]] = defaultdict(dict)
    for p in placement:
        tasks[str(p["component"])][str(p["executor"])] = tasks_of(str(p["executor"]))
    shares = {}
    for members in tasks.values():
        known = [n for n in members.values() if n]
        if len(known) == len(members):
            total = sum(known)
            shares.update({e: (n or 0) / total for e, n in members.items()})
    return shares


def save_measured(path: Path, record: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
    """Keep a workload's measured problem (its log record) with what was computed from it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**extra, "record": dict(record)}, indent=1, sort_keys=True) + "\n")


def load_measured(path: Path) -> tuple[dict[str, Any], Problem] | None:
    """A kept measured problem: (the file's fields, the problem), None when absent or not one."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    problem = measured_problem(saved.get("record", {})) if isinstance(saved, dict) else None
    return (saved, problem) if problem is not None else None
