"""``storm-planner bench NAME``: every module of :mod:`storm_planner.bench` that defines
``add_benchmarks(subparsers)`` contributes its benchmarks here."""
from __future__ import annotations

import argparse
import importlib
import pkgutil

import storm_planner.bench as bench_package


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser("bench", help="run a benchmark (tables, plots, report figures)")
    benchmarks = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    benchmarks.required = True
    for module_info in pkgutil.iter_modules(bench_package.__path__):
        if module_info.name == "commands" or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{bench_package.__name__}.{module_info.name}")
        if hasattr(module, "add_benchmarks"):
            module.add_benchmarks(benchmarks)
