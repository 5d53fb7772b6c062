"""``hetero``: heterogeneity-aware parallelism and placement (Nasiri et al.).

H. Nasiri, S. Nasehi, A. Divband, M. Goudarzi, *A Scheduling Algorithm to
Maximize Storm Throughput in Heterogeneous Cluster*, §5: choose how many
instances each component gets and on which machine each runs, so that the
cluster sustains the highest topology input rate with no machine
over-utilised. CPU use is predicted with eq. 7 from per-machine-type profiles
and rates are propagated with eq. 8 (:mod:`.model`, :mod:`.rates`).

* **FirstAssignment** (§5.3, Alg. 1): the starting execution graph — the
  problem's executors; one per component for a new topology, as in the paper —
  at the initial input rate IR0; each instance, most demanding first, goes to
  the machine where its predicted TCU is least among those it fits (ties: the
  most free capacity). If the graph does not fit at IR0, IR0 is halved until
  it does (a note says so).
* **MaximizeThroughput** (§5.4, Alg. 2), reconstructed from the prose (the
  pseudo-code did not survive extraction): ``Scale = 1``. Evaluate every
  machine's utilisation at the current rate. If none is over-utilised, keep the
  graph and rate as the last stable state and raise the rate by
  ``Current_IR / Scale``. Otherwise take the hottest task (highest TCU) on the
  first over-utilised machine and add an instance of its component on the most
  suitable machine — the least TCU for the new instance among machines that
  can take it, ties to the most free capacity — which divides the component's
  input over one more instance. If no machine can take it, stop when
  ``Current_IR / Scale <= threshold`` (the paper's ``Current_IR <= Scale``,
  threshold 1 tuple/s); else double ``Scale``, restore the last stable state
  and continue.

Five refinements, each needed for the heuristic to work at all, or within 4 %
of the optimum, on some of the paper's own instances (measured in
``benchmarks/reports/hetero.md``):

1. *Next-hottest task.* When the hottest task's component cannot take an
   instance (its bound is reached, or no machine can take one), the next
   hottest task on the same machine is tried before giving up. Without 1. and
   2., the paper's rules end 2–13 % below the optimum on the paper's and
   Table IV's small cluster (``-p literal=true``; the report).
2. *Several instances at once.* The fastest machines fill first with few,
   large instances, and one more instance — a 1/(n+1) share of the
   component — then fits on no slower machine: the search stalls with most of
   a large cluster idle (37–42 % weighted utilisation on Table IV's medium
   cluster). When one new instance fits nowhere, ``k = 2, 3, …, max_batch``
   are tried, each placed in turn as above, and the smallest ``k`` that fits
   wins — as the authors' published simulator does (it tries up to 199).
3. *A bound on instances per component* (``max_instances``, default twice the
   number of usable machines): adding instances of a component relieves a
   machine by ever smaller shares, 1/n − 1/(n+1), and on some instances never
   enough; without a bound the loop does not end. The bound also keeps the
   batches of 2. from shredding a component into many tiny instances.

4. *A re-placement descent* after Alg. 2 (:mod:`._hetero_descent`): Alg. 2
   only adds instances and never moves one, and ends 4–6 % below the optimum
   on some small clusters (Star on one Pentium and two identical machines;
   random instances). The descent repeatedly takes two components out and
   puts them back in the best way (exactly, on small clusters; one component
   at a time by water-filling on large ones) while that raises the sustainable
   rate, from Alg. 2's graph and from the fluid LP's optimum rounded to whole
   instances; the better result is kept. ``-p descent=false`` switches it off;
   a running topology's fixed graph gets the same descent with its instance
   counts kept.
5. *An exact polish* (:func:`.hetero_optimal.polish`), with bases only: with
   bases (issue #18) the best graph can differ from the descent's in every
   component at once (fewer instances of one, more of another). On small clusters — split
   groupings, no executor cap, at most ``MAX_MACHINES`` machines and
   ``POLISH_CANDIDATES`` spreads in all — ``hetero-optimal``'s branch and
   bound runs seeded with the descent's graph as the best found, for at most
   ``polish_nodes`` search nodes in all (about 1 s on six machines). It first
   searches the graphs within one instance per (component, machine) of the
   current one — a very large neighbourhood, repeated from each improvement —
   and then the whole space with the nodes left: the optimum the descent
   misses is usually that close, and the neighbourhood is a small share of the
   space. It returns a strictly better graph or keeps the descent's; the figure
   ``polish_complete`` is 1 when the search finished, i.e. the plan is
   optimal within its instance bounds.

**Bases** (issue #18, not in the paper: a fixed CPU cost per instance,
:mod:`.model`): every rule above charges an instance its base — Alg. 1's
TCU, the over-utilisation test, the room a new instance needs, the fixed
graph's placement — and, as an instance is no longer free, the descent and
the polish may also remove instances (down to one per component, also in
the advice for a running topology).

An instance is only added if it relieves the task it is taken for (an ``all``
or ``global`` input cannot be divided).

The result is the last stable state: instances per component (``parallelism``)
and their placement; figures add the simulator's ``max_input_rate`` (the
closed-form highest rate of the final graph, ≥ the search's last stable rate
``search_input_rate``), ``throughput`` and ``weighted_utilisation``.

Storm fixes parallelism at submission (a rebalance can raise it up to the task
count), so ``mode`` selects what may change: ``search`` (the paper: new
executors ``<component>/<i>`` may be returned), ``fixed`` (an extension, not in
the paper: place exactly the problem's executors, the most demanding first on
the machine that keeps the highest sustainable rate, and advise a parallelism)
or ``auto`` (default: ``fixed`` for a topology Storm already runs — it has a
``current`` assignment or executors named by task range, ``[3-4]``, as the
planner service sends — else ``search``). The Nimbus plugin can only place
executors that exist, so through the service ``hetero`` places the running
graph; the search's graph, each component bounded by its task count (the sum
of its executors' task ranges: a rebalance cannot go beyond it), becomes the
plan's ``advice`` (:mod:`.advice`) with the predicted max input rate now and after — what
``storm-planner rebalance`` applies, or the service itself with
``planner.rebalance: true`` (``docs/rebalance.md``).

Parameters (``-p key=value``, ``planner.hetero.<key>`` in a topology's conf
or a problem's ``options``, or the bare key in ``options``): ``input_rate``
(IR0; default the profile's, else 1), ``threshold`` (tuples/s, 1), ``mac``
(percent of each node's capacity usable, 100), ``max_instances`` (per
component, default 2 × usable machines; on a running topology also at most
each component's task count), ``max_batch`` (64),
``max_iterations`` (100000), ``mode``, ``descent`` (true: refinement 4),
``polish_nodes`` (5000; 0 switches refinement 5 off), ``literal`` (false;
true drops refinements 1, 2, 4 and 5 — the paper's rules as written, for
comparison).

Complexity: FirstAssignment O(E·M) for E starting executors and M machines.
Each MaximizeThroughput iteration costs O(C·M + S) (C components, S streams),
times the tasks and batch sizes tried when an instance does not fit; there are
O(I · log2(IR*/threshold)) iterations for I final instances and the final rate
IR*; the descent's cost is in :mod:`._hetero_descent`. In all, 0.4–0.7 s for
Table IV's large cluster (180 machines, about 1,000–1,250 instances, on a
loaded 2-core machine; ``benchmarks/reports/hetero.md``). No randomness: the result is the
same for every seed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from storm_planner.core.errors import InfeasibleError, ProblemError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.tasks import TASK_RANGE
from storm_planner.planners._parameters import checked, to_flag, to_real, to_text, to_whole
from storm_planner.planners.base import Planner
from storm_planner.planners.hetero._hetero_descent import improve, spreads
from storm_planner.planners.hetero.advice import advice_note, parallelism_advice, task_bounds
from storm_planner.planners.hetero.hetero_optimal import MAX_MACHINES, polish
from storm_planner.planners.hetero.model import ALL, HeteroModel, build_model
from storm_planner.planners.hetero.plans import plan_from_placement, starting_parallelism
from storm_planner.planners.hetero.rates import ComponentRates, propagate
from storm_planner.planners.hetero.simulate import Placement

EPSILON = 1e-9
MODES = ("auto", "search", "fixed")
DEFAULT_MAX_BATCH = 64
DEFAULT_MAX_ITERATIONS = 100_000
DEFAULT_POLISH_NODES = 5_000
POLISH_CANDIDATES = 200_000  # spreads of all components together the exact polish may enumerate


# -- the search state ---------------------------------------------------------------

class GraphState:
    """An execution graph being grown: instances per component and their machines.

    Loads are kept per tuple/s of input rate (``coef``), so a new rate costs
    nothing to evaluate; adding an instance re-propagates the rates (eq. 8).
    """

    def __init__(self, model: HeteroModel, machines_of: list[list[int]]):
        self.model = model
        self.machines_of = machines_of
        self.counts = Placement(tuple(map(tuple, machines_of))).counts(model.n_machines)
        self.fixed = (self.counts * model.base).sum(axis=0)   # CPU at zero input: the bases (issue #18)
        self._refresh()

    def _refresh(self) -> None:
        self.rates = propagate(self.model, [len(m) for m in self.machines_of])
        self.coef = self._coefficients(self.counts, self.rates)

    def _coefficients(self, counts: np.ndarray, rates: ComponentRates) -> np.ndarray:
        coef: np.ndarray = (counts * rates.per_instance[:, None] * self.model.cost).sum(axis=0)
        for c in np.flatnonzero(rates.first > 0):
            first_machine = self.machines_of[c][0]
            coef[first_machine] += rates.first[c] * self.model.cost[c, first_machine]
        return coef

    def copy(self) -> GraphState:
        clone = object.__new__(GraphState)
        clone.model, clone.rates = self.model, self.rates
        clone.machines_of = [list(m) for m in self.machines_of]
        clone.counts, clone.coef, clone.fixed = self.counts.copy(), self.coef.copy(), self.fixed.copy()
        return clone

    def placement(self) -> Placement:
        return Placement(tuple(map(tuple, self.machines_of)))

    def instance_tcu(self, c: int, machine: int, first: bool, input_rate: float) -> float:
        """TCU of one instance of ``c`` on ``machine`` at ``input_rate``: base + IR · (ET + MET) / 10."""
        rate = self.rates.per_instance[c] + (self.rates.first[c] if first else 0.0)
        return float(self.model.base[c, machine] + input_rate * rate * self.model.cost[c, machine])

    def first_over_utilised(self, input_rate: float) -> int | None:
        """The first machine over its budget (or holding an executor over the cap)."""
        over = self.fixed + self.coef * input_rate > self.model.capacity * (1 + EPSILON)
        if self.model.executor_cap is not None:
            over |= self._hottest_per_machine(input_rate) > self.model.executor_cap * (1 + EPSILON)
        hits = np.flatnonzero(over)
        return int(hits[0]) if hits.size else None

    def _hottest_per_machine(self, input_rate: float) -> np.ndarray:
        tcu = self.model.base + input_rate * self.rates.per_instance[:, None] * self.model.cost
        hottest: np.ndarray = np.where(self.counts > 0, tcu, 0.0).max(axis=0)
        for c in np.flatnonzero(self.rates.first > 0).tolist():
            m = self.machines_of[c][0]
            hottest[m] = max(hottest[m], self.instance_tcu(c, m, True, input_rate))
        return hottest

    def hot_tasks(self, machine: int, input_rate: float) -> list[tuple[int, bool]]:
        """Components of the tasks on ``machine``, hottest task first (with: is it the first instance)."""
        tasks = []
        for c in np.flatnonzero(self.counts[:, machine] > 0).tolist():
            first = self.machines_of[c][0] == machine
            tasks.append((-self.instance_tcu(c, machine, first, input_rate), int(c), first))
        return [(c, first) for _, c, first in sorted(tasks)]

    def new_instance_machines(self, c: int, hot_is_first: bool, input_rate: float,
                              max_instances: Sequence[int] | None, max_batch: int) -> list[int] | None:
        """Machines for ``k`` new instances of ``c``, the smallest ``k`` that fits, or None.

        Each new instance goes, in turn, to the most suitable machine: the least
        TCU for it among the machines that can take it, ties to the most free
        capacity. ``k`` > 1 only when one instance fits nowhere (see the module
        docstring).
        """
        n = len(self.machines_of[c])
        hot_before = self.rates.per_instance[c] + (self.rates.first[c] if hot_is_first else 0.0)
        for k in range(1, max_batch + 1):
            if max_instances is not None and n + k > max_instances[c]:
                return None
            per_instance, first, base = self._with_instances(c, n + k)
            hot_after = per_instance + (first if hot_is_first else 0.0)
            if not hot_after < hot_before * (1 - EPSILON):
                return None  # the hottest task's input cannot be divided (all/global grouping)
            chosen = self._place_new(c, per_instance, base, k, input_rate)
            if chosen is not None:
                return chosen
        return None

    def _with_instances(self, c: int, count: int) -> tuple[float, float, np.ndarray]:
        """With ``count`` instances of ``c``: its per-instance and first-only rates, and the
        machine coefficients of the existing instances (all per unit input rate)."""
        if not any(flow.kind == ALL for flow in self.model.flows):
            # only c's own share changes: no re-propagation needed (the common case)
            per_instance = self.rates.split[c] / count + self.rates.every[c]
            delta = per_instance - self.rates.per_instance[c]
            return per_instance, self.rates.first[c], self.coef + self.counts[c] * delta * self.model.cost[c]
        parallelism = [len(m) for m in self.machines_of]
        parallelism[c] = count
        rates = propagate(self.model, parallelism)
        return rates.per_instance[c], rates.first[c], self._coefficients(self.counts, rates)

    def _place_new(self, c: int, per_instance: float, base: np.ndarray, k: int,
                   input_rate: float) -> list[int] | None:
        """Machines for ``k`` identical new instances, each in turn on the most suitable one.

        A new instance's TCU includes its base, and so does the room it needs."""
        new_tcu = self.model.base[c] + per_instance * self.model.cost[c] * input_rate
        room = self.model.capacity * (1 + EPSILON) - self.fixed - base * input_rate
        usable = np.ones(self.model.n_machines, dtype=bool)
        if self.model.executor_cap is not None:
            usable &= new_tcu <= self.model.executor_cap * (1 + EPSILON)
        # how many new instances each machine can take: a cheap test before placing any
        takes = np.where(new_tcu > 0, np.floor(np.maximum(room, 0) / np.where(new_tcu > 0, new_tcu, 1) + EPSILON), k)
        takes = np.where(usable, takes, 0)
        if takes.sum() < k:
            return None
        chosen = []
        for _ in range(k):
            candidates = np.flatnonzero(takes > 0)
            free = room[candidates] - new_tcu[candidates]
            # least TCU first (the heterogeneity-aware choice), then most free capacity, then order
            m = int(candidates[np.lexsort((candidates, -free, np.round(new_tcu[candidates], 9)))[0]])
            chosen.append(m)
            room[m] -= new_tcu[m]
            takes[m] -= 1
        return chosen

    def add_instances(self, c: int, machines: list[int]) -> None:
        for machine in machines:
            self.machines_of[c].append(machine)
            self.counts[c, machine] += 1
            self.fixed[machine] += self.model.base[c, machine]
        self._refresh()


