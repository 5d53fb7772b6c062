"""``milp``: load balancing with integrated scale-in as a mixed-integer linear program.

Madsen, Zhou, Cao, *Integrative Dynamic Reconfiguration in a Parallel Stream
Processing Engine*, §4.3.1 (the MILP, Lemmas 1-2) and §5.1-5.2 (its use with
a migration budget per round). A Storm key group is an executor.

Each round minimises the *load distance* (the largest gap between a node's
utilisation and the average utilisation L of the nodes not marked for removal)
and then tightens both bounds, subject to one node per executor, a migration
budget (``options.max_migrations`` executors and/or ``options.max_migration_cost``
summed ``Executor.state_size``), heterogeneous capacities
(``Node.effective_capacity``), memory limits when nodes declare ``memory``, and
nodes marked for removal (``Node.draining``) that may only lose load. The
formulation, and the symbols it reconstructs, are in
:mod:`storm_planner.planners.albic._milp_model`.

Scale-in needs no special case (Lemma 2): because L is computed over the
remaining nodes only, load left on a draining node keeps the remaining nodes
below L, so the optimum moves it away as the budget allows, most urgent
imbalance first. ``scale_in="drain_first"`` is the non-integrated comparison of
§5.1 instead: the budget first moves executors off draining nodes, evenly onto
the least utilised remaining nodes, and only what is left balances.

Executors without a current place (a new topology) are placed freely and do
not count against the budget. The whole call stops at ``options.time_limit_s``
(model building included): a budgeted local search gives the solver a warm
start, the MILP improves it (whole on small clusters, over neighbourhoods of
a few nodes on larger ones), and budget left unused finishes draining nodes
marked for removal (see :mod:`~storm_planner.planners.albic._milp_model` for why).

Parameters (``-p key=value``, ``planner.milp.<key>`` in a topology's conf or
options, or the bare key in a problem file's options): ``solver`` (``cbc``,
default, or ``highs``), ``time_limit_s``, ``max_migrations``,
``max_migration_cost`` (default: the problem's options), ``w1``/``w2``
(objective weights, w1 > 2·w2), ``scale_in`` (``integrated`` or ``drain_first``).

Complexity: the MILP has E·N binaries and E + 2N + 3 rows for E executors and N
nodes; solving is NP-hard (a multi-resource generalised assignment problem) and
bounded by the time limit. Building is O(E·N).
"""
from __future__ import annotations

import time
from types import MappingProxyType

from storm_planner.core.errors import InvalidParameterError, ProblemError
from storm_planner.core.evaluate import relative_load
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners._parameters import checked, to_real, to_text, to_whole, to_word
from storm_planner.planners.albic import _milp_model as model
from storm_planner.planners.albic._units import start_placement
from storm_planner.planners.base import Planner

SCALE_IN_MODES = ("integrated", "drain_first")


