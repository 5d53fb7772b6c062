"""``albic``: Autonomic Load Balancing with Integrated Collocation.

Madsen, Zhou, Cao, *Integrative Dynamic Reconfiguration in a Parallel Stream
Processing Engine*, §4.3.2 (Steps 1-4), on top of the MILP of §4.3.1
(:mod:`storm_planner.planners.albic.milp`). A Storm key group is an executor.

Each round (one call of :meth:`AlbicPlanner.plan`):

1. **Scores.** A pair (k, k') is worth collocating when the rate k sends to k'
   exceeds ``sigma`` × k's average rate per downstream executor (k's total output
   divided by the number of executors of its downstream components).
2. **Maintain collocation.** The collocated sets kept from earlier rounds, and
   every above-threshold pair that already shares a node ("all existing
   collocated key group pairs"), are merged while they intersect, members no
   longer tied to the set by an above-threshold pair leave it, and every set is split by balanced graph
   partitioning (METIS, edge weight = traffic) until each partition's migration
   cost is within the budget and its load within ``max_pl`` (percent of the mean
   node capacity; 25 at first). A partition migrates as one unit in the MILP.
3. **Improve collocation.** The candidate pair with the highest rate that is not
   yet collocated (ties broken at random, seeded) gets one collocation
   constraint: case 1, neither executor in a set: both on whichever of their two
   nodes is less utilised; case 2, one in a set: both on that set's node; case 3,
   both in (different) sets: both sets on the less utilised of the two nodes.
4. **Solve** the constrained MILP. While the load distance exceeds ``max_ld``,
   lower ``max_pl`` by ``delta`` and re-solve (at most ``max_resolves`` times);
   ``max_pl`` = 0 is the pure MILP with one unit per executor and no constraint.

The new state is every set (with the newly collocated pair) restricted to the
executors the plan actually keeps together on one node. It is returned in
``Plan.state`` as ``{"version": 1, "sets": [[executor, ...], ...]}`` and read back
from the ``state`` parameter (or the option ``albic_state``); the adaptation
package persists it between rounds (a file on the CLI, ZooKeeper in the service).
With ``adopt`` on (the default), hot pairs found collocated are adopted every
round, so the sets also survive a lost state as long as the placement does; the
state keeps the sets the placement no longer shows (e.g. when only part of a
plan was applied, or ``adopt`` is off).

Reconstructions (the extracted paper lost these values and symbols):
``sigma`` = 2 (pairs sending more than twice their average); ``max_ld`` = 10
percent points; ``delta`` = 5 points, so that 25 → 0 takes exactly the "at most
five" re-solves the paper mentions; ``max_pl`` is read as a percentage of the
mean effective capacity of the nodes not marked for removal; the METIS vertex
weight is the migration cost when that is the more violated limit of the set,
else the load; a candidate pair is skipped when its constraint cannot be met
(the target node is marked for removal, the merged unit exceeds ``max_pl`` or
the round's migration budget).

Parameters (``-p key=value``, ``planner.albic.<key>`` or the bare key in
options): ``sigma``, ``max_ld``, ``max_pl``, ``delta``, ``max_resolves``,
``state``, ``adopt`` (adopt hot pairs already collocated; default true), and
:mod:`~storm_planner.planners.albic.milp`'s ``solver``, ``time_limit_s`` and budgets
(``max_migrations``, ``max_migration_cost``). The whole call stays within ``time_limit_s``: the
first solve gets 40% of it, the re-solves equal shares of the rest; when no
attempt meets ``max_ld``, the most balanced one is returned.

Complexity: O(T + E·N) for the scores and the model (T traffic pairs), METIS
near-linear in the set sizes, plus at most 1 + ``max_resolves`` MILP solves.
"""
from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from storm_planner.core.errors import InfeasibleError, ProblemError
from storm_planner.core.evaluate import load_distance, relative_load
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Traffic
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners._parameters import checked, to_flag, to_real, to_whole
from storm_planner.planners.albic import _milp_model as model
from storm_planner.planners.albic._partition import edge_weights, split_until
from storm_planner.planners.albic._units import start_placement
from storm_planner.planners.albic.milp import budgets, solver_parameters
from storm_planner.planners.base import Planner

