"""The topology page (``/topology?id=...``, ``/api/topology?id=...``): Storm UI's topology summary,
component table and supervisors, from the kit's own metrics, with the topology's trend and its plans
on one time axis.

Figures "now" are the newest complete time step of :mod:`.timeline`; totals ("since the workers
started") add up the newest window of each task (a worker that restarts starts again from 0).
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from storm_planner.dashboard.aggregate import SYSTEM_PREFIX
from storm_planner.dashboard.timeline import TopologyTimeline, plan_markers, with_before_after
from storm_planner.metrics.network_use import host_link_use, topology_network_use
from storm_planner.metrics.windows import TaskWindow

BANDWIDTH_META = "network.bandwidth.mbit"   # a supervisor's link rate, where the network is emulated
MAX_PROBLEMS_SHOWN = 20


def topology_page(topology_id: str, *, timeline: TopologyTimeline | None, info: Mapping[str, Any],
                  records: Iterable[Mapping[str, Any]], supervisors: list[dict], metrics: Mapping[str, Any],
                  settle_s: float, marker_limit: int, now: float | None = None) -> dict:
    """Everything the topology page shows, as JSON-ready dicts. ``info`` is Nimbus' view of the topology
    (may be empty), ``records`` the plan log kept, ``supervisors`` the snapshot's supervisors, ``metrics``
    the metrics store's state of this topology (connected, problems, ...)."""
    now = time.time() if now is None else now
    steps = list(timeline.steps) if timeline else []
    latest = timeline.latest if timeline else None
    windows = dict(timeline.latest_windows) if timeline else {}
    markers = with_before_after(plan_markers(records, topology_id, marker_limit), steps, settle_s)
    return {
        "id": topology_id,
        "name": info.get("name") or topology_id,
        "status": info.get("status"),
        "summary": _summary(info, windows, latest, now, timeline.first_start_ms if timeline else None),
        "components": _components(info, latest),
        "supervisors": _supervisors(supervisors, windows, timeline),
        "steps": steps,
        "step_s": (timeline.step_ms / 1000.0) if timeline and timeline.step_ms else None,
        "markers": markers,
        "settle_s": settle_s,
        "metrics": {**metrics, "future_windows_ignored": timeline.ignored if timeline else 0},
    }


def _summary(info: Mapping[str, Any], windows: Mapping[int, TaskWindow], latest, now: float,
             started: int | None) -> dict:
    workers = {(w.node, w.worker, w.pid) for w in windows.values()}
    spouts = set(info.get("spouts") or []) or ({c.component for c in latest.components if c.spout} if latest else set())
    return {
        "uptime_s": info.get("uptime_secs") if info.get("uptime_secs") is not None
        else (round(now - started / 1000.0) if started else None),
        "uptime_source": "Nimbus" if info.get("uptime_secs") is not None else "since the first window read",
        "workers": info.get("num_workers") if info.get("num_workers") is not None else len(workers) or None,
        "executors": info.get("num_executors") if info.get("num_executors") is not None
        else len(windows) or None,
        "tasks": info.get("num_tasks"),
        "now": latest.to_dict() if latest else None,
        "totals": {
            "emitted": sum(w.emitted_total for w in windows.values()),
            "transferred": sum(f.total for w in windows.values() for f in w.sent),
            "acked": sum(w.acked_total for w in windows.values() if w.component in spouts),
            "failed": sum(w.failed_total for w in windows.values() if w.component in spouts),
        },
    }


def _components(info: Mapping[str, Any], latest) -> list[dict]:
    executors_of: dict[str, int] = defaultdict(int)
    for component in (info.get("executor_components") or {}).values():
        executors_of[component] += 1
    if latest is None:
        return [{"component": c, "executors": n, "system": c.startswith(SYSTEM_PREFIX)}
                for c, n in sorted(executors_of.items())]
    rows = []
    for c in latest.components:
        rows.append({
            "component": c.component, "spout": c.spout, "system": c.system,
            "executors": executors_of.get(c.component) or c.executors,
            "emitted_per_s": round(c.emitted_per_s, 3), "executed_per_s": round(c.executed_per_s, 3),
            "acked_per_s": round(c.acked_per_s, 3), "failed_per_s": round(c.failed_per_s, 3),
            "execute_latency_ms": _round(c.execute_latency_ms), "complete_latency_ms": _round(c.complete_latency_ms),
            "capacity": _round(c.capacity), "cpu_percent": round(c.cpu_percent, 2),
        })
    return rows


def _supervisors(supervisors: list[dict], windows: Mapping[int, TaskWindow],
                 timeline: TopologyTimeline | None) -> list[dict]:
    """The supervisors this topology runs on: CPU (the supervisor's capacity, what Storm declares, what is
    measured, this topology's share) and link use (the host's interfaces, this topology's tuples crossing
    the link, the link's rate where the network is emulated)."""
    nodes: dict[str, dict] = defaultdict(lambda: {"tasks": 0, "workers": set(), "threads": {}, "other_ms": 0.0,
                                                  "ms": 0.0})
    for w in windows.values():
        if not w.node:
            continue
        node = nodes[w.node]
        node["tasks"] += 1
        node["workers"].add(w.worker)
        node["ms"] = max(node["ms"], w.duration_ms)
        node["other_ms"] += w.subprocess_ms
        for thread in w.threads:
            node["threads"][(w.pid, thread.id)] = thread.ms
    previous = timeline.previous_windows if timeline else {}
    history = {task: [previous[task], w] if task in previous else [w] for task, w in windows.items()}
    host = host_link_use([history])
    crossing = topology_network_use(windows)
    known = {s["id"]: s for s in supervisors}
    rows = []
    for node_id, node in sorted(nodes.items()):
        sup = known.get(node_id, {})
        cpu_ms = sum(node["threads"].values()) + node["other_ms"]
        rows.append({
            "id": node_id, "host": sup.get("host"), "machine_type": sup.get("machine_type"),
            "cpu": sup.get("cpu"), "declared_cpu": sup.get("declared_cpu"), "measured_cpu": sup.get("measured_cpu"),
            "topology_cpu": round(100.0 * cpu_ms / node["ms"], 2) if node["ms"] > 0 else None,
            "tasks": node["tasks"], "workers": len(node["workers"]),
            "link_mbit": link_rate(sup),
            "host_mbit": round(host[node_id].total_mbit, 4) if node_id in host else None,
            "topology_mbit": round(crossing[node_id].total_mbit, 4) if node_id in crossing else 0.0,
        })
    return rows


def link_rate(supervisor: Mapping[str, Any]) -> float | None:
    """A supervisor's link rate in Mbit/s where the network is emulated (its ``network.bandwidth.mbit``)."""
    return _number((supervisor.get("meta") or {}).get(BANDWIDTH_META))


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) and value > 0 else None


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def metrics_state(view: Any | None, limit: int = MAX_PROBLEMS_SHOWN) -> dict:
    """The metrics store's state of a topology for the page: connected, since when not, problems."""
    if view is None:
        return {"available": False}
    return {"available": True, "connected": view.connected, "disconnected_since": view.disconnected_since,
            "last_sync": view.last_sync, "corrupt_windows": view.corrupt_windows,
            "problems": list(view.problems[:limit]), "problems_total": len(view.problems),
            "events": list(view.events)}
