"""``hetero-optimal``: the exhaustive optimum of Nasiri et al.'s problem (small instances).

The paper's *optimal scheduler* (§3, §6.2) searches the whole design space —
how many instances each component gets and where each runs — for the highest
throughput with no machine over-utilised. Here the space is: for each
component, between its starting count (the problem's executors) and
``max_instances`` instances, spread over the machines in every possible way;
the objective is the simulator's (:mod:`storm_planner.planners.hetero.simulate`): the
highest sustainable topology input rate, hence the highest throughput.

With split groupings every instance of a component receives the same rate, so
a candidate is, per component, a vector ``k`` of instance counts per machine;
machine ``m`` then carries ``Σ_c (k_cm / n_c) · μ_c · cost[c, m]`` percent per
tuple/s of input rate (``μ_c`` from eq. 8), ``coef_m``, plus the bases of its
instances, ``fixed_m = Σ_c k_cm · base[c, m]`` (issue #18; 0 in the paper's
model). The sustainable rate is ``min_m (capacity_m − fixed_m) / coef_m``; the
search minimises its inverse, the *peak* ``max_m coef_m / (capacity_m − fixed_m)``
(with no bases: the peak utilisation per unit input rate). The search is a
depth-first branch and bound over components, exhaustive in effect — a branch
is cut only when a valid bound proves it cannot beat the best found: the peak
so far (adding components only raises ``coef`` and ``fixed``), and the total
remaining work — at least each remaining component's cheapest cost per tuple
and its fewest instances at their cheapest base — spread perfectly over the
total capacity left: ``Σ coef / (Σ capacity − Σ fixed)``. Identical
machines (same type, capacity, costs) that hold the same instances so far are
interchangeable, so only one ordering of them is visited. Candidates are tried
by bound, then fewer instances; of equally good answers the first found stays.

Limits: split groupings only (``all``/``global`` make instances differ);
``max_instances`` per component (default twice the usable machines, as
``hetero``); at most 12 machines; ``max_nodes`` (default 2·10⁶) search nodes,
beyond which the problem is refused as too large. The paper ran its
exhaustive search on its three-machine cluster only.

Complexity: O(Π_c K_c) in the worst case, with
``K_c = Σ_{n ≤ max_instances} C(n + M − 1, M − 1)`` placements per component
(83 for 3 machines and 6 instances); pruning visits far fewer.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from storm_planner.core.errors import ProblemError, TooLargeError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners._parameters import checked, to_real, to_whole
from storm_planner.planners.base import Planner
from storm_planner.planners.hetero.model import HeteroModel, build_model
from storm_planner.planners.hetero.plans import plan_from_placement, starting_parallelism
from storm_planner.planners.hetero.rates import propagate
from storm_planner.planners.hetero.simulate import Placement, max_input_rate

MAX_MACHINES = 12
DEFAULT_MAX_NODES = 2_000_000
RELATIVE_TOLERANCE = 1e-9


@dataclass
class Candidates:
    """The placements of one component: instance counts, load added, floor on the peak."""

    counts: np.ndarray      # (K, M) instances per machine
    coef: np.ndarray        # (K, M) CPU percent per unit input rate it adds
    fixed: np.ndarray       # (K, M) CPU percent at zero input it adds (bases)
    floor: np.ndarray        # (K,) executor-cap bound on the peak (0 without a cap)
    instances: np.ndarray    # (K,)
    coef_total: np.ndarray   # (K,) coef summed over machines
    fixed_total: np.ndarray  # (K,) fixed summed over machines


def compositions(total: int, parts: int) -> np.ndarray:
    """Every vector of ``parts`` non-negative integers summing to ``total``."""
    rows = []
    for bins in combinations_with_replacement(range(parts), total):
        row = [0] * parts
        for b in bins:
            row[b] += 1
        rows.append(row)
    return np.array(rows, dtype=int).reshape(-1, parts)


def component_candidates(model: HeteroModel, c: int, mu: float, smallest: int, largest: int) -> Candidates:
    """Every distinct placement of component ``c`` with ``smallest..largest`` instances."""
    counts = np.vstack([compositions(n, model.n_machines) for n in range(smallest, largest + 1)])
    instances = counts.sum(axis=1)
    share = counts / instances[:, None]
    coef = share * mu * model.cost[c]
    fixed = counts * model.base[c]
    if model.executor_cap is not None:
        per_instance = np.where(counts > 0, (mu / instances)[:, None] * model.cost[c], 0.0)
        room = model.executor_cap - model.base[c]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(counts > 0, np.where(room > 0, per_instance / np.where(room > 0, room, 1.0), np.inf), 0.0)
        floor = np.nan_to_num(ratio, nan=0.0).max(axis=1)
    else:
        floor = np.zeros(len(counts))
    if model.executor_cap is not None and model.has_base:
        keep = np.arange(len(counts))  # more instances: lower per-instance load but more bases; keep all
    else:
        # the same shares: with more instances, only an executor cap gains, only bases lose — keep one of each
        order = np.lexsort((instances if model.executor_cap is None else -instances,))
        _, first = np.unique(np.round(share[order], 12), axis=0, return_index=True)
        keep = np.sort(order[first])
    return Candidates(counts[keep], coef[keep], fixed[keep], floor[keep], instances[keep],
                       coef[keep].sum(axis=1), fixed[keep].sum(axis=1))


def peaks(capacity: np.ndarray, fixed: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``max_m coef / (capacity − fixed)`` over the last axis (the inverse of the sustainable rate):
    inf where the fixed parts leave no room for a machine with load, or exceed its capacity."""
    room = capacity - fixed
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(coef > 0, coef / np.where(room > 0, room, np.nan), 0.0)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    ratio = np.where(room < -RELATIVE_TOLERANCE * capacity, np.inf, ratio)
    highest: np.ndarray = ratio.max(axis=-1)
    return highest


class ExhaustiveSearch:
    """Branch and bound over components; see the module docstring."""

    def __init__(self, model: HeteroModel, smallest: list[int], largest: int | Sequence[int], max_nodes: int,
                 incumbent: float = np.inf, stop_at_budget: bool = False,
                 around: Sequence[np.ndarray] | None = None):
        if not model.has_only_split_groupings:
            raise ProblemError("hetero-optimal handles split groupings only (no 'all' or 'global' streams)")
        self.model = model
        mu = propagate(model, np.ones(model.n_components)).total
        self.components = [c for c in np.argsort(-(mu[:, None] * model.cost).max(axis=1), kind="stable")]
        largest = ([int(largest)] * model.n_components if isinstance(largest, (int, np.integer))
                   else [int(v) for v in largest])
        self.candidates = {
            c: component_candidates(model, c, float(mu[c]), smallest[c], max(largest[c], smallest[c]))
            for c in self.components
        }
        if around is not None:  # a neighbourhood: each machine's count within one of ``around``'s
            self.candidates = {c: _within_one(cands, around[c]) for c, cands in self.candidates.items()}
        work = mu[:, None] * model.cost
        self.remaining_work = [float(sum(work[c].min() for c in self.components[d + 1:]))
                               for d in range(len(self.components))]
        self.remaining_fixed = [float(sum(smallest[c] * model.base[c].min() for c in self.components[d + 1:]))
                                for d in range(len(self.components))]
        self.total_capacity = float(model.capacity.sum())
        self.classes = self._machine_classes()
        self.max_nodes = max_nodes
        self.nodes = 0
        self.best = float(incumbent)   # only strictly better placements are looked for
        self.best_choice: list[int] | None = None
        self.stop_at_budget = stop_at_budget
        self.complete = True           # False: stopped at max_nodes (stop_at_budget) before proving

    def _machine_classes(self) -> list[list[int]]:
        key: dict[tuple[Any, ...], list[int]] = {}
        for m in range(self.model.n_machines):
            signature = (self.model.machine_types[m], float(self.model.capacity[m]),
                         tuple(np.round(self.model.cost[:, m], 12)), tuple(np.round(self.model.base[:, m], 12)))
            key.setdefault(signature, []).append(m)
        return [members for members in key.values() if len(members) > 1]

    def run(self) -> tuple[float, dict[int, np.ndarray]]:
        zeros = np.zeros(self.model.n_machines)
        try:
            self._visit(0, zeros, zeros, 0.0, [], np.zeros((0, self.model.n_machines), dtype=int))
        except _Budget:
            self.complete = False
        if self.best_choice is None and self.stop_at_budget:
            return self.best, {}
        if self.best_choice is None:
            raise ProblemError("hetero-optimal found no placement: the instances' bases alone exceed "
                               "the machines' capacity" if self.model.has_base else "hetero-optimal found no placement")
        chosen = {c: self.candidates[c].counts[j] for c, j in zip(self.components, self.best_choice)}
        return self.best, chosen

    def _visit(self, depth: int, coef: np.ndarray, fixed: np.ndarray, floor: float, choice: list[int],
               history: np.ndarray) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            if self.stop_at_budget:
                raise _Budget
            raise TooLargeError(
                f"hetero-optimal: more than {self.max_nodes} search nodes; lower max_instances or use hetero"
            )
        c = self.components[depth]
        candidates = self.candidates[c]
        limit = self.best * (1 - RELATIVE_TOLERANCE)
        # The cheap bound first, over candidate totals (O(K)); the machine-wise peak only for survivors.
        work = coef.sum() + candidates.coef_total + self.remaining_work[depth]
        room = self.total_capacity - fixed.sum() - candidates.fixed_total - self.remaining_fixed[depth]
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = np.where(room > 0, work / np.where(room > 0, room, 1.0), np.inf)
        viable = (spread < limit) & (candidates.floor < limit) & self._symmetry_mask(candidates.counts, history)
        order = np.flatnonzero(viable)
        if np.isfinite(limit) and order.size:
            # peak < limit on every machine <=> coef + cand.coef < limit * (capacity - fixed - cand.fixed)
            headroom = limit * (self.model.capacity - fixed) - coef
            order = order[(candidates.coef[order] + limit * candidates.fixed[order] <= headroom).all(axis=1)]
        after = coef + candidates.coef[order]
        after_fixed = fixed + candidates.fixed[order]
        peak = np.maximum(np.maximum(peaks(self.model.capacity, after_fixed, after), candidates.floor[order]), floor)
        bound = np.maximum(peak, spread[order])
        ranked = np.lexsort((candidates.instances[order], bound))
        last = depth == len(self.components) - 1
        for k in ranked:
            if bound[k] >= self.best * (1 - RELATIVE_TOLERANCE):
                break  # sorted by bound: nothing further can win
            j = int(order[k])
            if last:
                self.best, self.best_choice = float(peak[k]), choice + [j]
                break
            self._visit(depth + 1, after[k], after_fixed[k], float(max(floor, candidates.floor[j])),
                        choice + [j], np.vstack([history, candidates.counts[j]]))

    def _symmetry_mask(self, counts: np.ndarray, history: np.ndarray) -> np.ndarray:
        """Among interchangeable machines holding the same so far, counts must not increase."""
        mask = np.ones(len(counts), dtype=bool)
        for members in self.classes:
            for a, b in zip(members, members[1:]):
                if np.array_equal(history[:, a], history[:, b]):
                    mask &= counts[:, a] >= counts[:, b]
        return mask