DEFAULTS = {"sigma": 2.0, "max_ld": 10.0, "max_pl": 25.0, "delta": 5.0, "max_resolves": 5}
STATE_VERSION = 1


# -- Step 1: scores ----------------------------------------------------------------

def executor_pairs(problem: Problem) -> tuple[Traffic, ...]:
    """ALBIC scores executor pairs (§4.3.2): built once per problem, within the model's limit."""
    return problem.traffic_model.executor_pairs(who="albic (pair scores over executor pairs)")


def downstream_executors(problem: Problem) -> dict[str, int]:
    """Executor -> number of executors in the components its component streams to."""
    sizes: dict[str, int] = defaultdict(int)
    for executor in problem.executors:
        sizes[executor.component] += 1
    targets: dict[str, set[str]] = defaultdict(set)
    for stream in problem.streams:
        targets[stream.source].add(stream.target)
    observed: dict[str, set[str]] = defaultdict(set)  # fallback when streams are unknown
    for t in executor_pairs(problem):
        observed[t.source].add(t.target)
    counts = {}
    for executor in problem.executors:
        declared = sum(sizes[c] for c in targets.get(executor.component, ()))
        counts[executor.id] = declared or len(observed.get(executor.id, ()))
    return counts


def pair_scores(problem: Problem, sigma: float) -> dict[tuple[str, str], float]:
    """Undirected pairs whose directed rate beats sigma × the sender's average; value = that rate."""
    output: dict[str, float] = defaultdict(float)
    pairs = executor_pairs(problem)
    for t in pairs:
        output[t.source] += t.rate
    downstream = downstream_executors(problem)
    scores: dict[tuple[str, str], float] = {}
    for t in pairs:
        if t.source == t.target or t.rate <= 0 or not downstream.get(t.source):
            continue
        average = output[t.source] / downstream[t.source]
        if t.rate > sigma * average:
            key = (t.source, t.target) if t.source < t.target else (t.target, t.source)
            scores[key] = max(scores.get(key, 0.0), t.rate)
    return scores


# -- Step 2: collocated sets ---------------------------------------------------------

def sets_from_state(state: Mapping[str, Any] | None, executors: Iterable[str]) -> list[set[str]]:
    if not state:
        return []
    if not isinstance(state, Mapping) or not isinstance(state.get("sets", []), list):
        raise ProblemError("albic state: expected {'version': 1, 'sets': [[executor, ...], ...]}")
    known = set(executors)
    return [set(s) & known for s in state.get("sets", []) if isinstance(s, list)]


