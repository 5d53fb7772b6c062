"""The exact step of ``gma-repair``: a placement within D_CPU and D_BW as a MILP, solved by HiGHS.

Executors that are interchangeable (same component, same load, same role in the traffic) form a
*class* q of size n_q; an integer ``y[q,k] ∈ [0, n_q]`` counts those on node k, and
``C[c,k] = Σ_{q ∈ c} y[q,k]`` counts component c's executors there. A node's link use is
quadratic in the counts — for a uniform stream s → t with Mbit/s ``μ`` per executor pair,
node k sends and receives ``μ·(n_t·C_s + n_s·C_t − 2·C_s·C_t)`` (see
:meth:`~storm_planner.core.traffic.TrafficModel.network`) — and is made linear exactly:
``C_s = Σ_b 2^b·β[s,k,b]`` with binaries β, and each ``β·C_t`` (a binary times an integer in
[0, n_t]) is a continuous ``v`` with the four McCormick rows, which are exact for a binary.
A ``global`` stream's first target (its own class, a binary ``g``) and measured executor pairs
(binaries per executor) use the same binary-times-bounded product.

Rows: one placement row per class, per node its CPU (``Σ load·y ≤ D_CPU·capacity − used``) and,
with a link capacity, its bandwidth (``net ≤ D_BW·bandwidth − used``). Objective: the busiest
node's CPU share plus ``bandwidth_weight`` × the busiest link's share (min-max, a linear stand-in
for the deviation). Any solution HiGHS returns is within both limits; "infeasible" is a proof
that no placement within them exists.

Size: O(classes·N + streams·N·log n) columns and rows — never executor pairs (only measured
ones, which the problem lists). Solving is NP-hard (it contains bin packing) and bounded by
the time limit.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from storm_planner.core.problem import Executor
from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners.gma._model import GmaState

_log = logging.getLogger(__name__)
TIGHTEN = 1e-6  # rooms shrunk by this much, so a solution within HiGHS' tolerances is within the limits


@dataclass(frozen=True)
class ExactResult:
    status: str                        # optimal | feasible | infeasible | no solution
    node_of: dict[str, str] | None


class _Model:
    """Columns and rows of a MILP, collected as lists."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.starts: list[int] = [0]       # rowwise: where each row's terms start in indices and values
        self.indices: list[int] = []
        self.values: list[float] = []
        self.row_lower: list[float] = []
        self.row_upper: list[float] = []

    def column(self, lower: float, upper: float, integer: bool, cost: float = 0.0) -> int:
        self.cost.append(cost)
        self.lower.append(lower)
        self.upper.append(upper)
        self.integer.append(integer)
        return len(self.cost) - 1

    def row(self, terms: Iterable[tuple[int, float]], lower: float = -np.inf, upper: float = np.inf) -> None:
        merged: dict[int, float] = defaultdict(float)
        for column, value in terms:
            merged[column] += value
        self.indices.extend(merged)
        self.values.extend(merged.values())
        self.starts.append(len(self.indices))
        self.row_lower.append(lower)
        self.row_upper.append(upper)

    def product(self, binary: int, other: list[tuple[int, float]], bound: float) -> int:
        """A column equal to ``binary × other`` for ``other`` (a linear expression) in [0, bound]."""
        v = self.column(0.0, bound, False)
        self.row([(v, 1.0), (binary, -bound)], upper=0.0)                       # v ≤ bound·β
        self.row([(v, 1.0), *((c, -a) for c, a in other)], upper=0.0)           # v ≤ other
        self.row([(v, 1.0), (binary, -bound), *((c, -a) for c, a in other)], lower=-bound)  # v ≥ other − bound(1−β)
        return v

    def solve(self, seconds: float, seed: int) -> tuple[str, np.ndarray | None]:
        import highspy

        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = len(self.cost), len(self.row_lower)
        lp.col_cost_ = np.asarray(self.cost, dtype=float)
        lp.col_lower_ = np.asarray(self.lower, dtype=float)
        lp.col_upper_ = np.where(np.isinf(self.upper), inf, np.asarray(self.upper, dtype=float))
        lp.row_lower_ = np.where(np.isinf(self.row_lower), -inf, np.asarray(self.row_lower, dtype=float))
        lp.row_upper_ = np.where(np.isinf(self.row_upper), inf, np.asarray(self.row_upper, dtype=float))
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.asarray(self.starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.asarray(self.indices, dtype=np.int32)
        lp.a_matrix_.value_ = np.asarray(self.values, dtype=float)
        lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                           for i in self.integer]
        # HiGHS prints its banner from C++ on descriptor 1 (see core.quiet).
        with native_output_to_log(_log, "gma-repair HiGHS"):
            highs = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's constructor is unannotated
            highs.setOptionValue("output_flag", False)
            highs.setOptionValue("time_limit", float(max(seconds, 0.01)))
            highs.setOptionValue("random_seed", int(abs(seed)) % 2**31)
            # No "threads": HiGHS sizes one scheduler per process at its first run, and a later run
            # asking for another size fails (no solution) — milp's solves share the process.
            highs.passModel(lp)
            highs.run()
        status = highs.getModelStatus()
        if status in (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible):
            return "infeasible", None
        if highs.getInfo().primal_solution_status != 2:  # 2 = feasible
            return "no solution", None
        values = np.asarray(highs.getSolution().col_value, dtype=float)
        return ("optimal" if status == highspy.HighsModelStatus.kOptimal else "feasible"), values


