"""What a local cluster is asked to run (:class:`ClusterOptions`) and where its services are once it
runs (:class:`ClusterAddresses`, saved as ``cluster.json``)."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import reachability


@dataclass
class ClusterOptions:
    """How to run the described cluster (the description says what it is)."""

    plugin: bool = True
    plugin_jar: Path | None = None
    planner: bool = True
    dashboard: bool = True  # storm-planner dashboard: the plan log, Nimbus and ZooKeeper
    ui: bool = True
    zookeeper: str | None = None  # external "host:port"; None starts our own
    storm_home: Path | None = None  # an existing home (e.g. a binary distribution)
    cache_dir: Path | None = None
    python: str = sys.executable
    java: str = "java"
    start_timeout_s: float = 150.0
    network_probe_timeout_s: float = reachability.DEFAULT_TIMEOUT_S   # each supervisor-to-supervisor connect
    load_memory: Path | None = None   # the planner service's load memory (serve --load-memory); None: in ZooKeeper


@dataclass
class ClusterAddresses:
    """Where a running cluster's services are; saved as ``cluster.json``."""

    name: str
    state_dir: str
    log_dir: str
    zookeeper: str
    nimbus_host: str
    nimbus_port: int
    ui_url: str | None
    planner_host: str | None
    planner_port: int | None
    supervisors: list[str]
    plugin: bool
    storm_home: str
    description: dict = field(default_factory=dict)
    zookeeper_root: str = "/storm"
    dashboard_url: str | None = None
    planner_metrics_url: str | None = None   # the planner service's /metrics for Prometheus

    @property
    def nimbus(self) -> str:
        return f"{self.nimbus_host}:{self.nimbus_port}"