def _within_one(candidates: Candidates, counts: np.ndarray) -> Candidates:
    """The candidates whose instance count on every machine differs from ``counts`` by at most one."""
    keep = (np.abs(candidates.counts - counts) <= 1).all(axis=1)
    return Candidates(*(getattr(candidates, field)[keep] for field in Candidates.__dataclass_fields__))


class _Budget(TooLargeError):
    """The node budget of a polish ran out (ExhaustiveSearch with ``stop_at_budget``)."""


def polish(model: HeteroModel, placement: Placement, smallest: Sequence[int], largest: Sequence[int],
           max_nodes: int) -> tuple[Placement, int, bool]:
    """``hetero``'s exact polish: the branch and bound above, seeded with ``placement``'s peak as the
    best found, for at most ``max_nodes`` search nodes in all. Returns a strictly better placement if it
    found one (else ``placement``), the nodes searched, and whether the last search was complete over
    the whole space (the placement returned is then optimal within the bounds).

    First a very large neighbourhood search: the branch and bound over the placements that differ from
    the current one by at most one instance per (component, machine) — every component may change at
    once, which the descent's moves cannot do — repeated from each improvement; then the whole space
    with the nodes left. The neighbourhood is a small share of the space (at most 3^M spreads per
    component instead of all of them) and holds the optimum on the benchmarks' misses, so the budget
    goes where an improvement is likely (benchmarks/reports/hetero.md, section *bases*)."""
    nodes = 0
    while nodes < max_nodes:
        better, used, _ = _search_from(model, placement, smallest, largest, max_nodes - nodes, neighbourhood=True)
        nodes += used
        if better is None:
            break
        placement = better
    if nodes >= max_nodes:
        return placement, nodes, False
    better, used, complete = _search_from(model, placement, smallest, largest, max_nodes - nodes,
                                          neighbourhood=False)
    return (better or placement), nodes + used, complete


