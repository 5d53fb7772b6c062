"""What a move of a running topology costs, against what it gains: the price the gain gate puts on it
(:mod:`.replan`, step 5).

Storm restarts a worker whenever its executors change, so a move restarts the worker it joins and the one
it leaves (unless that one is left empty: it stops). Measured on the local cluster, that costs far more
than the executors' loads say:

* a restarted worker runs nothing until its JVM and its multilang subprocesses are up: about 4.5 s of one
  core (a worker under a 25 % CPU quota took 18 s);
* a moved acker or spout loses its tuple trees: the spout's ``max.spout.pending`` fills with tuples that can
  only time out, and the topology stalls for ``topology.message.timeout.secs`` (0 acked, 2,003 failed in a
  30 s window), then replays them;
* drained first (:mod:`storm_planner.service.planning.drain`), nothing is in flight when the workers
  restart, but the whole topology stands still from the pause to the resume: the drain, the wait for the
  plugin's next offer, the restarted workers' start, and their first metrics windows.

**Unit**: seconds of the topology's whole work. A second in which none of its tuples advance costs one; a
tuple in flight that is lost costs what the spouts start in 1/rate s (it is replayed). The gain is counted
the same way over the re-plan period (``planner.replan.period.secs``: the next re-plan may move it again):
the share by which the move lowers the topology's bottleneck, the busiest node's utilisation (demand over
capacity, so overload counts too) or the busiest link's, whichever the topology is short of, times the
period. A topology whose busiest node falls from 97 to 77 % of its CPU gains 21 % of 60 s, 12 s; a drained
move that restarts one worker where workers start in 5 s, with a 3 s metrics period, costs about
1.5 x 3 + 5 (offer) + 5 = 14.5 s the first time (priors), and what its last drain measured after that;
with the default 10 s period, 25 s: a short metrics period makes drained moves cheap.

**Costs** (:func:`price_move`):

* drained: the pause (what this topology's last drain measured, its start left out, else a prior: the drain
  ends with the first window after the pause, half a metrics period on average; the move waits for the
  plugin's next offer, :data:`PRIOR_OFFER_S`; the resume for the new workers' first windows, one period
  after they start) + the slowest start among the restarted workers;
* not drained: the slowest start, or the message timeout when an acker restarts and the timeout is longer
  (the spouts' pending tuples fill with trees that died with it); plus, when an acker or a spout restarts,
  the tuples in flight at the rate the spouts start them (their replays);
* **undrained because the flow goes on** (:func:`flow_goes_on`, unless ``planner.replan.drain.always``): a
  move that restarts no spout's worker, leaves every bolt and the ackers an executor that can take their
  tuples (by grouping), and whose lost trees fit in the spouts' ``topology.max.spout.pending`` beside those
  in flight is not drained: the trees through the workers it does not restart go on
  being acked. On the heterogeneous quota cluster a count and an acker moved this way kept Top-K acking in
  every 5 s interval (drain report, issue #49), where the drained move stood still for 25-30 s. It costs
  the slowest start twice (the restarted workers' share stands still meanwhile; what the spouts start
  meanwhile may be lost and replayed) plus the tuples in flight now, replayed, at the spouts' rate, plus
  the **fail burst** (:func:`fail_burst`): Storm expires the lost trees together at the message timeout and
  a spout takes one ``fail`` (a multilang round trip) for each before it emits again, so nothing is acked
  until they pass. Measured on a 30 % node: 59,453 fails held the spout 11.3 s, 33,274 9.0 s and 52,694 8.0 s
  (drain reports 5 to 7), 120 to 220 a second per percent of a core, the lower taken. On the 70 % node the
  bursts passed far quicker than that rate says (97,880 fails, no stretch without an ack over 1.7 s): the
  price errs high there, which only makes the gate more careful with a move.

A worker's start on a node is the mean of the last :data:`KEEP_STARTS` measured there (from the move to the
new worker's first window, :class:`StartTimes`), else a prior: :data:`START_CORE_S` of one core at the CPU
the node has left while it starts, beside the workers that do not restart (at most one core: a start is
mostly one thread; at least :data:`MIN_ROOM_PCT`), and never under :data:`MIN_START_S`. The note says which.

**Short of CPU for a new worker** (:func:`short_for_new_workers`): a relief that puts a new worker (a slot the
topology does not use now) on a node whose utilisation after the move, with :data:`WORKER_BASE_PCT` of a
core for the worker itself, reaches ``CPU_PRESSURE_PCT`` is refused: the executors' measured loads carry
their old worker's share, not a new JVM's.

Pure functions of a problem, two placements and their figures, O(executors).
"""
from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType

