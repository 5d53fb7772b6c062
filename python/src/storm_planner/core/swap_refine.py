"""Swaps after the relief step, when they keep more traffic inside a node; and no acker left alone.

When a plan overfills a node, :func:`~storm_planner.core.resources.fit_to_resources` moves executors off
it one at a time, last placed first. Which ones leave decides what crosses the network, and the greedy
choice depends on the order the planner listed them in. On the end-to-end bench's quota-held cluster
(World Cup Top-K, four ackers, two 45 % supervisors) listing the ackers first sent all four to one node
and the spout, counts and top to the other: every init, ack and completion crossed the link, and the
topology ran with twice RAS's median latency. Listed the other way, the same plan crossed a third less.

The repair is a Kernighan-Lin step (Kernighan & Lin, "An efficient heuristic procedure for partitioning
graphs", 1970): between each pair of nodes the caller names (the relief's, then the nodes it moved
executors onto with the others holding the topology), swap the two executors whose exchange keeps the
most tuples/s inside a node, until a pass over the pairs swaps nothing. Only executors with the same
declared CPU and memory are swapped, so every node and worker stays within its limits and nothing else
in the plan changes. Traffic is per executor pair (:func:`~storm_planner.core.worker_split.pair_rates`).

Then :func:`rejoin_lone_ackers`: a node left holding ackers and nothing else of the topology serves
nothing it holds, so every init, ack and completion it handles crosses a worker boundary and a link
(Storm serialises each). Before metrics the prior rates cannot see what that costs: selectivity 1 makes
a downstream leaf look as busy as the spout, and every bolt is assumed to ack what it receives. On the
end-to-end bench (trends at 400 t/s, two ackers alone on a 35 % i5) that worker burnt 28 % of a core
where RAS's rank and total used 15 %, and by the measured rates the placement crossed 10 % more tuples
than RAS's. Each such node trades one acker, for the equal-demand executor elsewhere whose trade costs
the least traffic, so the ackers there sit beside one executor they serve.

Complexity: O(S · P · M² · d) for at most ``MAX_SWAPS`` swaps S, ``MAX_PAIRS`` node pairs P,
``MAX_MEMBERS`` executors looked at per node M and d partner components per executor: bounded, never a
function of the topology's size.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping

from storm_planner.core.system_streams import ACKER

EPSILON = 1e-9
MAX_SWAPS = 32
MAX_PAIRS = 16
MAX_MEMBERS = 64
# Whether x (on node a) and y (on node b) may trade places beyond their equal declared demand: the caller's
# check of measured loads (core.resources). None: any two of equal demand may.
SwapFits = Callable[[str, str, str, str], bool]


class _Placement:
    """Which executors each node holds, with per-node component counts for affinities in O(d)."""

    def __init__(self, members: Mapping[str, list[str]], component: Mapping[str, str],
                 rates: Mapping[str, Mapping[str, float]]) -> None:
        self.members, self.component, self.rates = members, component, rates
        self.count: dict[str, Counter[str]] = defaultdict(Counter)   # component -> node -> executors there
        for node, ids in members.items():
            for executor in ids:
                self.count[component[executor]][node] += 1

    def affinity(self, executor: str, node: str) -> float:
        """Tuples/s ``executor`` exchanges with the executors ``node`` holds."""
        return sum(rate * self.count[partner][node]
                   for partner, rate in self.rates.get(self.component[executor], {}).items())

    def pair_rate(self, x: str, y: str) -> float:
        """Tuples/s between x and y. They stay apart when they trade places, yet each one's affinity
        for the other's node counts their pair as gained: a swap's gain takes it off twice."""
        return self.rates.get(self.component[x], {}).get(self.component[y], 0.0)

    def gain(self, x: str, a: str, y: str, b: str) -> float:
        """Traffic kept inside a node gained by x (on a) and y (on b) trading places."""
        return (self.affinity(x, b) - self.affinity(x, a) + self.affinity(y, a) - self.affinity(y, b)
                - 2 * self.pair_rate(x, y))

    def swap(self, a: str, b: str, x: str, y: str) -> None:
        """x (on a) and y (on b) trade places; the counts follow."""
        self.members[a][self.members[a].index(x)] = y
        self.members[b][self.members[b].index(y)] = x
        self.count[self.component[x]][a] -= 1
        self.count[self.component[x]][b] += 1
        self.count[self.component[y]][b] -= 1
        self.count[self.component[y]][a] += 1


def refine_by_swaps(members: Mapping[str, list[str]], component: Mapping[str, str],
                    demand: Mapping[str, tuple[float, float]], rates: Mapping[str, Mapping[str, float]],
                    pairs: Iterable[tuple[str, str]], fits: SwapFits | None = None) -> int:
    """Swap equal-demand executors between each node pair in ``pairs`` while a swap keeps more traffic
    inside a node (and ``fits`` allows it); ``members`` (node -> executor ids) is updated in place.
    Returns the swaps made."""
    placement = _Placement(members, component, rates)
    swaps, ordered = 0, list(dict.fromkeys(pairs))[:MAX_PAIRS]
    swapped = True
    while swapped and swaps < MAX_SWAPS:  # passes until one swaps nothing: a swap may open another
        swapped = False
        for a, b in ordered:
            while swaps < MAX_SWAPS:
                best = _best_swap(members[a][:MAX_MEMBERS], members[b][:MAX_MEMBERS], a, b, demand, placement, fits)
                if best is None:
                    break
                placement.swap(a, b, *best)
                swaps, swapped = swaps + 1, True
    return swaps


def rejoin_lone_ackers(members: Mapping[str, list[str]], component: Mapping[str, str],
                       demand: Mapping[str, tuple[float, float]], rates: Mapping[str, Mapping[str, float]],
                       acker: str = ACKER, fits: SwapFits | None = None) -> int:
    """On every node holding ackers and nothing else, one acker trades places with the equal-demand
    executor (no acker) of another node whose trade costs the least traffic kept inside a node, even
    when it costs some (module docstring). Returns the trades made; ``members`` is updated in place."""
    lone = [node for node, ids in members.items() if ids and all(component[e] == acker for e in ids)]
    if not lone:
        return 0
    placement = _Placement(members, component, rates)
    others = [node for node, ids in members.items() if node not in lone and ids][:MAX_PAIRS]
    trades = 0
    for node in lone[:MAX_PAIRS]:
        best, best_gain = None, -math.inf
        for other in others:
            if sum(component[e] != acker for e in members[other][:MAX_MEMBERS]) < 2:
                continue  # its one executor would leave ackers alone there instead
            for x in members[node][:MAX_MEMBERS]:
                for y in members[other][:MAX_MEMBERS]:
                    if component[y] == acker or demand[x] != demand[y] or (fits and not fits(x, node, y, other)):
                        continue
                    gain = placement.gain(x, node, y, other)
                    if gain > best_gain + EPSILON:
                        best, best_gain = (other, x, y), gain
        if best is not None:
            other, x, y = best
            placement.swap(node, other, x, y)
            trades += 1
    return trades


def _best_swap(on_a: list[str], on_b: list[str], a: str, b: str, demand: Mapping[str, tuple[float, float]],
               placement: _Placement, fits: SwapFits | None = None) -> tuple[str, str] | None:
    """The swap (x from a, y from b) of equal demand and different components that gains the most
    traffic kept inside a node, or None when none gains."""
    component, affinity = placement.component, placement.affinity
    # _Placement.gain term by term, each node's side once per executor rather than once per pair
    gain_a = {x: affinity(x, b) - affinity(x, a) for x in on_a}   # what x gains by moving to b
    gain_b = {y: affinity(y, a) - affinity(y, b) for y in on_b}
    best, best_gain = None, EPSILON
    for x in on_a:
        for y in on_b:
            if component[x] == component[y] or demand[x] != demand[y]:
                continue
            gain = gain_a[x] + gain_b[y] - 2 * placement.pair_rate(x, y)
            if gain > best_gain and (fits is None or fits(x, a, y, b)):
                best, best_gain = (x, y), gain
    return best
