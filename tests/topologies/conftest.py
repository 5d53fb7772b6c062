"""Fixtures for the topology tests: the projects' ``src/`` on the path, the multilang driver."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOPOLOGIES = REPO / "topologies"
HERE = Path(__file__).resolve().parent

# The topology packages (trends, bargains, airline) are shipped in the topology
# jar, not installed; the tests import them from their projects' src/ folders.
for project in ("trends", "bargains", "airline", "worldcup"):
    src = TOPOLOGIES / project / "src"
    if src.is_dir() and str(src) not in sys.path:
        sys.path.insert(0, str(src))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def trends_src() -> Path:
    return TOPOLOGIES / "trends" / "src"
