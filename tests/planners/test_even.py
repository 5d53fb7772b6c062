"""``even`` behaves like Storm's EvenScheduler, and the CLI/API serve it."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import storm_planner
from storm_planner.core.problem import Problem
from storm_planner.planners import run


def problem(nodes=3, slots=2, executors=7, workers=None, current=None):
    data = {
        "nodes": [{"id": f"n{i}", "capacity": 100, "slots": [6700 + p for p in range(slots)]} for i in range(nodes)],
        "topology": {"id": "t", "components": [{"id": "c", "executors": executors, "cost": 7.0 * executors}]},
        "current": current or {},
        "options": {"workers": workers} if workers else {},
    }
    return Problem.from_dict(data)


def test_executors_round_robin_over_slots_interleaved_across_nodes():
    plan = run(problem(nodes=3, slots=2, executors=7, workers=4), "even")
    per_slot = Counter(str(s) for s in plan.assignments.values())
    # four workers, interleaved: n0:6700, n1:6700, n2:6700, n0:6701; 7 executors -> 2,2,2,1
    assert set(per_slot) == {"n0:6700", "n1:6700", "n2:6700", "n0:6701"}
    assert sorted(per_slot.values()) == [1, 2, 2, 2]


def test_live_assignments_stay_and_only_unplaced_executors_move():
    current = {"c/0": "n2:6701", "c/1": "n2:6701"}
    plan = run(problem(nodes=3, executors=4, workers=2, current=current), "even")
    assert str(plan.assignments["c/0"]) == "n2:6701" and str(plan.assignments["c/1"]) == "n2:6701"
    assert plan.figures["migrations"] == 0
    assert {str(plan.assignments[e]) for e in ("c/2", "c/3")} == {"n0:6700"}


def test_api_returns_the_json_shape(small_problem):
    plan = storm_planner.plan(small_problem, algorithm="even")
    assert set(plan) >= {"algorithm", "assignments", "figures", "solve_ms", "notes"}
    assert len(plan["assignments"]) == 6
    assert all(":" in slot for slot in plan["assignments"].values())


def test_cli_plan_prints_a_plan_and_rejects_bad_input(tmp_path, small_problem):
    good = tmp_path / "p.json"
    good.write_text(json.dumps(small_problem))
    out = subprocess.run([sys.executable, "-m", "storm_planner", "plan", "-a", "even", str(good)],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["algorithm"] == "even"

    small_problem["topology"]["streams"][0]["to"] = "nowhere"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(small_problem))
    out = subprocess.run([sys.executable, "-m", "storm_planner", "plan", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2
    assert "topology.streams[0].to: unknown component 'nowhere'" in out.stderr
    assert "Traceback" not in out.stderr


def test_cli_plan_rejects_a_binary_file_in_one_line(tmp_path):
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    out = subprocess.run([sys.executable, "-m", "storm_planner", "plan", str(binary)], capture_output=True, text=True)
    assert out.returncode == 2
    assert "is not UTF-8 text" in out.stderr and "Traceback" not in out.stderr
