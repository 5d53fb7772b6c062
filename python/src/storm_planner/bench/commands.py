"""``storm-planner bench NAME``: every module of :mod:`storm_planner.bench` that lists its benchmarks in
``BENCHMARKS`` (:class:`storm_planner.bench.report.Benchmark`) contributes them here."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Iterator

import storm_planner.bench as bench_package
from storm_planner.bench.report import Benchmark


def registered_benchmarks() -> Iterator[tuple[str, Benchmark]]:
    """(module, benchmark) for every benchmark of every public module of :mod:`storm_planner.bench`, in
    the order of the modules' names."""
    for module_info in pkgutil.walk_packages(bench_package.__path__, f"{bench_package.__name__}."):
        if any(part.startswith("_") for part in module_info.name.split(".")) or module_info.name.endswith(".commands"):
            continue
        module = importlib.import_module(module_info.name)
        for benchmark in getattr(module, "BENCHMARKS", ()):
            yield module.__name__, benchmark


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser("bench", help="run a benchmark (tables, plots, report figures)")
    benchmarks = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    benchmarks.required = True
    for _, benchmark in registered_benchmarks():
        benchmark.add_to(benchmarks)
