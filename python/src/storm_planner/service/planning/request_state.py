"""What the topologies of one request hold while the service plans them one by one.

Each topology of a request is planned on its own, in request order. :class:`RequestState` keeps what the
earlier plans of the request took, so that later topologies see it:

* **slots**: a slot promised to an earlier topology is taken out of the nodes later ones see, so two
  topologies never get the same slot in one round; a topology always sees the slots it holds now;
* **declared CPU and memory**: the plugin reports, per node, what topologies *outside* the request hold
  (``Node.used_cpu``/``used_memory_mb``). The request's own topologies share the rest: while topology k is
  planned, each other one holds either its new plan (planned before k) or its current placement (still to
  be planned, or left where it is when its planning failed), so two plans of one request never count the
  same capacity twice.

:meth:`RequestState.view_for` gives a topology the nodes as it sees them; :meth:`RequestState.commit`
records what its plan took. Per topology only the nodes that can differ from the previous view are built
again (where slots were taken or held resources changed since, where this or the previous topology runs):
O(nodes it touches), mostly dictionary look-ups, instead of converting every node and filtering every
port each time.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from storm_planner.core.problem import Node
from storm_planner.service.planning.admission import check_node, meta_number


class RequestState:
    """One request's supervisors and what its topologies hold on them, for planning them one by one."""

    def __init__(self, nodes: Iterable[Any], topologies: Iterable[Any] = ()) -> None:
        self.nodes = list(nodes)
        self._position = {n.id: k for k, n in enumerate(self.nodes)}
        self._free = {n.id: frozenset(n.free_ports) for n in self.nodes}
        self._taken: dict[str, set[int]] = {}
        # Per topology and node, its declared [CPU %, MB]; per node the sum over the request's topologies.
        self._held: dict[str, dict[str, list[float]]] = {
            spec.id: declared_use(spec, spec.current or {}) for spec in topologies}
        self._total: dict[str, list[float]] = {}
        self._changed: set[str] = set()               # nodes whose taken ports or totals changed since the
        self._previous_own: set[str] = set()          # last view; the nodes the previous topology ran on or held
        for per_node in self._held.values():
            self._add(per_node, 1.0)
        # Per node, the last view built and what it was built from: consecutive topologies of a request
        # see most nodes alike (a plan changes only the nodes it lands on).
        self._last: dict[str, tuple[tuple[Any, ...], Node | None]] = {}
        self._view: list[Node | None] | None = None   # the last answer, by node position

    def view_for(self, spec: Any) -> list[Node]:
        """The nodes as ``spec``'s topology sees them, in request order: the slots earlier plans took left
        out, its own slots kept, and what the request's other topologies hold added to each node's use
        (nodes with no slot for it left out)."""
        own_ports: dict[str, set[int]] = {}
        for slot in (spec.current or {}).values():
            own_ports.setdefault(slot.node_id, set()).add(slot.port)
        own_use = self._held.get(spec.id, {})
        own = set(own_ports) | set(own_use)
        if self._view is None:
            self._view = [self._node_view(node, own_ports, own_use) for node in self.nodes]
        else:
            for node_id in self._changed | self._previous_own | own:
                position = self._position.get(node_id)
                if position is not None:
                    self._view[position] = self._node_view(self.nodes[position], own_ports, own_use)
        self._changed, self._previous_own = set(), own
        return list(filter(None, self._view))

    def commit(self, spec: Any, assignments: Mapping[str, Any]) -> None:
        """``spec``'s plan (executor -> Thrift slot) takes its slots and holds what it places; a failed plan
        (no assignments) leaves the topology where it is."""
        if not assignments:
            return
        for slot in assignments.values():
            self._taken.setdefault(slot.node_id, set()).add(slot.port)
            self._changed.add(slot.node_id)
        self._add(self._held.get(spec.id, {}), -1.0)
        self._held[spec.id] = declared_use(spec, assignments)
        self._add(self._held[spec.id], 1.0)

    def _held_by_others(self, node_id: str, own_use: Mapping[str, list[float]]) -> tuple[float, float]:
        total = self._total.get(node_id)
        if total is None:
            return (0.0, 0.0)
        own = own_use.get(node_id)
        return (total[0], total[1]) if own is None else (total[0] - own[0], total[1] - own[1])

    def _node_view(self, node: Any, own_ports: Mapping[str, set[int]],
                   own_use: Mapping[str, list[float]]) -> Node | None:
        taken, own = self._taken.get(node.id), own_ports.get(node.id)
        held = self._held_by_others(node.id, own_use)
        key = (len(taken) if taken else 0, frozenset(own) if own else None, held)
        last = self._last.get(node.id)
        if last is None or last[0] != key:  # ports only ever get taken: their count tells
            ports = (self._free[node.id] - taken if taken else self._free[node.id]) | (own or set())
            last = self._last[node.id] = (key, node_from_thrift(node, ports, held) if ports else None)
        return last[1]

    def _add(self, per_node: Mapping[str, list[float]], sign: float) -> None:
        for node, (cpu, memory) in per_node.items():
            sums = self._total.setdefault(node, [0.0, 0.0])
            sums[0] += sign * cpu
            sums[1] += sign * memory
        self._changed.update(per_node)


def node_from_thrift(node: Any, ports: Iterable[int], held: tuple[float, float] = (0.0, 0.0)) -> Node:
    """A supervisor as a problem node; ``held`` is (CPU %, MB) that other topologies of the request hold."""
    check_node(node)
    meta = dict(node.meta or {})
    speed = meta_number(node, meta, "speed")
    return Node(
        id=node.id,
        capacity=float(node.cpu_capacity) if node.cpu_capacity and node.cpu_capacity > 0 else 100.0,
        machine_type=meta.get("machine.type", "default"),
        speed=speed if speed and speed > 0 else 1.0,
        slots=tuple(sorted(set(ports))),
        memory=float(node.memory_mb) if node.memory_mb and node.memory_mb > 0 else None,
        host=node.host,
        used_cpu=float(node.used_cpu or 0.0) + held[0],
        used_memory=float(node.used_memory_mb or 0.0) + held[1],
        bandwidth=_bandwidth(node, meta),
        used_bandwidth=float(node.used_bandwidth_mbit or 0.0),
    )


def _bandwidth(node: Any, meta: Mapping[str, str]) -> float | None:
    """The node's link capacity in Mbit/s: the request's field, else scheduler meta ``network.bandwidth.mbit``."""
    bandwidth = node.bandwidth_mbit if node.bandwidth_mbit is not None else meta_number(
        node, meta, "network.bandwidth.mbit")
    return float(bandwidth) if bandwidth is not None and bandwidth > 0 else None


def declared_use(spec: Any, assignments: Mapping[str, Any]) -> dict[str, list[float]]:
    """Per node, the declared [CPU %, MB] of ``spec``'s executors placed by ``assignments`` (id → Thrift slot)."""
    per_node: dict[str, list[float]] = {}
    for executor in spec.executors:
        slot = assignments.get(executor.id)
        if slot is None:
            continue
        use = per_node.setdefault(slot.node_id, [0.0, 0.0])
        use[0] += float(executor.cpu or 0.0)
        use[1] += float(executor.memory_mb or 0.0)
    return per_node