def budgets(problem: Problem, max_migrations: float | None,
            max_migration_cost: float | None) -> tuple[float | None, float | None]:
    """The migration budget: the planner's parameters where set, else the problem's options."""
    count = problem.options.max_migrations if max_migrations is None else max_migrations
    cost = problem.options.max_migration_cost if max_migration_cost is None else max_migration_cost
    for key, value in (("max_migrations", count), ("max_migration_cost", cost)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise ProblemError(f"{key}: a number >= 0, got {value!r}")
    return (None if count is None else float(count), None if cost is None else float(cost))


def drain_first_moves(problem: Problem, start: dict[str, str], count: float | None,
                      cost: float | None) -> dict[str, str]:
    """Executor -> destination: empty draining nodes evenly, within the budget (§5.1 baseline)."""
    executors = {e.id: e for e in problem.executors}
    active = [n for n in problem.nodes if not n.draining]
    draining = {n.id for n in problem.nodes if n.draining}
    load = {n.id: 0.0 for n in problem.nodes}
    for executor_id, node in start.items():
        load[node] += executors[executor_id].load
    leaving = sorted((e for e, n in start.items() if n in draining), key=lambda e: (start[e], e))
    moves: dict[str, str] = {}
    spent_count, spent_cost = 0.0, 0.0
    for executor_id in leaving:
        executor = executors[executor_id]
        if count is not None and spent_count + 1 > count:
            break
        if cost is not None and spent_cost + executor.state_size > cost:
            continue
        target = min(active, key=lambda n: (relative_load(load[n.id], n.effective_capacity), n.id))
        moves[executor_id] = target.id
        load[target.id] += executor.load
        spent_count += 1
        spent_cost += executor.state_size
    return moves


def solver_parameters(planner: str, solver: str, time_limit_s: float | None, max_migrations: int | None,
                      max_migration_cost: float | None) -> tuple[str, float | None, int | None, float | None]:
    """The parameters of the §4.3.1 MILP that ``milp`` and ``albic`` share, checked: (solver, time_limit_s,
    max_migrations, max_migration_cost)."""
    solver = checked(planner, "solver", solver, to_word, choices=model.SOLVERS)
    time_limit_s = checked(planner, "time_limit_s", time_limit_s, to_real, above=0, optional=True)
    max_migrations = checked(planner, "max_migrations", max_migrations, to_whole, minimum=0, optional=True)
    max_migration_cost = checked(planner, "max_migration_cost", max_migration_cost, to_real, minimum=0,
                                 optional=True)
    return solver, time_limit_s, max_migrations, max_migration_cost


class MilpPlanner(Planner):
    """The load-balancing MILP of Madsen et al., §4.3.1: minimise the load distance under a migration
    budget, nodes marked for removal emptied as the budget allows (integrated scale-in).

    Parameters
    ----------
    solver : {"cbc", "highs"}, default="cbc"
        The MILP solver: CBC (the binary PuLP ships) or HiGHS.
    time_limit_s : float or None, default=None
        Seconds for the whole call, building the model included; None takes the problem's
        ``options.time_limit_s``.
    max_migrations : int or None, default=None
        Most executors with a current place that may move this round; None takes the problem's
        ``options.max_migrations`` (absent there: no limit).
    max_migration_cost : float or None, default=None
        Most summed ``state_size`` of the executors that move; None takes the problem's
        ``options.max_migration_cost`` (absent there: no limit).
    w1 : float, default=1.0
        Weight of the load distance d in the objective w1·d − w2·(du + dl); must exceed 2·w2 so that
        the load distance comes first.
    w2 : float, default=0.01
        Weight of the slack terms du and dl, which tighten the looser of the two load bounds.
    scale_in : {"integrated", "drain_first"}, default="integrated"
        How nodes marked for removal are emptied: inside the one MILP (the paper's integrated scale-in),
        or first by moving their executors to the least utilised nodes and balancing with the budget left
        (the non-integrated comparison of §5.1).
    """

    name = "milp"
    isolated = True
    summary = "Madsen et al. §4.3.1: MILP minimising load distance under a migration budget, with scale-in"

    def __init__(self, *, solver: str = "cbc", time_limit_s: float | None = None,
                 max_migrations: int | None = None, max_migration_cost: float | None = None,
                 w1: float = model.DEFAULT_WEIGHTS[0], w2: float = model.DEFAULT_WEIGHTS[1],
                 scale_in: str = "integrated") -> None:
        self.solver, self.time_limit_s, self.max_migrations, self.max_migration_cost = solver_parameters(
            self.name, solver, time_limit_s, max_migrations, max_migration_cost)
        self.w1 = checked(self.name, "w1", w1, to_real, above=0)
        self.w2 = checked(self.name, "w2", w2, to_real, minimum=0)
        if self.w1 <= 2 * self.w2:
            raise InvalidParameterError(f"{self.name}: parameter w1 must exceed 2·w2 so that the load "
                                        f"distance comes first, got w1={w1!r}, w2={w2!r}")
        self.scale_in = checked(self.name, "scale_in", scale_in, to_text, choices=SCALE_IN_MODES)

    def plan(self, problem: Problem) -> Plan:
        began = time.perf_counter()  # the time limit covers building the model, not only solving it
        solver, scale_in = self.solver, self.scale_in
        time_limit = problem.options.time_limit_s if self.time_limit_s is None else self.time_limit_s
        weights = (self.w1, self.w2)
        count, cost = budgets(problem, self.max_migrations, self.max_migration_cost)

        start = start_placement(problem)
        pinned: dict[str, str] = {}
        if scale_in == "drain_first":
            pinned = drain_first_moves(problem, start, count, cost)
            start.update(pinned)
        groups = [(e.id,) for e in problem.executors]
        fixed = {i: pinned[g[0]] for i, g in enumerate(groups) if g[0] in pinned}
        balance = model.build_model(problem, groups, start, fixed, count, cost)
        solution = model.solve(balance, solver, time_limit, problem.options.seed, weights, started=began)

        node_of = {unit.members[0]: node for unit, node in zip(balance.units, solution.node_of_unit)}
        notes = (
            f"solver {solution.solver}: {solution.status} in {solution.seconds:.2f} s "
            f"(time limit {time_limit:g} s)",
            f"model load distance {model.distance(balance, solution.node_of_unit):.3f} "
            f"(average utilisation {balance.average:.2f}%)",
            *([f"drain first: {len(pinned)} executor(s) moved off draining nodes"]
              if scale_in == "drain_first" else []),
            *solution.notes,
        )
        return Plan(
            algorithm=self.name,
            assignments=slots_for_nodes(problem, node_of),
            drain=tuple(n.id for n in problem.nodes if n.draining),
            figures=MappingProxyType({"solver_optimal": float(solution.status == "optimal")}),
            notes=notes,
        )
