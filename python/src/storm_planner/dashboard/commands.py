"""``storm-planner dashboard``: serve the dashboard (uvicorn) until interrupted."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from storm_planner.cli import CommandError
from storm_planner.cluster.errors import ClusterError
from storm_planner.cluster.locations import repo_root
from storm_planner.cluster.probes import parse_host_port

from .app import create_app
from .sources import nimbus_supervisors, zookeeper_supervisors

DEFAULT_PORT = 8090


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    cmd = subparsers.add_parser("dashboard", help="web dashboard: supervisors, plans and why, fallbacks")
    cmd.add_argument("--plan-log", metavar="FILE", help="the planner service's plan log (serve --plan-log)")
    cmd.add_argument("--zookeeper", metavar="HOST:PORT", help="read supervisors (with machine types) from ZooKeeper")
    cmd.add_argument("--nimbus", metavar="HOST:PORT", help="read supervisors from Nimbus (when no --zookeeper)")
    cmd.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s, loopback)")
    cmd.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    cmd.add_argument("--refresh", type=float, default=3.0, help="page refresh period, seconds (default: %(default)s)")
    cmd.set_defaults(handler=dashboard_command)


def dashboard_command(args: argparse.Namespace) -> int:
    import uvicorn

    if not (args.plan_log or args.zookeeper or args.nimbus):
        raise CommandError("nothing to show: give --plan-log FILE, --zookeeper HOST:PORT or --nimbus HOST:PORT")
    try:
        supervisors = (zookeeper_supervisors(args.zookeeper) if args.zookeeper else
                       nimbus_supervisors(*parse_host_port(args.nimbus, what="--nimbus")) if args.nimbus else None)
        if args.zookeeper:
            parse_host_port(args.zookeeper, what="--zookeeper")
    except ClusterError as error:
        raise CommandError(str(error)) from None
    root = repo_root()
    app = create_app(Path(args.plan_log) if args.plan_log else None, supervisors, args.refresh,
                     reports_dir=root / "benchmarks" / "reports" if root else None)
    # Progress to standard error: standard output carries a command's answer alone.
    print(f"dashboard on http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=logging.WARNING, access_log=False)
    return 0
