"""Standard output carries the answer alone: no solver banner or library chatter.

Every registered planner runs through the real CLI (a subprocess, so native
libraries write to a real descriptor 1) and its standard output must parse as
one JSON plan; through the Python API, nothing may reach descriptor 1 at all.
What the solvers print is still available: at debug level in the log.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile

import pytest

import storm_planner
from storm_planner.core.quiet import native_output_to_log
from storm_planner.generators.hetero import micro_problem
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


def test_a_reader_that_goes_away_ends_the_cli_quietly_in_a_pipe_into_head():
    # `storm-planner algorithms --params | head -1`: head exits after one line; whether the CLI then
    # still writes (and meets the closed pipe) is a race, so both endings are allowed, neither with a traceback.
    script = (f"{sys.executable} -m storm_planner algorithms --params 2>err.txt | head -1; "
              "echo status ${PIPESTATUS[0]}; cat err.txt")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=tempfile.mkdtemp(prefix="broken-pipe-"))
    first, status, *stderr = out.stdout.split("\n")
    assert first.split()[0] in available()
    assert status in ("status 0", "status 141"), out.stdout
    assert "Traceback" not in out.stdout and "BrokenPipeError" not in out.stdout, out.stdout


def test_a_closed_standard_output_ends_the_cli_with_sigpipes_status_and_no_traceback():
    # The reader is gone before the CLI writes anything: its writes must fail (deterministically).
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run([sys.executable, "-m", "storm_planner", "algorithms", "--params"], stdout=write_end,
                             stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert out.returncode == 141, out.stderr
    assert out.stderr == ""
