"""A budgeted local search that gives the load-balancing MILP a good incumbent.

Not part of Madsen et al.: a primal heuristic. The MILP's LP relaxation is
useless as a bound (fractional executors balance perfectly, d = 0), so
branch-and-bound gets no guidance and CBC's and HiGHS' own heuristics find good
budgeted moves slowly; starting them from a local optimum lets the few seconds
of a round go into improving it.

Moves are *unit -> node* (a unit is an executor, or an ALBIC partition) within
the model's budgets, memory limits and allowed nodes (Lemma 1). The objective
is the model's: the load distance d first, then the sum of squared deviations
(squared utilisation for nodes marked for removal, so that emptying them is
preferred whenever d allows).
Each step applies the best single move; when none improves, the best pair of
moves (a first move among the K most promising, then the best second move),
which finds the swaps and "return one, move another" exchanges a single move
cannot; when no pair improves either, an ejection chain (each move followed by
moving a unit off the node that just received one, up to a few moves). It
stops when none of the three improves.

Complexity: O(U·N) per single step, O(K·U·N) per pair step and
O(K·D·U·N) per chain step for chains of D moves (all vectorised).
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from storm_planner.planners.albic._units import Migrations

if TYPE_CHECKING:
    from storm_planner.planners.albic._milp_model import BalanceModel

_TOLERANCE = 1e-6
PAIR_CANDIDATES = 24   # first moves tried by the pair and chain searches
DRAIN_TARGETS = 3      # targets tried for each unit still on a draining node
CHAIN_DEPTH = 5        # moves in an ejection chain

Move = tuple[int, int]                                 # (unit, node), by index
Score = tuple[float, float]                            # (worst spread, sum of squares)
Evaluation = tuple[np.ndarray, np.ndarray, np.ndarray]  # worst, squares, feasible: unit x node


class _Search:
    """Arrays of the model plus the current placement; evaluates every single move at once."""

    def __init__(self, model: BalanceModel, start: Sequence[str]) -> None:
        self.nodes = list(model.capacity)
        index = {n: i for i, n in enumerate(self.nodes)}
        units = model.units
        n_units, n_nodes = len(units), len(self.nodes)
        self.allowed = np.zeros((n_units, n_nodes), dtype=bool)
        self.moves = np.zeros((n_units, n_nodes))
        self.costs = np.zeros((n_units, n_nodes))
        rows: dict[int, np.ndarray] = {}  # units share their allowed tuples: one mask per tuple
        for u, unit in enumerate(units):
            mask = rows.get(id(unit.allowed))
            if mask is None:
                mask = rows[id(unit.allowed)] = np.zeros(n_nodes, dtype=bool)
                mask[[index[node] for node in unit.allowed]] = True
            self.allowed[u] = mask
            _fill(self.moves[u], unit.moves, unit.allowed, index)
            _fill(self.costs[u], unit.move_cost, unit.allowed, index)
        self.moves *= self.allowed
        self.costs *= self.allowed
        self.load = np.array([u.load for u in units])
        self.memory = np.array([u.memory for u in units])
        self.capacity = np.array([model.capacity[n] for n in self.nodes])
        self.limit = np.array([model.memory.get(n, np.inf) for n in self.nodes])
        self.draining = np.array([n in model.draining for n in self.nodes])
        self.average = model.average
        self.count_budget = np.inf if model.max_migrations is None else model.max_migrations
        self.cost_budget = np.inf if model.max_migration_cost is None else model.max_migration_cost
        self.place = np.array([index[n] for n in start])
        self.rows = np.arange(n_units)
        self.node_load = np.bincount(self.place, weights=self.load, minlength=n_nodes)
        self.node_memory = np.bincount(self.place, weights=self.memory, minlength=n_nodes)

    def spread(self, deviation: np.ndarray, draining: np.ndarray) -> np.ndarray:
        """What a node contributes to d: |deviation|, or only its excess for a draining node."""
        spread: np.ndarray = np.where(draining, np.maximum(deviation, 0.0), np.abs(deviation))
        return spread

    def tie_break(self, deviation: np.ndarray, draining: np.ndarray) -> np.ndarray:
        """Second key per node: squared deviation, or squared utilisation for a draining node.

        The latter makes emptying nodes marked for removal the preferred way to
        spend a budget that cannot lower d any more (Lemma 2's outcome; without it
        a local optimum can leave a few executors on a draining node for good).
        """
        return np.where(draining, (deviation + self.average) ** 2, deviation ** 2)

    def score(self) -> tuple[float, float]:
        deviation = 100.0 * self.node_load / self.capacity - self.average
        contribution = self.spread(deviation, self.draining)
        return float(contribution.max()), float(self.tie_break(deviation, self.draining).sum())

    def evaluate(self) -> Evaluation:
        """(worst, squares, feasible), each unit x node: the objective after moving unit u to node n."""
        deviation = 100.0 * self.node_load / self.capacity - self.average
        contribution = self.spread(deviation, self.draining)
        source = self.place
        source_after = deviation[source] - 100.0 * self.load / self.capacity[source]
        target_after = deviation[None, :] + 100.0 * self.load[:, None] / self.capacity[None, :]
        source_spread = self.spread(source_after, self.draining[source])
        target_spread = self.spread(target_after, self.draining[None, :])
        others = _max_excluding(contribution, source)
        worst = np.maximum(np.maximum(others, source_spread[:, None]), target_spread)
        second = self.tie_break(deviation, self.draining)
        squares = (second.sum() - second[source, None] - second[None, :]
                   + self.tie_break(source_after, self.draining[source])[:, None]
                   + self.tie_break(target_after, self.draining[None, :]))
        here_moves = self.moves[self.rows, source]
        here_costs = self.costs[self.rows, source]
        feasible = (self.allowed
                    & (np.arange(len(self.nodes))[None, :] != source[:, None])
                    & (here_moves.sum() - here_moves[:, None] + self.moves <= self.count_budget + _TOLERANCE)
                    & (here_costs.sum() - here_costs[:, None] + self.costs <= self.cost_budget + _TOLERANCE)
                    & (self.node_memory[None, :] + self.memory[:, None] <= self.limit[None, :] + _TOLERANCE))
        return worst, squares, feasible

    def apply(self, unit: int, node: int) -> int:
        """Move ``unit`` to ``node``; returns where it was (to undo)."""
        previous = self.place[unit]
        self.node_load[previous] -= self.load[unit]
        self.node_load[node] += self.load[unit]
        self.node_memory[previous] -= self.memory[unit]
        self.node_memory[node] += self.memory[unit]
        self.place[unit] = node
        return int(previous)


def _fill(row: np.ndarray, migrations: Mapping[str, float], allowed: Iterable[str],
          index: Mapping[str, int]) -> None:
    """One unit's row of migrations per node (zero outside ``allowed``; the caller masks)."""
    if not isinstance(migrations, Migrations):  # a plain mapping: node by node
        for node in allowed:
            row[index[node]] = migrations[node]
        return
    row[:] = migrations.placed
    for node, here in migrations.here.items():
        if node in index:
            row[index[node]] -= here


