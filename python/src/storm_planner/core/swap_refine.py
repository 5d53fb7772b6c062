"""Swaps between the nodes that executors just left and joined, when they keep more traffic inside a node.

When a plan overfills a node, :func:`~storm_planner.core.resources.fit_to_resources` moves executors off
it one at a time, last placed first. Which ones leave decides what crosses the network, and the greedy
choice depends on the order the planner listed them in. On the end-to-end bench's quota-held cluster
(World Cup Top-K, four ackers, two 45 % supervisors) listing the ackers first sent all four to one node
and the spout, counts and top to the other: every init, ack and completion crossed the link, and the
topology ran with twice RAS's median latency. Listed the other way, the same plan crossed a third less.

The repair is a Kernighan-Lin step (Kernighan & Lin, "An efficient heuristic procedure for partitioning
graphs", 1970): between each pair of nodes the relief moved executors between, swap the two executors
whose exchange keeps the most tuples/s inside a node, until no swap gains. Only executors with the same
declared CPU and memory are swapped, so every node and worker stays within its limits and nothing else
in the plan changes. Traffic is per executor pair (:func:`~storm_planner.core.worker_split.pair_rates`).

Complexity: O(S · P · M² · d) for at most ``MAX_SWAPS`` swaps S, ``MAX_PAIRS`` node pairs P,
``MAX_MEMBERS`` executors looked at per node M and d partner components per executor: bounded, never a
function of the topology's size.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping

EPSILON = 1e-9
MAX_SWAPS = 32
MAX_PAIRS = 16
MAX_MEMBERS = 64


def refine_by_swaps(members: Mapping[str, list[str]], component: Mapping[str, str],
                    demand: Mapping[str, tuple[float, float]], rates: Mapping[str, Mapping[str, float]],
                    pairs: Iterable[tuple[str, str]]) -> int:
    """Swap equal-demand executors between each node pair in ``pairs`` while a swap keeps more traffic
    inside a node; ``members`` (node -> executor ids) is updated in place. Returns the swaps made."""
    count: dict[str, Counter[str]] = defaultdict(Counter)   # component -> node -> executors there
    for node, ids in members.items():
        for executor in ids:
            count[component[executor]][node] += 1

    def affinity(executor: str, node: str) -> float:
        return sum(rate * count[partner][node] for partner, rate in rates.get(component[executor], {}).items())

    swaps = 0
    for a, b in list(dict.fromkeys(pairs))[:MAX_PAIRS]:
        while swaps < MAX_SWAPS:
            best = _best_swap(members[a][:MAX_MEMBERS], members[b][:MAX_MEMBERS], a, b, component, demand,
                              rates, affinity)
            if best is None:
                break
            x, y = best
            members[a][members[a].index(x)] = y
            members[b][members[b].index(y)] = x
            count[component[x]][a] -= 1
            count[component[x]][b] += 1
            count[component[y]][b] -= 1
            count[component[y]][a] += 1
            swaps += 1
    return swaps


def _best_swap(on_a: list[str], on_b: list[str], a: str, b: str, component: Mapping[str, str],
               demand: Mapping[str, tuple[float, float]], rates: Mapping[str, Mapping[str, float]],
               affinity: Callable[[str, str], float]) -> tuple[str, str] | None:
    """The swap (x from a, y from b) of equal demand and different components that gains the most
    traffic kept inside a node, or None when none gains."""
    gain_a = {x: affinity(x, b) - affinity(x, a) for x in on_a}   # what x gains by moving to b
    gain_b = {y: affinity(y, a) - affinity(y, b) for y in on_b}
    best, best_gain = None, EPSILON
    for x in on_a:
        for y in on_b:
            if component[x] == component[y] or demand[x] != demand[y]:
                continue
            # x and y stay apart after the swap: their own pair was counted as gained by both.
            gain = gain_a[x] + gain_b[y] - 2 * rates.get(component[x], {}).get(component[y], 0.0)
            if gain > best_gain:
                best, best_gain = (x, y), gain
    return best
