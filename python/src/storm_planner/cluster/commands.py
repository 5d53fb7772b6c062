"""``storm-planner cluster up|down|status|logs|home``: a local Storm cluster."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from storm_planner.cli import CommandError

from . import compose_hosts
from .compose import add_compose_command, cmd_compose
from .description import DescriptionError, load_description
from .errors import ClusterError
from .launcher import UI_UNAVAILABLE, ClusterOptions, LocalCluster
from .locations import PLUGIN_JAR_ENV, default_state_root
from .reachability import DEFAULT_TIMEOUT_S as DEFAULT_PROBE_TIMEOUT_S
from .storm_home import StormHomeError, ensure_storm_home


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    cluster = subparsers.add_parser(
        "cluster",
        help="run a local Storm cluster (ZooKeeper, Nimbus+plugin, supervisors, planner)",
        description="A real Storm cluster of local processes, driven by a cluster description.",
    )
    sub = cluster.add_subparsers(dest="cluster_command", metavar="ACTION")
    sub.required = True

    up = sub.add_parser("up", help="start the cluster and wait until every daemon is healthy")
    _common(up)
    up.add_argument("--port-offset", type=int, default=0, metavar="N",
                    help="add N to every port of the description (run beside another cluster)")
    up.add_argument("--plugin-jar", type=Path, metavar="PATH",
                    help=f"the planner plugin jar (default: ${PLUGIN_JAR_ENV}, else "
                         "storm-scheduler/target/storm-planner-scheduler.jar in this checkout)")
    up.add_argument("--no-plugin", action="store_true", help="use Storm's default scheduler")
    up.add_argument("--no-planner", action="store_true", help="do not start the planner service")
    up.add_argument("--no-ui", action="store_true", help="do not start the Storm UI")
    up.add_argument("--no-dashboard", action="store_true", help="do not start storm-planner dashboard")
    up.add_argument("--zookeeper", metavar="HOST:PORT", help="use this ZooKeeper instead of starting one")
    _storm_options(up)
    up.add_argument("--python", default=sys.executable, metavar="PATH",
                    help="Python that runs the planner service (default: this one)")
    up.add_argument("--timeout", type=float, default=150.0, metavar="SECS",
                    help="how long each daemon may take to become healthy")
    up.add_argument("--network-probe-timeout", type=float, default=DEFAULT_PROBE_TIMEOUT_S, metavar="SECS",
                    help="emulated network: how long each supervisor's TCP connect to another may take "
                         f"before `up` fails (default {DEFAULT_PROBE_TIMEOUT_S:g})")
    up.set_defaults(handler=cmd_up)

    down = sub.add_parser("down", help="stop everything `up` started (workers included)")
    _common(down)
    down.set_defaults(handler=cmd_down)

    status = sub.add_parser("status", help="daemons, pids, ports, liveness and the supervisors Nimbus sees")
    _common(status)
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(handler=cmd_status)

    logs = sub.add_parser("logs", help="list the cluster's logs, or show one")
    _common(logs)
    logs.add_argument("daemon", nargs="?", help="e.g. nimbus, supervisor-sup-fast, planner, zookeeper, "
                                                "worker-<topology>-<port>; omit to list")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    logs.add_argument("-n", "--lines", type=int, default=60, help="how many last lines to show")
    logs.set_defaults(handler=cmd_logs)

    home = sub.add_parser("home", help="build (or rebuild) the cached Storm home and print its path")
    home.add_argument("--version", default=None, help="Storm version (default: the description's)")
    home.add_argument("--cluster", type=Path, metavar="FILE", help="cluster description")
    home.add_argument("--rebuild", action="store_true", help="rebuild even if cached")
    home.set_defaults(handler=cmd_home)

    # The docker-compose cluster, rendered from the same description (compose.py).
    compose_parser = add_compose_command(sub)
    compose_parser.add_argument("--hosts", action="store_true", help=compose_hosts.HOSTS_HELP)
    compose_parser.set_defaults(handler=_compose_or_hosts)


def _compose_or_hosts(args: argparse.Namespace) -> int:
    """``cluster compose``: the compose cluster's files, or with ``--hosts`` each machine's (compose_hosts.py)."""
    return compose_hosts.cmd_hosts(args) if args.hosts else cmd_compose(args)


def _storm_options(up: argparse.ArgumentParser) -> None:
    up.add_argument("--storm-version", metavar="VERSION",
                    help="run this Storm line instead of the description's storm_version (e.g. 2.6.4): its "
                         "home from Maven, and Nimbus with the plugin built for it (built the first time)")
    up.add_argument("--storm-home", type=Path, metavar="DIR",
                    help="use this Storm home (e.g. a binary distribution) instead of building one")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", type=Path, metavar="FILE",
                        help="cluster description YAML (default: the packaged default-cluster.yaml)")
    parser.add_argument("--name", help="cluster name (default: the description's)")
    parser.add_argument("--state-dir", type=Path, metavar="DIR",
                        help=f"state and logs directory (default: {default_state_root()}/<name>)")


def _cluster(args: argparse.Namespace, options: ClusterOptions | None = None) -> LocalCluster:
    try:
        description = load_description(args.cluster)
        if getattr(args, "port_offset", 0):
            description = description.with_offset(args.port_offset)
        if args.name:
            description = description.with_name(args.name)
        if getattr(args, "storm_version", None):
            description = description.with_storm_version(args.storm_version)
    except DescriptionError as error:
        raise CommandError(str(error)) from None
    return LocalCluster(description, args.state_dir, options)


def cmd_up(args: argparse.Namespace) -> int:
    options = ClusterOptions(
        plugin=not args.no_plugin,
        plugin_jar=args.plugin_jar,
        planner=not args.no_planner,
        ui=not args.no_ui,
        dashboard=not args.no_dashboard,
        zookeeper=args.zookeeper,
        storm_home=args.storm_home,
        python=args.python,
        start_timeout_s=args.timeout,
        network_probe_timeout_s=args.network_probe_timeout,
    )
    cluster = _cluster(args, options)
    try:
        cluster.up()
    except (ClusterError, StormHomeError) as error:
        raise CommandError(str(error)) from None
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    cluster.progress(f"stopping cluster {cluster.description.name!r} ({cluster.state_dir})")
    cluster.down()
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    status = cluster.status()
    if args.json:
        print(json.dumps(status, indent=2))
        return 0 if status["daemons"] else 1
    if not status["daemons"]:
        print(f"cluster {status['name']!r}: not running (state dir {status['state_dir']})")
        return 1
    print(f"cluster {status['name']!r}  state {status['state_dir']}")
    print(f"  {'DAEMON':<24}{'PID':>8}  {'PORT':>6}  ALIVE")
    for d in status["daemons"]:
        print(f"  {d['name']:<24}{d['pid']:>8}  {d['port'] or '':>6}  {'yes' if d['alive'] else 'NO'}")
    if not status.get("ui"):
        print(f"  {'ui':<24}{UI_UNAVAILABLE}")
    if status.get("dashboard"):
        print(f"  {'dashboard':<24}{status['dashboard']}")
    if "nimbus_error" in status:
        print(f"nimbus {status.get('nimbus')}: unreachable ({status['nimbus_error']})")
        return 1
    print(f"supervisors seen by nimbus {status['nimbus']}:")
    for s in status["supervisors"]:
        meta = ", ".join(f"{k}={v}" for k, v in sorted(s["meta"].items()))
        print(f"  {s['id']:<22} host {s['host']}  slots {s['used_slots']}/{s['slots']}  "
              f"cpu {s['cpu'] or 0:g}  memory {s['memory_mb'] or 0:g} MB  meta {{{meta}}}")
    if status.get("network"):
        net = status["network"]
        print(f"emulated network {net['subnet']} (this machine {net['master']}):")
        for link in net["links"]:
            counted = (f"received {link['received_bytes'] / 1e6:.1f} MB, sent {link['sent_bytes'] / 1e6:.1f} MB"
                       if "received_bytes" in link else link.get("error", ""))
            print(f"  {link['supervisor']:<22} {link['address']:<15} {link['mbit']:g} Mbit/s  {counted}")
    if status.get("topologies"):
        print("topologies:")
        for t in status["topologies"]:
            print(f"  {t['name']:<22} {t['id']}  {t['status']}  workers {t['workers']}  "
                  f"executors {t['executors']}")
    alive = all(d["alive"] for d in status["daemons"])
    return 0 if alive else 1


def cmd_logs(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    files = cluster.log_files()
    if not files:
        raise CommandError(f"no logs in {cluster.log_dir}")
    if not args.daemon:
        print(f"logs of cluster {cluster.description.name!r} in {cluster.log_dir}:")
        for name, path in files.items():
            print(f"  {name:<40} {path.stat().st_size:>10} bytes  {path}")
        return 0
    path = files.get(args.daemon)
    if path is None:
        matches = [n for n in files if args.daemon in n]
        if len(matches) != 1:
            raise CommandError(f"no single log named like {args.daemon!r}; have: {', '.join(files)}")
        path = files[matches[0]]
    _tail(path, args.lines, args.follow)
    return 0


def _tail(path: Path, lines: int, follow: bool) -> None:
    with open(path, errors="replace") as handle:
        for line in handle.readlines()[-lines:]:
            sys.stdout.write(line)
        sys.stdout.flush()
        while follow:
            line = handle.readline()
            if line:
                sys.stdout.write(line)
                sys.stdout.flush()
            else:
                time.sleep(0.5)


def cmd_home(args: argparse.Namespace) -> int:
    try:
        version = args.version or load_description(args.cluster).storm_version
        home = ensure_storm_home(version, rebuild=args.rebuild)
    except (DescriptionError, StormHomeError) as error:
        raise CommandError(str(error)) from None
    print(home.path)
    return 0
