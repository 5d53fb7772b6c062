"""Cutting a plan down to a migration budget.

A planner that ignores ``Options.max_migrations`` (``topdown``, ``even``...)
may move any number of executors. :func:`limit_moves` keeps the current
placement and applies the plan's moves one (or one collocated pair) at a time,
best first, until the budget is spent or no move helps any more:

* a move is worth the inter-worker traffic it removes (traffic between
  executors in different slots: what Storm serialises and sends), and first of
  all the overload it removes (load above a node's effective capacity);
* a move never loads a node beyond both its capacity and what the full plan
  itself puts there; with ``planner.max.cpu.utilisation`` (D_CPU) set, a node's
  capacity here is its share within it (the re-plan of a topology short of CPU
  sets it), so the moves that relieve a node above the share come first;
* pairs: two executors that talk to each other and go to the same node are
  also tried together, since moving either alone may cut nothing (it leaves its
  partner behind).

A move is counted per executor whose slot changes, the same as the plugin
moves. Executors with no current slot are placed as the plan says, for free.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from storm_planner.core.errors import TooLargeError
from storm_planner.core.problem import Problem, Slot, Traffic
from storm_planner.core.utilisation import cpu_room

EPSILON = 1e-9
PAIR_PARTNERS = 3


def moves_between(current: Mapping[str, Slot], plan: Mapping[str, Slot]) -> list[str]:
    """Executors that have a slot now and a different one in ``plan``."""
    return sorted(e for e, slot in plan.items() if e in current and current[e] != slot)


def _pairs_within_limit(problem: Problem) -> tuple[Traffic, ...]:
    """Executor pairs to weigh moves by; measured pairs alone when the streams imply too many."""
    try:
        return problem.traffic_model.executor_pairs()
    except TooLargeError:
        return problem.traffic  # a huge topology without measurements: moves are chosen by load


def limit_moves(problem: Problem, plan: Mapping[str, Slot], budget: int | None) -> tuple[dict[str, Slot], list[str]]:
    """The plan with at most ``budget`` moves from ``problem.current``; returns (assignment, moved)."""
    current = dict(problem.current)
    wanted = moves_between(current, plan)
    if budget is None or len(wanted) <= budget:
        return dict(plan), wanted
    placed = {e: current.get(e, slot) for e, slot in plan.items()}
    if budget <= 0:
        return placed, []
    moves = _Moves(problem, plan, placed)
    remaining = set(wanted)
    chosen: list[str] = []
    while remaining and len(chosen) < budget:
        best = moves.best(remaining, pairs=budget - len(chosen) >= 2)
        if best is None:
            break
        moves.apply(best)
        remaining.difference_update(best)
        chosen.extend(best)
    return moves.placed, sorted(chosen)


class _Moves:
    """The placement as moves are taken: node loads, what each node may carry, who talks to whom."""

    def __init__(self, problem: Problem, plan: Mapping[str, Slot], placed: dict[str, Slot]) -> None:
        self.plan = plan
        self.placed = placed
        self.load = {e.id: e.load for e in problem.executors}
        self.capacity = {n.id: max(0.0, cpu_room(n, problem.options)) for n in problem.nodes}
        self.talk: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for t in _pairs_within_limit(problem):
            if t.source != t.target:
                self.talk[t.source][t.target] += t.rate
                self.talk[t.target][t.source] += t.rate
        self.node_load = self._node_loads(placed)
        planned_load = self._node_loads(plan)
        self.allowed = {n: max(self.capacity.get(n, 0.0), planned_load[n]) + EPSILON
                        for n in set(self.node_load) | set(planned_load)}

    def _node_loads(self, assignment: Mapping[str, Slot]) -> dict[str, float]:
        loads: dict[str, float] = defaultdict(float)
        for e, slot in assignment.items():
            loads[slot.node] += self.load.get(e, 0.0)
        return loads

    def best(self, remaining: set[str], *, pairs: bool) -> tuple[str, ...] | None:
        """The single move (or collocated pair) that removes the most overload, then traffic per move;
        None when none is allowed or none removes anything."""
        best, best_key = None, None
        for group in self._candidates(remaining, pairs):
            scored = self._evaluate(group)
            if scored is None:
                continue
            overload_gain, gain = scored
            key = (overload_gain > EPSILON, overload_gain, gain / len(group), -len(group))
            if best_key is None or key > best_key:
                best, best_key = group, key
        if best is None or best_key is None or (best_key[1] <= EPSILON and best_key[2] <= EPSILON):
            return None
        return best

    def _candidates(self, remaining: set[str], pairs: bool) -> list[tuple[str, ...]]:
        """Each remaining move alone and, with ``pairs``, with its busiest partners bound for the same node."""
        candidates: list[tuple[str, ...]] = [(e,) for e in sorted(remaining)]
        if pairs:
            talk, plan = self.talk, self.plan
            for e in sorted(remaining):
                partners = sorted((f for f in talk[e] if f in remaining and f > e and plan[f].node == plan[e].node),
                                  key=lambda f: -talk[e][f])[:PAIR_PARTNERS]
                candidates.extend((e, f) for f in partners)
        return candidates

    def _overload(self, loads: Mapping[str, float], nodes: Iterable[str]) -> float:
        return sum(max(0.0, loads[n] - self.capacity.get(n, 0.0)) for n in nodes)

    def _evaluate(self, group: tuple[str, ...]) -> tuple[float, float] | None:
        """(overload removed, traffic removed) by moving ``group`` to its planned slots, or None if not allowed."""
        placed, plan = self.placed, self.plan
        delta: dict[str, float] = defaultdict(float)
        for e in group:
            delta[placed[e].node] -= self.load.get(e, 0.0)
            delta[plan[e].node] += self.load.get(e, 0.0)
        after = {n: self.node_load[n] + d for n, d in delta.items()}
        if any(after[n] > self.allowed.get(n, self.capacity.get(n, 0.0) + EPSILON) and d > 0
               for n, d in delta.items()):
            return None
        overload_gain = self._overload(self.node_load, delta) - self._overload(after, delta)
        moved = {e: plan[e] for e in group}
        gain = 0.0
        for e in group:
            for f, rate in self.talk[e].items():
                if f in moved and f < e:
                    continue  # the pair inside the group is counted once
                before = placed[e] != placed[f]
                now = moved[e] != moved.get(f, placed[f])
                gain += rate * (before - now)
        return overload_gain, gain

    def apply(self, group: tuple[str, ...]) -> None:
        for e in group:
            self.node_load[self.placed[e].node] -= self.load.get(e, 0.0)
            self.node_load[self.plan[e].node] += self.load.get(e, 0.0)
            self.placed[e] = self.plan[e]