def _max_excluding(contribution: np.ndarray, source: np.ndarray) -> np.ndarray:
    """unit x node: the largest contribution among nodes other than the unit's source and the target."""
    n_nodes = len(contribution)
    top = np.argsort(-contribution)[:3]
    result = np.zeros((len(source), n_nodes))
    done = np.zeros((len(source), n_nodes), dtype=bool)
    targets = np.arange(n_nodes)[None, :]
    for node in top:
        usable = ~done & (source[:, None] != node) & (targets != node)
        result[usable] = contribution[node]
        done |= usable
    return result


def _best(worst: np.ndarray, squares: np.ndarray, mask: np.ndarray) -> tuple[Move, Score] | None:
    """Index and (worst, squares) of the lexicographically best masked entry, or None."""
    if not mask.any():
        return None
    lowest = np.where(mask, worst, np.inf).min()
    ties = mask & (worst <= lowest + 1e-12)
    flat = int(np.argmin(np.where(ties, squares, np.inf)))
    unit, node = divmod(flat, worst.shape[1])   # unit x node, row-major
    return (unit, node), (float(worst[unit, node]), float(squares[unit, node]))


def _improves(candidate: tuple[float, float], current: tuple[float, float]) -> bool:
    return candidate[0] < current[0] - 1e-9 or (candidate[0] <= current[0] + 1e-12
                                                and candidate[1] < current[1] - 1e-9)


