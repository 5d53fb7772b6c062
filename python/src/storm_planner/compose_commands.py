"""``storm-planner compose build|up|down|status|demo``: the docker-compose cluster, built and run.

``demo`` is ``make demo`` in containers (``make compose-demo``): it brings the cluster up (building the
images the first time), submits Twitter trends planned by ``topdown`` from the planner container, and
prints the plan as Nimbus applied it and the top-k checked against a direct count over the feed.
Progress goes to standard error; ``up`` and ``status`` print JSON on standard output.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from storm_planner.cli import CommandError
from storm_planner.cluster.compose import PLAN_LOG, PLANNER, RESULTS_DIR
from storm_planner.cluster.description import DescriptionError, load_description

TRENDS = "trends"
TRENDS_IN_IMAGE = "/opt/storm-planner/topologies/trends"


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compose", help="the docker-compose cluster: build its images, start, stop, inspect, demo",
        description="The cluster of a description as docker-compose services (ZooKeeper, planner, Nimbus with "
                    "the plugin, one container per supervisor, dashboard). Installs and starts Docker when "
                    "missing (as root) and builds the images from Debian, Maven Central and PyPI.")
    sub = parser.add_subparsers(dest="compose_command", metavar="ACTION")
    sub.required = True
    for name, help_text, handler in (
        ("build", "build (or reuse) the images", cmd_build),
        ("up", "build, start every service, wait until all are healthy", cmd_up),
        ("down", "stop and remove the containers, network and volumes", cmd_down),
        ("status", "each service's container state and health (JSON)", cmd_status),
        ("demo", "up, then Twitter trends planned by topdown: prints the applied plan and the top-k", cmd_demo),
    ):
        command = sub.add_parser(name, help=help_text)
        command.add_argument("--cluster", type=Path, metavar="FILE",
                             help="cluster description YAML (default: the packaged default-cluster.yaml)")
        if name in ("up", "demo"):
            command.add_argument("--no-build", action="store_true", help="start the images already built")
            command.add_argument("--timeout", type=float, default=300.0, metavar="SECS",
                                 help="how long the services may take to become healthy")
        if name == "demo":
            command.add_argument("--algorithm", default="topdown", help="planner for the topology")
            command.add_argument("--top-k", type=int, default=10, help="k of the top-k (default 10)")
            command.add_argument("--feed-timeout", type=float, default=300.0, metavar="SECS",
                                 help="seconds to wait for the feed to drain")
        command.set_defaults(handler=handler)


def _cluster(args: argparse.Namespace):
    from storm_planner.cluster.compose import ComposeError, compose_document
    from storm_planner.cluster.compose_cluster import ComposeCluster
    from storm_planner.cluster.locations import repo_root

    root = repo_root()
    if root is None:
        raise CommandError("the compose cluster builds its images from a storm-planner checkout; run this there")
    try:
        description = load_description(args.cluster)
        compose_document(description)  # refuses what compose cannot run, before anything starts
    except (DescriptionError, ComposeError) as error:
        raise CommandError(str(error)) from None
    return ComposeCluster(description, root, progress=say)


def _guarded(action):
    from storm_planner.cluster.docker_engine import EngineError
    from storm_planner.cluster.storm_home import StormHomeError

    try:
        return action()
    except (EngineError, StormHomeError) as error:
        raise CommandError(str(error)) from None


def cmd_build(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    seconds = _guarded(cluster.build)
    print(json.dumps({"built": {t: round(s, 1) for t, s in seconds.items()}}))
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    started = time.monotonic()
    states = _guarded(lambda: cluster.up(build=not args.no_build, timeout_s=args.timeout))
    say(f"the compose cluster is up ({time.monotonic() - started:.0f}s)")
    print(json.dumps(_summary(cluster, states), indent=2))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    _guarded(cluster.down)
    say(f"the compose cluster {cluster.description.name!r} is down")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    print(json.dumps(_summary(cluster, _guarded(cluster.status)), indent=2))
    return 0


def _summary(cluster, states) -> dict:
    d = cluster.description
    return {
        "name": d.name,
        "compose_file": str(cluster.directory / "compose.yaml"),
        "services": [{"service": s.service, "state": s.state, "health": s.health} for s in states],
        "nimbus": f"127.0.0.1:{d.ports.nimbus}",
        "planner": f"127.0.0.1:{d.ports.planner}",
        "zookeeper": f"127.0.0.1:{d.ports.zookeeper}",
        "dashboard": f"http://127.0.0.1:{d.ports.dashboard}/",
        "planner_metrics": f"http://127.0.0.1:{d.ports.planner_metrics}/metrics",
    }


# -- the demo -------------------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    from storm_planner.demo import print_plan_table, print_top_k_from

    cluster = _cluster(args)
    started = time.monotonic()
    _guarded(lambda: cluster.up(build=not args.no_build, timeout_s=args.timeout))
    say(f"the compose cluster is up ({time.monotonic() - started:.0f}s)")
    sink = f"{RESULTS_DIR}/{TRENDS}.jsonl"
    topology_id = _guarded(lambda: submit_trends(cluster, sink, args.algorithm, args.top_k))
    d = cluster.description
    planned = _wait(lambda: plans_for(cluster, topology_id), 60)
    from storm_planner.cluster.assignment import applied_assignment
    print_plan_table(d, topology_id, planned[-1] if planned else None,
                     applied_assignment(d, "127.0.0.1", d.ports.nimbus, topology_id))
    print(f"\nthe cluster, every plan and why, live: http://127.0.0.1:{d.ports.dashboard}/  (dashboard container)")
    print(f"the planner service's metrics for Prometheus: http://127.0.0.1:{d.ports.planner_metrics}/metrics  "
          f"(docs/monitoring.md)")
    say(f"waiting for the replay feed to drain (sink {sink} in the results volume) ...")
    print_top_k_from(lambda: cluster.read_file(PLANNER, sink),
                     lambda: cluster.file_exists(PLANNER, f"{sink}.feed-done"),
                     cluster.root / "topologies" / TRENDS, args.top_k, args.feed_timeout,
                     hint="see the supervisors' /logs/workers-artifacts/", where=sink)
    say(f"\nThe compose cluster keeps running ({time.monotonic() - started:.0f}s so far). Try: storm-planner "
        "compose status\nStop it with: storm-planner compose down  (or make compose-down)")
    return 0


def submit_trends(cluster, sink: str, algorithm: str, top_k: int) -> str:
    """Submit trends from the planner container (a running one of the same name is killed first)."""
    cluster.exec(PLANNER, "storm-planner", "kill", TRENDS, "--wait", "0", check=False)
    cluster.exec(PLANNER, "rm", "-f", sink, f"{sink}.feed-done")
    options = {"trends.sink": sink, "trends.top_k": top_k, "planner.algorithm": algorithm, "topology.workers": 2}
    command = ["storm-planner", "submit", TRENDS_IN_IMAGE, "--name", TRENDS, "--wait-active", "180"]
    for key, value in options.items():
        command += ["-o", f"{key}={value}"]
    say(f"submitting {TRENDS} from the planner container (planner.algorithm={algorithm}) ...")
    cluster.exec(PLANNER, *command, timeout=300)
    return topology_id(cluster, TRENDS)


def topology_id(cluster, name: str) -> str:
    listed = cluster.exec(PLANNER, "storm-planner", "list", "--json")
    try:
        rows = json.loads(listed.stdout)
        return next(str(row["id"]) for row in rows if row.get("name") == name)
    except (ValueError, StopIteration, TypeError, KeyError):
        raise CommandError(f"Nimbus does not list {name!r} after its submission: {listed.stdout[-300:]}") from None


def plans_for(cluster, topology: str) -> list[dict]:
    """The planner's plan-log records for ``topology``, read from its container."""
    records = []
    for line in cluster.read_file(PLANNER, PLAN_LOG).splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line being written
        if isinstance(record, dict) and record.get("event", "plan") == "plan" and record.get("topology") == topology:
            records.append(record)
    return records


def _wait(condition, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    return None


def say(message: str) -> None:
    import sys

    print(message, file=sys.stderr, flush=True)
