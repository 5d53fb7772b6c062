"""Re-placement descent over an execution graph (``hetero``'s refinement 4; not in the paper).

Nasiri et al.'s MaximizeThroughput (Alg. 2) only ever *adds* instances, each
where it fits at that moment; it never moves one. Its final graph can leave
the bottleneck machine with a combination that no further addition fixes —
Star's center as two instances alone on one of two identical machines, the
twin idle at 80 % — or a split of two components that only a joint change
improves (``benchmarks/reports/hetero.md``). This descent starts from the
heuristic's graph and repeats the best of these *re-placements* while one
improves the graph:

* **pairs, exactly** — take two components out and put them back in the best
  way: every instance count in their bounds, every spread of the instances
  over the machines (distinct shares only, as ``hetero-optimal`` enumerates
  them), all pairs of choices compared at once. A move, a swap, adding or
  removing an instance are all special cases. Used while a pair's choices
  number at most ``PAIR_LIMIT`` (small clusters: 3 machines and 6 instances
  give 83 choices per component);
* **one component, greedily** — otherwise (large clusters): for each instance
  count in a window around the current one, place the instances one by one
  where the resulting utilisation is least (water-filling; for one component
  this minimises the peak exactly).

The descent runs twice: from the heuristic's graph and from the *fluid start* —
the optimum of the fluid LP (:func:`storm_planner.planners.nasiri.bounds.fluid_solution`:
any share of a component's input on any machine) rounded to whole instances:
each component gets the fewest instances (within its bounds) whose shares,
rounded by largest remainder, move no machine's utilisation by more than the
component's part of ``ROUNDING_SLACK`` of the LP's peak (else the count that
rounds closest). The better result is kept (the heuristic's on a tie). A local search from the heuristic alone can
stay in its basin — on some unrelated-machine instances all components must
change at once — and the LP's shares point into the optimum's.

The graph is judged by its peak utilisation per unit input rate
(``coef / capacity``; the sustainable input rate is ``1 / peak``,
:func:`storm_planner.planners.nasiri.simulate.max_input_rate`), ties broken by the
sum of squared utilisations — so the descent may first relieve one of several
machines at the peak and then the peak itself. Each step strictly lowers
``(peak, Σ u²)``: the descent ends. Instance counts stay within the bounds
given (the starting graph below, ``max_instances`` above).

Split groupings only: with ``all``/``global`` streams instances are not
interchangeable and shares do not follow ``1/n``; such graphs are returned
unchanged. Neither is a graph under an executor cap changed (the cap binds
single instances, which the shares here do not see).

Complexity per step: O(Σ_pairs K_a·K_b·M) with K the choices per component
(pairs), else O(C·W·n·M) for a window of W counts around n instances; at most
``max_steps`` steps. The fluid start adds one LP with C·M + 1 variables (HiGHS)
and O(C·N·M) to round it for N counts tried per component.
"""
from __future__ import annotations

from itertools import combinations
from math import comb
from typing import Sequence

import numpy as np

from storm_planner.planners.nasiri.bounds import fluid_solution
from storm_planner.planners.nasiri.model import HeteroModel
from storm_planner.planners.nasiri.rates import propagate
from storm_planner.planners.nasiri.simulate import Placement
from storm_planner.planners.nasiri.hetero_optimal import component_candidates

PAIR_LIMIT = 400_000      # pair choices x machines compared at once (memory ~ 8 bytes each)
ROUNDING_SLACK = 0.1     # of the fluid peak, shared by the components: the fluid start's rounding
WINDOW = 4                # instance counts tried either side of the current one (greedy)
DEFAULT_MAX_STEPS = 200
TOLERANCE = 1e-9


