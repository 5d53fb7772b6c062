"""The load-balancing MILP of Madsen et al., §4.3.1, over *units* of executors.

Shared by :mod:`~storm_planner.planners.albic.milp` (every unit is one executor) and
:mod:`~storm_planner.planners.albic.albic` (a unit is a partition of collocated
executors that migrates as one). Pure: a model in, a node per unit out.

Reconstruction (the extracted paper lost every symbol; docs/design.md, *Reading the
papers*, records this reading). With binaries ``y[u,n]`` (unit u on node n), capacity weights
``cap(n)`` (``Node.effective_capacity``), nodes R not marked for removal,
nodes D marked for removal, and ``L = 100·Σ load / Σ_{n∈R} cap(n)`` the average
utilisation the remaining nodes would have::

    minimise   w1·d − w2·(du + dl) + w3·Σ_{n∈D} load(n)   (w1 ≫ w2 ≫ w3)
    s.t. (1)   Σ_n y[u,n] = 1                             every unit
         (2)   Σ_u Σ_n move(u,n)·y[u,n] ≤ budget          count and/or state cost
         (3)   load(n) ≤ cap(n)·(L + d − du)/100           every node
         (4)   load(n) ≥ cap(n)·(L − d + dl)/100           n ∈ R only
         (5)   du ≤ d,  dl ≤ d,   d, du, dl ≥ 0
         (6)   memory(n) ≤ Node.memory                     when nodes declare memory

``move(u,n)`` is the number (or the summed ``state_size``, the paper's cost
``c·|S_k|`` with c = 1) of the unit's members not currently on n; executors
with no current place (a new topology) move for free. At an optimum,
``d`` is the load distance and ``du``/``dl`` its slack on the upper/lower side,
so the secondary term tightens the looser bound as well. The w3 term is ours:
Lemma 2 says an optimal d needs the draining nodes empty, but d is a maximum
and once it is set by executor granularity, emptying a draining node no longer
lowers it; the tie-break keeps the budget draining them instead of idling.

Lemma 1 (no key group migrates onto a node marked for removal) is a property of
the optimum; a solver stopped by its time limit gives no such guarantee, so the
model states it as a domain restriction: a unit may be placed on a draining node
only if all its members are there already. This removes no optimal solution.

Size: |units|·|nodes| binaries and |units| + 2·|nodes| + 3 rows, built as sparse
arrays (:mod:`storm_planner.planners.albic._mip`) and solved by CBC (the binary PuLP
ships) or HiGHS. How (see :func:`solve`; the second and third steps are ours,
not the paper's, which hands the whole model to CPLEX):

1. the start (current placement, new executors on the least utilised nodes) is
   improved by :func:`~storm_planner.planners.albic._descent.greedy_descent`, a
   budgeted local search, since the LP relaxation is useless as a bound (d = 0
   with fractional executors) and the solvers' own heuristics are slow here;
2. the MILP, warm-started from that incumbent: whole for clusters of at most
   ``NEIGHBOURHOOD_NODES`` nodes, else over neighbourhoods of that many nodes
   (the ones setting d, a draining node, random others) with the rest pinned,
   each solved in well under a second, until the time limit;
3. :func:`finish_draining`, after the local search and again after the solver,
   spends budget they left unused on emptying nodes marked for removal.

Every step keeps (1), (2), (6) and the Lemma 1 domain, and only accepts an
improvement of (d, Σ squared deviations), so the answer is never worse than
the start and a time-limited solve always has one.
"""
from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from storm_planner.core.errors import InfeasibleError, ProblemError
from storm_planner.core.evaluate import relative_load
from storm_planner.core.problem import Executor, Problem
from storm_planner.planners.albic._descent import greedy_descent
from storm_planner.planners.albic._mip import Mip, RowBuilder, solve_mip
from storm_planner.planners.albic._units import Migrations, Unit

