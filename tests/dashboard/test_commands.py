"""``storm-planner dashboard``: clear one-line errors, and nothing on standard output."""
from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "storm_planner", "dashboard", *args],
                          capture_output=True, text=True, timeout=60)


def test_needs_a_source():
    result = run()
    assert result.returncode == 2 and result.stdout == ""
    assert "give --plan-log FILE and/or --nimbus" in result.stderr


def test_bad_nimbus_address(tmp_path):
    result = run("--plan-log", str(tmp_path / "p.jsonl"), "--nimbus", "nohostport")
    assert result.returncode == 2 and "--nimbus 'nohostport': expected HOST:PORT" in result.stderr


def test_plan_log_directory(tmp_path):
    result = run("--plan-log", str(tmp_path))
    assert result.returncode == 2 and "is a directory" in result.stderr


def test_help_lists_the_options():
    result = subprocess.run([sys.executable, "-m", "storm_planner", "dashboard", "--help"],
                            capture_output=True, text=True, timeout=60)
    for option in ("--plan-log", "--nimbus", "--zookeeper", "--port"):
        assert option in result.stdout


def test_serving_prints_nothing_on_standard_output(tmp_path):
    """The address and uvicorn's lines go to standard error; standard output stays empty."""
    from .conftest import DATA, free_port, wait_http

    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "storm_planner", "dashboard", "--port", str(port),
                                "--plan-log", str(DATA / "plan-log.jsonl")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/snapshot", process)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=20)
    assert out == ""
    assert f"dashboard: http://127.0.0.1:{port}/" in err
    assert "line 3 skipped: not JSON" in err


def test_refresh_and_bounds_must_be_sane(tmp_path):
    import argparse

    import pytest

    from storm_planner.cli import CommandError
    from storm_planner.dashboard.commands import add_commands, check_bounds

    result = run("--plan-log", str(tmp_path / "p.jsonl"), "--refresh", "nan")
    assert result.returncode == 2 and "--refresh nan: expected seconds from 0.5 to 3600" in result.stderr
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())

    def check(*args: str) -> None:
        check_bounds(parser.parse_args(["dashboard", "--plan-log", "p.jsonl", *args]))

    check("--refresh", "0.5", "--allowed-host", "dash.example")
    for value in ("inf", "0", "-1", "100000"):
        with pytest.raises(CommandError, match=f"--refresh {float(value)}: expected seconds from 0.5 to 3600"):
            check("--refresh", value)
    for flag in ("--history", "--page-size", "--max-line-bytes", "--max-line-depth", "--max-int-digits",
                 "--metrics-history"):
        with pytest.raises(CommandError, match=f"{flag} 0: expected 1 or more"):
            check(flag, "0")
    with pytest.raises(CommandError, match="--allowed-host 'evil.example:80/x'"):
        check("--allowed-host", "evil.example:80/x")
    for value in ("nan", "-1", "4000"):
        with pytest.raises(CommandError, match=f"--settle {float(value)}: expected seconds from 0 to 3600"):
            check("--settle", value)
    with pytest.raises(CommandError, match="--metrics-history 1000000: at most 100000"):
        check("--metrics-history", "1000000")
