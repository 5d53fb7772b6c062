"""``even`` behaves like Storm's EvenScheduler, and the CLI/API serve it."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter

import pytest

import storm_planner
from storm_planner.core.problem import Problem, Slot
from storm_planner.planners import run
from storm_planner.planners.baselines.even import storm_first_slots, storm_sorted_slots


def problem(nodes=3, slots=2, executors=7, workers=None, current=None, slots_per_node=None):
    slots_per_node = slots_per_node or [slots] * nodes
    data = {
        "nodes": [{"id": f"n{i}", "capacity": 100, "slots": [6700 + p for p in range(count)]}
                  for i, count in enumerate(slots_per_node)],
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


def test_slots_sorted_as_storms_sort_slots_example():
    # The example in the comment of EvenScheduler.sortSlots (Storm 2.8.3), ports given unordered.
    given = [Slot("supervisor1", p) for p in (6700, 6701)] + [Slot("supervisor2", p) for p in (6700, 6701, 6702)]
    given += [Slot("supervisor3", p) for p in (6700, 6703, 6702, 6701)]
    assert [str(s) for s in storm_sorted_slots(given)] == [
        "supervisor3:6700", "supervisor2:6700", "supervisor1:6700",
        "supervisor3:6701", "supervisor2:6701", "supervisor1:6701",
        "supervisor3:6702", "supervisor2:6702",
        "supervisor3:6703",
    ]


def test_nodes_with_most_free_slots_come_first_ties_by_node_id():
    # n0 has 1 free slot, n1 and n2 have 3: Storm starts with n1 (most, lowest id), then n2, then n0.
    plan = run(problem(executors=5, workers=4, slots_per_node=[1, 3, 3]), "even")
    order = ["c/0", "c/1", "c/2", "c/3", "c/4"]
    assert [str(plan.assignments[e]) for e in order] == ["n1:6700", "n2:6700", "n0:6700", "n1:6701", "n1:6700"]


def test_only_free_slots_are_sorted_the_topologys_own_do_not_count():
    # n0 holds two of the topology's workers and has one free port; n1 has two free: Storm sorts the free
    # slots alone (n1 has more) and takes n1:6700, n0:6702 for the two missing workers.
    current = {"c/0": "n0:6700", "c/1": "n0:6701"}
    plan = run(problem(executors=4, workers=4, current=current, slots_per_node=[3, 2]), "even")
    assert {str(plan.assignments[e]) for e in ("c/0", "c/1")} == {"n0:6700", "n0:6701"}
    assert [str(plan.assignments[e]) for e in ("c/2", "c/3")] == ["n1:6700", "n0:6702"]


def test_without_a_new_slot_the_unplaced_go_over_the_kept_slots():
    # Storm would leave c/2 unassigned (the topology has its one worker); a plan must place it.
    current = {"c/0": "n1:6700", "c/1": "n1:6700"}
    plan = run(problem(executors=3, workers=1, current=current), "even")
    assert {str(s) for s in plan.assignments.values()} == {"n1:6700"}


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
    assert "not UTF-8 text" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("seed", range(30))
def test_the_first_slots_are_the_head_of_storms_whole_order(seed):
    rng = random.Random(seed)
    ports_of = {f"n{rng.randrange(40):02d}": rng.sample(range(6700, 6720), rng.randrange(0, 6))
                for _ in range(rng.randrange(1, 25))}
    every = storm_sorted_slots(Slot(node, port) for node, ports in ports_of.items() for port in ports)
    for count in (0, 1, 3, len(ports_of), len(every), len(every) + 5):
        assert storm_first_slots(ports_of, count) == every[:count]