SOLVERS = ("cbc", "highs")
DEFAULT_WEIGHTS = (1.0, 0.01)  # (w1, w2): w1 > 2·w2 keeps d strictly first
DRAIN_WEIGHT = 1e-6             # w3 per unit of load left on a draining node: a tie-break only
NEIGHBOURHOOD_NODES = 8         # nodes per MILP in the neighbourhood search (all, below that)
STEP_SECONDS = 0.5              # time limit of one neighbourhood MILP
DESCENT_MAX_CELLS = 1_000_000   # units × nodes up to which the local search runs (dense arrays per step)
_TOLERANCE = 1e-6


@dataclass(frozen=True)
class BalanceModel:
    units: tuple[Unit, ...]
    capacity: Mapping[str, float]      # node -> effective capacity
    draining: frozenset[str]
    memory: Mapping[str, float]        # node -> memory limit (only nodes that declare one)
    average: float                     # L, percent
    max_migrations: float | None
    max_migration_cost: float | None


@dataclass(frozen=True)
class Solution:
    node_of_unit: tuple[str, ...]      # parallel to model.units
    status: str                        # optimal | feasible | start | ...
    solver: str
    seconds: float
    notes: tuple[str, ...] = field(default=())


# -- building -------------------------------------------------------------------

def build_model(
    problem: Problem,
    groups: Sequence[Sequence[str]],
    start: Mapping[str, str],
    fixed: Mapping[int, str] | None = None,
    max_migrations: float | None = None,
    max_migration_cost: float | None = None,
) -> BalanceModel:
    """One unit per group; ``fixed`` pins group i to a node (ALBIC's collocation constraint)."""
    executors = {e.id: e for e in problem.executors}
    current = {e: s.node for e, s in problem.current.items()}
    nodes = [n.id for n in problem.nodes]
    draining = frozenset(n.id for n in problem.nodes if n.draining)
    fixed = dict(fixed or {})
    # Lemma 1 as a domain: a draining node only for a unit that is wholly there already. Most
    # units may go to every remaining node: they share that one tuple and set.
    open_nodes = tuple(n for n in nodes if n not in draining)
    domains: dict[str | None, tuple[tuple[str, ...], frozenset[str]]] = {None: (open_nodes, frozenset(open_nodes))}
    units = []
    for index, members in enumerate(groups):
        members = tuple(members)
        allowed, domain = _allowed_nodes(members, current, nodes, draining, domains)
        if index in fixed:
            if fixed[index] not in domain:
                raise ProblemError(f"cannot pin {members[0]!r} to {fixed[index]!r}: not an allowed node")
            allowed, domain = (fixed[index],), frozenset((fixed[index],))
        units.append(_unit(members, executors, current, start, allowed, domain))
    active_capacity = sum(n.effective_capacity for n in problem.nodes if not n.draining)
    if active_capacity <= 0:
        raise InfeasibleError("every node is marked for removal: there is nowhere to place executors")
    return BalanceModel(
        units=tuple(units),
        capacity={n.id: n.effective_capacity for n in problem.nodes},
        draining=draining,
        memory={n.id: n.memory for n in problem.nodes if n.memory is not None},
        average=100.0 * sum(u.load for u in units) / active_capacity,
        max_migrations=max_migrations,
        max_migration_cost=max_migration_cost,
    )


def _allowed_nodes(members: tuple[str, ...], current: Mapping[str, str], nodes: list[str],
                   draining: frozenset[str],
                   domains: dict[str | None, tuple[tuple[str, ...], frozenset[str]]],
                   ) -> tuple[tuple[str, ...], frozenset[str]]:
    """(allowed nodes, as a set) of a unit: the open nodes, plus the draining node it wholly sits on.

    ``domains`` caches them by that draining node (None: none), so units share one tuple and set.
    """
    homes = {current.get(m) for m in members}
    home = next(iter(homes)) if len(homes) == 1 and next(iter(homes)) in draining else None
    if home not in domains:
        allowed_here = tuple(n for n in nodes if n not in draining or n == home)
        domains[home] = (allowed_here, frozenset(allowed_here))
    return domains[home]


def _unit(members: tuple[str, ...], executors: Mapping[str, Executor], current: Mapping[str, str],
          start: Mapping[str, str], allowed: tuple[str, ...], domain: frozenset[str]) -> Unit:
    """The unit of ``members``: summed load and memory, a start inside its domain, what moving it costs."""
    unit_start = start[members[0]]
    if any(start[m] != unit_start for m in members) or unit_start not in domain:
        unit_start = allowed[0]  # no feasible start inside the unit; the solver must find one
    running = [m for m in members if m in current]
    count_here: dict[str, float] = {}
    cost_here: dict[str, float] = {}
    for m in running:
        count_here[current[m]] = count_here.get(current[m], 0.0) + 1.0
        cost_here[current[m]] = cost_here.get(current[m], 0.0) + executors[m].state_size
    return Unit(
        members=members,
        load=sum(executors[m].load for m in members),
        memory=sum(executors[m].memory for m in members),
        start=unit_start,
        allowed=allowed,
        moves=Migrations(float(len(running)), count_here, domain),
        move_cost=Migrations(sum(executors[m].state_size for m in running), cost_here, domain),
        domain=domain,
    )


# -- checking a placement against the model ---------------------------------------

def violations(model: BalanceModel, placement: Sequence[str]) -> list[str]:
    """The model constraints (1), (2), (6) and the Lemma 1 domain that ``placement`` breaks."""
    problems = []
    for unit, node in zip(model.units, placement):
        if node not in unit.domain:
            problems.append(f"{unit.members[0]} on {node}, not an allowed node")
    if model.max_migrations is not None:
        moved = sum(u.moves[n] for u, n in zip(model.units, placement) if n in u.moves)
        if moved > model.max_migrations + _TOLERANCE:
            problems.append(f"{moved:g} migrations > budget {model.max_migrations:g}")
    if model.max_migration_cost is not None:
        cost = sum(u.move_cost[n] for u, n in zip(model.units, placement) if n in u.move_cost)
        if cost > model.max_migration_cost + _TOLERANCE:
            problems.append(f"migration cost {cost:g} > budget {model.max_migration_cost:g}")
    used: dict[str, float] = {}
    for unit, node in zip(model.units, placement):
        used[node] = used.get(node, 0.0) + unit.memory
    for node, limit in model.memory.items():
        if used.get(node, 0.0) > limit + _TOLERANCE:
            problems.append(f"memory on {node}: {used[node]:g} > {limit:g}")
    return problems


def distance(model: BalanceModel, placement: Sequence[str]) -> float:
    """The model's d for a placement: max deviation from L (draining nodes only above it)."""
    load = {n: 0.0 for n in model.capacity}
    for unit, node in zip(model.units, placement):
        load[node] += unit.load
    worst = 0.0
    for node, capacity in model.capacity.items():
        deviation = 100.0 * relative_load(load[node], capacity) - model.average
        worst = max(worst, deviation if node in model.draining else abs(deviation))
    return worst


# -- solving ----------------------------------------------------------------------