class Descent:
    """Instance counts per (component, machine) being improved."""

    def __init__(self, model: HeteroModel, counts: np.ndarray, lower: Sequence[int], upper: Sequence[int]):
        self.model = model
        self.counts = counts.astype(int).copy()
        self.lower = [max(1, int(v)) for v in lower]
        self.upper = [max(int(u), int(n)) for u, n in zip(upper, self.counts.sum(axis=1))]
        mu = propagate(model, np.ones(model.n_components)).total  # split only: independent of n
        self.weight = mu[:, None] * model.cost / model.capacity[None, :]  # utilisation per unit rate and share
        self.choices = self._pair_choices(mu)

    def _pair_choices(self, mu: np.ndarray):
        """Every distinct spread of each component, if pairs of them can be compared exactly."""
        machines = self.model.n_machines
        spreads = sorted(_spreads(lo, hi, machines) for lo, hi in zip(self.lower, self.upper))
        if spreads[-1] * (spreads[-2] if len(spreads) > 1 else 1) * machines > PAIR_LIMIT:
            return None  # counted before enumerating: the spreads grow as C(n + M - 1, M - 1)
        return [component_candidates(self.model, c, float(mu[c]), self.lower[c], self.upper[c])
                for c in range(self.model.n_components)]

    def utilisation(self, counts: np.ndarray | None = None) -> np.ndarray:
        counts = self.counts if counts is None else counts
        return (counts / counts.sum(axis=1)[:, None] * self.weight).sum(axis=0)

    def run(self, max_steps: int = DEFAULT_MAX_STEPS) -> int:
        """Take the best improving re-placement until none is left; returns the steps taken."""
        for taken in range(max_steps):
            utilisation = self.utilisation()
            current = _score(utilisation)
            step = self._best_pair(utilisation) if self.choices is not None else self._best_single(utilisation)
            if step is None or not _better(step[0], current):
                return taken
            for c, row in step[1].items():
                self.counts[c] = row
        return max_steps

    def _without(self, utilisation: np.ndarray, components: Sequence[int]) -> np.ndarray:
        base = utilisation.copy()
        for c in components:
            base -= self.counts[c] / self.counts[c].sum() * self.weight[c]
        return base

    def _best_pair(self, utilisation: np.ndarray):
        best = None
        pairs = combinations(range(self.model.n_components), 2) if self.model.n_components > 1 else [(0,)]
        for pair in pairs:
            base = self._without(utilisation, pair)
            first = self.choices[pair[0]]
            if len(pair) == 1:
                total = base[None, :] + first.utilisation
                peaks, squares = total.max(axis=1), (total ** 2).sum(axis=1)
                i = _argbest(peaks, squares)
                candidate = ((peaks[i], squares[i]), {pair[0]: first.counts[i]})
            else:
                second = self.choices[pair[1]]
                total = base[None, None, :] + first.utilisation[:, None, :] + second.utilisation[None, :, :]
                peaks, squares = total.max(axis=2).ravel(), (total ** 2).sum(axis=2).ravel()
                i, j = np.unravel_index(_argbest(peaks, squares), (len(first.counts), len(second.counts)))
                candidate = ((peaks[i * len(second.counts) + j], squares[i * len(second.counts) + j]),
                             {pair[0]: first.counts[i], pair[1]: second.counts[j]})
            if best is None or _better(candidate[0], best[0]):
                best = candidate
        return best

    def _best_single(self, utilisation: np.ndarray):
        best = None
        for c in range(self.model.n_components):
            base = self._without(utilisation, [c])
            now = int(self.counts[c].sum())
            for n in range(max(self.lower[c], now - WINDOW), min(self.upper[c], now + WINDOW) + 1):
                row, total = _water_fill(base, self.weight[c] / n, n)
                candidate = (_score(total), {c: row})
                if best is None or _better(candidate[0], best[0]):
                    best = candidate
        return best


def _spreads(smallest: int, largest: int, machines: int) -> int:
    """How many ways ``smallest..largest`` instances can spread over ``machines``."""
    return sum(comb(n + machines - 1, machines - 1) for n in range(smallest, largest + 1))


