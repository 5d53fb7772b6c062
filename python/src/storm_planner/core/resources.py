"""Plans within what each node has left and what one worker may hold.

Storm's ResourceAwareScheduler accounts every executor's *declared* CPU and
memory (``topology.component.cpu.pcore.percent``, on- and off-heap memory)
against each supervisor's ``supervisor.cpu.capacity`` and
``supervisor.memory.capacity.mb``, after what other topologies already hold
there, and no worker may hold more than ``topology.worker.max.heap.size.mb``.
A planner that balances measured load knows nothing of that, so
:func:`fit_to_resources` runs after it:

1. **nodes**: while a node holds more than it has left (declared CPU, when the
   executors declare it; memory, when nodes state theirs), executors leave it,
   last placed first, for the node that takes them and holds most of what they
   exchange tuples with (their streams' partners, the acker's included), else
   the node with the most CPU left that takes them. When the loads are
   measured, a destination (and a swap after the relief) must also keep the
   node's measured load within its CPU (``planner.max.cpu.utilisation`` of it
   when set) where some node can: the declared CPU is Storm's accounting, the
   measured load what the node really runs, and the planner's plan fitted the
   latter (on the end-to-end bench, moves by declared CPU alone put a 35 %
   node's measured load at 106 % of it);
2. **workers**: on each node whose workers would hold more than the heap
   limit, executors are split into workers so that the tuples they exchange
   stay inside one (:mod:`~storm_planner.core.worker_split`), or first-fit by
   decreasing memory when that needs fewer workers, on the ports the plan
   chose there first, then the topology's current ports, then the node's
   others; a node short of ports is infeasible.

When no node takes an executor, the topology gets :class:`InfeasibleError`
(the plugin's INFEASIBLE status, as RAS reports it) rather than an
overloaded node. Both steps are greedy (bin packing is NP-hard): a placement
within the limits may exist that they miss; Storm's RAS is greedy the same way.

Complexity: O(E + N) when the plan fits (a set look-up per node), O(E log N + moved · log N) when
executors must move, for E executors and N nodes.
"""
from __future__ import annotations

import dataclasses
import heapq
import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.problem import Executor, Node, Problem, Slot
from storm_planner.core.swap_refine import MAX_PAIRS, SwapFits, refine_by_swaps, rejoin_lone_ackers
from storm_planner.core.utilisation import cpu_room
from storm_planner.core.worker_split import pair_rates, split_by_traffic

EPSILON = 1e-9


@dataclass
class _Room:
    """What one node has left for this topology, and what the plan puts there."""

    node: Node
    cpu_left: float
    memory_left: float
    members: list[str]
    load_left: float = math.inf   # measured load (reference-core %) it may still take: measured problems only

    def takes(self, cpu: float, memory: float, load: float | None = None) -> bool:
        """Whether (cpu, memory) fit what is left; with ``load``, its measured load too."""
        return (cpu <= self.cpu_left + EPSILON and memory <= self.memory_left + EPSILON
                and (load is None or load <= self.load_left + EPSILON))


# Capacity left to a full node that still runs some of this topology: enough to express draining it.
_SLIVER = 1e-3


def without_full_nodes(problem: Problem) -> Problem:
    """The problem as a resource-aware planner should see it: no node other work fills completely.

    A node with no CPU left is no place for this topology: it is dropped, or, when some of this
    topology runs there now, kept as a node marked for removal (Madsen et al.'s term) with a sliver
    of capacity, so the planners move its executors off it.
    """
    if all(n.effective_capacity > EPSILON for n in problem.nodes):
        return problem
    running_on = {slot.node for slot in problem.current.values()}
    nodes = []
    for node in problem.nodes:
        if node.effective_capacity > EPSILON:
            nodes.append(node)
        elif node.id in running_on:
            nodes.append(dataclasses.replace(node, draining=True, used_cpu=node.capacity - _SLIVER))
    if not nodes:
        raise InfeasibleError(f"topology {problem.topology_id}: other topologies hold every node's CPU")
    return problem.replace(nodes=tuple(nodes))


