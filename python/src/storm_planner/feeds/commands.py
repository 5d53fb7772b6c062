"""``storm-planner feeds build`` and ``storm-planner feeds oracle``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    feeds = subparsers.add_parser("feeds", help="build replay feeds (PySpark) and compute topology oracles")
    commands = feeds.add_subparsers(dest="feeds_command", metavar="SUBCOMMAND")
    commands.required = True

    build = commands.add_parser("build", help="build time-ordered, partitioned, compressed replay feeds",
                                description=_doc("storm_planner.feeds.build"),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    build.add_argument("kind", choices=("tweets", "stocks", "airline", "worldcup"))
    build.add_argument("--out", required=True, help="output directory")
    build.add_argument("--input", action="append", default=[], metavar="PATH",
                       help="input file or directory of the real dataset (repeatable)")
    build.add_argument("--weather", action="append", default=[], metavar="PATH",
                       help="airline: NOAA GSOD files (.op[.gz] or CSV), repeatable")
    build.add_argument("--stations", metavar="FILE", help="airline: NOAA isd-history.csv (airport → station)")
    build.add_argument("--synthetic", action="store_true", help="generate the dataset instead of reading it")
    build.add_argument("--records", type=int, default=100_000, help="synthetic: number of records (default 100000)")
    build.add_argument("--seed", type=int, help="synthetic: random seed")
    build.add_argument("--partitions", type=int, default=8, help="output part files per feed (default 8)")
    build.add_argument("--drift-every", type=int, default=0, metavar="FLIGHTS",
                       help="synthetic airline: the hot planes and airports change every FLIGHTS flights "
                            "(default 0: a fixed skew)")
    _spark_options(build)
    build.set_defaults(handler=build_command)

    oracle = commands.add_parser("oracle", help="compute what a topology must output once its feed drained")
    kinds = oracle.add_subparsers(dest="oracle_kind", metavar="TOPOLOGY")
    kinds.required = True
    trends = kinds.add_parser("trends", help="top-k topics")
    trends.add_argument("--feed", required=True)
    trends.add_argument("--k", type=int, default=10)
    bargains = kinds.add_parser("bargains", help="the set of bargain quotes")
    bargains.add_argument("--trades", required=True)
    bargains.add_argument("--quotes", required=True)
    bargains.add_argument("--margin", type=float, default=0.005)
    bargains.add_argument("--window-s", type=float, default=600.0)
    airline = kinds.add_parser("airline", help="delay sums of Real Job 2, 3 or 4")
    airline.add_argument("--job", type=int, choices=(2, 3, 4), default=2)
    airline.add_argument("--flights", required=True)
    airline.add_argument("--weather", help="Job 4: the weather feed")
    airline.add_argument("--stations", help="Job 4: stations.jsonl (airport → station)")
    worldcup = kinds.add_parser("worldcup", help="World Cup 1998: top-k objects, URL token counts, or the "
                                "requests and bytes per catalogue section")
    worldcup.add_argument("--job", choices=("topk", "wordcount", "join"), default="topk")
    worldcup.add_argument("--requests", required=True, help="the requests feed")
    worldcup.add_argument("--catalogue", help="join: catalogue.jsonl")
    worldcup.add_argument("--k", type=int, default=10)
    for parser in (trends, bargains, airline, worldcup):
        parser.add_argument("--output", "-o", help="write the JSON here instead of standard output")
        _spark_options(parser)
        parser.set_defaults(handler=oracle_command)


def _spark_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")


def _doc(module: str) -> str:
    import importlib
    return importlib.import_module(module).__doc__ or ""


def _session(args):
    from storm_planner.cli import CommandError
    from storm_planner.feeds.spark import spark_session
    try:
        return spark_session(args.master)
    except RuntimeError as error:
        raise CommandError(str(error)) from None


def build_command(args) -> int:
    from storm_planner.cli import CommandError
    from storm_planner.feeds.build import build_feeds
    from storm_planner.feeds.spark import SparkDriverError
    from storm_planner.feeds.write import describe
    if args.records < 1:
        raise CommandError("--records must be positive")
    spark = _session(args)
    try:
        summaries = build_feeds(spark, args.kind, args.out, inputs=args.input, weather=args.weather,
                                stations=args.stations, synthetic=args.synthetic, records=args.records,
                                seed=args.seed, partitions=args.partitions, drift_every=args.drift_every)
    except (ValueError, FileNotFoundError, SparkDriverError) as error:
        raise CommandError(str(error)) from None
    for name, summary in summaries.items():
        print(f"{name}: {describe(summary)}")
    return 0


def oracle_command(args) -> int:
    from storm_planner.cli import CommandError
    from storm_planner.feeds import oracles
    if args.oracle_kind == "airline" and args.job == 4 and not (args.weather and args.stations):
        raise CommandError("Job 4 needs --weather and --stations")
    if args.oracle_kind == "worldcup" and args.job == "join" and not args.catalogue:
        raise CommandError("the join needs --catalogue")
    spark = _session(args)  # not stopped here: the JVM ends with the process, and tests share it
    if args.oracle_kind == "trends":
        result = {"rankings": oracles.trends_top_k(spark, args.feed, args.k), "k": args.k}
    elif args.oracle_kind == "bargains":
        result = {"bargains": oracles.bargains(spark, args.trades, args.quotes, args.margin, args.window_s),
                  "margin": args.margin, "window_s": args.window_s}
    elif args.oracle_kind == "worldcup":
        result = {"job": args.job, "result": (
            oracles.worldcup_top_k(spark, args.requests, args.k) if args.job == "topk"
            else oracles.worldcup_word_count(spark, args.requests) if args.job == "wordcount"
            else oracles.worldcup_join(spark, args.requests, args.catalogue))}
    else:
        result = {"job": args.job,
                  **oracles.airline_tables(spark, args.flights, args.job, args.weather, args.stations)}
    text = json.dumps(result)
    if args.output:
        Path(args.output).write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0
