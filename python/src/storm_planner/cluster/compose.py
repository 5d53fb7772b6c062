"""The docker-compose cluster, rendered from the same description as the local one.

``storm-planner cluster compose`` turns a :class:`ClusterDescription` into

- ``compose.yaml``: ZooKeeper, the planner service, Nimbus with the plugin, one
  container per supervisor and the dashboard, on one compose network whose
  subnet is inside 198.18.0.0/15 (``docker_engine.COMPOSE_SUBNET``);
- ``conf/<daemon>.yaml``: each Storm daemon's storm.yaml, mounted read-only at
  ``/conf/storm.yaml``;
- ``conf/zoo.cfg``: ZooKeeper's configuration.

Every storm.yaml comes from :mod:`.storm_yaml`, the functions the local
launcher uses, so both clusters have the same keys and values. Only the keys in
:data:`CONTAINER_KEYS` differ, and only because a container has other host
names, paths and bind addresses than a local process; ports are the
description's in both. Services carry the launcher's daemon names
(``zookeeper``, ``planner``, ``nimbus``, ``supervisor-<name>``, ``dashboard``), and
the Storm containers run the launcher's JVM command lines (``container.py``) from
the same Storm home. Storm's UI is not among them: its webapp is not on Maven
Central, so the home assembled from there has none (as in ``cluster up``).

Supervisor containers really differ: ``cpus`` is ``supervisor.cpu.capacity``
/ 100 (100 = one core) and ``mem_limit`` is ``supervisor.memory.capacity.mb``,
so a supervisor has what it advertises to the planner.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from storm_planner.core import settings
from storm_planner.core.errors import StormPlannerError

from . import images, storm_yaml
from .description import (
    ClusterDescription,
    DescriptionError,
    Supervisor,
    load_description,
)
from .docker_engine import COMPOSE_SUBNET

# -- names on the compose network (the local launcher's daemon names) --------
ZOOKEEPER = "zookeeper"
NIMBUS = "nimbus"
PLANNER = "planner"
NETWORK = "storm"
RESULTS_VOLUME = "results"

# -- images (built by `storm-planner compose build|up`: images.py, docker/Dockerfile) ----------
PLANNER_IMAGE = images.PLANNER_IMAGE
DASHBOARD = "dashboard"
PLANS_VOLUME = "plans"

# -- paths inside the containers (docker/Dockerfile makes them, owned by the storm user) ----
CONF_FILE = "/conf/storm.yaml"
ZOO_CFG_FILE = "/conf/zoo.cfg"
DATA_DIR = "/data"
LOG_DIR = "/logs"
RESULTS_DIR = "/results"
PLAN_LOG = "/logs/plans.jsonl"
# The dashboard's health: its /api/health answers (the launcher waits for the same URL).
DASHBOARD_PROBE = ("import urllib.request; "
                   "urllib.request.urlopen('http://127.0.0.1:{port}/api/health', timeout=5)")
VENV = "/opt/storm-planner/venv"
HEALTHCHECK = "storm-planner-healthcheck"  # docker/storm/healthcheck.py, on the Storm image's PATH
HEAP_ENV = "STORM_PLANNER_HEAP_MB"  # read by the image's entrypoint (container.py)

# -- addresses -------------------------------------------------------------------
ANY_ADDRESS = "0.0.0.0"
# Published ports listen on the host's loopback only: the cluster trusts its callers.
PUBLISH_ADDRESS = "127.0.0.1"

COMPOSE_FILE = "compose.yaml"
CONF_DIR = "conf"
SUPERVISOR_ID_ENV = "STORM_PLANNER_SUPERVISOR_ID"

# Every storm.yaml key whose value in a container differs from the local
# launcher's for the same daemon, and why. Nothing else may differ (the tests
# check it); ports are the description's in both clusters.
CONTAINER_KEYS: dict[str, str] = {
    "storm.zookeeper.servers": "host name: the zookeeper service instead of the description's host",
    "nimbus.seeds": "host name: the nimbus service",
    "storm.local.hostname": "host name: the daemon's own service name, which the other containers resolve",
    "planner.service.host": "host name: the planner service (Nimbus only)",
    "ui.host": "bind address: 0.0.0.0, or the port published to the host cannot reach the UI",
    "storm.local.dir": "container path: /data, the Storm image's data directory",
    "storm.log.dir": "container path: /logs, the Storm image's log directory; the only key the local "
                     "files lack (the launcher passes its log directory as -Dstorm.log.dir instead)",
}
# zoo.cfg lines that differ, and why.
ZOO_CFG_CONTAINER_KEYS: dict[str, str] = {
    "dataDir": "container path: /data, the Storm image's data directory (ZooKeeper runs in it too)",
    "clientPortAddress": "bind address: 0.0.0.0, so the other containers reach ZooKeeper",
}


class ComposeError(StormPlannerError, ValueError):
    """The description cannot be rendered as a compose cluster; the message says why."""


def supervisor_service(supervisor: Supervisor) -> str:
    """The supervisor's service (and host) name, the launcher's daemon name for it."""
    return f"supervisor-{supervisor.name}"


def cpus(supervisor: Supervisor) -> float:
    """The container's CPU limit in cores: ``supervisor.cpu.capacity`` counts 100 per core."""
    return supervisor.held_cpu / 100.0


