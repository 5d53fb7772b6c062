"""Shared fixtures. Tests that start real daemons are marked ``cluster``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def small_problem() -> dict:
    """The problem file of DESIGN.md, as a dict."""
    return json.loads((REPO / "tests" / "data" / "small-problem.json").read_text())
