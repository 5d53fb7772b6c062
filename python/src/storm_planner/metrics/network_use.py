"""Per-node network use of running topologies, from the bytes the task hook counts.

The hook counts, per window, the tuples and estimated payload bytes each task sent to each
destination task (``docs/metrics.md``); each window also says which node (supervisor) the task ran
on. A flow whose source and destination tasks run on different nodes crosses both nodes' links:
it is the sender's upload and the receiver's download. :func:`topology_network_use` sums them for
one topology, :func:`network_use` over several: one pass over the measured flows, O(flows), never
over executor pairs.

:func:`host_link_use` reads the other side: the hook also publishes its host's interface counters
(``host_net``), so two windows from one node give everything its link carried, Storm's tuples and
any other traffic. What a planner must treat as already used on a node's link is then that total
minus the flows of the topology being planned (:func:`link_use_besides`), or, where no host
counters exist, the flows of the other topologies.

The hook's bytes are payload estimates (a string's length, 8 per number, ...); on the wire a tuple
also carries Storm's envelope (destination task, message ids, anchors: Kryo-serialized) and TCP/IP
framing. ``tuple_overhead_bytes`` adds that per tuple; its default was measured on the emulated
network: ``storm-planner bench gma overhead`` found 33.6-47.3 B a tuple (payloads of 32, 400 and 1,500 B
at 800 tuples/s; ``benchmarks/reports/gma.md``, *Wire overhead of a tuple*).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from storm_planner.core import settings
from storm_planner.metrics.windows import TaskWindow

# Bytes a tuple costs on the wire beyond its payload estimate (Storm's envelope and TCP/IP framing
# shared over the tuples of a batch, heartbeats): 34-47 B measured on the emulated network (docstring).
DEFAULT_TUPLE_OVERHEAD_BYTES = settings.TUPLE_OVERHEAD_BYTES.default  # 40


@dataclass(frozen=True)
class NodeTraffic:
    """Mbit/s a node's link carries for the measured topologies: what it sends and receives."""

    sent_mbit: float = 0.0
    received_mbit: float = 0.0

    @property
    def total_mbit(self) -> float:
        """Both directions: the network use the evaluator compares with a node's bandwidth."""
        return self.sent_mbit + self.received_mbit


def topology_network_use(windows: Mapping[int, TaskWindow], *,
                         tuple_overhead_bytes: float = DEFAULT_TUPLE_OVERHEAD_BYTES) -> dict[str, NodeTraffic]:
    """Node -> traffic crossing its link, from one topology's latest window of each task.

    A flow counts when both ends' windows name their node and the nodes differ; flows to a task
    without a window (not started yet, or its worker gone) are left out.
    """
    node_of = {task: w.node for task, w in windows.items() if w.node}
    sent: dict[str, float] = defaultdict(float)
    received: dict[str, float] = defaultdict(float)
    for task, window in windows.items():
        source = node_of.get(task)
        seconds = window.duration_ms / 1000.0
        if source is None or seconds <= 0:
            continue
        for flow in window.sent:
            target = node_of.get(flow.task)
            if target is None or target == source:
                continue
            mbit = (flow.bytes + flow.tuples * tuple_overhead_bytes) * 8 / 1e6 / seconds
            sent[source] += mbit
            received[target] += mbit
    return {node: NodeTraffic(sent.get(node, 0.0), received.get(node, 0.0)) for node in {*sent, *received}}


def network_use(topologies: Iterable[Mapping[int, TaskWindow]], *,
                tuple_overhead_bytes: float = DEFAULT_TUPLE_OVERHEAD_BYTES) -> dict[str, NodeTraffic]:
    """Node -> traffic crossing its link, summed over several topologies (one task map each: task ids
    are only unique within a topology)."""
    return summed(topology_network_use(windows, tuple_overhead_bytes=tuple_overhead_bytes) for windows in topologies)


def summed(per_topology: Iterable[Mapping[str, NodeTraffic]]) -> dict[str, NodeTraffic]:
    """Node -> the sum of several topologies' traffic there."""
    total: dict[str, NodeTraffic] = {}
    for nodes in per_topology:
        for node, traffic in nodes.items():
            before = total.get(node, NodeTraffic())
            total[node] = NodeTraffic(
                before.sent_mbit + traffic.sent_mbit, before.received_mbit + traffic.received_mbit
            )
    return total


def host_link_use(topologies: Iterable[Mapping[int, list[TaskWindow]]]) -> dict[str, NodeTraffic]:
    """Node -> what its host's interfaces carried between two windows of one of its tasks (the most
    recent such pair per node): every byte on the link, not only Storm's."""
    newest: dict[str, tuple[int, NodeTraffic]] = {}
    for windows in topologies:
        for history in windows.values():
            counted = [(w, w.node, host) for w in history if w.node and (host := _host_bytes(w)) is not None]
            if len(counted) < 2:
                continue
            (before, _, (sent_before, received_before)), (after, node, (sent_after, received_after)) = counted[-2:]
            seconds = (after.end_ms - before.end_ms) / 1000.0
            if seconds <= 0 or after.pid != before.pid or received_after < received_before:
                continue   # a restarted worker, or the interface's counters were reset
            if node in newest and newest[node][0] >= after.end_ms:
                continue
            traffic = NodeTraffic(
                sent_mbit=(sent_after - sent_before) * 8 / 1e6 / seconds,
                received_mbit=(received_after - received_before) * 8 / 1e6 / seconds,
            )
            newest[node] = (after.end_ms, traffic)
    return {node: traffic for node, (_, traffic) in newest.items()}


def _host_bytes(window: TaskWindow) -> tuple[int, int] | None:
    """(sent, received): the host interfaces' byte counters at the window's end, when the worker read both."""
    if window.host_sent_bytes is None or window.host_received_bytes is None:
        return None
    return window.host_sent_bytes, window.host_received_bytes


def link_use_besides(own: Mapping[str, NodeTraffic], others: Mapping[str, NodeTraffic],
                     hosts: Mapping[str, NodeTraffic]) -> dict[str, float]:
    """Node -> Mbit/s already used on its link for a topology whose own flows are ``own``: the host's
    measured total less the topology's own flows where host counters exist (never below what the other
    topologies' flows alone account for), else the other topologies' flows."""
    used = {node: traffic.total_mbit for node, traffic in others.items()}
    for node, total in hosts.items():
        mine = own[node].total_mbit if node in own else 0.0
        used[node] = max(used.get(node, 0.0), total.total_mbit - mine)
    return {node: mbit for node, mbit in used.items() if mbit > 1e-9}   # not subtraction's dust