from storm_planner.adaptation.gate import CPU_PRESSURE_PCT, short_of_cpu, short_of_link
from storm_planner.core.elements import SPOUT
from storm_planner.core.evaluate import utilisations
from storm_planner.core.problem import Node, Problem, Slot
from storm_planner.core.system_streams import ACKER

START_CORE_S = 4.5          # seconds of one core a worker takes to start: 18 s measured under a 25 % quota
MIN_START_S = 3.0           # never faster: a JVM, Storm's worker set-up, a Python subprocess
MIN_ROOM_PCT = 5.0          # a node with less CPU left is taken to start workers at this much of a core
WORKER_BASE_PCT = 3.0       # an idle worker's own CPU (% of a core): heartbeats, timers, netty, metrics
PRIOR_OFFER_S = 5.0         # the plugin's next offer after the drain: half of Nimbus' default 10 s round
DEFAULT_MESSAGE_TIMEOUT_S = 30.0   # Storm's topology.message.timeout.secs
KEEP_STARTS = 5             # measured starts kept per node
# Fails a spout takes per second per percent of a core it has (a multilang round trip each): 120 to 220 on a
# 30 % node (benchmarks/reports/drain-5.md to drain-7.md); the lower taken.
FAILS_PER_CORE_PCT = 120.0
ONE_CORE_PCT = 100.0        # a start (mostly one thread) or a spout (its executor and subprocess take turns) uses no more


def by_slot(assignment: Mapping[str, Slot]) -> dict[Slot, frozenset[str]]:
    slots: dict[Slot, set[str]] = defaultdict(set)
    for executor, slot in assignment.items():
        slots[slot].add(executor)
    return {slot: frozenset(executors) for slot, executors in slots.items()}


def restarted_slots(current: Mapping[str, Slot], plan: Mapping[str, Slot]) -> dict[Slot, frozenset[str]]:
    """The slots whose worker (re)starts when ``plan`` replaces ``current``, each with its executors in
    ``plan``: every slot of ``plan`` whose executors change. A slot left empty stops; it does not restart."""
    before = by_slot({e: s for e, s in current.items() if e in plan})
    return {slot: executors for slot, executors in by_slot(plan).items() if before.get(slot) != executors}


class StartTimes:
    """Per node, the last :data:`KEEP_STARTS` measured worker starts (seconds); thread-safe."""

    def __init__(self, keep: int = KEEP_STARTS) -> None:
        self._starts: dict[str, deque[float]] = {}
        self._keep = keep
        self._lock = threading.Lock()

    def record(self, node: str, seconds: float) -> None:
        with self._lock:
            self._starts.setdefault(node, deque(maxlen=self._keep)).append(float(seconds))

    def snapshot(self) -> dict[str, float]:
        """Node -> the mean of its measured starts."""
        with self._lock:
            return {node: sum(starts) / len(starts) for node, starts in self._starts.items() if starts}


@dataclass(frozen=True)
class MoveContext:
    """What the service knows of a running topology beyond its problem, for pricing a move of it."""

    drained: bool = False                   # the move will be drained (Nimbus known, planner.replan.drain)
    not_drained: str = "no drain"           # why not, for the note
    pause_s: float | None = None            # the last drain's pause but the start (None: prior)
    in_flight: int | None = None            # the spouts' tuples in flight now (None: unknown)
    spout_rate: float | None = None         # tuples/s the spouts start now (None: unknown)
    message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S
    start_times: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))  # node -> s, measured
    metrics_period_s: float = 10.0
    pending_room: float | None = None       # topology.max.spout.pending x spout tasks (inf: unbounded; None: unknown)
    drain_always: bool = False              # planner.replan.drain.always: drain even a move the flow survives


@dataclass(frozen=True)
class Price:
    cost_s: float
    gain_s: float
    costs: str          # what the cost is made of
    gains: str          # what the gain is made of
    horizon_s: float

    @property
    def pays(self) -> bool:
        return self.gain_s > self.cost_s

    def note(self) -> str:
        return (f"a move costs {self.cost_s:.1f} s of the topology's work ({self.costs}) against a gain of "
                f"{self.gain_s:.1f} s over the {self.horizon_s:g} s re-plan period ({self.gains})")


