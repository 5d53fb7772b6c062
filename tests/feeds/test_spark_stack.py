"""The locked PySpark stack is clean: a pandas the locked pyspark supports, and a feed build that prints
no warning (pyspark 4.3 warns on every Spark start under pandas 3)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The one line the JVM itself prints on standard error: Spark 4 always starts it with the Vector API
# (an incubator module), and no option silences the JVM's notice of it.
JVM_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"
# Every Python warning shown, also those hidden by default (DeprecationWarning, ImportWarning), but for the
# ResourceWarnings of objects left open at exit: the command leaves its Spark session (and the gateway's
# socket) for the process' end to close, as the in-process tests share the session.
SHOW_WARNINGS = "default,ignore::ResourceWarning"


def test_the_lock_pins_a_pandas_below_3_as_the_feeds_extra_asks():
    pins = re.findall(r"^pandas==(\d+)\.", (REPO / "python" / "requirements.lock").read_text(), re.M)
    assert pins and all(int(major) < 3 for major in pins)
    assert '"pandas<3"' in (REPO / "python" / "pyproject.toml").read_text()


def test_the_installed_pandas_is_one_the_installed_pyspark_supports_without_a_warning():
    pytest.importorskip("pyspark")
    from pyspark.sql.pandas.utils import require_minimum_pandas_version
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        require_minimum_pandas_version()


@pytest.mark.slow
def test_feeds_build_prints_no_warning(tmp_path):
    pytest.importorskip("pyspark")
    run = subprocess.run(
        [sys.executable, "-m", "storm_planner", "feeds", "build", "tweets", "--synthetic", "--records", "300",
         "--partitions", "2", "--out", str(tmp_path / "tweets")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": SHOW_WARNINGS})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "tweets: 300 records" in run.stdout
    assert "does not yet fully support" not in run.stderr
    assert not re.search(r"\w+Warning\b", run.stderr), run.stderr   # FutureWarning, DeprecationWarning, ...
    others = [line for line in run.stderr.splitlines() if line != JVM_NOTICE]
    assert not [line for line in others if re.search(r"warn|\bINFO\b", line, re.I)], run.stderr