# -- Algorithm 1 -----------------------------------------------------------------------

def first_assignment(model: HeteroModel, parallelism: list[int], input_rate: float) -> GraphState | None:
    """Alg. 1: place the starting graph at ``input_rate``; None if it does not fit."""
    rates = propagate(model, parallelism)
    instances = [(c, i) for c in range(model.n_components) for i in range(parallelism[c])]
    demand = {(c, i): (model.base[c] + input_rate * rates.instance_rate(c, i) * model.cost[c]).min()
              for c, i in instances}
    instances.sort(key=lambda ci: (-demand[ci], ci))
    load = np.zeros(model.n_machines)
    machines_of: list[list[int | None]] = [[None] * n for n in parallelism]
    for c, i in instances:
        tcu = model.base[c] + rates.instance_rate(c, i) * model.cost[c] * input_rate
        free = model.capacity - load - tcu
        fits = free >= -EPSILON * model.capacity
        if model.executor_cap is not None:
            fits &= tcu <= model.executor_cap * (1 + EPSILON)
        if not fits.any():
            return None
        m = int(min(np.flatnonzero(fits), key=lambda m: (round(tcu[m], 9), -free[m], m)))
        machines_of[c][i] = m
        load[m] += tcu[m]
    placed = [[m for m in ms if m is not None] for ms in machines_of]   # every instance has its machine now
    return GraphState(model, placed)