def greedy_descent(model: BalanceModel, start: Sequence[str], max_steps: int = 2_000,
                   deadline: float | None = None) -> tuple[str, ...]:
    """Best single move while one improves, then the best move pair, then an ejection chain.

    ``deadline`` (a ``time.perf_counter()`` value) stops the search early; the
    placement reached so far is returned.
    """
    if not model.units:
        return tuple(start)
    search = _Search(model, start)
    deadline = float("inf") if deadline is None else deadline
    for _ in range(max_steps):
        if time.perf_counter() > deadline:
            break
        current = search.score()
        worst, squares, feasible = search.evaluate()
        best = _best(worst, squares, feasible)
        if best is not None and _improves(best[1], current):
            search.apply(*best[0])
            continue
        firsts = _first_moves(search, worst, squares, feasible)
        moves = (_best_pair(search, firsts, current, deadline)
                 or _best_chain(search, firsts, current, deadline))
        if moves is None:
            break
        for unit, node in moves:
            search.apply(unit, node)
    return tuple(search.nodes[i] for i in search.place)


def _first_moves(search: _Search, worst: np.ndarray, squares: np.ndarray, feasible: np.ndarray) -> list[Move]:
    """The most promising single moves, plus the best few moves of every unit on a draining node.

    Moves off draining nodes rarely rank high on their own (the receiver
    overshoots) but are what a second move or a chain can make worthwhile.
    """
    if not feasible.any():
        return []
    ranked = np.lexsort((np.where(feasible, squares, np.inf).ravel(), np.where(feasible, worst, np.inf).ravel()))
    firsts = [divmod(int(flat), worst.shape[1]) for flat in ranked[:PAIR_CANDIDATES]]   # unit x node, row-major
    firsts = [f for f in firsts if feasible[f]]
    for unit in np.flatnonzero(search.draining[search.place])[:PAIR_CANDIDATES]:
        options = np.where(feasible[unit], worst[unit], np.inf)
        for node in np.argsort(options)[:DRAIN_TARGETS]:
            if np.isfinite(options[node]):
                firsts.append((int(unit), int(node)))
    return firsts


def _best_pair(search: _Search, firsts: Sequence[Move], current: Score, deadline: float) -> list[Move] | None:
    """The best improving pair: a first move from ``firsts``, then the best move of any other unit."""
    best_pair: list[Move] | None = None
    best_score = current
    for first in firsts:
        if time.perf_counter() > deadline:
            break
        previous = search.apply(*first)
        second = _best(*_masked_without(search.evaluate(), [first[0]]))
        search.apply(first[0], previous)
        if second is not None and _improves(second[1], best_score):
            best_pair, best_score = [first, second[0]], second[1]
    return best_pair


def _best_chain(search: _Search, firsts: Sequence[Move], current: Score, deadline: float) -> list[Move] | None:
    """An ejection chain: after each move, move a unit off the node that just received one.

    Finds what no pair can, e.g. an executor leaving a draining node when every
    remaining node is too full to take it whole: it pushes one unit along,
    each step onto a node with a little more room. Up to ``CHAIN_DEPTH`` moves.
    """
    best_chain: list[Move] | None = None
    best_score = current
    for first in firsts:
        if time.perf_counter() > deadline:
            break
        chain = [(first, search.apply(*first))]
        receiver = first[1]
        visited = [chain[0][1], receiver]
        for _ in range(CHAIN_DEPTH - 1):
            worst, squares, feasible = _masked_without(search.evaluate(), [move[0] for move, _ in chain])
            feasible &= (search.place == receiver)[:, None]
            feasible[:, visited] = False  # onward to fresh nodes: no ping-pong between two
            step = _best(worst, squares, feasible)
            if step is None:
                break
            (unit, node), score = step
            chain.append(((unit, node), search.apply(unit, node)))
            if _improves(score, best_score):
                best_chain, best_score = [move for move, _ in chain], score
                break
            receiver = node
            visited.append(node)
        for (unit, _), previous in reversed(chain):
            search.apply(unit, previous)
    return best_chain


def _masked_without(evaluation: Evaluation, units: Iterable[int]) -> Evaluation:
    worst, squares, feasible = evaluation
    feasible = feasible.copy()
    feasible[list(units), :] = False  # moving a unit twice is one move, tried already
    return worst, squares, feasible
