"""Where the dashboard learns about supervisors: ZooKeeper's heartbeats, else Nimbus' summary.

ZooKeeper gives each supervisor's scheduler meta (``machine.type``) and slot ports; Nimbus'
``getClusterInfo`` gives capacity and slot counts only. Both are asked on every refresh.
"""
from __future__ import annotations

from typing import Callable, Mapping

from storm_planner.submit import nimbus

from .state import Supervisor


def _from_view(view) -> Supervisor:
    return Supervisor(id=view.id, host=view.host, machine_type=str(view.meta.get("machine.type", "")),
                      cpu=view.cpu, memory_mb=view.memory_mb, slots=tuple(view.ports))


def zookeeper_supervisors(address: str) -> Callable[[], Mapping[str, Supervisor]]:
    """Supervisors from ZooKeeper at ``HOST:PORT`` (Storm's root ``/storm``)."""
    return lambda: {k: _from_view(v) for k, v in nimbus.supervisors_in_zookeeper(address).items()}


def nimbus_supervisors(host: str, port: int) -> Callable[[], Mapping[str, Supervisor]]:
    """Supervisors from Nimbus' cluster summary (no machine types: Nimbus does not report meta)."""
    def read() -> Mapping[str, Supervisor]:
        views = nimbus.supervisors_from_summary(nimbus.cluster_summary(host, port))
        return {v.id: _from_view(v) for v in views}
    return read