# -- Algorithm 2 -----------------------------------------------------------------------

@dataclass(frozen=True)
class SearchResult:
    state: GraphState
    input_rate: float      # the last stable rate of the search
    iterations: int
    initial_rate: float
    descent_steps: int = 0  # steps refinement 4 took from the heuristic's graph
    polish_nodes: int = 0   # search nodes refinement 5 visited (0: not run)
    polish_complete: bool = False  # refinement 5 proved the result optimal within the bounds


def maximize_throughput(model: HeteroModel, state: GraphState, input_rate: float, *,
                        threshold: float = 1.0, max_instances: Sequence[int] | None = None,
                        max_batch: int = 1, next_hottest: bool = True,
                        max_iterations: int = 100_000) -> SearchResult:
    """Alg. 2: raise the rate, add instances of hot components, halve the step when stuck."""
    initial = input_rate
    scale = 1.0
    stable, stable_rate = state.copy(), input_rate
    current, rate = state, input_rate
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        machine = current.first_over_utilised(rate)
        if machine is None:
            stable, stable_rate = current.copy(), rate
            rate += rate / scale
            continue
        targets = None
        tasks = current.hot_tasks(machine, rate)
        for c, hot_is_first in tasks if next_hottest else tasks[:1]:  # hottest first, then the next
            targets = current.new_instance_machines(c, hot_is_first, rate, max_instances, max_batch)
            if targets is not None:
                break
        if targets is not None:
            current.add_instances(c, targets)
            continue
        if stable_rate / scale <= threshold:
            break
        scale *= 2
        current, rate = stable.copy(), stable_rate
    return SearchResult(stable, stable_rate, iterations, initial)