def mem_limit(supervisor: Supervisor) -> str:
    """The container's memory limit: ``supervisor.memory.capacity.mb``."""
    return f"{supervisor.memory_mb:g}m"


# -- storm.yaml and zoo.cfg ------------------------------------------------------
def daemon_confs(description: ClusterDescription) -> dict[str, dict[str, Any]]:
    """Each Storm daemon's storm.yaml as a dict, keyed by its service name."""
    d = description
    zookeeper = (ZOOKEEPER, d.ports.zookeeper)
    confs = {NIMBUS: storm_yaml.nimbus_conf(d, local_dir=DATA_DIR, zookeeper=zookeeper)}
    for sup in d.supervisors:
        confs[supervisor_service(sup)] = storm_yaml.supervisor_conf(
            d, sup, local_dir=DATA_DIR, zookeeper=zookeeper
        )
    return {service: _in_container(conf, service) for service, conf in confs.items()}


def _in_container(conf: dict[str, Any], service: str) -> dict[str, Any]:
    """The host names and paths of :data:`CONTAINER_KEYS` (ZooKeeper and the local dir are set already)."""
    conf = dict(conf)
    conf["nimbus.seeds"] = [NIMBUS]
    conf["storm.local.hostname"] = service
    conf["ui.host"] = ANY_ADDRESS
    if settings.SERVICE_HOST.is_set(conf):   # Nimbus' conf only
        conf[settings.SERVICE_HOST.key] = PLANNER
    conf["storm.log.dir"] = LOG_DIR
    return conf


def zoo_cfg(description: ClusterDescription) -> str:
    """zoo.cfg of the zookeeper service: the launcher's, listening on every interface."""
    # zookeeper_cfg binds to the description's host; in a container that must be
    # the wildcard address, so render it for a copy of the description that says so.
    listening = dataclasses.replace(description, host=ANY_ADDRESS)
    return storm_yaml.zookeeper_cfg(listening, data_dir=DATA_DIR)


# -- compose.yaml --------------------------------------------------------------------
def compose_document(description: ClusterDescription) -> dict[str, Any]:
    """The compose file as a dict."""
    d = description
    _check_renderable(d)
    services: dict[str, Any] = {
        ZOOKEEPER: _storm_service(
            d, ZOOKEEPER, "zookeeper", heap_mb=d.heap_mb.zookeeper, conf=f"./{CONF_DIR}/zoo.cfg:{ZOO_CFG_FILE}:ro",
            ports=[d.ports.zookeeper], depends_on={}, healthcheck=[HEALTHCHECK, "zookeeper"],
        ),
        PLANNER: _planner_service(d),
        NIMBUS: _storm_service(
            d, NIMBUS, "nimbus", heap_mb=d.heap_mb.nimbus,
            ports=[d.ports.nimbus],
            depends_on={ZOOKEEPER: "service_healthy", PLANNER: "service_healthy"},
            healthcheck=[HEALTHCHECK, "nimbus"],
        ),
    }
    for sup in d.supervisors:
        name = supervisor_service(sup)
        services[name] = _storm_service(
            d, name, "supervisor", heap_mb=d.heap_mb.supervisor,
            # The entrypoint seeds the supervisor's id, as the launcher does.
            environment={SUPERVISOR_ID_ENV: sup.name},
            limits={"cpus": cpus(sup), "mem_limit": mem_limit(sup)},
            # Topology sinks (e.g. trends.sink=/results/trends.jsonl) land here,
            # whichever supervisor runs them; the planner container reads them.
            volumes=[f"{RESULTS_VOLUME}:{RESULTS_DIR}"],
            depends_on={NIMBUS: "service_healthy"},
            healthcheck=[HEALTHCHECK, "supervisor"],
        )
    services[DASHBOARD] = _dashboard_service(d)
    return {
        "services": services,
        "networks": {NETWORK: {"name": d.name, "ipam": {"config": [{"subnet": COMPOSE_SUBNET}]}}},
        "volumes": {RESULTS_VOLUME: {"name": f"{d.name}-{RESULTS_VOLUME}"},
                    PLANS_VOLUME: {"name": f"{d.name}-{PLANS_VOLUME}"}},
    }