def solve(
    model: BalanceModel,
    solver: str = "cbc",
    time_limit_s: float = 5.0,
    seed: int = 1,
    weights: tuple[float, float] = DEFAULT_WEIGHTS,
    heuristic_start: bool = True,
    started: float | None = None,
) -> Solution:
    """Solve within ``time_limit_s`` (building included); never worse than the start.

    A feasible start is improved by :func:`greedy_descent` (at most 40% of the
    time), then by the MILP: whole when the cluster has at most
    ``NEIGHBOURHOOD_NODES`` nodes, else over neighbourhoods of that many nodes
    (:func:`_neighbourhood_search`). An infeasible start (memory limits, pinned
    units) leaves the whole MILP to the solver without a warm start.
    """
    if solver not in SOLVERS:
        raise ProblemError(f"solver {solver!r}: one of {', '.join(SOLVERS)}")
    # ``started``: when the caller began (building the model counts against the limit too).
    started = time.perf_counter() if started is None else started
    deadline = started + 0.95 * time_limit_s - 0.05   # room to decode and check the answer
    start = tuple(u.start for u in model.units)
    if violations(model, start):
        return _solve_whole(model, None, solver, deadline, seed, weights, started)
    drained = 0
    cells = len(model.units) * len(model.capacity)
    skipped = () if cells <= DESCENT_MAX_CELLS or not heuristic_start else (
        f"local search skipped: {len(model.units):,} units × {len(model.capacity):,} nodes is more than "
        f"{DESCENT_MAX_CELLS:,} (its steps are dense in both); neighbourhood MILPs from the start placement",)
    if heuristic_start and not skipped:
        start = greedy_descent(model, start, deadline=started + 0.4 * time_limit_s)
        # Before the solver, so that it can rebalance around what just left the draining nodes.
        start, drained = finish_draining(model, start)
    if len(model.capacity) <= NEIGHBOURHOOD_NODES:
        solution = _solve_whole(model, start, solver, deadline, seed, weights, started)
    else:
        solution = _neighbourhood_search(model, start, solver, deadline, seed, weights, started)
    solution = replace(solution, notes=solution.notes + skipped)
    placement, more = finish_draining(model, solution.node_of_unit)
    if not drained + more:
        return solution
    note = (f"finished draining: {drained + more} unit(s) moved off nodes marked for removal "
            "with budget the optimiser left unused")
    return replace(solution, node_of_unit=placement, notes=solution.notes + (note,))