def start_time(node: Node, running: float, context: MoveContext) -> tuple[float, str]:
    """(seconds, where from) for a worker starting on ``node`` beside ``running`` (reference-core percent:
    the load of the executors that go on running there while it starts, and other work)."""
    room = max(MIN_ROOM_PCT, min(ONE_CORE_PCT, node.capacity * node.speed - running))
    return _start_on(node.id, room, context,
                     f"prior: {START_CORE_S:g} s of a core at the {room:.0f} % of a core it has left")


def _start_on(node_id: str, room: float, context: MoveContext, prior: str) -> tuple[float, str]:
    """The worker start measured on ``node_id``, else the prior at ``room`` (% of a core), said as ``prior``."""
    measured = context.start_times.get(node_id)
    if measured is not None:
        return measured, f"{measured:.1f} s on {node_id} (measured)"
    seconds = max(MIN_START_S, START_CORE_S * 100.0 / room)
    return seconds, f"{seconds:.1f} s on {node_id} ({prior})"


def slowest_start(problem: Problem, plan: Mapping[str, Slot], context: MoveContext) -> tuple[float, str]:
    """(seconds, where from) of the slowest start among the workers ``plan`` restarts ((0, 'none'): none)."""
    restarted = restarted_slots(problem.current, plan)
    nodes = {n.id: n for n in problem.nodes}
    # While the new workers start, what runs beside them: the executors of the workers that do not restart.
    running = {n.id: n.used_cpu * n.speed for n in problem.nodes}
    load = {e.id: e.load for e in problem.executors}
    for executor, slot in plan.items():
        if slot not in restarted and slot.node in running:
            running[slot.node] += load.get(executor, 0.0)
    # A node the round does not list (a blacklisted supervisor a worker still runs on): nothing says what room
    # it has, so the slowest prior.
    starts = [start_time(nodes[slot.node], running[slot.node], context) if slot.node in nodes
              else _start_on(slot.node, MIN_ROOM_PCT, context, "not in this round: the slowest prior")
              for slot in sorted(restarted)]
    return max(starts, default=(0.0, "none"))


def flow_goes_on(problem: Problem, plan: Mapping[str, Slot], context: MoveContext,
                 start_s: float | None = None) -> tuple[bool, str]:
    """(whether the topology goes on acking through an undrained move, why). It does when the move

    * restarts no spout's worker (a restarted spout starts nothing until its worker is up);
    * leaves every bolt and the ackers a way through (:func:`stopped_components`): a tree through a
      component that no running executor can take dies (with every acker restarted, 16 s without an ack;
      with Top-K's one ``top`` restarted, 27 s: drain report);
    * leaves the spouts room in ``topology.max.spout.pending`` for the trees in flight now twice over (the
      ones that die hold their places until ``topology.message.timeout.secs``, and as many again keep
      flowing) plus every tree they start until the restarted workers are up (``start_s``), all taken as
      lost.

    Unknown tuples in flight or spout rate: no."""
    restarted = restarted_slots(problem.current, plan)
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    component = {e.id: e.component for e in problem.executors}
    down = {e for executors in restarted.values() for e in executors}
    if any(component.get(e) in spouts for e in down):
        return False, "a spout's worker restarts"
    ackers = [e for e, c in component.items() if c == ACKER]
    stopped = stopped_components(problem, down)
    if stopped == [ACKER]:
        return False, f"all {len(ackers)} acker(s) restart"
    if stopped:
        return False, f"{', '.join(stopped)} cannot take a tuple while its workers restart: every tree through it dies"
    if context.pending_room is None or context.in_flight is None or not context.spout_rate:
        return False, "the spouts' room in topology.max.spout.pending is unknown"
    if start_s is None:
        start_s, _ = slowest_start(problem, plan, context)
    lost = trees_at_risk(context, start_s)
    room = ("unbounded" if context.pending_room == float("inf")
            else f"{context.pending_room:,.0f} (topology.max.spout.pending x spout tasks)")
    if lost + context.in_flight >= context.pending_room:
        return False, (f"the spouts' pending places, {room}, cannot hold {lost:,.0f} lost tree(s) beside the "
                       f"{context.in_flight} in flight")
    kept = sum(1 for e in ackers if e not in down)
    acking = f"{kept} of {len(ackers)} acker(s) keep running" if ackers else "no ackers"
    return True, (f"no spout's worker restarts, every bolt and {acking}, and the spouts' pending places, "
                  f"{room}, hold the {lost:,.0f} tree(s) it may lose ({context.in_flight} in flight and "
                  f"{start_s:.0f} s at {context.spout_rate:.0f}/s) beside those in flight")