def _search_from(model: HeteroModel, placement: Placement, smallest: Sequence[int], largest: Sequence[int],
                 max_nodes: int, neighbourhood: bool) -> tuple[Placement | None, int, bool]:
    """One branch and bound seeded with ``placement``: a strictly better placement or None, nodes, complete."""
    rate = max_input_rate(model, placement)
    around = None
    if neighbourhood:
        around = [np.bincount(np.asarray(machines, dtype=int), minlength=model.n_machines)
                  for machines in placement.machines_of]
    search = ExhaustiveSearch(model, list(smallest), list(largest), max_nodes,
                              incumbent=1.0 / rate if rate > 0 else np.inf, stop_at_budget=True, around=around)
    _, chosen = search.run()
    return (_placement(model, chosen) if chosen else None), search.nodes, search.complete


def _placement(model: HeteroModel, chosen: dict[int, np.ndarray]) -> Placement:
    return Placement(tuple(tuple(m for m in range(model.n_machines) for _ in range(int(chosen[c][m])))
                           for c in range(model.n_components)))


def optimal_placement(model: HeteroModel, smallest: list[int], largest: int,
                      max_nodes: int = DEFAULT_MAX_NODES) -> tuple[Placement, int]:
    """The best placement with ``smallest[c]..largest`` instances per component, and nodes searched."""
    search = ExhaustiveSearch(model, smallest, largest, max_nodes)
    _, chosen = search.run()
    return _placement(model, chosen), search.nodes


class HeteroOptimalPlanner(Planner):
    """The exhaustive optimum of ``hetero``'s problem: every instance count and spread over the machines,
    searched by branch and bound for the highest sustainable input rate (small clusters).

    Parameters
    ----------
    mac : float, default=100.0
        Percent of each machine's capacity the tasks may use (the paper's MAC).
    max_instances : int or None, default=None
        Most instances per component; None is twice the number of usable machines.
    max_nodes : int, default=2000000
        Most search nodes; a search that needs more is refused as too large.
    """

    name = "hetero-optimal"
    summary = "exhaustive optimum of hetero's problem: instances and placement for max input rate (small)"
    baseline = True
    changes_parallelism = True

    option_inputs = frozenset({"profiles"})  # read by hetero.profiles, as for hetero

    def __init__(self, *, mac: float = 100.0, max_instances: int | None = None,
                 max_nodes: int = DEFAULT_MAX_NODES) -> None:
        self.mac = checked(self.name, "mac", mac, to_real, above=0)
        # None: twice the number of usable machines
        self.max_instances = checked(self.name, "max_instances", max_instances, to_whole, minimum=1, optional=True)
        self.max_nodes = checked(self.name, "max_nodes", max_nodes, to_whole, minimum=1)

    def plan(self, problem: Problem) -> Plan:
        model = build_model(problem, mac=self.mac)
        if model.n_machines > MAX_MACHINES:
            raise TooLargeError(f"hetero-optimal: {model.n_machines} machines, at most {MAX_MACHINES}; use hetero")
        largest = 2 * model.n_machines if self.max_instances is None else self.max_instances
        placement, nodes = optimal_placement(model, starting_parallelism(problem, model), largest, self.max_nodes)
        figures = {"searched_nodes": float(nodes), "max_instances": float(largest)}
        return plan_from_placement(problem, model, placement, self.name, figures)
