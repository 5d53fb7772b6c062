"""storm.yaml for each daemon of a described cluster, as pure functions.

Every function takes the :class:`ClusterDescription` (and a node, and the
paths the caller chose) and returns a plain dict; nothing here touches the
disk or the network, so the docker-compose renderer can reuse it with
container paths and host names.

Precedence, lowest first: our defaults, the description's ``storm:`` keys,
the supervisor's own ``storm:`` keys, and finally the keys that make the
daemon what it is (ports, directories, capacities), which a description
cannot override by accident.
"""
from __future__ import annotations

from typing import Any

import yaml

from .description import ClusterDescription, Supervisor

SCHEDULER_CLASS = "org.stormplanner.scheduler.PlannerScheduler"
# Storm's own schedulers, by the description's ``scheduler`` key. The ResourceAwareScheduler needs no
# other key: its strategy (DefaultResourceAwareStrategy), priority strategy and the executors' default
# CPU (10 %) and memory (128 MB on heap) come from Storm's defaults.yaml; the supervisors' capacities
# are the description's ``cpu`` and ``memory_mb``.
STORM_SCHEDULER_CLASSES = {
    "default": "org.apache.storm.scheduler.DefaultScheduler",
    "resource-aware": "org.apache.storm.scheduler.resource.ResourceAwareScheduler",
}


def common_conf(description: ClusterDescription) -> dict[str, Any]:
    """Keys every daemon (and, through Nimbus, every topology) shares."""
    heaps = description.heap_mb
    conf: dict[str, Any] = {
        "storm.zookeeper.servers": [description.host],
        "storm.zookeeper.port": description.ports.zookeeper,
        "nimbus.seeds": [description.host],
        "nimbus.thrift.port": description.ports.nimbus,
        "ui.port": description.ports.ui,
        "ui.host": description.host,
        "storm.local.hostname": description.host,
        # Workers: a small heap. The default childopts carry Java 8 GC flags;
        # IgnoreUnrecognizedVMOptions keeps Java 17 from refusing them if a
        # topology adds some back.
        "worker.heap.memory.mb": heaps.worker,
        "worker.childopts": f"-Xmx{heaps.worker}m -XX:+IgnoreUnrecognizedVMOptions",
        "topology.worker.logwriter.childopts": "-Xmx32m",
        "nimbus.childopts": f"-Xmx{heaps.nimbus}m",
        "supervisor.childopts": f"-Xmx{heaps.supervisor}m",
        "ui.childopts": f"-Xmx{heaps.ui}m",
    }
    conf.update(description.storm)
    return conf


def planner_conf(description: ClusterDescription, *, planner_host: str | None = None) -> dict[str, Any]:
    """The plugin's keys: where the planner service is and how long to wait."""
    return {
        "storm.scheduler": SCHEDULER_CLASS,
        "planner.service.host": planner_host or description.host,
        "planner.service.port": description.ports.planner,
        "planner.service.timeout.ms": description.planner_timeout_ms,
        "planner.default.algorithm": description.planner_algorithm,
    }


def nimbus_conf(
    description: ClusterDescription,
    *,
    local_dir: str,
    plugin: bool = True,
    zookeeper: tuple[str, int] | None = None,
) -> dict[str, Any]:
    """Nimbus' storm.yaml with the description's ``scheduler``: the plugin (``planner``; ``plugin=False``
    keeps Storm's default scheduler instead), Storm's ``default`` or its ``resource-aware`` scheduler."""
    conf = common_conf(description)
    if description.scheduler in STORM_SCHEDULER_CLASSES:
        conf["storm.scheduler"] = STORM_SCHEDULER_CLASSES[description.scheduler]
    elif plugin:
        conf.update(planner_conf(description))
    conf["storm.local.dir"] = local_dir
    _set_zookeeper(conf, zookeeper)
    return conf


def supervisor_conf(
    description: ClusterDescription,
    supervisor: Supervisor,
    *,
    local_dir: str,
    zookeeper: tuple[str, int] | None = None,
) -> dict[str, Any]:
    """One supervisor's storm.yaml: its own slots, thrift port, dirs and capacities."""
    conf = common_conf(description)
    conf.update(supervisor.storm)
    conf.update(
        {
            "storm.local.dir": local_dir,
            "storm.local.hostname": supervisor.host,
            "supervisor.slots.ports": list(supervisor.slot_ports),
            "supervisor.thrift.port": supervisor.thrift_port,
            "supervisor.cpu.capacity": supervisor.cpu,
            "supervisor.memory.capacity.mb": supervisor.memory_mb,
            "supervisor.scheduler.meta": dict(supervisor.meta),
        }
    )
    _set_zookeeper(conf, zookeeper)
    return conf


def ui_conf(
    description: ClusterDescription, *, local_dir: str, zookeeper: tuple[str, int] | None = None
) -> dict[str, Any]:
    conf = common_conf(description)
    conf["storm.local.dir"] = local_dir
    _set_zookeeper(conf, zookeeper)
    return conf


def zookeeper_cfg(description: ClusterDescription, *, data_dir: str) -> str:
    """zoo.cfg for the embedded ZooKeeper (Storm's shaded ZooKeeperServerMain).

    The admin server is off because it listens on 8080, the UI's port; the
    four-letter words ``ruok`` and ``srvr`` are allowed for health checks.
    """
    lines = [
        "tickTime=2000",
        f"dataDir={data_dir}",
        f"clientPort={description.ports.zookeeper}",
        f"clientPortAddress={description.host}",
        "maxClientCnxns=0",
        "admin.enableServer=false",
        "4lw.commands.whitelist=ruok,srvr,mntr",
        "autopurge.purgeInterval=1",
    ]
    return "\n".join(lines) + "\n"


def to_yaml(conf: dict[str, Any]) -> str:
    """storm.yaml text; keys kept in insertion order for readable diffs."""
    header = "# Written by storm-planner from the cluster description; edits are overwritten.\n"
    return header + yaml.safe_dump(conf, sort_keys=False, default_flow_style=False)


def _set_zookeeper(conf: dict[str, Any], zookeeper: tuple[str, int] | None) -> None:
    if zookeeper is not None:
        host, port = zookeeper
        conf["storm.zookeeper.servers"] = [host]
        conf["storm.zookeeper.port"] = port