def search(model: HeteroModel, parallelism: list[int], *, threshold: float = 1.0,
           max_instances: int | Sequence[int] | None = None, max_batch: int = 1, next_hottest: bool = True,
           descend: bool = False, polish_nodes: int = 0,
           max_iterations: int = 100_000) -> tuple[SearchResult, list[str]]:
    """FirstAssignment then MaximizeThroughput, lowering IR0 if the start does not fit.

    ``max_instances`` bounds the instances of every component (one number) or
    of each (one per component, e.g. its task count on a running topology).
    """
    if isinstance(max_instances, (int, np.integer)):
        max_instances = [int(max_instances)] * model.n_components
    if not (propagate(model, parallelism).total[:, None] * model.cost).any():
        raise ProblemError("no task uses CPU at any input rate: the topology needs a spout with profiled times")
    notes = []
    rate = model.input_rate
    for _ in range(64):
        state = first_assignment(model, parallelism, rate)
        if state is not None:
            break
        rate /= 2
    else:
        raise InfeasibleError("the starting execution graph fits no machine at any input rate")
    if rate < model.input_rate:
        notes.append(f"the starting graph did not fit at input rate {model.input_rate:g}; started at {rate:g}")
    result = maximize_throughput(model, state, rate, threshold=threshold,
                                 max_instances=max_instances, max_batch=max_batch,
                                 next_hottest=next_hottest, max_iterations=max_iterations)
    if result.iterations >= max_iterations:
        notes.append(f"stopped after max_iterations={max_iterations}")
    upper = max_instances if max_instances is not None else result.state.placement().parallelism.tolist()
    # With bases an instance is never free: the refinements may also remove instances (issue #18).
    lower = [1] * model.n_components if model.has_base else parallelism
    if descend:
        improved, steps = improve(model, result.state.placement(), lower, upper)
        result = replace(result, state=GraphState(model, [list(m) for m in improved.machines_of]),
                         descent_steps=steps)
    # Only with bases: without them the descent alone is within 2 % (benchmarks/reports/hetero.md) and
    # a polish that cannot finish would cost seconds on a six-machine cluster for little.
    if polish_nodes and model.has_base and can_polish(model, lower, upper):
        polished, nodes, complete = polish(model, result.state.placement(), lower, upper, polish_nodes)
        result = replace(result, state=GraphState(model, [list(m) for m in polished.machines_of]),
                         polish_nodes=nodes, polish_complete=complete)
    return result, notes