def declares_cpu(problem: Problem) -> bool:
    """Whether CPU is accounted as Storm's RAS does: every executor declares it."""
    return bool(problem.executors) and all(e.cpu is not None for e in problem.executors)


def constrained(problem: Problem, declared: bool) -> bool:
    """Whether there is anything to fit: declared CPU, node memory with executor memory, or a heap limit."""
    memory = any(n.memory is not None for n in problem.nodes) and any(e.memory for e in problem.executors)
    heap = problem.options.worker_max_heap_mb is not None and any(e.memory for e in problem.executors)
    return declared or memory or heap


def fit_to_resources(problem: Problem, assignments: Mapping[str, Slot],
                     declared_cpu: bool = True) -> tuple[Mapping[str, Slot], list[str]]:
    """``assignments`` moved and split as little as needed to respect every node's and worker's limits
    (``declared_cpu`` False: memory and the heap limit only, not the executors' declared CPU)."""
    declared = declared_cpu and declares_cpu(problem)  # once: a pass over the executors
    if not constrained(problem, declared):
        return assignments, []
    executors = {e.id: e for e in problem.executors}
    cpu_of = _cpu_demand(problem, declared)
    rooms = _rooms(problem, assignments, executors, cpu_of, declared)
    notes = []
    moved, between = _relieve(rooms, executors, cpu_of, problem, declared)
    swapped, rejoined = _refine(problem, rooms, executors, cpu_of, between) if moved else (0, 0)
    slots, split = _pack_workers(problem, rooms, executors, assignments)
    if moved:
        notes.append(f"{moved} executor(s) moved off nodes over their free "
                     f"{'declared CPU or ' if declared else ''}memory"
                     + (f", then {swapped} swap(s) of equal-demand executors kept more traffic inside a node"
                        if swapped else "")
                     + (f"; {rejoined} acker(s) left alone on a node traded places with an executor they serve"
                        if rejoined else ""))
    if split:
        notes.append(f"{split} node(s) run several workers to keep each within "
                     f"{problem.options.worker_max_heap_mb:g} MB (topology.worker.max.heap.size.mb)")
    return MappingProxyType(slots), notes


def _refine(problem: Problem, rooms: dict[str, _Room], executors: Mapping[str, Executor],
            cpu_of: Mapping[str, float], between: list[tuple[str, str]]) -> tuple[int, int]:
    """After the relief: swaps that keep more traffic inside a node, then no node of ackers alone
    (:mod:`~storm_planner.core.swap_refine`). Returns (swaps, acker trades)."""
    members = {node: room.members for node, room in rooms.items()}
    component = {e: executors[e].component for e in executors}
    demand = {e: (cpu_of[e], executors[e].memory) for e in executors}
    rates = pair_rates(problem)
    fits = _measured_fits(problem, rooms, executors)
    swapped = refine_by_swaps(members, component, demand, rates, _swap_pairs(rooms, between), fits)
    return swapped, rejoin_lone_ackers(members, component, demand, rates, fits=fits)


def _measured_fits(problem: Problem, rooms: Mapping[str, _Room], executors: Mapping[str, Executor]) -> SwapFits | None:
    """For measured loads: whether x (on a) and y (on b) may trade places, keeping each node's measured load
    within its room or, where it is over already, not adding to it. Executors of equal declared demand
    may run very different loads (trends: a count at 18 % of a core, a rank at 5 %). None: not measured."""
    if not problem.loads_known:
        return None
    room_of = {node: _load_room(problem, room.node) for node, room in rooms.items()}

    def held(node: str) -> float:
        return sum(executors[e].load for e in rooms[node].members)

    def fits(x: str, a: str, y: str, b: str) -> bool:
        delta = executors[y].load - executors[x].load   # what node a gains, node b loses
        return ((delta <= EPSILON or held(a) + delta <= room_of[a] + EPSILON)
                and (-delta <= EPSILON or held(b) - delta <= room_of[b] + EPSILON))
    return fits


def _load_room(problem: Problem, node: Node) -> float:
    """The measured load (reference-core %) ``node`` may hold of this topology: its CPU within D_CPU."""
    return max(0.0, cpu_room(node, problem.options))


