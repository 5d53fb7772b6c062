"""What the bench cluster tests share.

``bench_state`` is one ``STORM_PLANNER_STATE`` for the whole session: the benches keep their synthetic
feeds there, built once per (kind, records, seed) with PySpark, so tests that replay the same feed
(Top-K's 6,000 World Cup requests: the e2e, stepped-ramp and hetero cells) build it once. Nothing else
of a bench run lives in the state directory (each cluster's state and logs are in a temporary one).
"""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def bench_state(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bench-state")
