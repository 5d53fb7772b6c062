"""``storm-planner dashboard``: serve the web dashboard from a plan log and/or a live cluster."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from storm_planner.cli import CommandError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090

log = logging.getLogger(__name__)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    dash = subparsers.add_parser(
        "dashboard", help="web dashboard: the cluster, every plan and why (works from a plan log alone)")
    dash.add_argument("--plan-log", metavar="FILE", help="the planner service's plan log (JSON lines)")
    dash.add_argument("--nimbus", metavar="HOST:PORT", help="Nimbus Thrift address of a running cluster")
    dash.add_argument("--zookeeper", metavar="HOST:PORT",
                      help="ZooKeeper of a running cluster (supervisors' machine types)")
    dash.add_argument("--host", default=DEFAULT_HOST, help=f"listen address (default {DEFAULT_HOST})")
    dash.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    dash.add_argument("--reports", metavar="DIR",
                      help="benchmark reports directory to link plots from (default: the checkout's "
                           "benchmarks/reports, if any)")
    dash.add_argument("--refresh", type=float, default=3.0, metavar="SECONDS",
                      help="how often the page refreshes (default 3)")
    dash.set_defaults(handler=dashboard_command)


def dashboard_command(args: argparse.Namespace) -> int:
    try:
        from storm_planner.dashboard.live import ClusterSource
        from storm_planner.dashboard.server import create_app, find_reports_dir, serve
    except ModuleNotFoundError as error:
        raise CommandError(f"the dashboard needs {error.name} (pip install storm-planner)") from None
    if not (args.plan_log or args.nimbus or args.zookeeper):
        raise CommandError("give --plan-log FILE and/or --nimbus HOST:PORT (and --zookeeper HOST:PORT)")
    if args.plan_log and Path(args.plan_log).is_dir():
        raise CommandError(f"--plan-log {args.plan_log} is a directory, expected the plan log file")
    if not 0 < args.port < 65536:
        raise CommandError(f"--port {args.port}: expected 1-65535")
    try:
        cluster = ClusterSource(args.nimbus, args.zookeeper)
    except ValueError as error:
        raise CommandError(str(error)) from None
    reports = Path(args.reports) if args.reports else find_reports_dir()
    if args.reports and not reports.is_dir():
        raise CommandError(f"--reports {args.reports} is not a directory")
    app = create_app(Path(args.plan_log) if args.plan_log else None, cluster, reports, args.refresh)
    print(f"dashboard: http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    try:
        serve(app, args.host, args.port)
    finally:
        cluster.close()
    return 0