def finish_draining(model: BalanceModel, placement: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """Spend budget the optimiser left unused on moving units off draining nodes.

    Lemma 2 makes an empty draining node part of the *exact* optimum only while
    the load still there could lower d; once d is set by executor granularity
    (no remaining node has room for a whole executor within d) neither the
    solver within its time limit nor the exact optimum need move the last
    executors, and a scale-in would never finish. So, after optimising, units
    still on draining nodes go, smallest first, to the allowed remaining node
    that ends least utilised, while the budget and memory allow. This may raise
    d by at most one executor's load; the solver, run after it, and the next
    round rebalance. Returns the placement and how many units moved.
    """
    placement = list(placement)
    units = model.units
    count_left = _left(model.max_migrations, sum(u.moves[n] for u, n in zip(units, placement)))
    cost_left = _left(model.max_migration_cost, sum(u.move_cost[n] for u, n in zip(units, placement)))
    load = {n: 0.0 for n in model.capacity}
    memory = {n: 0.0 for n in model.capacity}
    for unit, node in zip(units, placement):
        load[node] += unit.load
        memory[node] += unit.memory
    leaving = sorted((u for u, node in enumerate(placement) if node in model.draining),
                     key=lambda u: (units[u].load, units[u].members))
    moved = 0
    for u in leaving:
        unit, here = units[u], placement[u]
        fitting = [n for n in unit.allowed if n not in model.draining
                   and unit.moves[n] - unit.moves[here] <= count_left + _TOLERANCE
                   and unit.move_cost[n] - unit.move_cost[here] <= cost_left + _TOLERANCE
                   and memory[n] + unit.memory <= model.memory.get(n, float("inf")) + _TOLERANCE]
        if not fitting:
            continue
        target = min(fitting, key=lambda n: ((load[n] + unit.load) / model.capacity[n], n))
        count_left -= unit.moves[target] - unit.moves[here]
        cost_left -= unit.move_cost[target] - unit.move_cost[here]
        load[here] -= unit.load
        load[target] += unit.load
        memory[here] -= unit.memory
        memory[target] += unit.memory
        placement[u] = target
        moved += 1
    return tuple(placement), moved


def _left(budget: float | None, spent: float) -> float:
    return float("inf") if budget is None else budget - spent


def _solve_whole(model: BalanceModel, start: Sequence[str] | None, solver: str, deadline: float, seed: int,
                 weights: tuple[float, float], started: float) -> Solution:
    """One solve of the whole model, warm-started from ``start`` when there is one."""
    formulation = _formulate(model, weights)
    warm = _initial_values(model, formulation, start) if start is not None else None
    seconds = max(0.05, deadline - time.perf_counter() - 2e-6 * formulation.mip.columns)
    result = solve_mip(formulation.mip, solver, seconds, seed, warm)
    if result.status == "infeasible":
        if start is not None:  # cannot be: the start is feasible; trust it over a numerical verdict
            return _fallback(model, start, "solver reported infeasible", solver, started)
        raise InfeasibleError(_infeasible_message(model))
    placement = _decode(formulation, result.values) if result.values is not None else None
    if placement is not None and not violations(model, placement):
        if start is not None and placement_key(model, placement) > placement_key(model, start):
            return _fallback(model, start, "solver answer worse than the warm start", solver, started)
        label = "optimal" if result.status == "optimal" else "feasible (time limit)"
        return Solution(placement, label, solver, time.perf_counter() - started)
    return _fallback(model, start, f"no solution within {seconds:.2f} s", solver, started)


def placement_key(model: BalanceModel, placement: Sequence[str]) -> tuple[float, float]:
    """What every improvement step compares: (d, Σ squared deviations; squared utilisation if draining)."""
    load = {n: 0.0 for n in model.capacity}
    for unit, node in zip(model.units, placement):
        load[node] += unit.load
    second = 0.0
    for node, capacity in model.capacity.items():
        utilisation = 100.0 * relative_load(load[node], capacity)
        second += utilisation ** 2 if node in model.draining else (utilisation - model.average) ** 2
    return round(distance(model, placement), 9), round(second, 6)


def restrict(model: BalanceModel, placement: Sequence[str], nodes: set[str]) -> BalanceModel:
    """The model with every unit outside ``nodes`` pinned where it is, the others kept inside ``nodes``.

    O(U·|nodes|): each unit's choice is read off the few neighbourhood nodes, never its whole domain.
    """
    ordered = [n for n in model.capacity if n in nodes]  # the problem's order, as ``allowed`` has it
    units = []
    for unit, node in zip(model.units, placement):
        allowed = tuple(n for n in ordered if n in unit.domain) if node in nodes else (node,)
        domain = frozenset(allowed)
        units.append(replace(unit, start=node, allowed=allowed, domain=domain,
                             moves=_restricted(unit.moves, domain), move_cost=_restricted(unit.move_cost, domain)))
    return replace(model, units=tuple(units))


def _restricted(migrations: Mapping[str, float], domain: frozenset[str]) -> Mapping[str, float]:
    if isinstance(migrations, Migrations):
        return migrations.restricted(domain)
    return {n: migrations[n] for n in domain}


def _neighbourhood(model: BalanceModel, placement: Sequence[str], rng: random.Random) -> set[str]:
    """The nodes that set d (two above, three below the average), a draining node still
    holding units, and random others: ``NEIGHBOURHOOD_NODES`` in all."""
    load = {n: 0.0 for n in model.capacity}
    for unit, node in zip(model.units, placement):
        load[node] += unit.load
    deviation = {n: 100.0 * load[n] / c - model.average for n, c in model.capacity.items()}
    active = sorted((n for n in model.capacity if n not in model.draining), key=lambda n: (deviation[n], n))
    chosen = set(active[:3]) | set(active[-2:])
    holding = sorted({n for n in placement if n in model.draining})
    if holding:
        chosen.add(rng.choice(holding))
    others = sorted(set(model.capacity) - chosen)
    chosen |= set(rng.sample(others, max(0, min(len(others), NEIGHBOURHOOD_NODES - len(chosen)))))
    return chosen


def _neighbourhood_search(model: BalanceModel, start: Sequence[str], solver: str, deadline: float, seed: int,
                          weights: tuple[float, float], started: float) -> Solution:
    """Large-neighbourhood search: the MILP over a few nodes at a time, the rest pinned.

    Not in the paper, which solves the whole MILP with CPLEX: CBC and HiGHS
    find little in a whole model of thousands of binaries within seconds (its
    LP bound is 0: fractional executors balance perfectly), yet solve a
    neighbourhood of ``NEIGHBOURHOOD_NODES`` nodes to optimality in a fraction
    of a second. A neighbourhood's answer is kept when it improves
    :func:`placement_key`; the budget, memory and Lemma 1 constraints are the
    whole model's (pinned units' migrations count against the budget).
    """
    rng = random.Random(seed)
    best, best_key = tuple(start), placement_key(model, start)
    solves = improvements = 0
    while deadline - time.perf_counter() > 0.1:
        sub = restrict(model, best, _neighbourhood(model, best, rng))
        formulation = _formulate(sub, weights)
        seconds = min(STEP_SECONDS, deadline - time.perf_counter())
        result = solve_mip(formulation.mip, solver, seconds, rng.randrange(2**31),
                           _initial_values(sub, formulation, best))
        solves += 1
        placement = _decode(formulation, result.values) if result.values is not None else None
        if placement is None or violations(model, placement):
            continue
        key = placement_key(model, placement)
        if key < best_key:
            best, best_key = placement, key
            improvements += 1
    note = (f"{solves} neighbourhood MILP(s) of {NEIGHBOURHOOD_NODES} nodes, "
            f"{improvements} improvement(s)")
    return Solution(best, "feasible (time limit)", solver, time.perf_counter() - started, (note,))


@dataclass(frozen=True)
class _Formulation:
    mip: Mip
    column_unit: np.ndarray      # per y column: its unit
    column_node: list[str]       # per y column: its node
    pinned: dict[int, str]       # unit -> node, for units with one allowed node
    d_columns: tuple[int, int, int]


def _formulate(model: BalanceModel, weights: tuple[float, float]) -> _Formulation:
    """Columns: y[u,n] for every unit with a choice, then d, du, dl. Rows (1)-(6)."""
    w1, w2 = weights
    nodes = list(model.capacity)
    column_unit, column_node, pinned = list[int](), list[str](), dict[int, str]()
    for u, unit in enumerate(model.units):
        if len(unit.allowed) == 1:
            pinned[u] = unit.allowed[0]
            continue
        column_unit.extend([u] * len(unit.allowed))
        column_node.extend(unit.allowed)
    n_y = len(column_unit)
    d, du, dl = n_y, n_y + 1, n_y + 2
    column_unit_arr = np.asarray(column_unit, dtype=np.int64)
    load = np.array([model.units[u].load for u in column_unit])
    memory = np.array([model.units[u].memory for u in column_unit])
    moves = np.array([model.units[u].moves[n] for u, n in zip(column_unit, column_node)])
    costs = np.array([model.units[u].move_cost[n] for u, n in zip(column_unit, column_node)])
    all_y = np.arange(n_y)

    rows = RowBuilder()
    boundaries = np.flatnonzero(np.diff(column_unit_arr)) + 1 if n_y else np.zeros(0, dtype=np.int64)
    for block in np.split(all_y, boundaries) if n_y else []:
        rows.add(block, np.ones(len(block)), 1.0, 1.0)                                      # (1)
    if model.max_migrations is not None:                                                     # (2)
        pinned_moves = sum(model.units[u].moves[n] for u, n in pinned.items())
        rows.add(all_y[moves > 0], moves[moves > 0], upper=model.max_migrations - pinned_moves)
    if model.max_migration_cost is not None:
        pinned_cost = sum(model.units[u].move_cost[n] for u, n in pinned.items())
        rows.add(all_y[costs > 0], costs[costs > 0], upper=model.max_migration_cost - pinned_cost)
    constant_load = {n: 0.0 for n in nodes}
    constant_memory = {n: 0.0 for n in nodes}
    for u, node in pinned.items():
        constant_load[node] += model.units[u].load
        constant_memory[node] += model.units[u].memory
    node_of_column = np.array([nodes.index(n) for n in column_node], dtype=np.int64) if n_y else \
        np.zeros(0, dtype=np.int64)
    for i, node in enumerate(nodes):
        on_node = all_y[node_of_column == i]
        share = model.capacity[node] / 100.0
        target = share * model.average - constant_load[node]
        columns = np.concatenate([on_node, [d, du]])
        rows.add(columns, np.concatenate([load[on_node], [-share, share]]), upper=target)          # (3)
        if node not in model.draining:
            columns = np.concatenate([on_node, [d, dl]])
            rows.add(columns, np.concatenate([load[on_node], [share, -share]]), lower=target)      # (4)
        if node in model.memory:
            rows.add(on_node, memory[on_node], upper=model.memory[node] - constant_memory[node])   # (6)
    rows.add([du, d], [1.0, -1.0], upper=0.0)                                                      # (5)
    rows.add([dl, d], [1.0, -1.0], upper=0.0)
    cost = np.zeros(n_y + 3)
    # Tertiary: load left on nodes marked for removal (breaks ties towards draining, Lemma 2).
    on_draining = np.array([n in model.draining for n in column_node], dtype=np.bool_)
    cost[:n_y] = np.where(on_draining, DRAIN_WEIGHT * load, 0.0)
    cost[d], cost[du], cost[dl] = w1, -w2, -w2
    lower = np.zeros(n_y + 3)
    upper = np.concatenate([np.ones(n_y), np.full(3, np.inf)])
    integer = np.concatenate([np.ones(n_y, dtype=bool), np.zeros(3, dtype=bool)])
    mip = rows.build(cost, lower, upper, integer)
    return _Formulation(mip, column_unit_arr, column_node, pinned, (d, du, dl))


def _initial_values(model: BalanceModel, formulation: _Formulation, start: Sequence[str]) -> np.ndarray:
    values = np.zeros(formulation.mip.columns)
    for column, (u, node) in enumerate(zip(formulation.column_unit, formulation.column_node)):
        values[column] = 1.0 if start[u] == node else 0.0
    load = {n: 0.0 for n in model.capacity}
    for unit, node in zip(model.units, start):
        load[node] += unit.load
    deviation = {n: 100.0 * load[n] / c - model.average for n, c in model.capacity.items()}
    up = max(deviation.values())
    down = max(-deviation[n] for n in model.capacity if n not in model.draining)
    top = max(up, down, 0.0)
    d, du, dl = formulation.d_columns
    values[d], values[du], values[dl] = top, top - max(up, 0.0), top - max(down, 0.0)
    return values


def _decode(formulation: _Formulation, values: np.ndarray) -> tuple[str, ...] | None:
    n_units = len(set(formulation.column_unit.tolist()) | set(formulation.pinned))
    chosen: dict[int, list[str]] = {u: [n] for u, n in formulation.pinned.items()}
    for column, (u, node) in enumerate(zip(formulation.column_unit, formulation.column_node)):
        if values[column] > 0.5:
            chosen.setdefault(int(u), []).append(node)
    if len(chosen) != n_units or any(len(nodes) != 1 for nodes in chosen.values()):
        return None
    return tuple(chosen[u][0] for u in range(n_units))


def _fallback(model: BalanceModel, start: Sequence[str] | None, reason: str, solver: str, started: float) -> Solution:
    if start is None:
        raise InfeasibleError(f"{reason}, and the current placement breaks the constraints: "
                              + "; ".join(violations(model, tuple(u.start for u in model.units))[:3]))
    return Solution(tuple(start), "start", solver, time.perf_counter() - started, (f"kept the start: {reason}",))


def _infeasible_message(model: BalanceModel) -> str:
    budget = []
    if model.max_migrations is not None:
        budget.append(f"max_migrations={model.max_migrations:g}")
    if model.max_migration_cost is not None:
        budget.append(f"max_migration_cost={model.max_migration_cost:g}")
    within = f" within {' and '.join(budget)}" if budget else ""
    memory = " and the nodes' memory limits" if model.memory else ""
    return f"no placement satisfies one node per executor{memory}{within}"
