"""``storm-planner serve`` and ``storm-planner health``."""
from __future__ import annotations

import argparse
import os

from storm_planner.cli import CommandError
from storm_planner.service.server import DEFAULT_HOST, DEFAULT_PORT
from storm_planner.submit.commands import NIMBUS_ENV


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser("serve", help="run the planner service the Nimbus plugin calls")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"listen address (default {DEFAULT_HOST})")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    serve.add_argument("--default-algorithm", default="even",
                       help="planner for topologies that name none (default even)")
    serve.add_argument("--plan-log", metavar="FILE",
                       help="append every plan answered to FILE as JSON lines")
    serve.add_argument("--nimbus", metavar="HOST:PORT", default=os.environ.get(NIMBUS_ENV),
                       help=f"Nimbus Thrift address, to rebalance topologies with planner.rebalance: true "
                            f"(default: ${NIMBUS_ENV}; none: never rebalance)")
    from storm_planner.service.metrics import add_serve_arguments

    add_serve_arguments(serve)
    serve.set_defaults(handler=serve_command)

    health = subparsers.add_parser("health", help="ask a running planner service how it is")
    health.add_argument("--host", default=DEFAULT_HOST)
    health.add_argument("--port", type=int, default=DEFAULT_PORT)
    health.set_defaults(handler=health_command)


def serve_command(args: argparse.Namespace) -> int:
    from storm_planner.planners import available
    from storm_planner.service.server import serve

    if args.default_algorithm not in available():
        raise CommandError(f"unknown default algorithm {args.default_algorithm!r}; "
                           f"known: {', '.join(available())}")
    if args.nimbus:
        from storm_planner.submit.operations import SubmitError, parse_nimbus

        try:
            parse_nimbus(args.nimbus)
        except SubmitError as error:
            raise CommandError(f"--nimbus: {error}") from None
    from storm_planner.service.metrics import metrics_for_serve
    from storm_planner.service.server import hold_stop_signals

    hold_stop_signals()  # before the metrics store starts its threads
    with metrics_for_serve(args) as (metrics, replanner):
        serve(args.host, args.port, args.default_algorithm, plan_log=args.plan_log,
              metrics=metrics, replanner=replanner, nimbus=args.nimbus)
    return 0


def health_command(args: argparse.Namespace) -> int:
    from storm_planner.service.client import health

    try:
        status = health(args.host, args.port)
    except Exception as error:
        raise CommandError(f"no planner service at {args.host}:{args.port} ({error})") from None
    print(f"{status.status} version={status.version} uptime={status.uptime_ms / 1000:.0f}s "
          f"algorithms={','.join(status.algorithms)}")
    return 0