def _check_renderable(description: ClusterDescription) -> None:
    if description.network.emulated:
        # Containers get their links from Docker's network drivers, not from namespaces we make.
        raise ComposeError("network.emulated is for local process clusters (`cluster up`); for docker-compose, "
                           "remove it and shape the containers' links with tc inside them if you need to")
    # Service names double as host names on the compose network.
    for sup in description.supervisors:
        name = supervisor_service(sup)
        if len(name) > 63:
            raise ComposeError(f"supervisor {sup.name!r}: service name {name!r} is longer than a host name "
                               f"may be (63 characters); shorten the supervisor's name")


def _planner_service(d: ClusterDescription) -> dict[str, Any]:
    # The launcher's planner command line, listening on the compose network.
    command = [
        "storm-planner", "serve",
        "--host", ANY_ADDRESS, "--port", str(d.ports.planner),
        "--default-algorithm", d.planner_algorithm,
        "--plan-log", PLAN_LOG,
        # The metrics the workers' hooks publish live in the cluster's ZooKeeper.
        "--zookeeper", f"{ZOOKEEPER}:{d.ports.zookeeper}",
        # Topologies with planner.rebalance: true are rebalanced through this Nimbus.
        "--nimbus", f"{NIMBUS}:{d.ports.nimbus}",
        # /metrics for Prometheus, published on the host's loopback like the service.
        "--metrics-host", ANY_ADDRESS, "--metrics-port", str(d.ports.planner_metrics),
    ]
    return {
        "image": PLANNER_IMAGE,
        "hostname": PLANNER,
        "command": command,
        "environment": {
            # Where `storm-planner submit|list|kill|rebalance` run in this container find Nimbus.
            "STORM_PLANNER_NIMBUS": f"{NIMBUS}:{d.ports.nimbus}",
            "STORM_PLANNER_ZOOKEEPER": f"{ZOOKEEPER}:{d.ports.zookeeper}",
        },
        "volumes": [f"{RESULTS_VOLUME}:{RESULTS_DIR}", f"{PLANS_VOLUME}:{LOG_DIR}"],
        "ports": [_publish(d.ports.planner), _publish(d.ports.planner_metrics)],
        "networks": [NETWORK],
        "depends_on": {ZOOKEEPER: {"condition": "service_healthy"}},
        "healthcheck": _healthcheck(["storm-planner", "health", "--host", "127.0.0.1",
                                     "--port", str(d.ports.planner)]),
    }


def _dashboard_service(d: ClusterDescription) -> dict[str, Any]:
    """``storm-planner dashboard`` on the planner's plan log (a shared volume), Nimbus and ZooKeeper."""
    return {
        "image": PLANNER_IMAGE,
        "hostname": DASHBOARD,
        "command": ["storm-planner", "dashboard", "--plan-log", PLAN_LOG,
                    "--nimbus", f"{NIMBUS}:{d.ports.nimbus}",
                    "--zookeeper", f"{ZOOKEEPER}:{d.ports.zookeeper}",
                    "--host", ANY_ADDRESS, "--port", str(d.ports.dashboard)],
        "volumes": [f"{PLANS_VOLUME}:{LOG_DIR}:ro"],
        "ports": [_publish(d.ports.dashboard)],
        "networks": [NETWORK],
        "depends_on": {NIMBUS: {"condition": "service_healthy"}},
        "healthcheck": _healthcheck(["python3", "-c", DASHBOARD_PROBE.format(port=d.ports.dashboard)]),
    }


def _storm_service(
    d: ClusterDescription,
    service: str,
    daemon: str,
    *,
    heap_mb: int,
    depends_on: dict[str, str],
    healthcheck: list[str],
    conf: str | None = None,
    ports: Sequence[int] = (),
    environment: dict[str, str] | None = None,
    limits: dict[str, Any] | None = None,
    volumes: Sequence[str] = (),
) -> dict[str, Any]:
    """A Storm daemon's service: the Storm image running the launcher's command line for ``daemon``."""
    result: dict[str, Any] = {
        "image": images.storm_image(d.storm_version),
        "hostname": service,
        # Workers' Python subprocesses outlive crashed workers; an init reaps them.
        "init": True,
        "command": [daemon],
        "environment": {HEAP_ENV: str(heap_mb), **(environment or {})},
    }
    result.update(limits or {})
    result["volumes"] = [conf or f"./{CONF_DIR}/{service}.yaml:{CONF_FILE}:ro", *volumes]
    if ports:
        result["ports"] = [_publish(p) for p in ports]
    result["networks"] = [NETWORK]
    if depends_on:
        result["depends_on"] = {name: {"condition": condition} for name, condition in depends_on.items()}
    result["healthcheck"] = _healthcheck(healthcheck)
    return result


