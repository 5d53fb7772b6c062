"""What the dashboard shows, as plain JSON-ready dicts, built from the planner service's plan log
(and, when given, the live cluster through Nimbus).

The plan log is the one record every deployment has (the service writes it, the end-to-end tests
read it), so the dashboard works from it alone: no cluster is needed to look at what a planner
decided. A line that is not JSON, or not a JSON object, is skipped with a warning naming the file
and line number: a half-written last line (the service is appending while we read) must not take
the page down.

Fallbacks: when the service answers with an error, the Nimbus plugin falls back to Storm's
DefaultScheduler for that round, so a plan record carrying ``error`` *is* a fallback and its
``error.kind``/``error.message`` is the cause shown to the user.
"""
from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping

log = logging.getLogger(__name__)

# Executor names: Storm's "[start-end]" task ranges, or the problem file's derived "<component>/<i>".
_DERIVED = re.compile(r"^(?P<component>.+)/(?P<index>\d+)$")


class PlanLogReader:
    """Reads a plan log incrementally: only the bytes appended since the last read are parsed,
    so refreshing the page every few seconds stays cheap on a long-running cluster."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._line_no = 0
        self._records: list[dict] = []
        self._warned_missing = False

    def records(self) -> list[dict]:
        """Every good record so far, oldest first (a missing file: none, with one warning)."""
        try:
            with self.path.open("rb") as handle:
                size = handle.seek(0, 2)
                if size < self._offset:  # truncated or replaced: start over
                    self._offset, self._line_no, self._records = 0, 0, []
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            if not self._warned_missing:
                log.warning("plan log %s does not exist (yet): showing no plans", self.path)
                self._warned_missing = True
            return list(self._records)
        self._warned_missing = False
        # Keep an unfinished last line (no newline yet) for the next read.
        complete, _, _rest = data.rpartition(b"\n")
        if not complete and not data.endswith(b"\n"):
            return list(self._records)
        self._offset += len(complete) + 1
        for raw in complete.split(b"\n"):
            self._line_no += 1
            record = parse_line(raw, self.path, self._line_no)
            if record is not None:
                self._records.append(record)
        return list(self._records)


def parse_line(raw: bytes | str, path: Path | str, line_no: int) -> dict | None:
    """One plan-log line as a record, or None (blank; or garbled, with a warning naming the line)."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    if not text.strip():
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        log.warning("%s line %d is not JSON (%s): skipped", path, line_no, error.msg)
        return None
    if not isinstance(record, dict):
        log.warning("%s line %d is not a JSON object: skipped", path, line_no)
        return None
    record.setdefault("event", "plan")
    return record


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


def supervisors_view(plans: Iterable[Mapping[str, Any]], cluster: Mapping[str, Any] | None = None) -> list[dict]:
    """Supervisors grouped by what is known: the cluster's own description (capacity, slots, meta,
    declared use) when connected, else the nodes and slots the plans used. Measured load is
    the sum of the executors' loads where the cluster reports it."""
    cluster = cluster or {}
    used: dict[str, set[str]] = defaultdict(set)
    executors_on: dict[str, int] = defaultdict(int)
    latest: dict[str, Mapping[str, Any]] = {}
    for record in plans:
        if record.get("topology") and record.get("assignments"):
            latest[record["topology"]] = record
    measured_cpu: dict[str, float] = defaultdict(float)
    declared_cpu: dict[str, float] = defaultdict(float)
    topologies = cluster.get("topologies") or {}
    for topo_id, record in latest.items():
        cpu = (topologies.get(topo_id) or {}).get("executor_cpu") or {}
        declared = (topologies.get(topo_id) or {}).get("executor_declared_cpu") or {}
        for executor, slot in record["assignments"].items():
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


def snapshot(records: list[dict], cluster: Mapping[str, Any] | None = None,
             reports: list[dict] | None = None) -> dict:
    """Everything the page shows, in one JSON object (one request per refresh)."""
    plans = [r for r in records if r.get("event") == "plan"]
    summaries = [plan_summary(r, i) for i, r in enumerate(plans)]
    latest: dict[str, dict] = {}
    latest_good: dict[str, dict] = {}
    for record in plans:
        topo = record.get("topology")
        if not topo:
            continue
        latest[topo] = record
        if record.get("error") is None and record.get("assignments"):
            latest_good[topo] = record
    # With Nimbus read, a topology it no longer runs (killed, or from an earlier run of the same
    # cluster: the plan log outlives `cluster up`) leaves the page; its plans stay in the history.
    running = set((cluster or {}).get("topologies") or {}) if (cluster or {}).get("connected") else None
    finished = sorted(t for t in latest if running is not None and t not in running)
    # A topology whose last round fell back still shows its last good placement, flagged.
    topologies = []
    for topo, record in sorted(latest.items()):
        if topo in finished:
            continue
        view = topology_view(latest_good.get(topo, record), cluster)
        view["last_round_fallback"] = record.get("error") is not None
        view["last_error"] = record.get("error")
        view["rounds"] = sum(1 for r in plans if r.get("topology") == topo)
        topologies.append(view)
    return {
        "cluster": {k: v for k, v in (cluster or {}).items() if k not in ("topologies", "supervisors")},
        "supervisors": supervisors_view(plans, cluster),
        "topologies": topologies,
        "finished_topologies": finished,
        "plans": summaries,
        "fallbacks": [s for s in summaries if s["fallback"]],
        "rebalances": [r for r in records if r.get("event") == "rebalance"],
        "other_events": [r for r in records if r.get("event") not in ("plan", "rebalance")],
        "reports": reports or [],
    }
