"""The highest sustainable factor exactly: a feasibility MILP per factor, bisected, solved by HiGHS.

At a fixed factor ``f`` the capacity model (:mod:`.model`) is linear in the placement but for the
link terms, which multiply two counts on one node. The model, over classes of interchangeable
executors (:mod:`.classes`) and usable nodes:

* ``k[g,n]`` integer in ``[0, |g|]``: executors of class ``g`` on node ``n``; ``Σ_n k[g,n] = |g|``;
* ``w[n]`` integer in ``[0, ports_n]``: workers on ``n``; ``k[g,n] ≤ |g|·w[n]``; ``Σ_n w[n] ≤ W`` when
  ``topology.workers`` bounds it (Storm's RAS reads it as a bound too);
* CPU: ``Σ_g k[g,n]·(fixed_g + f·variable_g) + worker_fixed·w[n] ≤ C_n``;
* memory, where nodes state theirs: ``Σ_g k[g,n]·memory_g ≤ M_n``, and ``≤ heap·w[n]`` with a heap limit;
* links (streams with a known tuple size, nodes with a link): with ``K_c(n) = Σ_{g ∈ c} k[g,n]``, a uniform
  stream ``s → t`` of pair share ``σ`` adds ``σ·(n_t·K_s(n) − P)`` to what ``n`` sends and
  ``σ·(n_s·K_t(n) − P)`` to what it receives, ``P = K_s(n)·K_t(n)``. ``P`` is linearised exactly through a
  one-hot ``u[s,n,j]`` of ``K_s(n) = j``: ``P = Σ_j j·z_j``, ``z_j ≤ K_t(n)``, ``z_j ≤ n_t·u_j``. ``P`` only
  lowers the link use, so the solver raises it to the product and never past it. A ``global`` stream
  uses the home indicator of the target's first executor the same way; a measured executor pair
  ``(a, b)`` is one ``y ≤ x_a, y ≤ x_b`` per node;
* ``f·sent_n ≤ B_n`` and ``f·received_n ≤ B_n``.

Feasibility is monotone in ``f`` (every demand grows with it), so the highest sustainable factor is
found by bisection between a placement's factor (a lower bound) and the LP bound of :mod:`.bound`, to a
relative tolerance. The last feasible solution is re-solved at that factor with the moves away from the
current placement as the objective (then the bytes sent across links), so among the placements that
sustain the best factor the one that restarts fewest workers is chosen.

Size: classes × nodes integers, plus (nodes × executors of each stream's source) binaries for the links,
so the planner uses it only below a size limit and local search (:mod:`.search`) beyond.
"""
from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import highspy

from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners.capacity.classes import ExecutorClass, counts_to_nodes, executor_classes
from storm_planner.planners.capacity.model import CapacityModel

_log = logging.getLogger(__name__)

# Columns of the model above which the planner leaves it to local search.
MAX_COLUMNS = 4000


@dataclass(frozen=True)
class ExactResult:
    node_of: Mapping[str, str]
    factor: float
    proven: bool          # every bisection step was solved to a conclusion (none hit the time limit)
    steps: int


def model_columns(model: CapacityModel, classes: list[ExecutorClass] | None = None) -> int:
    """How many columns :func:`solve` would build (to decide whether it is small enough)."""
    classes = classes if classes is not None else executor_classes(model)
    nodes = len(model.usable_nodes())
    members = model.traffic.members
    link = sum((len(members[f.source]) + 2) * 2 for f in model.flows) + 2 * len(model.measured_mbit)
    return nodes * (len(classes) + 1 + link)