def can_polish(model: HeteroModel, lower: Sequence[int], upper: Sequence[int]) -> bool:
    """Is refinement 5 possible: split groupings, no executor cap, and few enough candidate spreads?"""
    if not model.has_only_split_groupings or model.executor_cap is not None or model.n_machines > MAX_MACHINES:
        return False
    return sum(spreads(lo, max(lo, hi), model.n_machines) for lo, hi in zip(lower, upper)) <= POLISH_CANDIDATES


# -- the fixed-graph extension -------------------------------------------------------------

def place_fixed_graph(model: HeteroModel, parallelism: list[int]) -> Placement:
    """Place a given graph for the highest sustainable rate (not in the paper).

    Instances by decreasing demand; each to the machine that keeps the peak
    utilisation per unit rate lowest — with bases, ``coef / (capacity − fixed)``,
    the inverse of the rate the machine sustains — ties to the least TCU:
    longest processing time first, for machines of unrelated speeds.
    O(E·M + E log E).
    """
    rates = propagate(model, parallelism)
    instances = [(c, i) for c in range(model.n_components) for i in range(parallelism[c])]
    weight = {(c, i): rates.instance_rate(c, i) * model.cost[c] for c, i in instances}
    instances.sort(key=lambda ci: (-weight[ci].min(), ci))
    coef = np.zeros(model.n_machines)
    fixed = np.zeros(model.n_machines)
    peak = 0.0
    machines_of: list[list[int]] = [[0] * n for n in parallelism]
    for c, i in instances:
        room = model.capacity - fixed - model.base[c]   # what the bases leave (issue #18)
        with np.errstate(divide="ignore", invalid="ignore"):
            after = np.where(room > 0, (coef + weight[(c, i)]) / np.where(room > 0, room, 1.0), np.inf)
        m = int(min(range(model.n_machines),
                    key=lambda m: (max(peak, after[m]), after[m], weight[(c, i)][m], model.base[c, m], m)))
        machines_of[c][i] = m
        coef[m] += weight[(c, i)][m]
        fixed[m] += model.base[c, m]
        peak = max(peak, after[m])
    return Placement(tuple(map(tuple, machines_of)))


