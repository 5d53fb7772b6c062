"""``hetero-optimal``: the exhaustive optimum of Nasiri et al.'s problem (small instances).

The paper's *optimal scheduler* (§3, §6.2) searches the whole design space —
how many instances each component gets and where each runs — for the highest
throughput with no machine over-utilised. Here the space is: for each
component, between its starting count (the problem's executors) and
``max_instances`` instances, spread over the machines in every possible way;
the objective is the simulator's (:mod:`storm_planner.planners.nasiri.simulate`): the
highest sustainable topology input rate, hence the highest throughput.

With split groupings every instance of a component receives the same rate, so
a candidate is, per component, a vector ``k`` of instance counts per machine;
machine ``m`` then carries ``Σ_c (k_cm / n_c) · μ_c · cost[c, m]`` percent per
tuple/s of input rate (``μ_c`` from eq. 8). The search is a depth-first branch
and bound over components, exhaustive in effect — a branch is cut only when a
valid bound proves it cannot beat the best found: the utilisation so far, and
the total remaining work spread perfectly over the total capacity. Identical
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

from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np

from storm_planner.core.errors import ProblemError, TooLargeError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners.nasiri.model import HeteroModel, build_model
from storm_planner.planners.nasiri.plans import plan_from_placement, starting_parallelism
from storm_planner.planners.nasiri.rates import propagate
from storm_planner.planners.nasiri.simulate import Placement
from storm_planner.planners._parameters import checked, to_real, to_whole
from storm_planner.planners.base import Planner, register

MAX_MACHINES = 12
DEFAULT_MAX_NODES = 2_000_000
RELATIVE_TOLERANCE = 1e-9


@dataclass
class _Candidates:
    """The placements of one component: instance counts, utilisation added, floor on t."""

    counts: np.ndarray      # (K, M) instances per machine
    utilisation: np.ndarray  # (K, M) utilisation per unit input rate it adds
    floor: np.ndarray        # (K,) executor-cap bound on t (0 without a cap)
    instances: np.ndarray    # (K,)


def compositions(total: int, parts: int) -> np.ndarray:
    """Every vector of ``parts`` non-negative integers summing to ``total``."""
    rows = []
    for bins in combinations_with_replacement(range(parts), total):
        row = [0] * parts
        for b in bins:
            row[b] += 1
        rows.append(row)
    return np.array(rows, dtype=int).reshape(-1, parts)


def component_candidates(model: HeteroModel, c: int, mu: float, smallest: int, largest: int) -> _Candidates:
    """Every distinct placement of component ``c`` with ``smallest..largest`` instances."""
    counts = np.vstack([compositions(n, model.n_machines) for n in range(smallest, largest + 1)])
    instances = counts.sum(axis=1)
    share = counts / instances[:, None]
    utilisation = share * mu * model.cost[c] / model.capacity
    if model.executor_cap is not None:
        per_instance = np.where(counts > 0, (mu / instances)[:, None] * model.cost[c], 0.0)
        floor = per_instance.max(axis=1) / model.executor_cap
    else:
        floor = np.zeros(len(counts))
    # the same shares with more instances only help under an executor cap: keep one of each
    order = np.lexsort((instances if model.executor_cap is None else -instances,))
    _, first = np.unique(np.round(share[order], 12), axis=0, return_index=True)
    keep = np.sort(order[first])
    return _Candidates(counts[keep], utilisation[keep], floor[keep], instances[keep])


class ExhaustiveSearch:
    """Branch and bound over components; see the module docstring."""

    def __init__(self, model: HeteroModel, smallest: list[int], largest: int, max_nodes: int):
        if not model.has_only_split_groupings:
            raise ProblemError("hetero-optimal handles split groupings only (no 'all' or 'global' streams)")
        self.model = model
        mu = propagate(model, np.ones(model.n_components)).total
        self.components = [c for c in np.argsort(-(mu[:, None] * model.cost).max(axis=1), kind="stable")]
        self.candidates = {
            c: component_candidates(model, c, float(mu[c]), smallest[c], max(largest, smallest[c]))
            for c in self.components
        }
        work = mu[:, None] * model.cost
        self.remaining_work = [float(sum(work[c].min() for c in self.components[d + 1:]))
                               for d in range(len(self.components))]
        self.total_capacity = float(model.capacity.sum())
        self.classes = self._machine_classes()
        self.max_nodes = max_nodes
        self.nodes = 0
        self.best = np.inf
        self.best_choice: list[int] | None = None

    def _machine_classes(self) -> list[list[int]]:
        key = {}
        for m in range(self.model.n_machines):
            signature = (self.model.machine_types[m], float(self.model.capacity[m]),
                         tuple(np.round(self.model.cost[:, m], 12)))
            key.setdefault(signature, []).append(m)
        return [members for members in key.values() if len(members) > 1]

    def run(self) -> tuple[float, dict[int, np.ndarray]]:
        self._visit(0, np.zeros(self.model.n_machines), 0.0, [], np.zeros((0, self.model.n_machines), dtype=int))
        if self.best_choice is None:
            raise ProblemError("hetero-optimal found no placement")
        chosen = {c: self.candidates[c].counts[j] for c, j in zip(self.components, self.best_choice)}
        return self.best, chosen

    def _visit(self, depth: int, utilisation: np.ndarray, floor: float, choice: list[int],
               history: np.ndarray) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise TooLargeError(
                f"hetero-optimal: more than {self.max_nodes} search nodes; lower max_instances or use hetero"
            )
        c = self.components[depth]
        candidates = self.candidates[c]
        after = utilisation + candidates.utilisation
        peak = np.maximum(np.maximum(after.max(axis=1), candidates.floor), floor)
        work = (after * self.model.capacity).sum(axis=1) + self.remaining_work[depth]
        bound = np.maximum(peak, work / self.total_capacity)
        viable = (bound < self.best * (1 - RELATIVE_TOLERANCE)) & self._symmetry_mask(candidates.counts, history)
        order = np.flatnonzero(viable)
        order = order[np.lexsort((candidates.instances[order], bound[order]))]
        last = depth == len(self.components) - 1
        for j in order:
            if bound[j] >= self.best * (1 - RELATIVE_TOLERANCE):
                break  # sorted by bound: nothing further can win
            if last:
                self.best, self.best_choice = float(peak[j]), choice + [int(j)]
                break
            self._visit(depth + 1, after[j], float(max(floor, candidates.floor[j])), choice + [int(j)],
                        np.vstack([history, candidates.counts[j]]))

    def _symmetry_mask(self, counts: np.ndarray, history: np.ndarray) -> np.ndarray:
        """Among interchangeable machines holding the same so far, counts must not increase."""
        mask = np.ones(len(counts), dtype=bool)
        for members in self.classes:
            for a, b in zip(members, members[1:]):
                if np.array_equal(history[:, a], history[:, b]):
                    mask &= counts[:, a] >= counts[:, b]
        return mask


def optimal_placement(model: HeteroModel, smallest: list[int], largest: int,
                      max_nodes: int = DEFAULT_MAX_NODES) -> tuple[Placement, int]:
    """The best placement with ``smallest[c]..largest`` instances per component, and nodes searched."""
    search = ExhaustiveSearch(model, smallest, largest, max_nodes)
    _, chosen = search.run()
    machines_of = []
    for c in range(model.n_components):
        machines_of.append(tuple(m for m in range(model.n_machines) for _ in range(int(chosen[c][m]))))
    return Placement(tuple(machines_of)), search.nodes


@register
class HeteroOptimalPlanner(Planner):
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
