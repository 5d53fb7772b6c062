"""``storm-planner serve`` and ``storm-planner health``."""
from __future__ import annotations

import argparse
import json
import os

from storm_planner.cli import CommandError
from storm_planner.service.transport.caller_limits import ServiceLimits
from storm_planner.service.transport.server import DEFAULT_HOST, DEFAULT_PORT
from storm_planner.submit.commands import NIMBUS_ENV


def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser("serve", help="run the planner service the Nimbus plugin calls")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"listen address (default {DEFAULT_HOST})")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    serve.add_argument("--default-algorithm", default="auto",
                       help="planner for topologies that name none (default auto: the recommended planner, "
                            "docs/capacity.md)")
    serve.add_argument("--plan-log", metavar="FILE",
                       help="append every plan answered to FILE as JSON lines")
    serve.add_argument("--problem-log", metavar="FILE",
                       help="append each topology's problem, as its planner saw it, to FILE as JSON lines "
                            "(one a round: replay one with `storm-planner plan`)")
    serve.add_argument("--nimbus", metavar="HOST:PORT", default=os.environ.get(NIMBUS_ENV),
                       help=f"Nimbus Thrift address, to rebalance topologies with planner.rebalance: true "
                            f"(default: ${NIMBUS_ENV}; none: never rebalance)")
    serve.add_argument("--metrics-port", type=int, metavar="P",
                       help="serve /metrics for Prometheus on port P (0: a free one; default: no metrics "
                            "endpoint); docs/monitoring.md")
    serve.add_argument("--metrics-host", default=DEFAULT_HOST, metavar="HOST",
                       help=f"address of the /metrics endpoint (default {DEFAULT_HOST})")
    _add_limit_arguments(serve)
    from storm_planner.service.metrics import add_serve_arguments

    add_serve_arguments(serve)
    serve.set_defaults(handler=serve_command)

    listing = subparsers.add_parser("settings", help="every planner.* key: type, default, range, who reads it "
                                                     "(the page docs/settings.md is)")
    listing.add_argument("--json", action="store_true", help="as a JSON list instead of the Markdown page")
    listing.set_defaults(handler=settings_command)

    health = subparsers.add_parser("health", help="ask a running planner service how it is")
    health.add_argument("--host", default=DEFAULT_HOST)
    health.add_argument("--port", type=int, default=DEFAULT_PORT)
    health.set_defaults(handler=health_command)


def _add_limit_arguments(serve: argparse.ArgumentParser) -> None:
    from storm_planner.service.planning.planlog import DEFAULT_MAX_LINE_MB, MAX_LINE_ENV  # light: no planner imported
    from storm_planner.service.transport import caller_limits as L

    group = serve.add_argument_group("limits and access (storm_planner.service.transport.caller_limits)")
    group.add_argument("--max-frame-mb", type=float, metavar="MB",
                       help=f"refuse a call larger than this (default {L.DEFAULT_MAX_FRAME_MB}; "
                            f"${L.ENV['max_frame_mb']})")
    group.add_argument("--max-executors", type=int, metavar="N",
                       help=f"refuse a request with more executors (default {L.DEFAULT_MAX_EXECUTORS:,}; "
                            f"${L.ENV['max_executors']})")
    group.add_argument("--max-connections", type=int, metavar="N",
                       help=f"connections served at once; more are closed at once (default "
                            f"{L.DEFAULT_MAX_CONNECTIONS}; ${L.ENV['max_connections']})")
    group.add_argument("--read-timeout-secs", dest="read_timeout_s", type=float, metavar="S",
                       help=f"close a connection idle this long, or that takes longer to send one call "
                            f"(default {L.DEFAULT_READ_TIMEOUT_S:g}; ${L.ENV['read_timeout_s']})")
    group.add_argument("--token-file", metavar="FILE",
                       help=f"plan calls must carry the token in FILE (the plugin's planner.service.token; "
                            f"default: ${L.TOKEN_ENV}; none: every caller is trusted)")
    group.add_argument("--plan-log-max-line-mb", type=float, metavar="MB",
                       help=f"a longer plan-log line is written as a summary (default {DEFAULT_MAX_LINE_MB:g}; "
                            f"${MAX_LINE_ENV})")


def _plan_log_max_line_mb(args: argparse.Namespace) -> float:
    from storm_planner.core.fields import env_number
    from storm_planner.service.planning.planlog import DEFAULT_MAX_LINE_MB, MAX_LINE_ENV

    value = args.plan_log_max_line_mb
    if value is None:
        value = env_number(os.environ, MAX_LINE_ENV, float, DEFAULT_MAX_LINE_MB, error=CommandError)
    if not 0 < value < float("inf"):
        raise CommandError(f"--plan-log-max-line-mb (${MAX_LINE_ENV}) must be a positive number, not {value}")
    return float(value)


def _limits(args: argparse.Namespace) -> ServiceLimits:
    from storm_planner.service.transport.caller_limits import LimitError, limits_from

    try:
        return limits_from(vars(args))
    except LimitError as error:
        raise CommandError(str(error)) from None


def serve_command(args: argparse.Namespace) -> int:
    from storm_planner.planners import available
    from storm_planner.service.serve import serve

    if args.default_algorithm not in available():
        raise CommandError(f"unknown default algorithm {args.default_algorithm!r}; "
                           f"known: {', '.join(available())}")
    if args.nimbus:
        from storm_planner.submit.operations import SubmitError, parse_nimbus

        try:
            parse_nimbus(args.nimbus)
        except SubmitError as error:
            raise CommandError(f"--nimbus: {error}") from None
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        raise CommandError(f"--metrics-port must be a port number (0 to 65535), not {args.metrics_port}")
    limits = _limits(args)
    max_line_mb = _plan_log_max_line_mb(args)
    from storm_planner.service.metrics import metrics_for_serve, service_state_for_serve
    from storm_planner.service.planning.runner import PlannerRunner
    from storm_planner.service.transport.server import hold_stop_signals

    hold_stop_signals()  # before the metrics store starts its threads
    runner = PlannerRunner()  # built first: the handler and the re-planner plan through it
    with metrics_for_serve(args, runner) as (metrics, replanner), service_state_for_serve(args) as kept:
        serve(args.host, args.port, args.default_algorithm, plan_log=args.plan_log,
              metrics=metrics, replanner=replanner, nimbus=args.nimbus, limits=limits,
              plan_log_max_line_mb=max_line_mb, runner=runner, problem_log=args.problem_log,
              metrics_port=args.metrics_port, metrics_host=args.metrics_host, drain_markers=kept.drain_markers,
              load_memory_store=kept.load_memory)
    return 0


def settings_command(args: argparse.Namespace) -> int:
    from storm_planner.core import settings

    print(json.dumps(settings.as_json(), indent=2) if args.json else settings.settings_page(), end="" if not args.json
          else "\n")
    return 0


def health_command(args: argparse.Namespace) -> int:
    from storm_planner.service.transport.client import health

    try:
        status = health(args.host, args.port)
    except Exception as error:
        raise CommandError(f"no planner service at {args.host}:{args.port} ({error})") from None
    counters = ",".join(f"{name}:{count}" for name, count in sorted((status.counters or {}).items()))
    print(f"{status.status} version={status.version} uptime={status.uptime_ms / 1000:.0f}s "
          f"algorithms={','.join(status.algorithms)}" + (f" counters={counters}" if counters else ""))
    return 0