def trees_at_risk(context: MoveContext, start_s: float) -> float:
    """The trees an undrained move may lose: all in flight now and all the spouts start until the restarted
    workers are up (unknown figures count as none)."""
    return (context.in_flight or 0) + (context.spout_rate or 0.0) * start_s


def fail_burst(problem: Problem, lost: float) -> tuple[float, str]:
    """(seconds, why): how long the spouts take the ``fail`` of ``lost`` trees that time out together, split
    evenly over the spout executors, each at :data:`FAILS_PER_CORE_PCT` per percent of a core its node has
    (up to one core): the slowest spout's. (0, 'none') with nothing lost or no spout placed."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    placed = [problem.current[e.id].node for e in problem.executors
              if e.component in spouts and e.id in problem.current]
    if lost <= 0 or not placed:
        return 0.0, "none"
    capacity = {n.id: n.capacity * n.speed for n in problem.nodes}
    room, node = min((max(MIN_ROOM_PCT, min(ONE_CORE_PCT, capacity.get(n, 0.0))), n) for n in placed)
    seconds = lost / len(placed) / (FAILS_PER_CORE_PCT * room)
    return seconds, (f"{lost:,.0f} tree(s) failing at once take the spout on {node} ({room:.0f} % of a core) "
                     f"{seconds:.1f} s")


def stopped_components(problem: Problem, down: AbstractSet[str]) -> list[str]:
    """The bolts and the ackers that cannot take a tuple while the executors ``down`` restart, by how their
    inputs are grouped: a global grouping needs the executor of the lowest task, an all, direct or custom
    grouping every executor (it may route any tuple to any of them), any other (shuffle, fields, ...) one
    executor; the ackers one. Other system components (``__system``, ``__metrics``) carry no trees."""
    executors = tree_carriers(problem)
    needs: dict[str, str] = {c: "one" for c in executors}
    for stream in problem.streams:
        if stream.target in needs:
            if stream.grouping in _EVERY_EXECUTOR:
                needs[stream.target] = "every"
            elif stream.grouping == "global" and needs[stream.target] == "one":
                needs[stream.target] = "lowest"
    stopped = []
    for name, ids in sorted(executors.items()):
        up = [e for e in ids if e not in down]
        need = needs[name]
        if not up or (need == "every" and len(up) < len(ids)) or (
                need == "lowest" and min(ids, key=first_task) in down):
            stopped.append(name)
    return stopped


_EVERY_EXECUTOR = frozenset({"all", "direct", "custom"})


def tree_carriers(problem: Problem) -> dict[str, list[str]]:
    """The components tuple trees pass through once a spout has emitted (the bolts and the ackers; not the
    spouts, nor ``__system`` or ``__metrics``), each with its executors."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    system = {c.id for c in problem.components if c.system and c.id != ACKER}
    executors: dict[str, list[str]] = defaultdict(list)
    for executor in problem.executors:
        if executor.component not in spouts and executor.component not in system:
            executors[executor.component].append(executor.id)
    return executors


def first_task(executor_id: str) -> int:
    """``"[3-5]"`` -> 3 (0 for an id not of that form)."""
    try:
        return int(executor_id.strip("[]").split("-")[0])
    except ValueError:
        return 0


def skips_drain(problem: Problem, plan: Mapping[str, Slot], context: MoveContext,
                start_s: float | None = None) -> str:
    """Why a move the service would drain goes undrained ('' when it is drained, or not drainable at all)."""
    if not context.drained or context.drain_always:
        return ""
    goes_on, why = flow_goes_on(problem, plan, context, start_s)
    return f"the flow goes on: {why}" if goes_on else ""


