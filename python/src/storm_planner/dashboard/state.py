"""What the dashboard shows, read from the planner service's plan log and the cluster.

The plan log (:class:`storm_planner.service.handler.PlanLog`) has one JSON record per line: plans
(``"event": "plan"``; a plan with an ``error`` is one the plugin could not use, so Nimbus fell back
to its default scheduler) and rebalances (``"event": "rebalance"``). A line that is not a JSON
object is skipped with a warning naming its line number: a dashboard must not die of a torn
write. Reading is O(lines) and happens on every API call, so the page follows a growing log.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

_log = logging.getLogger(__name__)

# The figures worth a column in the plan history, in this order (others stay in the JSON).
HISTORY_FIGURES = ("imc", "load_distance", "migrations", "max_utilisation", "nodes_used", "max_input_rate")


@dataclass(frozen=True)
class Supervisor:
    """A supervisor as the dashboard shows it (from ZooKeeper or Nimbus; or only seen in plans)."""

    id: str
    host: str = ""
    machine_type: str = ""
    cpu: float | None = None
    memory_mb: float | None = None
    slots: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "host": self.host, "machine_type": self.machine_type, "cpu": self.cpu,
                "memory_mb": self.memory_mb, "slots": list(self.slots)}


@dataclass
class PlanLogReading:
    """The records of one plan log, and the lines that could not be read."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_records(path: Path) -> PlanLogReading:
    """Every record of the plan log at ``path`` (none if it does not exist yet)."""
    reading = PlanLogReading()
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return reading
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            record, reason = None, f"not JSON ({error.msg})"
        else:
            reason = "not a JSON object"
        if not isinstance(record, dict):
            message = f"{path}:{number}: skipped, {reason}"
            _log.warning(message)
            reading.skipped.append(message)
            continue
        reading.records.append(record)
    return reading


def plan_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """One plan as a row of the history: when, which topology and algorithm, its figures and why."""
    figures = record.get("figures") or {}
    error = record.get("error")
    return {
        "time": record.get("time"),
        "topology": record.get("topology", "?"),
        "algorithm": record.get("algorithm", "?"),
        "solve_ms": record.get("solve_ms"),
        "figures": {k: figures[k] for k in HISTORY_FIGURES if k in figures},
        "notes": list(record.get("notes") or []),
        "fallback": None if not error else f"{error.get('kind', 'error')}: {error.get('message', '')}",
        "executors": len(record.get("assignments") or {}),
    }


def topology_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """A topology's latest plan: its executors grouped by ``supervisor:port`` slot."""
    by_slot: dict[str, list[str]] = {}
    for executor, slot in sorted((record.get("assignments") or {}).items()):
        by_slot.setdefault(slot, []).append(executor)
    return {
        **plan_summary(record),
        "slots": [{"slot": slot, "supervisor": slot.rpartition(":")[0], "executors": executors}
                  for slot, executors in sorted(by_slot.items())],
        "advice": record.get("advice"),
    }


def supervisors_seen(plans: Iterable[Mapping[str, Any]]) -> dict[str, Supervisor]:
    """Supervisors named by the plans' slots, when no cluster is there to ask."""
    ports: dict[str, set[int]] = {}
    for plan in plans:
        for slot in (plan.get("assignments") or {}).values():
            node, _, port = str(slot).rpartition(":")
            if node:
                ports.setdefault(node, set()).update({int(port)} if port.isdigit() else set())
    return {node: Supervisor(node, slots=tuple(sorted(p))) for node, p in ports.items()}


def dashboard_state(plan_log: Path | None,
                    supervisors: Callable[[], Mapping[str, Supervisor]] | None = None) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data (the API's ``/api/state``)."""
    reading = read_records(plan_log) if plan_log else PlanLogReading()
    plans = [r for r in reading.records if r.get("event", "plan") == "plan"]
    latest: dict[str, dict[str, Any]] = {}
    for plan in plans:
        if not plan.get("error"):
            latest[plan.get("topology", "?")] = plan
    known = dict(supervisors_seen(plans))
    cluster_error = None
    if supervisors is not None:
        try:
            known.update(supervisors())
        except Exception as error:  # noqa: BLE001 - the page says why the cluster is missing
            cluster_error = f"{type(error).__name__}: {error}"
    executors_on = Counter(slot.rpartition(":")[0] for plan in latest.values()
                           for slot in (plan.get("assignments") or {}).values())
    return {
        "plan_log": str(plan_log) if plan_log else None,
        "skipped_lines": reading.skipped,
        "cluster_error": cluster_error,
        "supervisors": [{**s.to_dict(), "executors": executors_on.get(s.id, 0)}
                        for s in sorted(known.values(), key=lambda s: (s.machine_type, s.id))],
        "topologies": [topology_view(plan) for _, plan in sorted(latest.items())],
        "history": [plan_summary(plan) for plan in reversed(plans)],
        "fallbacks": [plan_summary(plan) for plan in reversed(plans) if plan.get("error")],
        "rebalances": [r for r in reversed(reading.records) if r.get("event") == "rebalance"],
    }