def solve(model: CapacityModel, low: float, high: float, start: Mapping[str, str] | None = None,
          workers: int | None = None, tolerance: float = 0.01, time_limit_s: float = 5.0) -> ExactResult | None:
    """The placement of the highest factor in ``[low, high]`` (None when none is feasible at ``low``).

    ``low`` should be a factor some placement sustains (``start``'s), ``high`` an upper bound (the LP's)."""
    deadline = time.monotonic() + time_limit_s
    classes = executor_classes(model)
    low, high = max(0.0, low), max(low, high)
    best, proven = _feasible(model, classes, low, workers, time_limit_s, objective=False)
    steps = 1
    if best is None:
        return None
    while high - low > tolerance * max(high, 1e-9) and steps < 40:
        left = deadline - time.monotonic()
        if left <= 0:
            proven = False
            break
        middle = (low + high) / 2.0
        steps += 1
        answer, conclusive = _feasible(model, classes, middle, workers, left, objective=False)
        proven &= conclusive
        if answer is not None:
            best, low = answer, middle
        else:
            high = middle
    polished, _ = _feasible(model, classes, low, workers, max(0.5, deadline - time.monotonic()),
                            objective=True, current=start)
    counts = polished or best
    return ExactResult(counts_to_nodes(classes, counts, start or {}), low, proven, steps)


def _feasible(model: CapacityModel, classes: list[ExecutorClass], factor: float, workers: int | None,
              time_limit_s: float, objective: bool,
              current: Mapping[str, str] | None = None) -> tuple[dict[tuple[int, str], int] | None, bool]:
    """(counts, conclusive): a placement sustaining ``factor``, or None; whether HiGHS concluded."""
    with native_output_to_log(_log, "HiGHS"):
        highs = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's constructor is unannotated
        highs.setOptionValue("output_flag", False)
        highs.setOptionValue("time_limit", max(0.05, float(time_limit_s)))
        # No "threads": HiGHS sizes one scheduler per process at its first run, and a later run asking for
        # another size fails (no solution): the service and the bench run other planners' HiGHS solves too.
        builder = _Builder(highs, model, classes, factor, workers)
        if objective:
            highs.minimize(builder.moves(current or {}) + 1e-6 * builder.sent_total())
        else:
            highs.run()
        status = highs.getModelStatus()
        conclusive = status in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible)
        if highs.getInfo().primal_solution_status != 2:   # 2: a feasible solution
            return None, conclusive
        return builder.counts(), conclusive


