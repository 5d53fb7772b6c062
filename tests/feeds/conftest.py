"""One Spark session for the feed tests (start-up is slow): local[2], quiet."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"

for project in ("trends", "bargains", "airline"):
    src = REPO / "topologies" / project / "src"
    if str(src) not in sys.path:
        sys.path.insert(0, str(src))


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from storm_planner.feeds.spark import spark_session
    session = spark_session("local[2]", app="storm-planner-tests", shuffle_partitions=2)
    yield session
    session.stop()


@pytest.fixture
def data() -> Path:
    return DATA
