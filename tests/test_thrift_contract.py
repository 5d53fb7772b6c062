"""One wire contract: the committed Java classes are what the IDL generates, and Python loads the same IDL."""
from __future__ import annotations

import filecmp
import shutil
import subprocess
from pathlib import Path

import pytest

from storm_planner.service.transport.contract import IDL_PATH, planner_thrift

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "storm-scheduler" / "src" / "main" / "gen-java"


def differences(left: Path, right: Path) -> list[str]:
    found: list[str] = []

    def walk(cmp: filecmp.dircmp, prefix: str = "") -> None:
        found.extend(f"only in committed: {prefix}{n}" for n in cmp.left_only)
        found.extend(f"only in fresh: {prefix}{n}" for n in cmp.right_only)
        found.extend(f"differs: {prefix}{n}" for n in cmp.diff_files)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(left, right))
    return found


@pytest.mark.skipif(
    shutil.which("thrift") is None, reason="thrift compiler not installed (apt-get install thrift-compiler)"
)
def test_committed_java_is_generated_from_the_idl(tmp_path):
    subprocess.run([str(REPO / "scripts" / "gen-thrift.sh"), str(tmp_path)], check=True, capture_output=True)
    problems = differences(COMMITTED / "org" / "stormplanner" / "thrift", tmp_path / "org" / "stormplanner" / "thrift")
    assert not problems, "run scripts/gen-thrift.sh and commit: " + "; ".join(problems[:5])


def test_python_loads_the_same_idl_the_java_side_is_generated_from():
    assert IDL_PATH.read_text().count("namespace java org.stormplanner.thrift") == 1
    java_structs = {p.stem for p in (COMMITTED / "org" / "stormplanner" / "thrift").glob("*.java")}
    python_names = {name for name in dir(planner_thrift) if not name.startswith("_")}
    assert java_structs <= python_names | {"PlannerService"}
