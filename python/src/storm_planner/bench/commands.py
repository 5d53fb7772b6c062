"""``storm-planner bench NAME``: every module of :mod:`storm_planner.bench` that defines
``add_benchmarks(subparsers)`` contributes its benchmarks here."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType, SimpleNamespace

import storm_planner.bench as bench_package


def bench_modules() -> Iterator[ModuleType]:
    """Every public module of :mod:`storm_planner.bench` that registers benchmarks."""
    for module_info in pkgutil.walk_packages(bench_package.__path__, f"{bench_package.__name__}."):
        if module_info.name.rsplit(".", 1)[-1].startswith("_") or module_info.name.endswith(".commands"):
            continue
        module = importlib.import_module(module_info.name)
        if hasattr(module, "add_benchmarks") and module.add_benchmarks.__module__ == module.__name__:
            yield module


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser("bench", help="run a benchmark (tables, plots, report figures)")
    benchmarks = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    benchmarks.required = True
    for module in bench_modules():
        module.add_benchmarks(benchmarks)


def registered_benchmarks() -> Iterator[tuple[str, SimpleNamespace]]:
    """(module, benchmark) for every benchmark a module registers: its ``name`` and ``experiments``."""
    for module in bench_modules():
        parser = argparse.ArgumentParser()
        found = parser.add_subparsers()
        module.add_benchmarks(found)
        for name, sub in found.choices.items():
            experiments = next((a.choices for a in sub._actions if a.dest == "experiment"), None) or ()
            yield module.__name__, SimpleNamespace(name=name, experiments=tuple(e for e in experiments if e != "all"))