def _publish(port: int) -> str:
    return f"{PUBLISH_ADDRESS}:{port}:{port}"


def _healthcheck(command: list[str]) -> dict[str, Any]:
    # Storm daemons on a small machine take up to a minute to start; 5 s × 36 = 3 min. A check is a
    # Python process importing storm_planner: on a loaded host that alone has taken 20 s.
    return {"test": ["CMD", *command], "interval": "5s", "timeout": "60s", "retries": 36,
            "start_period": "10s"}


# -- files -------------------------------------------------------------------------
class _NoAliases(yaml.SafeDumper):
    """Repeated values stay written out: a compose file is read by people."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def compose_yaml(description: ClusterDescription) -> str:
    header = (
        "# The storm-planner docker-compose cluster, written by `storm-planner cluster compose`\n"
        f"# from the cluster description {description.source}: edits are overwritten.\n"
        "# Change the description and render again (docker/README.md). Each Storm daemon's\n"
        f"# storm.yaml is in {CONF_DIR}/, rendered from the same description.\n"
    )
    body = yaml.dump(compose_document(description), Dumper=_NoAliases,
                     sort_keys=False, default_flow_style=False, width=100)
    return header + body


def render(description: ClusterDescription) -> dict[str, str]:
    """Every file of the compose cluster: path relative to the compose directory → text."""
    files = {COMPOSE_FILE: compose_yaml(description)}
    for service, conf in daemon_confs(description).items():
        files[f"{CONF_DIR}/{service}.yaml"] = storm_yaml.to_yaml(conf)
    files[f"{CONF_DIR}/zoo.cfg"] = zoo_cfg(description)
    return files


def write(files: dict[str, str], out_dir: Path) -> list[Path]:
    """Write ``files`` under ``out_dir``; delete rendered storm.yaml files no longer rendered."""
    out_dir = Path(out_dir)
    written = []
    for relative, text in files.items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    # A supervisor removed from the description leaves its file behind; drop
    # it, but only files this renderer wrote (they start with its header).
    conf_dir = out_dir / CONF_DIR
    header = storm_yaml.to_yaml({}).splitlines()[0]
    for stale in sorted(conf_dir.glob("*.yaml")):
        if f"{CONF_DIR}/{stale.name}" not in files and stale.read_text().startswith(header):
            stale.unlink()
    return written


# -- the command -----------------------------------------------------------------------
def add_compose_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """``storm-planner cluster compose``: registered by :mod:`.commands`."""
    compose = subparsers.add_parser(
        "compose",
        help="render the docker-compose cluster (compose file, each daemon's storm.yaml) from the description",
        description="Render the docker-compose cluster from a cluster description: the compose file, "
                    "each Storm daemon's storm.yaml and zoo.cfg. Without --out, the compose file is "
                    "printed (storm-planner cluster compose > docker/compose.yaml) and the other files "
                    "are written to this checkout's docker/conf/.",
    )
    compose.add_argument("--cluster", type=Path, metavar="FILE",
                         help="cluster description YAML (default: the packaged default-cluster.yaml)")
    compose.add_argument("--out", type=Path, metavar="DIR",
                         help="write DIR/compose.yaml and DIR/conf/ instead of printing the compose file")
    compose.set_defaults(handler=cmd_compose)
    return compose


def cmd_compose(args: argparse.Namespace) -> int:
    from storm_planner.cli import CommandError

    from .locations import repo_root

    root = repo_root()
    if root is None:
        raise CommandError("the compose file builds its images from a storm-planner checkout "
                           "(docker/, python/, storm-scheduler/); run this command from one")
    out_dir = (args.out or root / "docker").resolve()
    try:
        description = load_description(args.cluster)
        files = render(description)
    except (DescriptionError, ComposeError) as error:
        raise CommandError(str(error)) from None
    if args.out is None:
        compose_text = files.pop(COMPOSE_FILE)
        written = write(files, out_dir)
        sys.stdout.write(compose_text)
    else:
        written = write(files, out_dir)
    print(f"wrote {len(written)} files to {out_dir}: {', '.join(sorted(p.name for p in written))}",
          file=sys.stderr)
    return 0