def _water_fill(base: np.ndarray, per_instance: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` instances, each where the resulting utilisation is least.

    Placing them one by one takes the ``n`` smallest of the values
    ``base[m] + k · per_instance[m]`` (k = 1, 2, …) over all machines, since
    each machine's values only grow: so they are selected at once.
    """
    levels = base[:, None] + per_instance[:, None] * np.arange(1, n + 1)[None, :]
    chosen = np.argpartition(levels, n - 1, axis=None)[:n] if levels.size > n else np.arange(levels.size)
    row = np.bincount(np.unravel_index(chosen, levels.shape)[0], minlength=len(base))
    return row, base + row * per_instance


def _score(utilisation: np.ndarray) -> tuple[float, float]:
    return float(utilisation.max()), float((utilisation ** 2).sum())


def _better(score: tuple[float, float], than: tuple[float, float]) -> bool:
    """Lower peak beyond rounding; at the same peak, a lower sum of squares beyond rounding."""
    peak, squares = score
    if peak < than[0] * (1 - TOLERANCE):
        return True
    return peak <= than[0] * (1 + TOLERANCE) and squares < than[1] * (1 - TOLERANCE)


def _argbest(peaks: np.ndarray, squares: np.ndarray) -> int:
    """The index of the least peak (within rounding), then the least sum of squares."""
    low = peaks.min()
    near = np.flatnonzero(peaks <= low * (1 + TOLERANCE))
    return int(near[np.argmin(squares[near])])


def improve(model: HeteroModel, placement: Placement, lower: Sequence[int], upper: Sequence[int],
            max_steps: int = DEFAULT_MAX_STEPS, fluid_start: bool = True) -> tuple[Placement, int]:
    """The descent from ``placement`` (and from the fluid start); instances of ``c`` stay within
    ``lower[c]..upper[c]``.

    Returns the better placement and the steps that led to it (0 and the
    placement unchanged for ``all``/``global`` streams or an executor cap).
    """
    if not model.has_only_split_groupings or model.executor_cap is not None:
        return placement, 0
    counts = placement.counts(model.n_machines)
    ours = Descent(model, counts, lower, upper)
    best, steps = ours, ours.run(max_steps)
    if fluid_start:
        rounded = Descent(model, rounded_fluid_counts(model, counts, ours.lower, ours.upper), lower, upper)
        rounded_steps = rounded.run(max_steps)
        if _better(_score(rounded.utilisation()), _score(ours.utilisation())):
            best, steps = rounded, rounded_steps + 1  # the jump to the fluid start counts as a step
    return (placement_from_counts(best.counts) if steps else placement), steps


def rounded_fluid_counts(model: HeteroModel, counts: np.ndarray, lower: Sequence[int],
                         upper: Sequence[int]) -> np.ndarray:
    """The fluid LP's shares as whole instances (components outside the LP keep ``counts``).

    Each component gets the fewest instances whose rounding moves no
    machine's utilisation by more than its part of ``ROUNDING_SLACK`` of the
    LP's peak, else the count that rounds best: more instances always round
    closer, but each costs an executor.
    """
    rate, shares = fluid_solution(model)
    mu = propagate(model, np.ones(model.n_components)).total
    weight = mu[:, None] * model.cost / model.capacity[None, :]
    slack = ROUNDING_SLACK / (rate * model.n_components)  # utilisation per unit rate, per component
    start = counts.copy()
    for c in range(model.n_components):
        if np.isnan(shares[c]).any():
            continue
        best = None
        for n in range(lower[c], upper[c] + 1):
            row = _largest_remainder(shares[c], n)
            error = float((np.abs(row / n - shares[c]) * weight[c]).max())
            if best is None or error < best[0] * (1 - TOLERANCE):
                best = (error, row)
            if error <= slack:
                break
        start[c] = best[1]
    return start


def _largest_remainder(shares: np.ndarray, n: int) -> np.ndarray:
    """``n`` whole instances in proportion to ``shares`` (Hamilton's method; ties: the first machine)."""
    exact = shares * n
    row = np.floor(exact).astype(int)
    row[np.argsort(-(exact - row), kind="stable")[:n - int(row.sum())]] += 1
    return row


def placement_from_counts(counts: np.ndarray) -> Placement:
    """Instances of each component in machine order (split groupings: any order will do)."""
    return Placement(tuple(
        tuple(m for m in range(counts.shape[1]) for _ in range(int(counts[c, m])))
        for c in range(counts.shape[0])
    ))
