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
the optimum of the fluid LP (:func:`storm_planner.planners.hetero.bounds.fluid_solution`:
any share of a component's input on any machine) rounded to whole instances:
each component gets the fewest instances (within its bounds) whose shares,
rounded by largest remainder, move no machine's utilisation by more than the
component's part of ``ROUNDING_SLACK`` of the LP's peak (else the count that
rounds closest). The better result is kept (the heuristic's on a tie). A local search from the heuristic alone can
stay in its basin — on some unrelated-machine instances all components must
change at once — and the LP's shares point into the optimum's.

The graph is judged by its *peak*, ``max_m coef_m / (capacity_m − fixed_m)``
— the inverse of the sustainable input rate
(:func:`storm_planner.planners.hetero.simulate.max_input_rate`); ``fixed_m`` is the
bases of the instances on ``m`` (issue #18; without bases the peak is the
peak utilisation per unit input rate) — ties broken by the sum of squared
utilisations at the current graph's rate ``R`` (``(fixed + R · coef) /
capacity``; without bases proportional to the squared utilisations per unit
rate) — so the descent may first relieve one of several machines at the
peak and then the peak itself. Each step strictly lowers ``(peak, Σ u²)``:
the descent ends. Instance counts stay within the bounds given (the starting
graph below, ``max_instances`` above).

With bases every instance costs CPU at zero input, so fewer instances can be
better: the pair step compares every count from the lower bound up (fewer
included), the greedy step a window on both sides, and both place the
instances with their bases (water-filling at the rate ``R``: the level of the
``k``-th instance on ``m`` is ``(fixed_m + R · coef_m + k · (base + R ·
coef_of_one)) / capacity_m``). The fluid start rounds the base-fluid LP
(:mod:`storm_planner.planners.hetero.bounds`) and judges a count by the utilisation it
adds at the LP's rate, bases included, so more instances are no longer free.

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

from collections.abc import Sequence
from itertools import combinations
from math import comb

import numpy as np

from storm_planner.planners.hetero.bounds import fluid_solution
from storm_planner.planners.hetero.hetero_optimal import Candidates, component_candidates, peaks
from storm_planner.planners.hetero.model import HeteroModel
from storm_planner.planners.hetero.rates import propagate
from storm_planner.planners.hetero.simulate import Placement

PAIR_LIMIT = 400_000      # pair choices x machines compared at once (memory ~ 8 bytes each)
PAIR_WINDOW = 2           # with bases, when all counts are too many: counts within 2 of the current
TRIPLE_LIMIT = 3_000_000  # triple choices x machines examined by one triple step (in pair-sized slices)
ROUNDING_SLACK = 0.1     # of the fluid peak, shared by the components: the fluid start's rounding
WINDOW = 4                # instance counts tried either side of the current one (greedy)
DEFAULT_MAX_STEPS = 200
TOLERANCE = 1e-9

# A step of the descent: its (peak, sum of squares) and the new instances per machine of the components it changes.
Step = tuple[tuple[float, float], dict[int, np.ndarray]]


class Descent:
    """Instance counts per (component, machine) being improved."""

    def __init__(self, model: HeteroModel, counts: np.ndarray, lower: Sequence[int], upper: Sequence[int],
                 triples: bool = True):
        self.model = model
        self.counts = counts.astype(int).copy()
        self.lower = [max(1, int(v)) for v in lower]
        self.upper = [max(int(u), int(n)) for u, n in zip(upper, self.counts.sum(axis=1))]
        mu = propagate(model, np.ones(model.n_components)).total  # split only: independent of n
        self.work = mu[:, None] * model.cost   # CPU percent per unit rate of a whole component, per share
        self.mu = mu
        self.windowed = False
        self.choices = self._pair_choices(mu)
        if self.choices is None and model.has_base:
            self.windowed = True            # refinement: pairs over a window of counts (with bases)
            self.choices = self._window_choices()
        self.triples = self.choices is not None and triples and self.model.n_components >= 3 and (
            _largest_triple(self.choices) * model.n_machines <= TRIPLE_LIMIT)

    def _pair_choices(self, mu: np.ndarray) -> list[Candidates] | None:
        """Every distinct spread of each component, if pairs of them can be compared exactly."""
        machines = self.model.n_machines
        sizes = sorted(spreads(lo, hi, machines) for lo, hi in zip(self.lower, self.upper))
        if sizes[-1] * (sizes[-2] if len(sizes) > 1 else 1) * machines > PAIR_LIMIT:
            return None  # counted before enumerating: the spreads grow as C(n + M - 1, M - 1)
        return [component_candidates(self.model, c, float(mu[c]), self.lower[c], self.upper[c])
                for c in range(self.model.n_components)]

    def _window_choices(self) -> list[Candidates] | None:
        """Every distinct spread of each component with a count within ``PAIR_WINDOW`` of its current
        one, if pairs of them can be compared exactly; else None (the greedy step is used)."""
        windows = []
        for c in range(self.model.n_components):
            now = int(self.counts[c].sum())
            windows.append((max(self.lower[c], now - PAIR_WINDOW), min(self.upper[c], now + PAIR_WINDOW)))
        sizes = sorted(spreads(lo, hi, self.model.n_machines) for lo, hi in windows)
        if sizes[-1] * (sizes[-2] if len(sizes) > 1 else 1) * self.model.n_machines > PAIR_LIMIT:
            return None
        return [component_candidates(self.model, c, float(self.mu[c]), lo, hi) for c, (lo, hi) in enumerate(windows)]

    def loads(self, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per machine: CPU percent per unit input rate (coef) and at zero input (fixed)."""
        counts = self.counts if counts is None else counts
        coef = (counts / counts.sum(axis=1)[:, None] * self.work).sum(axis=0)
        return coef, (counts * self.model.base).sum(axis=0)

    def score(self, counts: np.ndarray | None = None) -> tuple[float, float]:
        coef, fixed = self.loads(counts)
        peak = float(peaks(self.model.capacity, fixed, coef))
        return peak, float(_squares(self.model.capacity, fixed, coef, _reference_rate(peak)))

    def run(self, max_steps: int = DEFAULT_MAX_STEPS) -> int:
        """Take the best improving re-placement until none is left; returns the steps taken."""
        for taken in range(max_steps):
            coef, fixed = self.loads()
            current = self.score()
            rate = _reference_rate(current[0])
            step = (self._best_pair(self.choices, coef, fixed, rate) if self.choices is not None
                    else self._best_single(coef, fixed, rate))
            if (step is None or not _better(step[0], current)) and self.triples and self.choices is not None:
                step = self._best_triple(self.choices, coef, fixed, rate, current)   # escalate when no pair step helps
            if (step is None or not _better(step[0], current)) and self.model.has_base:
                step = self._best_swap(rate)   # then exchange what two machines hold (issue #18)
            if step is None or not _better(step[0], current):
                return taken
            for c, row in step[1].items():
                self.counts[c] = row
            if self.windowed:
                self.choices = self._window_choices()
                if self.choices is None:
                    self.triples = False
                    self.windowed = False
                elif self.triples:
                    self.triples = _largest_triple(self.choices) * self.model.n_machines <= TRIPLE_LIMIT
        return max_steps

    def _without(self, coef: np.ndarray, fixed: np.ndarray, components: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        coef, fixed = coef.copy(), fixed.copy()
        for c in components:
            coef -= self.counts[c] / self.counts[c].sum() * self.work[c]
            fixed -= self.counts[c] * self.model.base[c]
        return coef, fixed

    def _best_pair(self, choices: Sequence[Candidates], coef: np.ndarray, fixed: np.ndarray,
                   rate: float) -> Step | None:
        best = None
        capacity = self.model.capacity
        pairs = combinations(range(self.model.n_components), 2) if self.model.n_components > 1 else [(0,)]
        for pair in pairs:
            rest_coef, rest_fixed = self._without(coef, fixed, pair)
            first = choices[pair[0]]
            if len(pair) == 1:
                total_coef, total_fixed = rest_coef[None, :] + first.coef, rest_fixed[None, :] + first.fixed
                top, squares = peaks(capacity, total_fixed, total_coef), _squares(capacity, total_fixed, total_coef, rate)
                i = _argbest(top, squares)
                candidate = ((top[i], squares[i]), {pair[0]: first.counts[i]})
            else:
                second = choices[pair[1]]
                total_coef = rest_coef[None, None, :] + first.coef[:, None, :] + second.coef[None, :, :]
                total_fixed = rest_fixed[None, None, :] + first.fixed[:, None, :] + second.fixed[None, :, :]
                top = peaks(capacity, total_fixed, total_coef).ravel()
                squares = _squares(capacity, total_fixed, total_coef, rate).ravel()
                i, j = map(int, np.unravel_index(_argbest(top, squares), (len(first.counts), len(second.counts))))
                k = i * len(second.counts) + j
                candidate = ((top[k], squares[k]), {pair[0]: first.counts[i], pair[1]: second.counts[j]})
            if best is None or _better(candidate[0], best[0]):
                best = candidate
        return best

    def _best_triple(self, choices: Sequence[Candidates], coef: np.ndarray, fixed: np.ndarray, rate: float,
                     current: tuple[float, float]) -> Step | None:
        """The pair step for three components at once (small instances only: ``TRIPLE_LIMIT``)."""
        best = None
        capacity = self.model.capacity
        for triple in combinations(range(self.model.n_components), 3):
            rest_coef, rest_fixed = self._without(coef, fixed, triple)
            a, b, c = (choices[i] for i in triple)
            pair_coef = a.coef[:, None, :] + b.coef[None, :, :]
            pair_fixed = a.fixed[:, None, :] + b.fixed[None, :, :]
            # a lower bound on the peak of each slice: per machine the least the pair can add
            floor = peaks(capacity, rest_fixed + c.fixed + pair_fixed.min(axis=(0, 1)),
                          rest_coef + c.coef + pair_coef.min(axis=(0, 1)))
            for k in np.argsort(floor, kind="stable"):   # one slice per choice of the third
                limit = (best or (current,))[0][0]
                if floor[k] > limit * (1 + TOLERANCE):
                    break
                total_coef = rest_coef + c.coef[k] + pair_coef
                total_fixed = rest_fixed + c.fixed[k] + pair_fixed
                top = peaks(capacity, total_fixed, total_coef).ravel()
                if top.min() > limit * (1 + TOLERANCE):
                    continue
                squares = _squares(capacity, total_fixed, total_coef, rate).ravel()
                i, j = np.unravel_index(_argbest(top, squares), (len(a.counts), len(b.counts)))
                flat = i * len(b.counts) + j
                candidate = ((top[flat], squares[flat]),
                             {triple[0]: a.counts[i], triple[1]: b.counts[j], triple[2]: c.counts[k]})
                if best is None or _better(candidate[0], best[0]):
                    best = candidate
        return best

    def _best_swap(self, rate: float) -> Step | None:
        """Exchange every instance of machine ``a`` with every instance of machine ``b``, for the best
        pair ``a < b``: on unlike machines it moves several components at once, which pair steps
        cannot (with bases, e.g. two spouts trading places with a sink). Only the two machines
        change, so each pair is scored from per-machine figures: O(M² + C · M²) per step."""
        counts, work, base, capacity = self.counts, self.work, self.model.base, self.model.capacity
        a, b = np.triu_indices(self.model.n_machines, k=1)
        if a.size == 0:
            return None
        share = counts / counts.sum(axis=1)[:, None]                      # (C, M)
        coef, fixed = (share * work).sum(axis=0), (counts * base).sum(axis=0)
        # what machine m would carry holding machine k's instances: (M, M) [m, k]
        coef_if = np.einsum("ck,cm->mk", share, work)
        fixed_if = np.einsum("ck,cm->mk", counts, base)
        ratio = peaks(capacity[:, None], fixed[:, None], coef[:, None])  # each machine's own peak
        usage = ((fixed + rate * coef) / capacity) ** 2
        others = _max_excluding_two(ratio, a, b)
        new_a = peaks(capacity[a, None], fixed_if[a, b][:, None], coef_if[a, b][:, None])
        new_b = peaks(capacity[b, None], fixed_if[b, a][:, None], coef_if[b, a][:, None])
        top = np.maximum(others, np.maximum(new_a, new_b))
        squares = (usage.sum() - usage[a] - usage[b]
                   + ((fixed_if[a, b] + rate * coef_if[a, b]) / capacity[a]) ** 2
                   + ((fixed_if[b, a] + rate * coef_if[b, a]) / capacity[b]) ** 2)
        i = _argbest(top, squares)
        moved = counts.copy()
        moved[:, [a[i], b[i]]] = counts[:, [b[i], a[i]]]
        changed = np.flatnonzero((moved != counts).any(axis=1))
        return (float(top[i]), float(squares[i])), {int(c): moved[c] for c in changed}

    def _best_single(self, coef: np.ndarray, fixed: np.ndarray, rate: float) -> Step | None:
        best = None
        capacity = self.model.capacity
        for c in range(self.model.n_components):
            rest_coef, rest_fixed = self._without(coef, fixed, [c])
            now = int(self.counts[c].sum())
            for n in range(max(self.lower[c], now - WINDOW), min(self.upper[c], now + WINDOW) + 1):
                row = _water_fill((rest_fixed + rate * rest_coef) / capacity,
                                  (self.model.base[c] + rate * self.work[c] / n) / capacity, n)
                total_coef = rest_coef + row / n * self.work[c]
                total_fixed = rest_fixed + row * self.model.base[c]
                top = float(peaks(capacity, total_fixed, total_coef))
                candidate = ((top, float(_squares(capacity, total_fixed, total_coef, rate))), {c: row})
                if best is None or _better(candidate[0], best[0]):
                    best = candidate
        return best


def _max_excluding_two(values: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``max(values[m] for m not in {a[i], b[i]})`` for every pair i (-inf when nothing is left)."""
    order = np.argsort(-values, kind="stable")[:3]
    result = np.full(a.shape, -np.inf)
    for m in order[::-1]:     # the largest value not excluded wins: fill from the third largest up
        keep = (a != m) & (b != m)
        result = np.where(keep, values[m], result)
    return result


def _largest_triple(choices: Sequence[Candidates]) -> int:
    sizes = sorted(len(c.counts) for c in choices)
    return sizes[-1] * sizes[-2] * sizes[-3] if len(sizes) >= 3 else 0


def _reference_rate(peak: float) -> float:
    """The rate the squares are taken at: the current graph's (1 / peak); 0 if it sustains none."""
    return 1.0 / peak if 0 < peak < np.inf else 0.0


def _squares(capacity: np.ndarray, fixed: np.ndarray, coef: np.ndarray, rate: float) -> np.ndarray:
    """Σ_m u_m² with ``u = (fixed + rate · coef) / capacity`` (over the last axis). Without bases
    this is ``rate²`` times the squared utilisations per unit rate: the same order."""
    squares: np.ndarray = (((fixed + rate * coef) / capacity) ** 2).sum(axis=-1)
    return squares


def spreads(smallest: int, largest: int, machines: int) -> int:
    """How many ways ``smallest..largest`` instances can spread over ``machines``."""
    return sum(comb(n + machines - 1, machines - 1) for n in range(smallest, largest + 1))


def _water_fill(base: np.ndarray, per_instance: np.ndarray, n: int) -> np.ndarray:
    """``n`` instances, each where the resulting utilisation is least; instances per machine.

    Placing them one by one takes the ``n`` smallest of the values
    ``base[m] + k · per_instance[m]`` (k = 1, 2, …) over all machines, since
    each machine's values only grow: so they are selected at once.
    """
    levels = base[:, None] + per_instance[:, None] * np.arange(1, n + 1)[None, :]
    chosen = np.argpartition(levels, n - 1, axis=None)[:n] if levels.size > n else np.arange(levels.size)
    return np.bincount(np.unravel_index(chosen, levels.shape)[0], minlength=len(base))


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
            max_steps: int = DEFAULT_MAX_STEPS, fluid_start: bool = True,
            fewest_start: bool = True, triples: bool = True) -> tuple[Placement, int]:
    """The descent from ``placement`` (and from the fluid start; with bases also from the fewest
    start); instances of ``c`` stay within ``lower[c]..upper[c]``. ``triples``: with bases, escalate
    to the three-component step when no pair step helps (small instances only, ``TRIPLE_LIMIT``).

    Returns the better placement and the steps that led to it (0 and the
    placement unchanged for ``all``/``global`` streams or an executor cap).
    """
    if not model.has_only_split_groupings or model.executor_cap is not None:
        return placement, 0
    counts = placement.counts(model.n_machines)
    triples = triples and model.has_base   # without bases the pair descent is within 2 % already (and 15x faster)
    ours = Descent(model, counts, lower, upper, triples=triples)
    best, steps = ours, ours.run(max_steps)
    if fluid_start:
        rounded = Descent(model, rounded_fluid_counts(model, counts, ours.lower, ours.upper), lower, upper,
                          triples=triples)
        rounded_steps = rounded.run(max_steps)
        if _better(rounded.score(), ours.score()):
            best, steps = rounded, rounded_steps + 1  # the jump to the fluid start counts as a step
    if fewest_start and model.has_base:
        fewest = Descent(model, fewest_counts(model, ours.lower), lower, upper, triples=triples)
        fewest_steps = fewest.run(max_steps)
        if _better(fewest.score(), best.score()):
            best, steps = fewest, fewest_steps + 1
    return (placement_from_counts(best.counts) if steps else placement), steps


def fewest_counts(model: HeteroModel, lower: Sequence[int]) -> np.ndarray:
    """The *fewest start* (with bases): each component with its fewest instances, the most
    demanding first, each instance where the peak ``coef / (capacity − fixed)`` stays least."""
    mu = propagate(model, np.ones(model.n_components)).total
    work = mu[:, None] * model.cost
    coef = np.zeros(model.n_machines)
    fixed = np.zeros(model.n_machines)
    counts = np.zeros((model.n_components, model.n_machines), dtype=int)
    demand = (model.base * np.asarray(lower)[:, None] + work).min(axis=1)
    for c in sorted(range(model.n_components), key=lambda c: (-demand[c], c)):
        for _ in range(lower[c]):
            after_coef = coef + work[c] / lower[c]
            after_fixed = fixed + model.base[c]
            top = np.array([peaks(model.capacity, np.where(np.arange(model.n_machines) == m, after_fixed, fixed),
                                  np.where(np.arange(model.n_machines) == m, after_coef, coef))
                            for m in range(model.n_machines)])
            m = int(np.argmin(top))
            counts[c, m] += 1
            coef[m], fixed[m] = after_coef[m], after_fixed[m]
    return counts


def rounded_fluid_counts(model: HeteroModel, counts: np.ndarray, lower: Sequence[int],
                         upper: Sequence[int]) -> np.ndarray:
    """The fluid LP's shares as whole instances (components outside the LP keep ``counts``).

    Each component gets the fewest instances whose rounding moves no
    machine's utilisation at the LP's rate by more than its part of
    ``ROUNDING_SLACK`` (the LP's peak is 1 there), else the count that rounds
    best: without bases more instances always round closer, but each costs an
    executor; with bases each also costs its base, which counts in the error
    (the LP charged ``lower · share`` bases).
    """
    rate, shares = fluid_solution(model, lower)
    if not rate > 0:
        unchanged: np.ndarray = counts.copy()
        return unchanged   # the bases alone fill the machines: nothing to round
    mu = propagate(model, np.ones(model.n_components)).total
    weight = rate * mu[:, None] * model.cost / model.capacity[None, :]   # utilisation at the LP's rate
    fixed = model.base / model.capacity[None, :]
    slack = ROUNDING_SLACK / model.n_components   # utilisation at the LP's rate, per component
    start: np.ndarray = counts.copy()
    for c in range(model.n_components):
        if np.isnan(shares[c]).any():
            continue
        best: tuple[float, np.ndarray] | None = None
        for n in range(lower[c], upper[c] + 1):
            row = _largest_remainder(shares[c], n)
            error = float(np.abs((row / n - shares[c]) * weight[c] + (row - lower[c] * shares[c]) * fixed[c]).max())
            if best is None or error < best[0] * (1 - TOLERANCE):
                best = (error, row)
            if error <= slack:
                break
        assert best is not None, "lower <= upper: one count at least is tried"
        start[c] = best[1]
    return start


def _largest_remainder(shares: np.ndarray, n: int) -> np.ndarray:
    """``n`` whole instances in proportion to ``shares`` (Hamilton's method; ties: the first machine)."""
    exact = shares * n
    row: np.ndarray = np.floor(exact).astype(int)
    row[np.argsort(-(exact - row), kind="stable")[:n - int(row.sum())]] += 1
    return row


def placement_from_counts(counts: np.ndarray) -> Placement:
    """Instances of each component in machine order (split groupings: any order will do)."""
    return Placement(tuple(
        tuple(m for m in range(counts.shape[1]) for _ in range(int(counts[c, m])))
        for c in range(counts.shape[0])
    ))
