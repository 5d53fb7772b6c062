"""The library (python/, ``storm_planner``) installs and runs without the benchmark harness
(benchmarks/harness, ``storm_planner_bench``): the harness adds ``storm-planner bench`` through the
``storm_planner.commands`` entry point, and without it the CLI still plans, serves and runs the demo.
The import-linter contract that storm_planner imports nothing of the harness is in python/pyproject.toml."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from storm_planner import cli

ROOT = Path(__file__).resolve().parents[1]
# Run in a child Python: the harness (every module of it) cannot be imported, as if it were not installed.
WITHOUT_HARNESS = """
import sys
from importlib.abc import MetaPathFinder

class NoHarness(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "storm_planner_bench" or name.startswith("storm_planner_bench."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoHarness())
from storm_planner.cli import main
sys.exit(main(sys.argv[1:]))
"""


def commands(parser) -> set[str]:
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    return set(subparsers.choices)


def test_the_harness_adds_bench_through_the_entry_point():
    from importlib.metadata import entry_points

    assert "storm_planner_bench.commands" in {e.module for e in entry_points(group=cli.COMMAND_GROUP)}
    assert "bench" in commands(cli.build_parser())


def test_without_the_harness_the_cli_has_plan_serve_and_demo_and_no_bench(monkeypatch):
    for name in [m for m in sys.modules if m == "storm_planner_bench" or m.startswith("storm_planner_bench.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "storm_planner_bench", None)   # import raises ModuleNotFoundError
    found = commands(cli.build_parser())
    assert {"plan", "serve", "demo", "algorithms", "cluster"} <= found
    assert "bench" not in found


def test_without_the_harness_storm_planner_plans_and_serve_and_demo_answer(tmp_path):
    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", WITHOUT_HARNESS, *argv], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)

    planned = run("plan", str(ROOT / "tests" / "data" / "small-problem.json"))
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["assignments"]
    for command in ("serve", "demo"):
        shown = run(command, "--help")
        assert shown.returncode == 0 and "usage: storm-planner " + command in shown.stdout, shown.stderr
    refused = run("bench", "e2e", "--help")
    assert refused.returncode == 2 and "invalid choice: 'bench'" in refused.stderr


@pytest.mark.slow
def test_the_library_wheel_holds_no_benchmark_module(tmp_path):
    """``pip wheel --no-deps python/`` (on a copy: the build writes beside its sources) ships storm_planner
    alone: neither the harness nor a bench module of the library's own."""
    source = tmp_path / "python"
    shutil.copytree(ROOT / "python", source, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "wheels"), str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "wheels").glob("storm_planner-*.whl")
    with zipfile.ZipFile(wheel) as built_wheel:
        names = built_wheel.namelist()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        declared = built_wheel.read(entry_points).decode()
    assert "storm_planner/cli.py" in names
    assert not [n for n in names if n.startswith(("storm_planner_bench", "storm_planner/bench/"))]
    assert "storm_planner_bench" not in declared