class _Builder:
    """One feasibility model at one factor (see the module docstring)."""

    def __init__(self, highs: Any, model: CapacityModel, classes: list[ExecutorClass], factor: float,
                 workers: int | None) -> None:
        self.h, self.model, self.classes, self.f = highs, model, classes, factor
        self.nodes = model.usable_nodes()
        self.k = {(g, n): highs.addIntegral(lb=0, ub=klass.size) for g, klass in enumerate(classes)
                  for n in self.nodes}
        self.w = {n: highs.addIntegral(lb=0, ub=model.room(n).ports) for n in self.nodes}
        self.sent: dict[str, Any] = defaultdict(float)
        self.received: dict[str, Any] = defaultdict(float)
        self._placement(workers)
        self._cpu_and_memory()
        self._links()

    def _placement(self, workers: int | None) -> None:
        for g, klass in enumerate(self.classes):
            self.h.addConstr(sum(self.k[g, n] for n in self.nodes) == klass.size)
            for n in self.nodes:
                self.h.addConstr(self.k[g, n] <= klass.size * self.w[n])
        if workers is not None:
            self.h.addConstr(sum(self.w.values()) <= max(1, workers))

    def _cpu_and_memory(self) -> None:
        model, problem = self.model, self.model.problem
        heap = problem.options.worker_max_heap_mb
        for n in self.nodes:
            cpu = sum((c.fixed + self.f * c.variable) * self.k[g, n] for g, c in enumerate(self.classes))
            self.h.addConstr(cpu + model.worker_fixed * self.w[n] <= model.room(n).cpu)
            memory = sum(c.memory * self.k[g, n] for g, c in enumerate(self.classes) if c.memory)
            if isinstance(memory, (int, float)):
                continue
            free = problem.node(n).free_memory
            if free is not None:
                self.h.addConstr(memory <= free)
            if heap is not None:
                self.h.addConstr(memory <= heap * self.w[n])

    def component_count(self, component: str, n: str) -> Any:
        return sum(self.k[g, n] for g, c in enumerate(self.classes) if c.component == component)

    def _links(self) -> None:
        limited = [n for n in self.nodes if math.isfinite(self.model.room(n).link)]
        if not limited or self.f <= 0:
            return
        one_hot: dict[tuple[str, str], list[Any]] = {}
        for flow in self.model.flows:
            mbit = flow.share * flow.tuple_bytes * 8e-6
            for n in self.nodes:
                source = self.component_count(flow.source, n)
                if flow.grouping == "global":
                    self._global(flow, n, source, mbit)
                    continue
                target = self.component_count(flow.target, n)
                both = self._product(one_hot, flow.source, flow.n_source, source, target, flow.n_target, n)
                self.sent[n] = self.sent[n] + mbit * (flow.n_target * source - both)
                self.received[n] = self.received[n] + mbit * (flow.n_source * target - both)
        self._measured_pairs()
        for n in limited:
            room = self.model.room(n).link
            for use in (self.sent[n], self.received[n]):
                if not isinstance(use, (int, float)):
                    self.h.addConstr(self.f * use <= room)

    def _product(self, one_hot: dict[tuple[str, str], list[Any]], source_component: str, n_source: int, source: Any, target: Any,
                 n_target: int, n: str) -> Any:
        """``K_s(n)·K_t(n)`` from above (see the module docstring)."""
        key = (source_component, n)
        if key not in one_hot:
            u = [self.h.addBinary() for _ in range(n_source + 1)]
            self.h.addConstr(sum(u) == 1)
            self.h.addConstr(sum(j * u[j] for j in range(n_source + 1)) == source)
            one_hot[key] = u
        product = 0.0
        for j, u_j in enumerate(one_hot[key]):
            if j == 0:
                continue
            z = self.h.addVariable(lb=0, ub=n_target)
            self.h.addConstr(z <= target)
            self.h.addConstr(z <= n_target * u_j)
            product = product + j * z
        return product

    def _global(self, flow: Any, n: str, source: Any, mbit: float) -> None:
        first = self.model.first_of[flow.target]
        g = next(i for i, c in enumerate(self.classes) if first in c.members)
        home = self.k[g, n]
        here = self.h.addVariable(lb=0, ub=flow.n_source)   # sources on n when the target is home here
        self.h.addConstr(here <= source)
        self.h.addConstr(here <= flow.n_source * home)
        self.sent[n] = self.sent[n] + mbit * (source - here)
        self.received[n] = self.received[n] + mbit * (flow.n_source * home - here)

    def _measured_pairs(self) -> None:
        index = {e: g for g, c in enumerate(self.classes) for e in c.members}
        for (a, b), mbit in self.model.measured_mbit:
            for n in self.nodes:
                xa, xb = self.k[index[a], n], self.k[index[b], n]
                y = self.h.addVariable(lb=0, ub=1)
                self.h.addConstr(y <= xa)
                self.h.addConstr(y <= xb)
                self.sent[n] = self.sent[n] + mbit * (xa - y)
                self.received[n] = self.received[n] + mbit * (xb - y)

    # -- objective and answer ------------------------------------------------------------------------
    def moves(self, current: Mapping[str, str]) -> Any:
        """Executors that leave their current node (Storm restarts their workers)."""
        total = 0.0
        for g, klass in enumerate(self.classes):
            here: dict[str, int] = defaultdict(int)
            for executor in klass.members:
                if current.get(executor) in self.w:
                    here[current[executor]] += 1
            for n, count in here.items():
                leave = self.h.addVariable(lb=0, ub=count)
                self.h.addConstr(leave >= count - self.k[g, n])
                total = total + leave
        return total

    def sent_total(self) -> Any:
        return sum((v for v in self.sent.values() if not isinstance(v, (int, float))), 0.0)

    def counts(self) -> dict[tuple[int, str], int]:
        return {key: int(round(self.h.val(var))) for key, var in self.k.items()}
