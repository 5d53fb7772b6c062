"""Fixtures for the cluster and submit tests, reusable by end-to-end tests.

``storm_cluster`` starts a real cluster (on free ports, state under the
test's tmp dir) and always tears it down::

    def test_x(storm_cluster, wordcount_project):
        cluster = storm_cluster(plugin=False, planner=False)
        nimbus = cluster.addresses.nimbus

Outside pytest, use ``storm_planner.cluster.running_cluster`` directly.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def wordcount_project() -> Path:
    """A tiny streamparse project: a finite word spout and a counting bolt."""
    return FIXTURES / "wordcount"


@pytest.fixture
def storm_cluster(tmp_path):
    """Factory: ``storm_cluster(**ClusterOptions fields)`` → a running LocalCluster."""
    from storm_planner.cluster import running_cluster

    with contextlib.ExitStack() as stack:
        count = 0

        def start(description=None, **options):
            nonlocal count
            count += 1
            return stack.enter_context(running_cluster(tmp_path / f"c{count}", description, **options))

        yield start
