#!/opt/storm-planner/venv/bin/python
"""Container health checks of the Storm daemons: what ``storm-planner cluster up`` waits for.

    storm-planner-healthcheck zookeeper    ZooKeeper answers `ruok` on its client port (/conf/zoo.cfg)
    storm-planner-healthcheck nimbus       a Nimbus is the leader
    storm-planner-healthcheck supervisor   Nimbus lists this supervisor with its CPU capacity
    storm-planner-healthcheck ui           the UI answers /api/v1/cluster/summary

Addresses and ports come from the daemon's own storm.yaml; the supervisor's id from
``STORM_PLANNER_SUPERVISOR_ID``. Exit status 0 when healthy, 1 otherwise (one line says why).
"""
import os
import sys
from pathlib import Path

import yaml

from storm_planner.cluster.probes import http_ok
from storm_planner.submit.nimbus import cluster_summary, supervisors_from_summary, zookeeper_ok


def _conf() -> dict:
    conf_file = Path(os.environ.get("STORM_CONF_DIR", "/conf")) / "storm.yaml"
    return yaml.safe_load(conf_file.read_text()) or {}


def _summary(conf: dict, host: str):
    return cluster_summary(host, int(conf.get("nimbus.thrift.port", 6627)), 3000)


def zookeeper(conf: dict) -> str | None:
    zoo_cfg = Path(os.environ.get("STORM_CONF_DIR", "/conf")) / "zoo.cfg"
    lines = dict(line.split("=", 1) for line in zoo_cfg.read_text().splitlines() if "=" in line)
    port = int(lines.get("clientPort", "2181"))
    return None if zookeeper_ok("127.0.0.1", port) else f"ZooKeeper does not answer on port {port}"


def nimbus(conf: dict) -> str | None:
    summary = _summary(conf, "127.0.0.1")
    return None if any(n.isLeader for n in summary.nimbuses or []) else "no leader Nimbus yet"


def supervisor(conf: dict) -> str | None:
    wanted = os.environ.get("STORM_PLANNER_SUPERVISOR_ID") or conf.get("storm.local.hostname")
    summary = _summary(conf, (conf.get("nimbus.seeds") or ["nimbus"])[0])
    if any(s.id == wanted and s.cpu for s in supervisors_from_summary(summary)):
        return None
    return f"Nimbus does not list supervisor {wanted!r} yet"


def ui(conf: dict) -> str | None:
    url = f"http://127.0.0.1:{conf.get('ui.port', 8080)}/api/v1/cluster/summary"
    return None if http_ok(url) else f"{url} does not answer"


CHECKS = {"zookeeper": zookeeper, "nimbus": nimbus, "supervisor": supervisor, "ui": ui}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CHECKS:
        print(f"usage: storm-planner-healthcheck {'|'.join(CHECKS)}", file=sys.stderr)
        return 2
    try:
        problem = CHECKS[argv[0]]({} if argv[0] == "zookeeper" else _conf())
    except Exception as error:  # noqa: BLE001 - any failure means "not healthy yet"
        problem = f"{type(error).__name__}: {error}"
    if problem:
        print(f"{argv[0]}: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