def merge_sets(sets: Iterable[set[str]]) -> list[set[str]]:
    """Union of every pair of intersecting sets, until the sets are disjoint."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for members in sets:
        ordered = sorted(members)
        for other in ordered[1:]:
            parent[root(other)] = root(ordered[0])
        if ordered:
            root(ordered[0])
    groups: dict[str, set[str]] = defaultdict(set)
    for x in parent:
        groups[root(x)].add(x)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: sorted(g))


def still_tied(sets: Iterable[set[str]], scores: Mapping[tuple[str, str], float]) -> list[set[str]]:
    """Keep only the members linked to the rest of their set by an above-threshold pair."""
    partners: dict[str, set[str]] = defaultdict(set)
    for a, b in scores:
        partners[a].add(b)
        partners[b].add(a)
    kept: list[set[str]] = []
    for members in sets:
        tied = {m for m in members if partners[m] & (members - {m})}
        if len(tied) > 1:
            kept.append(tied)
    return merge_sets(kept)


# -- Step 3: the collocation constraint ------------------------------------------------

def ranked_candidates(scores: Mapping[tuple[str, str], float], set_of: Mapping[str, int],
                      rng: random.Random) -> list[tuple[str, str]]:
    """Pairs not yet in one set, highest rate first; equal rates in random (seeded) order."""
    candidates = [p for p in sorted(scores) if set_of.get(p[0], -1) == -1 or set_of.get(p[0]) != set_of.get(p[1])]
    rng.shuffle(candidates)
    return sorted(candidates, key=lambda p: -scores[p])


def collocation_constraint(problem: Problem, pair: tuple[str, str], units: list[list[str]],
                           start: Mapping[str, str], in_set: set[str], pl_limit: float,
                           count: float | None, cost: float | None,
                           ) -> tuple[tuple[int, int], list[str], str, int] | str:
    """(merged units, pinned node, case) for the pair, or why it cannot be met (the plan's notes say it:
    on a cluster whose executors are large against ``max_pl``, no pair may ever qualify)."""
    i, j = pair
    unit_of = {m: u for u, members in enumerate(units) for m in members}
    ui, uj = unit_of[i], unit_of[j]
    if ui == uj:
        return "already one unit"
    node_i, node_j = start[i], start[j]
    utilisation = _utilisations(problem, start)
    draining = {n.id for n in problem.nodes if n.draining}
    if (i in in_set) != (j in in_set):                    # case 2: join the set's node
        case, node = 2, node_i if i in in_set else node_j
    else:                                                 # cases 1 and 3: the less utilised node
        case = 3 if i in in_set else 1
        node = min((node_i, node_j), key=lambda n: (n in draining, utilisation[n], n))
    if node in draining:
        return f"its node {node} is draining"
    merged = sorted(set(units[ui]) | set(units[uj]))
    executors = {e.id: e for e in problem.executors}
    merged_load = sum(executors[m].load for m in merged)
    if merged_load > pl_limit:
        return f"merged load {merged_load:.4g} % of a core > max_pl's {pl_limit:.4g}"
    current = {e: s.node for e, s in problem.current.items()}
    moving = [m for m in merged if m in current and current[m] != node]
    if count is not None and len(moving) > count:
        return f"{len(moving)} moves > the budget of {count:g}"
    if cost is not None and sum(executors[m].state_size for m in moving) > cost:
        return f"migration cost > the budget of {cost:g}"
    return (ui, uj), merged, node, case


def _utilisations(problem: Problem, node_of: Mapping[str, str]) -> dict[str, float]:
    load = {n.id: 0.0 for n in problem.nodes}
    by_id = {e.id: e for e in problem.executors}
    for executor, node in node_of.items():
        load[node] += by_id[executor].load
    return {n.id: relative_load(load[n.id], n.effective_capacity) for n in problem.nodes}


def _no_constraint(refused: list[str], pl_limit: float, dropped: str | None) -> str:
    """Why this round pins no pair: each case has its own words, as the notes are how an operator
    learns that the pair step is idle (on Real Job 3 it never fired)."""
    lead = "no collocation constraint this round: "
    if dropped:
        return f"{lead}{dropped} was infeasible with the memory limits: the pin and the sets' partitions dropped"
    if pl_limit <= 0:
        return f"{lead}max_pl is 0, the pair step is skipped"
    if not refused:
        return f"{lead}no hot pair outside a set"
    return f"{lead}{len(refused)} hot pair(s) refused, the first {refused[0]}"


# -- Step 4: solve, shrink max_pl, re-solve -------------------------------------------

class AlbicPlanner(Planner):
    """ALBIC (Madsen et al., §4.3.2): the §4.3.1 MILP with collocation, one more hot executor pair
    collocated per round, collocated sets kept between rounds.

    Parameters
    ----------
    sigma : float, default=2.0
        A pair is hot when the rate from one executor to the other exceeds ``sigma`` times the sender's
        average rate per downstream executor.
    max_ld : float, default=10.0
        Target load distance in percent points: while a solve ends above it, ``max_pl`` is lowered and
        the MILP re-solved.
    max_pl : float, default=25.0
        Most load of one collocated partition, in percent of the mean capacity of the nodes not marked
        for removal; larger collocated sets are split by balanced graph partitioning (METIS).
    delta : float, default=5.0
        How far ``max_pl`` drops, in percent points, before each re-solve.
    max_resolves : int, default=5
        Most re-solves after the first solve in one call.
    state : dict or None, default=None
        The collocated sets of the previous round, as returned in ``Plan.state``
        (``{"version": 1, "sets": [[executor, ...], ...]}``; also read from the option ``albic_state``);
        None starts without sets.
    adopt : bool, default=True
        Adopt every hot pair found already collocated as a collocated set each round, so the sets
        survive a lost state as long as the placement does.
    solver : {"cbc", "highs"}, default="cbc"
        The MILP solver: CBC (the binary PuLP ships) or HiGHS.
    time_limit_s : float or None, default=None
        Seconds for the whole call (the first solve gets 40 %, the re-solves share the rest); None takes
        the problem's ``options.time_limit_s``.
    max_migrations : int or None, default=None
        Most executors with a current place that may move this round; None takes the problem's
        ``options.max_migrations`` (absent there: no limit).
    max_migration_cost : float or None, default=None
        Most summed ``state_size`` of the executors that move; None takes the problem's
        ``options.max_migration_cost`` (absent there: no limit).
    """

    name = "albic"
    isolated = True
    summary = "Madsen et al. §4.3.2: MILP load balancing that collocates one hot executor pair per round"
    option_aliases = MappingProxyType({"albic_state": "state"})  # the state's older option name

    def __init__(self, *, sigma: float = DEFAULTS["sigma"], max_ld: float = DEFAULTS["max_ld"],
                 max_pl: float = DEFAULTS["max_pl"], delta: float = DEFAULTS["delta"],
                 max_resolves: int = int(DEFAULTS["max_resolves"]), state: Mapping[str, Any] | None = None,
                 adopt: bool = True, solver: str = "cbc", time_limit_s: float | None = None,
                 max_migrations: int | None = None, max_migration_cost: float | None = None) -> None:
        self.sigma = checked(self.name, "sigma", sigma, to_real, minimum=0)
        self.max_ld = checked(self.name, "max_ld", max_ld, to_real, minimum=0)
        self.max_pl = checked(self.name, "max_pl", max_pl, to_real, minimum=0)
        self.delta = checked(self.name, "delta", delta, to_real, minimum=0)
        self.max_resolves = checked(self.name, "max_resolves", max_resolves, to_whole, minimum=0)
        self.state = state  # checked against the problem's executors by sets_from_state
        self.adopt = checked(self.name, "adopt", adopt, to_flag)
        self.solver, self.time_limit_s, self.max_migrations, self.max_migration_cost = solver_parameters(
            self.name, solver, time_limit_s, max_migrations, max_migration_cost)

    def plan(self, problem: Problem) -> Plan:
        started = time.perf_counter()
        config = {k: float(getattr(self, k)) for k in DEFAULTS}
        scores = pair_scores(problem, config["sigma"])
        start = start_placement(problem)
        sets = self._collocated_sets(problem, scores, start)
        outcome, resolves = self._solve_with_resolves(problem, config, sets, scores, start, started)
        chosen, max_pl = outcome["constraint"], outcome["max_pl"]
        node_of = outcome["node_of"]
        pair = chosen[0] if chosen else None
        new_sets = self._next_sets(sets, pair, node_of)
        notes = [
            f"albic: {len(sets)} collocated set(s) in, {len(new_sets)} out; max_pl {max_pl:g}%, "
            f"{resolves} re-solve(s); load distance {outcome['distance']:.3f} (max_ld {config['max_ld']:g})",
            f"solver {outcome['solution'].solver}: {outcome['solution'].status}",
            (f"collocation constraint (case {chosen[2]}): {chosen[0][0]} + {chosen[0][1]} on {chosen[1]}"
             if chosen else outcome["no_constraint"]),
            *outcome["solution"].notes,
        ]
        return Plan(
            algorithm=self.name,
            assignments=slots_for_nodes(problem, node_of),
            drain=tuple(n.id for n in problem.nodes if n.draining),
            figures=MappingProxyType({
                "albic_sets": float(len(new_sets)),
                "albic_candidates": float(len(scores)),
                "albic_resolves": float(resolves),
                "albic_max_pl": max_pl,
            }),
            notes=tuple(notes),
            state=MappingProxyType({"version": STATE_VERSION, "sets": [sorted(s) for s in new_sets]}),
        )

    def _collocated_sets(self, problem: Problem, scores: Mapping[tuple[str, str], float],
                         start: Mapping[str, str]) -> list[set[str]]:
        """The sets kept collocated from earlier rounds (and, with ``adopt``, pairs already together),
        merged, and split where a pair no longer ties."""
        kept = sets_from_state(self.state, [e.id for e in problem.executors])
        if self.adopt:
            kept += [set(pair) for pair in scores if start[pair[0]] == start[pair[1]]]
        return still_tied(merge_sets(kept), scores)

    def _solve_with_resolves(self, problem: Problem, config: Mapping[str, float], sets: list[set[str]],
                             scores: Mapping[tuple[str, str], float], start: Mapping[str, str],
                             started: float) -> tuple[dict[str, Any], int]:
        """Solve, lowering max_pl by delta and solving again while the load distance is above max_ld;
        returns (the attempt taken, re-solves made)."""
        time_limit = problem.options.time_limit_s if self.time_limit_s is None else self.time_limit_s
        count, cost = budgets(problem, self.max_migrations, self.max_migration_cost)
        rng = random.Random(problem.options.seed)
        set_of = {m: k for k, members in enumerate(sets) for m in members}
        edges = edge_weights({(t.source, t.target): t.rate for t in executor_pairs(problem)})
        mean_capacity = _mean_active_capacity(problem)
        max_pl, resolves = config["max_pl"], 0
        best: dict[str, Any] | None = None
        while True:
            seconds = self._attempt_seconds(config, max_pl, resolves, time_limit, started)
            outcome = self._solve_once(problem, sets, set_of, scores, edges, start, max_pl * mean_capacity / 100,
                                       count, cost, self.solver, seconds, rng)
            outcome["max_pl"] = max_pl
            # Keep the most balanced attempt: a last re-solve squeezed by the time limit may do worse.
            if best is None or outcome["distance"] < best["distance"] - 1e-9:
                best = outcome
            if outcome["distance"] <= config["max_ld"] or max_pl <= 0 or resolves >= config["max_resolves"]:
                break
            max_pl = max(0.0, max_pl - config["delta"])
            resolves += 1
        return (best if outcome["distance"] > config["max_ld"] else outcome), resolves

    @staticmethod
    def _attempt_seconds(config: Mapping[str, float], max_pl: float, resolves: int, time_limit: float,
                         started: float) -> float:
        """40% of the limit for the first solve (re-solves are rare), then equal shares of the rest."""
        remaining = time_limit - (time.perf_counter() - started)
        steps_to_zero = int(-(-max_pl // config["delta"])) if config["delta"] > 0 else 0
        attempts_left = 1 + min(int(config["max_resolves"]) - resolves, steps_to_zero)
        if attempts_left <= 1:
            return max(remaining, 0.05)
        share = 0.4 * time_limit if resolves == 0 else remaining / attempts_left
        return max(min(share, remaining), 0.05)

    def _solve_once(self, problem: Problem, sets: list[set[str]], set_of: Mapping[str, int],
                    scores: Mapping[tuple[str, str], float], edges: Mapping[tuple[str, str], float],
                    start: Mapping[str, str], pl_limit: float, count: float | None, cost: float | None, solver: str,
                    seconds: float, rng: random.Random) -> dict[str, Any]:
        """Partition the sets under ``pl_limit``, add one collocation constraint, solve."""
        executors = {e.id: e for e in problem.executors}
        units: list[list[str]] = []
        if pl_limit > 0:
            limits = [(lambda m: executors[m].load, pl_limit)]
            if count is not None:
                limits.append((lambda m: 1.0, max(count, 1.0)))
            if cost is not None:
                limits.append((lambda m: executors[m].state_size, cost))
            for k, members in enumerate(sets):
                units.extend(split_until(sorted(members), edges, limits, problem.options.seed + k))
        grouped = {m for u in units for m in u}
        units.extend([e] for e in sorted(executors) if e not in grouped)
        # A partition whose members sit on several nodes (a state that no longer matches the
        # cluster) would force migrations outside the budget's control: split it by node.
        units = [group for unit in units for group in _by_node(unit, start)]
        constraint: tuple[tuple[str, str], str, int] | None = None
        fixed: dict[int, str] = {}
        refused: list[str] = []
        dropped: str | None = None
        if pl_limit > 0:
            in_set = set(set_of)
            for pair in ranked_candidates(scores, set_of, rng)[:50]:
                found = collocation_constraint(problem, pair, units, start, in_set, pl_limit, count, cost)
                if isinstance(found, str):
                    refused.append(f"{pair[0]} + {pair[1]}: {found}")
                    continue
                (ui, uj), merged, node, case = found
                units = [u for k, u in enumerate(units) if k not in (ui, uj)] + [merged]
                fixed = {len(units) - 1: node}
                constraint = (pair, node, case)
                break
        try:
            balance = model.build_model(problem, units, start, fixed, count, cost)
            solution = model.solve(balance, solver, seconds, problem.options.seed)
        except InfeasibleError:
            if not fixed or constraint is None:
                raise
            # The constraint cannot be met together with memory limits: drop it this round.
            dropped = f"{constraint[0][0]} + {constraint[0][1]} on {constraint[1]}"
            units, fixed, constraint = [[m] for u in units for m in u], {}, None
            balance = model.build_model(problem, units, start, fixed, count, cost)
            solution = model.solve(balance, solver, seconds, problem.options.seed)
        node_of = {m: node for unit, node in zip(balance.units, solution.node_of_unit) for m in unit.members}
        return {"node_of": node_of, "solution": solution, "constraint": constraint,
                "no_constraint": _no_constraint(refused, pl_limit, dropped),
                "distance": load_distance(problem, node_of)}

    @staticmethod
    def _next_sets(sets: list[set[str]], pair: tuple[str, str] | None, node_of: Mapping[str, str]) -> list[set[str]]:
        """The sets (plus the new pair) restricted to members the plan keeps on one node."""
        merged = merge_sets([*sets, *([set(pair)] if pair else [])])
        kept: list[set[str]] = []
        for members in merged:
            by_node: dict[str, set[str]] = defaultdict(set)
            for m in members:
                by_node[node_of[m]].add(m)
            kept.extend(g for g in by_node.values() if len(g) > 1)
        return sorted(kept, key=lambda g: sorted(g))


def _by_node(unit: list[str], node_of: Mapping[str, str]) -> list[list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for member in unit:
        groups[node_of[member]].append(member)
    return [groups[n] for n in sorted(groups)]


def _mean_active_capacity(problem: Problem) -> float:
    active = [n.effective_capacity for n in problem.nodes if not n.draining]
    if not active:
        raise InfeasibleError("every node is marked for removal: there is nowhere to place executors")
    return sum(active) / len(active)
