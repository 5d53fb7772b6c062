"""Standard output carries the answer alone: no solver banner or library chatter.

Every registered planner runs through the real CLI (a subprocess, so native
libraries write to a real descriptor 1) and its standard output must parse as
one JSON plan; through the Python API, nothing may reach descriptor 1 at all.
What the solvers print is still available: at debug level in the log.
"""
from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

import storm_planner
from storm_planner.core.quiet import native_output_to_log
from storm_planner.generators.nasiri import micro_problem
from storm_planner.planners import available

# MILP planners get a short limit: the problem is tiny, and this test is about output, not quality.
PARAMS = {"milp": ["-p", "solver=highs"], "albic": ["-p", "solver=highs"]}


def small_problem() -> dict:
    """Every planner's inputs at once: profiles (hetero), two slots per node, a migration budget."""
    problem = micro_problem("linear", "paper", time_limit_s=2, max_migrations=4)
    problem["nodes"] = [dict(node, slots=[6700, 6701]) for node in problem["nodes"]]
    return problem


@pytest.fixture(scope="module")
def problem_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("problem") / "linear.json"
    path.write_text(json.dumps(small_problem()))
    return path


@pytest.mark.parametrize("algorithm", sorted(available()))
def test_the_cli_prints_the_plan_alone(algorithm, problem_file):
    out = subprocess.run([sys.executable, "-m", "storm_planner", "plan", "-a", algorithm,
                          *PARAMS.get(algorithm, []), str(problem_file)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)  # fails on any banner before or after the JSON
    assert plan["algorithm"] == algorithm and plan["assignments"]


@pytest.mark.parametrize("algorithm", ["milp", "albic", "cola", "hetero"])
def test_the_api_writes_nothing_on_descriptor_1(algorithm, capfd):
    # milp/albic: HiGHS through highspy; cola: METIS; hetero: HiGHS through PuLP (fluid bound).
    plan = storm_planner.plan(small_problem(), algorithm=algorithm, solver="highs") \
        if algorithm in ("milp", "albic") else storm_planner.plan(small_problem(), algorithm=algorithm)
    assert plan["assignments"]
    out, _ = capfd.readouterr()
    assert out == ""


def test_what_native_code_prints_goes_to_the_debug_log(capfd, caplog):
    import os

    logger = logging.getLogger("storm_planner.test.native")
    with caplog.at_level(logging.DEBUG, logger=logger.name):
        with native_output_to_log(logger, "a native library"):
            with native_output_to_log(logger, "a nested call"):
                os.write(1, b"Running Something 1.0\n")
            os.write(1, b"second line\n")
        print("after the capture")
    out, _ = capfd.readouterr()
    assert out == "after the capture\n"
    logged = [r.getMessage() for r in caplog.records if r.name == logger.name]
    assert logged == ["a native library printed:\nRunning Something 1.0\nsecond line"]
