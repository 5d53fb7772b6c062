"""``storm-planner dashboard``: serve the web dashboard from a plan log and/or a live cluster."""
from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

from storm_planner.cli import CommandError
from storm_planner.dashboard.model import DEFAULT_PAGE_SIZE
from storm_planner.dashboard.planlog_reader import (
    DEFAULT_HISTORY,
    DEFAULT_MAX_INT_DIGITS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_LINE_DEPTH,
    line_limits,
)
from storm_planner.dashboard.timeline import DEFAULT_METRICS_HISTORY, DEFAULT_SETTLE_S

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8090
REFRESH_RANGE_S = (0.5, 3600.0)
SETTLE_MAX_S = 3600.0
METRICS_HISTORY_MAX = 100_000   # steps per topology: a step is ~1 KB, for at most 100 topologies

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
                      help=f"how often the page refreshes (default 3; {REFRESH_RANGE_S[0]:g} to {REFRESH_RANGE_S[1]:g})")
    dash.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                      help="another host name the page may be opened by (repeatable; always allowed: "
                           "the --host address, localhost, 127.0.0.1, ::1); others get 421")
    limits = dash.add_argument_group("plan-log bounds")
    limits.add_argument("--history", type=int, default=DEFAULT_HISTORY, metavar="N",
                        help=f"plan-log records kept in memory, the newest (default {DEFAULT_HISTORY})")
    limits.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE, metavar="N",
                        help=f"plans (and rebalances) one page refresh or /api/plans call carries "
                             f"(default {DEFAULT_PAGE_SIZE})")
    limits.add_argument("--max-line-bytes", type=int, default=DEFAULT_MAX_LINE_BYTES, metavar="BYTES",
                        help=f"longer plan-log lines are skipped and counted (default {DEFAULT_MAX_LINE_BYTES})")
    limits.add_argument("--max-line-depth", type=int, default=DEFAULT_MAX_LINE_DEPTH, metavar="N",
                        help=f"lines nested deeper are skipped and counted (default {DEFAULT_MAX_LINE_DEPTH})")
    limits.add_argument("--max-int-digits", type=int, default=DEFAULT_MAX_INT_DIGITS, metavar="N",
                        help=f"lines with a longer integer are skipped and counted (default {DEFAULT_MAX_INT_DIGITS})")
    trend = dash.add_argument_group("trends (metrics windows from ZooKeeper)")
    trend.add_argument("--metrics-history", type=int, default=DEFAULT_METRICS_HISTORY, metavar="N",
                       help=f"time steps (one metrics period each) kept per topology, the newest "
                            f"(default {DEFAULT_METRICS_HISTORY})")
    trend.add_argument("--settle", type=float, default=DEFAULT_SETTLE_S, metavar="SECONDS",
                       help=f"after a plan, how long its first windows are left out of its 'after' figures "
                            f"(default {DEFAULT_SETTLE_S:g}, as planner.replan.settle.secs)")
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
    check_bounds(args)
    try:
        cluster = ClusterSource(args.nimbus, args.zookeeper)
    except ValueError as error:
        raise CommandError(str(error)) from None
    if args.reports and not Path(args.reports).is_dir():
        raise CommandError(f"--reports {args.reports} is not a directory")
    reports = Path(args.reports) if args.reports else find_reports_dir()
    app = create_app(Path(args.plan_log) if args.plan_log else None, cluster, reports, args.refresh,
                     history=args.history, page_size=args.page_size,
                     limits=line_limits(args.max_line_bytes, args.max_line_depth, args.max_int_digits),
                     allowed_hosts=[args.host, "localhost", "127.0.0.1", "::1", *args.allowed_host],
                     metrics_history=args.metrics_history, settle_s=args.settle)
    print(f"dashboard: http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    try:
        serve(app, args.host, args.port)
    finally:
        cluster.close()
    return 0


def check_bounds(args: argparse.Namespace) -> None:
    """Refuse a refresh interval or a bound that makes no sense, naming the flag."""
    low, high = REFRESH_RANGE_S
    if not (math.isfinite(args.refresh) and low <= args.refresh <= high):
        raise CommandError(f"--refresh {args.refresh}: expected seconds from {low:g} to {high:g}")
    if not (math.isfinite(args.settle) and 0 <= args.settle <= SETTLE_MAX_S):
        raise CommandError(f"--settle {args.settle}: expected seconds from 0 to {SETTLE_MAX_S:g}")
    if args.metrics_history > METRICS_HISTORY_MAX:
        raise CommandError(f"--metrics-history {args.metrics_history}: at most {METRICS_HISTORY_MAX}")
    for flag in ("history", "page_size", "max_line_bytes", "max_line_depth", "max_int_digits", "metrics_history"):
        if getattr(args, flag) < 1:
            raise CommandError(f"--{flag.replace('_', '-')} {getattr(args, flag)}: expected 1 or more")
    for host in args.allowed_host:
        if not host.strip() or any(c in host for c in "/ @"):
            raise CommandError(f"--allowed-host {host!r}: expected a host name or address, no port or path")