def price_move(problem: Problem, plan: Mapping[str, Slot], before: Mapping[str, float],
               after: Mapping[str, float], context: MoveContext, horizon_s: float) -> Price:
    """The cost of replacing ``problem.current`` by ``plan`` and its gain over ``horizon_s`` (module
    docstring); ``before``/``after``: the two placements' figures on the same measured problem."""
    restarted = restarted_slots(problem.current, plan)
    start_s, start_note = slowest_start(problem, plan, context)
    holders = _tree_holders(problem, restarted)
    parts = [f"restarts {len(restarted)} worker(s), slowest start {start_note}"]
    flowing = skips_drain(problem, plan, context, start_s)
    if flowing:
        burst_s, burst = fail_burst(problem, trees_at_risk(context, start_s))
        cost = 2 * start_s + (context.in_flight or 0) / (context.spout_rate or 1.0) + burst_s
        parts.append(f"not drained, {flowing}: twice the start, the tuples in flight replayed, and the fail "
                     f"burst ({burst})")
    elif context.drained:
        pause_s = context.pause_s
        if pause_s is None:
            pause_s = 1.5 * context.metrics_period_s + PRIOR_OFFER_S
            parts.append(f"drained: pause {pause_s:.1f} s (prior: 1.5 metrics periods and the next offer)")
        else:
            parts.append(f"drained: pause {pause_s:.1f} s (its last drain)")
        cost = pause_s + start_s
    else:
        cost = start_s
        parts.append(f"not drained ({context.not_drained})")
        if "an acker" in holders and context.message_timeout_s > cost:
            cost = context.message_timeout_s
            parts.append(f"an acker restarts: the trees it held time out after {context.message_timeout_s:g} s")
        if holders and context.in_flight and context.spout_rate:
            cost += context.in_flight / context.spout_rate
            parts.append(f"{context.in_flight} tuple(s) in flight replayed "
                         f"({context.in_flight / context.spout_rate:.1f} s at {context.spout_rate:.0f}/s)")
    if context.drained and not flowing and context.in_flight is not None:
        parts.append(f"{context.in_flight} tuple(s) in flight now, acked before the move")
    share, gains = bottleneck_relief(before, after)
    return Price(cost, share * horizon_s, "; ".join(parts), gains, horizon_s)


def _tree_holders(problem: Problem, restarted: Mapping[Slot, frozenset[str]]) -> set[str]:
    """'an acker', 'a spout': which holders of tuple trees restart."""
    spouts = {c.id for c in problem.components if c.type == SPOUT}
    component = {e.id: e.component for e in problem.executors}
    moving = {component.get(e) for executors in restarted.values() for e in executors}
    return ({"an acker"} if ACKER in moving else set()) | ({"a spout"} if moving & spouts else set())


def bottleneck_relief(before: Mapping[str, float], after: Mapping[str, float]) -> tuple[float, str]:
    """(share, why): how much lower the move puts the bottleneck the topology is short of, relative to
    where it was (0 when it is short of nothing, or the bottleneck does not fall). Where both carry the
    capacity model's predicted factor of the measured rate (``capacity_factor``: a capacity planner's gate),
    its rise counts too, as the share of the new rate the old one lacked (a node's utilisation counts fixed
    CPU that no move relieves: moving the per-tuple work off a node at its quota may leave it at 80 % and
    double the rate)."""
    shares = []
    if short_of_cpu(before) and before["max_utilisation"] > 0:
        b, a = before["max_utilisation"], after["max_utilisation"]
        shares.append((1.0 - a / b, f"busiest node {b:.0f} -> {a:.0f} % of its CPU"))
        rate_before, rate_after = before.get("capacity_factor"), after.get("capacity_factor")
        if rate_before is not None and rate_after is not None and 0 < rate_before < rate_after:
            shares.append((1.0 - rate_before / rate_after,
                           f"predicted sustainable rate {rate_before:.3g}x -> {rate_after:.3g}x the measured rate"))
    link_before = before.get("max_network_utilisation", 0.0)
    if short_of_link(before) and link_before > 0:
        a = after.get("max_network_utilisation", 0.0)
        shares.append((1.0 - a / link_before, f"busiest link {link_before:.0f} -> {a:.0f} %"))
    if not shares:
        return 0.0, "short of nothing: no throughput to gain"
    share, why = max(shares)
    return max(0.0, share), f"{why}: {max(0.0, share):.0%} of its work"


def short_for_new_workers(problem: Problem, plan: Mapping[str, Slot]) -> str:
    """Why a node that gets a new worker would run it short of CPU ('' when none would)."""
    used = set(problem.current.values())
    new_slots = {slot for slot in plan.values() if slot not in used}
    if not new_slots:
        return ""
    busy = utilisations(problem, {e: s.node for e, s in plan.items()})
    nodes = {n.id: n for n in problem.nodes}
    for slot in sorted(new_slots):
        node = nodes.get(slot.node)
        if node is None or node.capacity * node.speed <= 0:
            continue
        with_worker = busy[slot.node] + 100.0 * WORKER_BASE_PCT / (node.capacity * node.speed)
        if with_worker >= CPU_PRESSURE_PCT:
            return (f"its new worker on {slot.node} would run at {with_worker:.0f} % of the node's CPU "
                    f"({WORKER_BASE_PCT:g} % of a core for the worker itself): short of CPU")
    return ""
