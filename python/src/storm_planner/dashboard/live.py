"""The live cluster as the dashboard needs it: supervisors (capacity, slots, machine type, declared
use) from Nimbus and ZooKeeper, and each topology's executors and component graph from Nimbus.

The plan log says what the planner *decided*; this says what the cluster *is*, so the page can show
idle supervisors, free slots and the component graph's streams (which the plan log does not hold).
Any failure to reach the cluster is reported in the snapshot (``cluster.error``) and the page keeps
working from the plan log: a dashboard that dies with Nimbus is no use for watching a fallback.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from storm_planner.submit.nimbus import nimbus_client, supervisors_in_zookeeper

# Measured figures older than this are not shown as the present (a killed topology's last windows).
STALE_AFTER_S = 120.0

log = logging.getLogger(__name__)


class ClusterSource:
    """Polls Nimbus (and ZooKeeper for supervisors' ``supervisor.scheduler.meta``), at most once per
    ``min_interval_s`` however often the page refreshes."""

    def __init__(self, nimbus: str | None = None, zookeeper: str | None = None,
                 min_interval_s: float = 2.0, timeout_ms: int = 3000) -> None:
        self.nimbus = _host_port(nimbus, "--nimbus") if nimbus else None
        self.zookeeper = zookeeper
        self.min_interval_s = min_interval_s
        self.timeout_ms = timeout_ms
        self._cached: dict[str, Any] = {}
        self._at = 0.0
        self._metrics = None  # a MetricsStore on the same ZooKeeper, started on first use
        self._store_lock = threading.Lock()
        self._last_topologies: dict[str, dict] | None = None   # from the last read Nimbus answered
        self._last_topologies_at: float | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.nimbus or self.zookeeper)

    def read(self) -> dict[str, Any]:
        if not self.enabled:
            return {}
        now = time.monotonic()
        if self._cached and now - self._at < self.min_interval_s:
            return self._cached
        result: dict[str, Any] = {"connected": False, "nimbus": None, "zookeeper": self.zookeeper}
        supervisors: dict[str, dict] = {}
        errors = []
        if self.zookeeper:
            try:
                for sup_id, view in supervisors_in_zookeeper(self.zookeeper, timeout_s=self.timeout_ms / 1000).items():
                    supervisors[sup_id] = _supervisor(view.id, view.host, view.cpu, view.memory_mb,
                                                      view.meta, view.ports)
            except Exception as error:  # noqa: BLE001 - shown on the page, the page keeps working
                errors.append(f"ZooKeeper {self.zookeeper}: {type(error).__name__}: {error}")
        if self.nimbus:
            host, port = self.nimbus
            result["nimbus"] = f"{host}:{port}"
            try:
                with nimbus_client(host, port, self.timeout_ms) as client:
                    summary = client.getClusterInfo()
                    for sup in summary.supervisors or []:
                        entry = supervisors.setdefault(sup.supervisor_id, _supervisor(
                            sup.supervisor_id, sup.host, (sup.total_resources or {}).get("cpu.pcore.percent"),
                            (sup.total_resources or {}).get("memory.mb"), {}, ()))
                        entry["declared_cpu"] = getattr(sup, "used_cpu", None)
                        entry["declared_memory_mb"] = getattr(sup, "used_mem", None)
                        entry["num_slots"] = sup.num_workers
                        entry["num_used_slots"] = sup.num_used_workers
                    result["topologies"] = {t.id: _topology(client, t) for t in summary.topologies or []}
                for topology_id, info in result["topologies"].items():
                    info.update(self._measured(topology_id, info))
                result["connected"] = True
                self._last_topologies, self._last_topologies_at = result["topologies"], time.time()
            except Exception as error:  # noqa: BLE001 - shown on the page, the page keeps working
                errors.append(f"Nimbus {host}:{port}: {type(error).__name__}: {error}")
                if self._last_topologies is not None:
                    # What ran at the last answer, not every plan ever made: a killed topology's plans
                    # must not come back on the supervisors while Nimbus is briefly away.
                    result["topologies"] = self._last_topologies
                    result["topologies_as_of"] = self._last_topologies_at
        result["supervisors"] = list(supervisors.values())
        result["error"] = "; ".join(errors) or None
        if errors:
            log.warning("cluster not (fully) readable: %s", result["error"])
        self._cached, self._at = result, now
        return result


    def metrics_store(self):
        """The workers' metrics windows (a read-only MetricsStore on this ZooKeeper; None without one)."""
        if not self.zookeeper:
            return None
        with self._store_lock:   # the trends thread and a request may both ask first
            if self._metrics is None:
                from storm_planner.metrics.store import MetricsStore

                # clean_killed=False: the dashboard only reads, it never deletes anyone's znodes.
                self._metrics = MetricsStore(self.zookeeper, clean_killed=False).start()
            return self._metrics

    def topology_info(self, topology_id: str) -> dict:
        """What the last read learnt of a topology from Nimbus (no new request): name, executors, spouts."""
        return dict((self._cached.get("topologies") or {}).get(topology_id) or {})

    def _measured(self, topology_id: str, info: dict) -> dict:
        """Measured CPU per executor and executor-pair traffic (the workers' metrics hook in
        ZooKeeper), for the model to add up per supervisor; nothing when there are no metrics."""
        if not self.zookeeper or not info.get("executor_components"):
            return {}
        try:
            from storm_planner.metrics.loads_and_traffic import measure

            view = self.metrics_store().view(topology_id)
            if not view.windows:
                return {}
            m = measure(topology_id, view.windows, sorted(info["executor_components"].items()),
                        stale_after_s=STALE_AFTER_S)
        except Exception as error:  # noqa: BLE001 - measured load is a bonus, not a reason to fail
            log.warning("metrics of %s not readable: %s", topology_id, error)
            return {}
        return {"executor_cpu": {e: round(f.cpu_percent, 2) for e, f in m.executors.items() if f.measured},
                "executor_traffic": [{"from": a, "to": b, "rate": r} for (a, b), r in m.traffic.items()],
                "traffic_unit": m.unit}

    def close(self) -> None:
        if self._metrics is not None:
            self._metrics.stop()


def _host_port(value: str, option: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{option} {value!r}: expected HOST:PORT")
    return host or "127.0.0.1", int(port)


def _supervisor(sup_id, host, cpu, memory_mb, meta, ports) -> dict:
    return {"id": sup_id, "host": host, "cpu": cpu, "memory_mb": memory_mb, "meta": dict(meta or {}),
            "machine_type": (meta or {}).get("machine.type") or "unknown",
            "slots": [f"{sup_id}:{p}" for p in sorted(ports)]}


def _topology(client: Any, summary: Any) -> dict:
    """Executors ("[start-end]" as the plugin names them) → component, measured placement, and the
    component graph's streams (user components only: system streams would drown the picture)."""
    info: dict[str, Any] = {"name": summary.name, "status": summary.status,
                            "uptime_secs": getattr(summary, "uptime_secs", None),
                            "num_workers": getattr(summary, "num_workers", None),
                            "num_executors": getattr(summary, "num_executors", None),
                            "num_tasks": getattr(summary, "num_tasks", None),
                            "executor_components": {}, "placement": {}, "streams": [], "spouts": None}
    try:
        details = client.getTopologyInfo(summary.id)
        for ex in details.executors or []:
            name = f"[{ex.executor_info.task_start}-{ex.executor_info.task_end}]"
            info["executor_components"][name] = ex.component_id
            info["placement"][name] = f"{ex.host}:{ex.port}"
    except Exception as error:  # noqa: BLE001
        info["error"] = f"getTopologyInfo: {error}"
    try:
        topology = client.getUserTopology(summary.id)
        info["executor_declared_cpu"] = _declared_cpu(client, summary.id, topology, info["executor_components"])
        info["spouts"] = sorted(topology.spouts or {})
        for bolt_id, bolt in (topology.bolts or {}).items():
            for stream_id, grouping in (bolt.common.inputs or {}).items():
                kind = next((k for k, v in vars(grouping).items() if v is not None), "shuffle")
                info["streams"].append({"from": stream_id.componentId, "to": bolt_id,
                                        "stream": stream_id.streamId, "grouping": kind})
    except Exception as error:  # noqa: BLE001
        info.setdefault("error", f"getUserTopology: {error}")
    return info


CPU_KEY = "topology.component.cpu.pcore.percent"
DEFAULT_CPU = 10.0  # Storm's default for CPU_KEY


def _declared_cpu(client: Any, topology_id: str, topology: Any, executor_components: dict) -> dict:
    """What Storm's resource accounting declares per executor (``TopologyDetails.getTotalCpuReqTask``):
    the component's ``topology.component.cpu.pcore.percent``, else the topology's, else 10 %."""
    try:
        topo_default = float(json.loads(client.getTopologyConf(topology_id) or "{}").get(CPU_KEY, DEFAULT_CPU))
    except Exception:  # noqa: BLE001 - a conf we cannot read means Storm's default
        topo_default = DEFAULT_CPU
    per_component = {}
    for kind in ("spouts", "bolts", "state_spouts"):
        for comp_id, comp in (getattr(topology, kind, None) or {}).items():
            try:
                value = json.loads(comp.common.json_conf or "{}").get(CPU_KEY)
            except (AttributeError, ValueError):
                value = None
            if value is not None:
                per_component[comp_id] = float(value)
    return {e: per_component.get(c, topo_default) for e, c in executor_components.items()}
