"""Issue 49, items 2 and 3, on the re-planner's public API alone (these tests fail on the re-planner before
it priced moves and held ackers back): an acker-only relief is refused, and a relief that moves work to a
small node is priced above its gain and refused, while the same move to a large node is taken.

A spout ``s`` (task 4), a bolt ``c`` (tasks 2, 3) and one acker (task 1) on two 100 % nodes and a small
one. big-a holds the spout, both counts (each in a worker of its own) and runs at 94 % of its CPU; big-b
holds the acker; small (30 % of a core) is empty."""
from __future__ import annotations

from storm_planner.adaptation.replan import Replanner
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot

ACKER, C1, C2, SPOUT = "[1-1]", "[2-2]", "[3-3]", "[4-4]"
CURRENT = {SPOUT: "big-a:6700", C1: "big-a:6701", C2: "big-a:6702", ACKER: "big-b:6700"}
LOADS = {SPOUT: 40.0, C1: 34.0, C2: 20.0, ACKER: 10.0}
TRAFFIC = [(SPOUT, C1, 50.0), (SPOUT, C2, 50.0), (SPOUT, ACKER, 100.0), (C1, ACKER, 50.0), (C2, ACKER, 50.0),
           (ACKER, SPOUT, 100.0)]


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def problem(current=None, loads=None, small_used=0.0) -> Problem:
    component = {ACKER: "__acker", C1: "c", C2: "c", SPOUT: "s"}
    loads = loads or LOADS
    return Problem.from_dict({
        "nodes": [{"id": "big-a", "capacity": 100, "slots": [6700, 6701, 6702]},
                  {"id": "big-b", "capacity": 100, "slots": [6700, 6701]},
                  {"id": "small", "capacity": 30, "slots": [6700], "used": {"cpu": small_used}}],
        "topology": {"id": "t-1", "components": [
            {"id": "__acker", "executors": 1, "system": True}, {"id": "c", "executors": 2},
            {"id": "s", "type": "spout", "executors": 1}],
            "streams": [{"from": "s", "to": "c"}]},
        "executors": [{"id": e, "component": component[e], "load": loads[e]} for e in component],
        "traffic": [{"from": f, "to": t, "rate": r} for f, t, r in TRAFFIC],
        "current": current or CURRENT,
    }).replace(measured=True)


def slots(assignment: dict[str, str]) -> dict[str, Slot]:
    return {e: Slot.parse(s) for e, s in assignment.items()}


def replan_with(plan: dict[str, str], running: Problem) -> Plan:
    """What the re-planner answers when its planner wants ``plan`` for ``running``."""
    target = slots(plan)
    return Replanner(clock=Clock(), runner=lambda p, a: Plan(algorithm=a, assignments=target)).plan(running, "topdown")


def test_a_relief_that_moves_an_acker_alone_is_refused():
    """The acker shares big-a's load here (big-a: spout 40 + acker 34 + count 20 = 94 %); moving it alone to
    big-b ends the pressure (94 -> 60 %), and the gate took that relief. The acker holds the trees of every
    spout tuple: moved without the spouts it stalls the topology for the message timeout. Held back now."""
    current = {SPOUT: "big-a:6700", C1: "big-b:6700", C2: "big-a:6702", ACKER: "big-a:6701"}
    loads = {SPOUT: 40.0, ACKER: 34.0, C2: 20.0, C1: 10.0}
    running = problem(current, loads)
    acker_moved = {**current, ACKER: "big-b:6701"}
    before, after = evaluate(running, running.current), evaluate(running, slots(acker_moved))
    assert (before["max_utilisation"], after["max_utilisation"]) == (94.0, 60.0)   # a relief by the old gate
    answer = replan_with(acker_moved, running)
    assert answer.assignments == running.current
    assert "1 acker move(s) held back: an acker holds the tuple trees of every spout's tuples" in answer.notes[-1]
    assert answer.figures["moves"] == 0


def test_a_relief_to_a_small_node_is_priced_above_its_gain_and_refused_and_to_a_large_node_taken():
    """Moving count [3-3] (20 % of a core) off big-a ends its pressure either way (94 -> 74 %). On small, a
    new worker starts with 30 % of a core: about 15 s of the topology's work (prior) against a gain of
    21 % of the 60 s period, 12.8 s: refused. On big-b it starts in 5 s: taken."""
    running = problem()
    to_small = replan_with({**CURRENT, C2: "small:6700"}, running)
    assert to_small.assignments == running.current
    note = to_small.notes[-1]
    assert "CPU pressure relieved: busiest node 94 -> 74 % of its CPU, but the move costs more than it gains" in note
    assert "a move costs 15.0 s of the topology's work" in note and "against a gain of 12.8 s" in note
    assert "slowest start 15.0 s on small (prior" in note
    to_big = replan_with({**CURRENT, C2: "big-b:6701"}, running)
    assert to_big.assignments == slots({**CURRENT, C2: "big-b:6701"})
    assert "a move costs 5.0 s of the topology's work" in to_big.notes[-1]
    assert "against a gain of 12.8 s over the 60 s re-plan period" in to_big.notes[-1]
