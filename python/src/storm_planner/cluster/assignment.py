"""Where Nimbus placed each executor of a running topology, by node of the cluster description."""
from __future__ import annotations

from storm_planner.submit import nimbus

from .description import ClusterDescription


def applied_assignment(description: ClusterDescription, nimbus_host: str, nimbus_port: int,
                       topology_id: str) -> list[dict]:
    """Where Nimbus placed each executor: ``{"executor": "[1-1]", "component", "node", "port"}``.

    Nimbus' ``getTopologyInfo`` reports host and port; on one machine every supervisor has the same
    host, so the node comes from the slot port, which the description gives to exactly one supervisor
    (in containers the host is the supervisor's service name; the port says the same).
    """
    owner = {port: sup.name for sup in description.supervisors for port in sup.slot_ports}
    with nimbus.nimbus_client(nimbus_host, nimbus_port) as client:
        info = client.getTopologyInfo(topology_id)
    rows = [
        {
            "executor": f"[{e.executor_info.task_start}-{e.executor_info.task_end}]",
            "component": e.component_id,
            "node": owner.get(e.port, e.host),
            "port": e.port,
        }
        for e in info.executors or []
    ]
    return sorted(rows, key=lambda r: _task_start(r["executor"]))


def _task_start(executor: str) -> int:
    return int(executor.strip("[]").split("-")[0])