def _classes(state: GmaState) -> list[tuple[str, list[Executor]]]:
    """Interchangeable executors: (component, executors), by component, load and traffic role."""
    problem = state.problem
    firsts = {state.first_target[other] for flows in state.flows.values()
              for other, _, role in flows if role == "to-first"}
    grouped: dict[tuple[str, str | float], list[Executor]] = {}
    for executor in problem.executors:
        if state.pairs.get(executor.id) or executor.id in firsts:
            key: tuple[str, str | float] = (executor.component, executor.id)     # its own traffic: a class of one
        else:
            key = (executor.component, executor.load)
        grouped.setdefault(key, []).append(executor)
    return [(key[0], members) for key, members in grouped.items()]


def exact_placement(state: GmaState, seconds: float, seed: int) -> ExactResult:
    """A placement of ``state.problem`` within D_CPU and D_BW on ``state``'s nodes, or why none."""
    counts = _Counts(state)
    net = counts.link_use()
    counts.limit_rows(net)
    status, values = counts.model.solve(seconds, seed)
    if values is None:
        return ExactResult(status, None)
    return ExactResult(status, counts.node_of(values))


class _Counts:
    """The MILP's count columns ``y[q,k]`` and the rows built on them, in the order HiGHS receives them.

    The order of columns and rows is part of the result: HiGHS may return another of several
    optimal placements when it changes.
    """

    def __init__(self, state: GmaState) -> None:
        self.state = state
        self.nodes = range(len(state.nodes))
        self.model = m = _Model()
        self.classes = _classes(state)
        self.y = [[m.column(0.0, float(len(members)), True) for _ in self.nodes] for _, members in self.classes]
        for q, (_, members) in enumerate(self.classes):
            m.row([(self.y[q][k], 1.0) for k in self.nodes], lower=len(members), upper=len(members))
        # C[c,k] as terms over y, and each component's executor count n_c.
        self.count_terms: dict[str, list[list[tuple[int, float]]]] = defaultdict(lambda: [[] for _ in self.nodes])
        self.size: dict[str, int] = defaultdict(int)
        for q, (component, members) in enumerate(self.classes):
            self.size[component] += len(members)
            for k in self.nodes:
                self.count_terms[component][k].append((self.y[q][k], 1.0))
        self.column_of = {e.id: self.y[q] for q, (_, members) in enumerate(self.classes)
                          for e in members if len(members) == 1}
        self._bits: dict[tuple[str, int], list[tuple[int, float]]] = {}

    def expanded(self, component: str, k: int) -> list[tuple[int, float]]:
        """C[component,k] as Σ 2^b·β_b (binaries), made once per (component, node)."""
        if (component, k) not in self._bits:
            m = self.model
            terms = [(m.column(0.0, 1.0, True), float(2 ** b))
                     for b in range(max(1, self.size[component].bit_length()))]
            m.row([*terms, *((c, -a) for c, a in self.count_terms[component][k])], lower=0.0, upper=0.0)
            self._bits[(component, k)] = terms
        return self._bits[(component, k)]

    def link_use(self) -> list[list[tuple[int, float]]]:
        """Per node, the linear terms of this topology's link use: streams first, then measured pairs."""
        net: list[list[tuple[int, float]]] = [[] for _ in self.nodes]
        for component, flows in self.state.flows.items():
            for other, mbit, role in flows:
                if role == "to":      # uniform stream component -> other, counted once (from its source side)
                    self._uniform_stream(net, component, other, mbit)
                elif role == "to-first":  # global stream component -> first executor of other
                    self._global_stream(net, component, self.state.first_target[other], mbit)
        for source, peers in self.state.pairs.items():
            for target, mbit in peers:
                if source < target:  # each measured pair once (the adjacency holds both directions)
                    self._measured_pair(net, source, target, mbit)
        return net

    def _uniform_stream(self, net: list[list[tuple[int, float]]], s: str, t: str, mbit: float) -> None:
        """μ·(n_t·C_s + n_s·C_t − 2·C_s·C_t) on each node."""
        size, count_terms = self.size, self.count_terms
        for k in self.nodes:
            net[k] += [(c, mbit * size[t] * a) for c, a in count_terms[s][k]]
            net[k] += [(c, mbit * size[s] * a) for c, a in count_terms[t][k]]
            for beta, weight in self.expanded(s, k):
                v = self.model.product(beta, count_terms[t][k], float(size[t]))
                net[k].append((v, -2.0 * mbit * weight))

    def _global_stream(self, net: list[list[tuple[int, float]]], s: str, first: str, mbit: float) -> None:
        """μ·(C_s + n_s·g − 2·g·C_s), g the binary of the first target executor on the node."""
        for k in self.nodes:
            g = self.column_of[first][k]
            net[k] += [(c, mbit * a) for c, a in self.count_terms[s][k]]
            net[k].append((g, mbit * self.size[s]))
            v = self.model.product(g, self.count_terms[s][k], float(self.size[s]))
            net[k].append((v, -2.0 * mbit))

    def _measured_pair(self, net: list[list[tuple[int, float]]], source: str, target: str, mbit: float) -> None:
        """μ·(a + b − 2·a·b), a and b the two executors' binaries on the node."""
        for k in self.nodes:
            a, b = self.column_of[source][k], self.column_of[target][k]
            v = self.model.product(a, [(b, 1.0)], 1.0)
            net[k] += [(a, mbit), (b, mbit), (v, -2.0 * mbit)]

    def limit_rows(self, net: list[list[tuple[int, float]]]) -> None:
        """Per node the CPU and bandwidth limits, and the min-max objective's two columns."""
        m, state, y = self.model, self.state, self.y
        z_cpu = m.column(0.0, np.inf, False, cost=1.0)
        z_bw = m.column(0.0, np.inf, False, cost=state.bandwidth_weight)
        for k in self.nodes:
            load = [(y[q][k], members[0].load) for q, (_, members) in enumerate(self.classes) if members[0].load]
            m.row(load, upper=max(0.0, state.cpu_room[k] - TIGHTEN))
            scale = 100.0 / state.cpu_capacity[k]
            m.row([(z_cpu, 1.0), *((c, -scale * a) for c, a in load)], lower=scale * state.cpu_base[k])
            if state.linked[k]:
                m.row(net[k], upper=max(0.0, state.bw_room[k] - TIGHTEN))
                scale = 100.0 / state.bw_capacity[k]
                m.row([(z_bw, 1.0), *((c, -scale * a) for c, a in net[k])],
                      lower=scale * state.nodes[k].used_bandwidth)

    def node_of(self, values: np.ndarray) -> dict[str, str]:
        """Executor -> node id from a solution's counts."""
        nodes, state = self.nodes, self.state
        node_of: dict[str, str] = {}
        for q, (_, members) in enumerate(self.classes):
            counts = [int(round(values[self.y[q][k]])) for k in nodes]
            busiest = state.nodes[max(nodes, key=lambda k: counts[k])].id
            slots = [state.nodes[k].id for k in nodes for _ in range(counts[k])]
            for i, executor in enumerate(members):  # rounding never changes the sum; guarded all the same
                node_of[executor.id] = slots[i] if i < len(slots) else busiest
        return node_of