def _swap_pairs(rooms: Mapping[str, _Room], between: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The node pairs the swaps look at: those the relief moved executors between, then each node it moved
    executors onto with every other node holding some of the topology, at most ``MAX_PAIRS`` in all.

    The relief's own pairs alone left the quota-held trends topology's two ackers alone on an i5 (every
    message they handle crossing its link): the executor that could trade places with them sat on a third
    node. O(pairs) beyond the rooms: never more than ``MAX_PAIRS`` are made.
    """
    pairs = list(dict.fromkeys(between))
    known = set(pairs)
    held = [node for node, room in rooms.items() if room.members]
    for target in dict.fromkeys(to for _, to in between):
        for node in held:
            if len(pairs) >= MAX_PAIRS:
                return pairs
            if node != target and (node, target) not in known and (target, node) not in known:
                pairs.append((target, node))
                known.add((target, node))
    return pairs


def _cpu_demand(problem: Problem, declared: bool) -> dict[str, float]:
    """Declared CPU per executor, or nothing to account (0) when the executors do not declare it."""
    if declared:
        return {e.id: float(e.cpu or 0.0) for e in problem.executors}  # declared: every cpu is set
    return defaultdict(float)


def _rooms(problem: Problem, assignments: Mapping[str, Slot], executors: Mapping[str, Executor],
           cpu_of: Mapping[str, float], declared: bool) -> dict[str, _Room]:
    """The nodes the plan uses, by id, with what is left on each after it."""
    used = sorted({slot.node for slot in set(assignments.values())})  # by id: a fixed order, O(used) not O(N)
    rooms = {node_id: _room(problem, problem.node(node_id), declared) for node_id in used}
    for executor_id, slot in assignments.items():
        room = rooms[slot.node]
        room.members.append(executor_id)
        room.cpu_left -= cpu_of[executor_id]
        room.memory_left -= executors[executor_id].memory if executor_id in executors else 0.0
        room.load_left -= executors[executor_id].load if executor_id in executors else 0.0
    return rooms


def _room(problem: Problem, node: Node, declared: bool) -> _Room:
    heap = problem.options.worker_max_heap_mb
    cpu_left = max(0.0, node.capacity - node.used_cpu) if declared else math.inf
    memory_left = math.inf if node.free_memory is None else node.free_memory
    if heap is not None:
        memory_left = min(memory_left, heap * len(node.slots))
    return _Room(node, cpu_left, memory_left, [], _load_room(problem, node) if problem.loads_known else math.inf)


def _relieve(rooms: dict[str, _Room], executors: Mapping[str, Executor], cpu_of: Mapping[str, float], problem: Problem,
             declared: bool) -> tuple[int, list[tuple[str, str]]]:
    """Move executors off every node over its limits; returns how many moved and the (from, to) node
    pairs they moved between."""
    over = [room for room in rooms.values() if room.cpu_left < -EPSILON or room.memory_left < -EPSILON]
    if not over:
        return 0, []
    # Destinations by most CPU left (ties: most memory left); draining nodes take nothing. Nodes the
    # plan left empty get their rooms only now: most plans fit and never need them.
    for node in problem.nodes:
        if node.id not in rooms:
            rooms[node.id] = _room(problem, node, declared)
    over_ids = {room.node.id for room in over}
    queue = [(-r.cpu_left, -r.memory_left, r.node.id) for r in rooms.values()
             if not r.node.draining and r.node.id not in over_ids]
    heapq.heapify(queue)
    partners = _Partners(problem, rooms, executors)
    moved, between = 0, []
    for room in over:
        while room.cpu_left < -EPSILON or room.memory_left < -EPSILON:
            executor_id = room.members.pop()
            cpu, memory, load = cpu_of[executor_id], executors[executor_id].memory, executors[executor_id].load
            room.cpu_left += cpu
            room.memory_left += memory
            room.load_left += load
            partners.left(executor_id, room.node.id)
            # Within its measured load too where a node can take it (module docstring), else as before.
            target = (partners.best_room(executor_id, cpu, memory, exclude=over_ids, load=load)
                      or _take_room(queue, rooms, cpu, memory, load)
                      or partners.best_room(executor_id, cpu, memory, exclude=over_ids)
                      or _take_room(queue, rooms, cpu, memory))
            if target is None:
                raise InfeasibleError(_shortfall(problem, rooms, executor_id, cpu, memory, declared))
            target.members.append(executor_id)
            target.cpu_left -= cpu
            target.memory_left -= memory
            target.load_left -= load
            partners.arrived(executor_id, target.node.id)
            heapq.heappush(queue, (-target.cpu_left, -target.memory_left, target.node.id))
            moved += 1
            between.append((room.node.id, target.node.id))
    return moved, between


class _Partners:
    """Where an executor that must leave a full node goes: to the node holding most of what it talks to.

    Affinity of a node = Σ over the components its stream partners (either direction, the acker's
    streams included) of rate × (their executors on the node) / (their executors): the traffic that
    would stay inside the node. Only nodes already holding a partner are looked at, at most
    ``MAX_CANDIDATES`` of them (else, and when none takes it, the roomiest node, as before), so a move
    costs O(partners' nodes), never a pass over the cluster.
    """

    MAX_CANDIDATES = 64

    def __init__(self, problem: Problem, rooms: dict[str, _Room], executors: Mapping[str, Executor]) -> None:
        self.rooms = rooms
        self.component = {e: executors[e].component for room in rooms.values() for e in room.members
                          if e in executors}
        # Per executor pair; for one moving executor that is its component's rate to each partner
        # executor scaled by a constant, so the nodes rank the same.
        self.rate = pair_rates(problem)
        self.count: dict[str, Counter[str]] = defaultdict(Counter)   # component -> node -> executors there
        for room in rooms.values():
            for e in room.members:
                if e in self.component:
                    self.count[self.component[e]][room.node.id] += 1

    def left(self, executor_id: str, node_id: str) -> None:
        component = self.component.get(executor_id)
        if component is not None:
            self.count[component][node_id] -= 1

    def arrived(self, executor_id: str, node_id: str) -> None:
        component = self.component.get(executor_id)
        if component is not None:
            self.count[component][node_id] += 1

    def best_room(self, executor_id: str, cpu: float, memory: float, exclude: set[str],
                  load: float | None = None) -> _Room | None:
        partners = self.rate.get(self.component.get(executor_id, ""), {})
        affinity: dict[str, float] = defaultdict(float)
        for partner, rate in partners.items():
            for node_id, count in self.count[partner].items():
                if count > 0 and node_id not in exclude:
                    affinity[node_id] += rate * count
            if len(affinity) > self.MAX_CANDIDATES:
                return None
        for node_id, _ in sorted(affinity.items(), key=lambda item: (-item[1], item[0])):
            room = self.rooms[node_id]
            if not room.node.draining and room.takes(cpu, memory, load):
                return room
        return None


def _take_room(queue: list[tuple[float, float, str]], rooms: dict[str, _Room], cpu: float,
               memory: float, load: float | None = None) -> _Room | None:
    """Pop the roomiest node that takes (cpu, memory[, load]); the others popped on the way go back."""
    passed = []
    found = None
    while queue:
        entry = heapq.heappop(queue)
        room = rooms[entry[2]]
        if (-entry[0], -entry[1]) != (room.cpu_left, room.memory_left):
            continue  # stale entry: the room changed since
        if room.takes(cpu, memory, load):
            found = room
            break
        passed.append(entry)
        if -entry[0] < cpu - EPSILON:
            break  # no node further down has more CPU
    for entry in passed:
        heapq.heappush(queue, entry)
    return found


def _shortfall(problem: Problem, rooms: Mapping[str, _Room], executor_id: str, cpu: float, memory: float,
               declared: bool) -> str:
    usable = [r for r in rooms.values() if not r.node.draining]
    needs = f"{memory:g} MB" + (f", {cpu:g} % CPU" if declared else "")
    left = f"{sum(max(0.0, r.memory_left) for r in usable):.0f} MB"
    if declared:
        left += f" and {sum(max(0.0, r.cpu_left) for r in usable):.0f} % CPU"
    heap = problem.options.worker_max_heap_mb
    return (f"topology {problem.topology_id}: no node has room for executor {executor_id} ({needs}) besides "
            f"what other topologies hold; {len(usable)} node(s) have {left} left in all"
            + (f" (workers of at most {heap:g} MB)" if heap is not None else ""))


def _pack_workers(problem: Problem, rooms: dict[str, _Room], executors: Mapping[str, Executor],
                  assignments: Mapping[str, Slot]) -> tuple[dict[str, Slot], int]:
    """Executor → slot: the plan's slot where it holds, workers packed under the heap limit elsewhere."""
    heap = problem.options.worker_max_heap_mb
    current_ports: defaultdict[str, list[int]] = defaultdict(list)
    for slot in problem.current.values():
        if slot.port not in current_ports[slot.node]:
            current_ports[slot.node].append(slot.port)
    # Most rooms keep the plan's slots: start from them and rewrite only the rooms that change.
    slots: dict[str, Slot] = dict(assignments)
    split = 0
    rates: dict[str, dict[str, float]] | None = None
    for room in rooms.values():
        if not room.members:
            continue
        chosen = [assignments[e].port for e in room.members
                  if e in assignments and assignments[e].node == room.node.id]
        if heap is None or _within_heap(room.members, chosen, executors, heap):
            if len(chosen) == len(room.members):
                continue  # every member keeps the plan's slot
            default = _ports_by_preference(room.node, chosen, current_ports)[0]
            for executor_id, port in zip(room.members, chosen + [default] * (len(room.members) - len(chosen))):
                slots[executor_id] = Slot(room.node.id, port)
            continue
        if rates is None:
            rates = pair_rates(problem)  # once, and only when some node must split
        workers = _split(room.members, executors, heap, rates)
        ports = _ports_by_preference(room.node, chosen, current_ports)
        if len(workers) > len(ports):
            raise InfeasibleError(
                f"topology {problem.topology_id}: node {room.node.id} needs {len(workers)} workers of at most "
                f"{heap:g} MB and has {len(ports)} slot(s)")
        split += len(workers) > 1
        for worker, port in zip(workers, ports):
            for executor_id in worker:
                slots[executor_id] = Slot(room.node.id, port)
    return slots, split


def _split(members: list[str], executors: Mapping[str, Executor], heap: float,
           rates: Mapping[str, Mapping[str, float]]) -> list[list[str]]:
    """Workers by traffic (:mod:`~storm_planner.core.worker_split`) unless that needs more than first fit."""
    by_memory = _first_fit(members, executors, heap)
    if len(by_memory) <= 1:
        return by_memory
    by_traffic = split_by_traffic(members, executors, heap, rates)
    return by_traffic if len(by_traffic) <= len(by_memory) else by_memory


def _within_heap(members: list[str], ports: list[int], executors: Mapping[str, Executor], heap: float) -> bool:
    if len(ports) != len(members):
        return False  # some members were moved here: their slots are to be chosen
    per_port: dict[int, float] = defaultdict(float)
    for executor_id, port in zip(members, ports):
        per_port[port] += executors[executor_id].memory
    return all(total <= heap + EPSILON for total in per_port.values())


def _first_fit(members: list[str], executors: Mapping[str, Executor], heap: float) -> list[list[str]]:
    """Workers of at most ``heap`` MB, first fit by decreasing memory (stable for equal sizes)."""
    workers: list[list[str]] = []
    loads: list[float] = []
    for executor_id in sorted(members, key=lambda e: -executors[e].memory):
        memory = executors[executor_id].memory
        for k, load in enumerate(loads):
            if load + memory <= heap + EPSILON:
                workers[k].append(executor_id)
                loads[k] += memory
                break
        else:
            workers.append([executor_id])
            loads.append(memory)
    return workers


def _ports_by_preference(node: Node, chosen: list[int], current_ports: Mapping[str, list[int]]) -> list[int]:
    """The plan's ports on the node, then the topology's current ones there, then the node's others."""
    ordered = dict.fromkeys([*chosen, *current_ports.get(node.id, ()), *node.slots])
    own = set(node.slots)
    return [p for p in ordered if p in own] or [node.slots[0]]
