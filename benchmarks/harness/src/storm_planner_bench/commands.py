"""``storm-planner bench NAME``: every module of :mod:`storm_planner_bench` that lists its benchmarks in
``BENCHMARKS`` (:class:`storm_planner_bench.common.report.Benchmark`) contributes them here. The library's
CLI reaches :func:`add_commands` through the ``storm_planner.commands`` entry point (the harness's
pyproject.toml)."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Iterator

import storm_planner_bench as bench_package
from storm_planner_bench.common.report import Benchmark


def registered_benchmarks() -> Iterator[tuple[str, Benchmark]]:
    """(module, benchmark) for every benchmark of every module of :mod:`storm_planner_bench`, module by
    module in the order of their first benchmark's name (each module's own in its order)."""
    found = []
    for module_info in pkgutil.walk_packages(bench_package.__path__, f"{bench_package.__name__}."):
        if module_info.name.endswith(".commands"):
            continue
        module = importlib.import_module(module_info.name)
        benchmarks = getattr(module, "BENCHMARKS", ())
        if benchmarks:
            found.append((benchmarks[0].name, module.__name__, benchmarks))
    for _, module_name, benchmarks in sorted(found):
        for benchmark in benchmarks:
            yield module_name, benchmark


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser("bench", help="run a benchmark (tables, plots, report figures)")
    benchmarks = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    benchmarks.required = True
    for _, benchmark in registered_benchmarks():
        benchmark.add_to(benchmarks)
