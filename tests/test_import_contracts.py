"""The import contracts of python/pyproject.toml ([tool.importlinter]) hold: the planning core is
layered (core below planners below scaling below adaptation below the service), does no I/O, and has no
cycles; the planner families are independent, only the registry names them, QEScalor's package
(storm_planner.scaling) builds on no planner family and its pure part imports neither its cluster side
(scaling.live) nor cluster code, profiling on a real cluster stays above the service, and the service's
transport knows nothing of its planning."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_lint_imports_keeps_every_contract():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    command = str(lint_imports) if lint_imports.exists() else shutil.which("lint-imports")
    assert command, "lint-imports is missing: install the test extras (make python-env)"
    result = subprocess.run([command, "--config", str(ROOT / "python" / "pyproject.toml"), "--no-cache",
                             "--no-logo"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout
