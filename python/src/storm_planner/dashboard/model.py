"""What the dashboard shows, as plain JSON-ready dicts, built from the planner service's plan log
(and, when given, the live cluster through Nimbus).

The plan log is the one record every deployment has (the service writes it, the end-to-end tests
read it), so the dashboard works from it alone: no cluster is needed to look at what a planner
decided. ``planlog`` reads it (bounded, line by line; a bad line is skipped and counted) into a
:class:`~storm_planner.dashboard.planlog_reader.PlanHistory`: the last records, and each topology's latest plan.

With the cluster read (Nimbus connected), only the topologies it runs are shown, and what runs on each
supervisor comes from Nimbus' current assignments, not from plans of topologies long gone.

Fallbacks: when the service answers with an error, the Nimbus plugin falls back to Storm's
DefaultScheduler for that round, so a plan record carrying ``error`` *is* a fallback and its
``error.kind``/``error.message`` is the cause shown to the user.
"""
from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from storm_planner.dashboard.planlog_reader import PlanHistory

log = logging.getLogger(__name__)

# Executor names: Storm's "[start-end]" task ranges, or the problem file's derived "<component>/<i>".
_DERIVED = re.compile(r"^(?P<component>.+)/(?P<index>\d+)$")

DEFAULT_PAGE_SIZE = 200   # plans (and rebalances, events) a snapshot or one /api/plans page carries


def component_of(executor: str, executor_components: Mapping[str, str] | None = None) -> str:
    """The component an executor belongs to: from the cluster when known, else from its name."""
    if executor_components and executor in executor_components:
        return executor_components[executor]
    match = _DERIVED.match(executor)
    return match.group("component") if match else executor


def split_slot(slot: str) -> tuple[str, int | None]:
    """``"supervisor:port"`` as (supervisor, port); a slot without a port keeps the port None."""
    node, sep, port = str(slot).rpartition(":")
    if not sep:
        return str(slot), None
    try:
        return node, int(port)
    except ValueError:
        return str(slot), None


def plan_summary(record: Mapping[str, Any], index: int) -> dict:
    """One row of the plan history: what was decided, how good, how fast, and why not (fallback)."""
    error = record.get("error")
    assignments = record.get("assignments") or {}
    return {
        "index": index,
        "time": record.get("time"),
        "request_id": record.get("request_id"),
        "topology": record.get("topology"),
        "algorithm": record.get("algorithm"),
        "figures": dict(record.get("figures") or {}),
        "solve_ms": record.get("solve_ms"),
        "notes": list(record.get("notes") or []),
        "executors": len(assignments),
        "slots": sorted(set(assignments.values())),
        "fallback": error is not None,
        "error": error,
        "advice": record.get("advice"),
    }


def topology_view(record: Mapping[str, Any], cluster: Mapping[str, Any] | None = None) -> dict:
    """A topology's latest placement: components and their executors on nodes and slots, and
    the traffic between nodes where the plan's streams cross them (from the cluster's graph
    when known; the plan log alone has no streams)."""
    cluster = cluster or {}
    topo_id = record.get("topology")
    info = (cluster.get("topologies") or {}).get(topo_id, {})
    exec_comp = info.get("executor_components") or {}
    assignments: dict[str, str] = dict(record.get("assignments") or {})
    components: dict[str, list[str]] = defaultdict(list)
    slots: dict[str, list[str]] = defaultdict(list)
    for executor, slot in sorted(assignments.items()):
        components[component_of(executor, exec_comp)].append(executor)
        slots[slot].append(executor)
    nodes: dict[str, dict] = {}
    for slot, executors in sorted(slots.items()):
        node, port = split_slot(slot)
        entry = nodes.setdefault(node, {"node": node, "slots": []})
        entry["slots"].append({"slot": slot, "port": port, "executors": executors,
                               "components": sorted({component_of(e, exec_comp) for e in executors})})
    node_of = {e: split_slot(s)[0] for e, s in assignments.items()}
    traffic: dict[tuple[str, str], float] = defaultdict(float)
    measured = info.get("executor_traffic") or []
    for pair in measured:  # measured executor-pair traffic, when the workers' hook publishes it
        a, b = node_of.get(pair.get("from")), node_of.get(pair.get("to"))
        if a and b and a != b:
            traffic[(a, b)] += float(pair.get("rate") or 0.0)
    for stream in [] if measured else info.get("streams") or []:  # else: estimated from the graph
        src, dst = stream.get("from"), stream.get("to")
        src_nodes = [node_of[e] for e in components.get(src, [])]
        dst_nodes = [node_of[e] for e in components.get(dst, [])]
        pairs = [(a, b) for a in src_nodes for b in dst_nodes]
        rate = float(stream.get("rate") or 1.0)
        for a, b in pairs:
            if a != b:
                traffic[(a, b)] += rate / len(pairs)
    return {
        "id": topo_id,
        "name": info.get("name", topo_id),
        "algorithm": record.get("algorithm"),
        "time": record.get("time"),
        "fallback": record.get("error") is not None,
        "error": record.get("error"),
        "components": [{"id": c, "executors": ex} for c, ex in sorted(components.items())],
        "streams": list(info.get("streams") or []),
        "nodes": list(nodes.values()),
        "traffic_source": "measured" if measured else ("estimated from streams" if traffic else None),
        "node_traffic": [{"from": a, "to": b, "rate": round(r, 3)} for (a, b), r in sorted(traffic.items())],
        "figures": dict(record.get("figures") or {}),
    }


