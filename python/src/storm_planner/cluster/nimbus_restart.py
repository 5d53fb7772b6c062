"""Switch a running local cluster's scheduler by restarting Nimbus alone.

Storm reads ``storm.scheduler`` once, when Nimbus starts, and has no call to change it, so
:func:`switch_scheduler` rewrites ``conf/nimbus.yaml`` for the new scheduler (the description's
``scheduler`` key: ``planner``, ``default`` or ``resource-aware``), stops Nimbus and starts it again
on the same port, data directory and ZooKeeper, and waits until it leads and sees every supervisor.
ZooKeeper, the supervisors (their cgroups and network namespaces), the planner service and the
dashboard keep running. Topologies should be killed first: the new Nimbus would take over running
ones and schedule them again with the new scheduler.
"""
from __future__ import annotations

from . import storm_yaml
from .launcher import LocalCluster


def switch_scheduler(cluster: LocalCluster, scheduler: str) -> bool:
    """Make Nimbus run ``scheduler``; restart it only if it runs another one. Returns whether it restarted."""
    if cluster.description.scheduler == scheduler:
        return False
    cluster.description = cluster.description.with_scheduler(scheduler)
    zookeeper = cluster.zookeeper_address() if cluster.options.zookeeper else None
    conf = storm_yaml.nimbus_conf(cluster.description, local_dir=str(cluster.data_dir / "nimbus"),
                                  plugin=cluster.options.plugin, zookeeper=zookeeper)
    cluster._write_conf("nimbus", conf)
    cluster.stop_daemon("nimbus")
    cluster.start_daemon("nimbus")   # waits until it leads and sees every supervisor
    cluster.progress(f"nimbus restarted with scheduler {scheduler!r} ({conf.get('storm.scheduler', 'Storm default')})")
    return True