# -- the planner -----------------------------------------------------------------------------

class HeteroPlanner(Planner):
    """Nasiri et al.'s FirstAssignment and MaximizeThroughput (§5.3–5.4): instances per component and
    their machines for the highest input rate no machine is over-utilised at, from per-machine-type
    profiles (``planner.hetero.profiles`` or the problem's ``profiles``).

    Parameters
    ----------
    input_rate : float or None, default=None
        The initial input rate IR0 in tuples/s; None takes the profile's, else 1.
    threshold : float, default=1.0
        The search stops when its rate increment falls to this many tuples/s and no instance can be
        added (the paper's stopping rule).
    mac : float, default=100.0
        Percent of each machine's capacity the tasks may use (the paper's MAC).
    max_instances : int or None, default=None
        Most instances per component; None is twice the number of usable machines (on a running
        topology also at most each component's task count).
    max_batch : int, default=64
        Most instances added to a component at once when a single one fits nowhere.
    max_iterations : int, default=100000
        Most iterations of MaximizeThroughput.
    mode : {"auto", "search", "fixed"}, default="auto"
        ``search`` may return new executors (the paper); ``fixed`` places exactly the problem's
        executors and advises a parallelism; ``auto`` is ``fixed`` for a topology Storm already runs,
        else ``search``.
    descent : bool, default=True
        Refine the result with the re-placement descent (not in the paper).
    polish_nodes : int, default=5000
        Search nodes of the exact polish run after the descent on small clusters with bases; 0 turns it
        off.
    literal : bool, default=False
        Follow the paper's rules as written, without the refinements (next-hottest task, batches,
        descent, polish), for comparison.
    """

    name = "hetero"
    summary = "Nasiri et al.: instances per component and heterogeneity-aware placement for max input rate"
    changes_parallelism = True
    option_inputs = frozenset({"profiles"})  # planner.hetero.profiles: the profile (hetero.profiles)

    def __init__(self, *, input_rate: float | None = None, threshold: float = 1.0, mac: float = 100.0,
                 max_instances: int | None = None, max_batch: int = DEFAULT_MAX_BATCH,
                 max_iterations: int = DEFAULT_MAX_ITERATIONS, mode: str = "auto", descent: bool = True,
                 polish_nodes: int = DEFAULT_POLISH_NODES, literal: bool = False) -> None:
        # None: the profile's input rate, else 1
        self.input_rate = checked(self.name, "input_rate", input_rate, to_real, above=0, optional=True)
        self.threshold = checked(self.name, "threshold", threshold, to_real, above=0)
        self.mac = checked(self.name, "mac", mac, to_real, above=0)
        # None: twice the number of usable machines
        self.max_instances = checked(self.name, "max_instances", max_instances, to_whole, minimum=1, optional=True)
        self.max_batch = checked(self.name, "max_batch", max_batch, to_whole, minimum=1)
        self.max_iterations = checked(self.name, "max_iterations", max_iterations, to_whole, minimum=0)
        self.mode = checked(self.name, "mode", mode, to_text, choices=MODES)
        self.descent = checked(self.name, "descent", descent, to_flag)
        self.polish_nodes = checked(self.name, "polish_nodes", polish_nodes, to_whole, minimum=0)
        self.literal = checked(self.name, "literal", literal, to_flag)

    def plan(self, problem: Problem) -> Plan:
        mode, literal = self.mode, self.literal
        if mode == "auto":
            mode = "fixed" if is_submitted(problem) else "search"
        elif mode == "search" and is_submitted(problem):
            raise ProblemError("mode=search on a running topology: Storm adds executors only by a rebalance "
                               "(planner.rebalance, storm-planner rebalance); use mode fixed or auto")
        model = build_model(problem, mac=self.mac, input_rate=self.input_rate)
        start = starting_parallelism(problem, model)
        max_instances = 2 * model.n_machines if self.max_instances is None else self.max_instances
        # A running topology can only grow each component up to its task count (by a rebalance).
        bounds = task_bounds(problem, model, start, max_instances) if mode == "fixed" else max(max_instances, *start)
        result, notes = search(
            model, start,
            threshold=self.threshold,
            max_instances=bounds,
            max_batch=1 if literal else self.max_batch,
            next_hottest=not literal,
            descend=not literal and self.descent,
            polish_nodes=0 if literal else self.polish_nodes,
            max_iterations=self.max_iterations,
        )
        figures = {"search_input_rate": result.input_rate, "initial_input_rate": result.initial_rate,
                   "iterations": float(result.iterations), "descent_steps": float(result.descent_steps),
                   "polish_nodes": float(result.polish_nodes), "polish_complete": float(result.polish_complete)}
        if mode == "search":
            return plan_from_placement(problem, model, result.state.placement(), self.name, figures, notes)

        placement, _ = improve(model, place_fixed_graph(model, start), start, start)  # counts kept
        advice = parallelism_advice(problem, model, result.state.placement(), placement)
        notes.append(advice_note(problem, advice))
        return plan_from_placement(problem, model, placement, self.name, figures, notes).replace(advice=advice)


def is_submitted(problem: Problem) -> bool:
    """Does Storm already run this topology (a current placement, or executors named by task range)?"""
    return bool(problem.current) or any(TASK_RANGE.match(e.id) for e in problem.executors)