def current_assignments(history: PlanHistory, cluster: Mapping[str, Any] | None = None) -> dict[str, dict]:
    """Topology -> executor -> slot ("supervisor:port") of what runs now. With Nimbus read: the topologies
    it runs, placed as Nimbus reports (its host:port mapped to a supervisor's slot), else as their latest
    plan; a topology Nimbus no longer runs counts nowhere. Without Nimbus: each topology's latest plan."""
    cluster = cluster or {}
    if not cluster.get("connected") and cluster.get("topologies") is None:
        return {topo: dict(record["assignments"]) for topo, record in history.latest_good.items()}
    slot_at = _slots_by_address(cluster.get("supervisors") or [])
    current = {}
    for topo, info in (cluster.get("topologies") or {}).items():
        live = {executor: slot_at.get(split_slot(address)) for executor, address in (info.get("placement") or {}).items()}
        if live and None not in live.values():
            current[topo] = live
        elif topo in history.latest_good:
            current[topo] = dict(history.latest_good[topo]["assignments"])
    return current


def _slots_by_address(supervisors: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int | None], str]:
    """(host, port) -> "supervisor:port", for the supervisors whose host and slots are known."""
    return {(sup["host"], split_slot(slot)[1]): slot
            for sup in supervisors if sup.get("host") for slot in sup.get("slots") or []}


def supervisors_view(history: PlanHistory, cluster: Mapping[str, Any] | None = None) -> list[dict]:
    """Supervisors grouped by what is known: the cluster's own description (capacity, slots, meta,
    declared use) when connected, else the nodes and slots the plans used; the executors on each are
    those that run now (:func:`current_assignments`). Measured load is the sum of the executors' loads
    where the cluster reports it."""
    cluster = cluster or {}
    used: dict[str, set[str]] = defaultdict(set)
    executors_on: dict[str, int] = defaultdict(int)
    measured_cpu: dict[str, float] = defaultdict(float)
    declared_cpu: dict[str, float] = defaultdict(float)
    topologies = cluster.get("topologies") or {}
    for topo_id, assignments in current_assignments(history, cluster).items():
        cpu = (topologies.get(topo_id) or {}).get("executor_cpu") or {}
        declared = (topologies.get(topo_id) or {}).get("executor_declared_cpu") or {}
        for executor, slot in assignments.items():
            node, _port = split_slot(slot)
            used[node].add(slot)
            executors_on[node] += 1
            if executor in cpu:
                measured_cpu[node] += float(cpu[executor])
            if executor in declared:
                declared_cpu[node] += float(declared[executor])
    known = {s["id"]: dict(s) for s in cluster.get("supervisors") or []}
    for node in used:
        known.setdefault(node, {"id": node, "host": None, "machine_type": "unknown", "slots": []})
    result = []
    for node_id, sup in sorted(known.items()):
        slots = sorted(set(sup.get("slots") or []) | used.get(node_id, set()))
        result.append({**sup, "id": node_id, "machine_type": sup.get("machine_type") or "unknown",
                       "slots": slots, "used_slots": sorted(used.get(node_id, set())),
                       "planned_executors": executors_on.get(node_id, 0),
                       "measured_cpu": round(measured_cpu[node_id], 2) if node_id in measured_cpu else None,
                       # Nimbus' own figure (used_cpu) when it reports one, else the plans' executors'.
                       "declared_cpu": sup.get("declared_cpu") if sup.get("declared_cpu") is not None
                       else (round(declared_cpu[node_id], 2) if node_id in declared_cpu else None)})
    return result


def snapshot(records: PlanHistory | list[dict], cluster: Mapping[str, Any] | None = None,
             reports: list[dict] | None = None, page_size: int = DEFAULT_PAGE_SIZE) -> dict:
    """Everything the page shows, in one JSON object (one request per refresh): every topology's latest
    placement, and the last ``page_size`` plans, rebalances and other events (``plans_total`` counts all)."""
    history = records if isinstance(records, PlanHistory) else PlanHistory.of(records)
    numbered = [(index, record) for index, record in history.entries if index is not None]
    summaries = [plan_summary(record, index) for index, record in numbered[-page_size:]]
    events = [record for index, record in history.entries if index is None]
    # With Nimbus read, a topology it no longer runs (killed, or from an earlier run of the same
    # cluster: the plan log outlives `cluster up`) leaves the page; its plans stay in the history.
    # (Nimbus briefly away: what ran at its last answer.)
    known = (cluster or {}).get("topologies")
    running = set(known or {}) if (cluster or {}).get("connected") or known is not None else None
    finished = sorted(t for t in history.latest if running is not None and t not in running)
    # A topology whose last round fell back still shows its last good placement, flagged.
    topologies = []
    for topo, record in sorted(history.latest.items()):
        if topo in finished:
            continue
        view = topology_view(history.latest_good.get(topo, record), cluster)
        view["last_round_fallback"] = record.get("error") is not None
        view["last_error"] = record.get("error")
        view["rounds"] = history.rounds.get(topo, 0)
        topologies.append(view)
    return {
        "cluster": {k: v for k, v in (cluster or {}).items() if k not in ("topologies", "supervisors")},
        "supervisors": supervisors_view(history, cluster),
        "topologies": topologies,
        "finished_topologies": finished[-page_size:],
        "plans": summaries,
        "plans_total": history.plans,
        "fallbacks": [s for s in summaries if s["fallback"]],
        "rebalances": [r for r in events if r.get("event") == "rebalance"][-page_size:],
        "other_events": [r for r in events if r.get("event") != "rebalance"][-page_size:],
        "reports": reports or [],
    }
