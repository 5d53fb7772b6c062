"""The price of a move (adaptation/costs.py), the acker rule (spout_workers.ackers_with_spouts) and the forced
move (adaptation/forced.py), pure: the fixtures of test_move_costs_and_ackers.py."""
from __future__ import annotations

import dataclasses

import pytest
from test_move_costs_and_ackers import ACKER, C1, C2, CURRENT, SPOUT, Clock, problem, replan_with, slots

from storm_planner.adaptation.costs import (
    MoveContext,
    StartTimes,
    bottleneck_relief,
    fail_burst,
    flow_goes_on,
    price_move,
    restarted_slots,
    short_for_new_workers,
    skips_drain,
    slowest_start,
    stopped_components,
)
from storm_planner.adaptation.forced import ForceError, forced_move
from storm_planner.adaptation.replan import Replanner
from storm_planner.adaptation.spout_workers import ackers_with_spouts
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.settings import REPLAN_FORCE, SettingError


def test_a_move_restarts_the_workers_it_joins_and_leaves_but_not_one_it_empties():
    current = slots(CURRENT)
    plan = {**current, C2: Slot("small", 6700), C1: Slot("big-a", 6700)}   # C1 joins the spout's worker
    assert restarted_slots(current, plan) == {Slot("small", 6700): frozenset({C2}),
                                              Slot("big-a", 6700): frozenset({SPOUT, C1})}


def test_a_measured_start_replaces_the_prior_and_the_note_says_which():
    running = problem()
    plan = slots({**CURRENT, C2: "small:6700"})
    before, after = evaluate(running, running.current), evaluate(running, plan)
    prior = price_move(running, plan, before, after, MoveContext(), 60.0)
    measured = price_move(running, plan, before, after, MoveContext(start_times={"small": 4.0}), 60.0)
    assert (prior.cost_s, measured.cost_s) == (pytest.approx(15.0), 4.0)
    assert "15.0 s on small (prior: 4.5 s of a core at the 30 % of a core it has left)" in prior.costs
    assert "4.0 s on small (measured)" in measured.costs
    assert measured.pays and not prior.pays and measured.gain_s == pytest.approx(12.77, abs=0.01)
    starts = StartTimes(keep=2)
    for seconds in (30.0, 4.0, 6.0):
        starts.record("small", seconds)
    assert starts.snapshot() == {"small": 5.0}   # the last two


def test_a_worker_restarting_on_a_node_the_round_does_not_list_takes_the_slowest_prior():
    """A supervisor blacklisted by Nimbus is left out of the round, but a worker of the topology may still run
    there: moving one of its executors away restarts it. Its start used to count 0 s."""
    shared = {**CURRENT, C1: "big-a:6702"}                 # C1 and C2 share a worker on big-a
    running = problem(current=shared)
    node = "big-a"
    unlisted = dataclasses.replace(running, nodes=tuple(n for n in running.nodes if n.id != node))
    plan = slots({**shared, C2: "small:6700"})          # the worker on big-a restarts with C1 alone
    assert slowest_start(running, plan, MoveContext())[0] == pytest.approx(15.0)     # small's prior
    seconds, where = slowest_start(unlisted, plan, MoveContext())
    assert seconds == pytest.approx(90.0) and f"on {node} (not in this round: the slowest prior)" in where
    assert slowest_start(unlisted, plan, MoveContext(start_times={node: 95.0}))[0] == 95.0


def test_a_drained_move_costs_its_pause_and_start_an_undrained_acker_the_message_timeout():
    running = problem()
    plan = slots({**CURRENT, ACKER: "big-b:6701"})     # the acker's worker restarts
    before, after = evaluate(running, running.current), evaluate(running, plan)
    undrained = price_move(running, plan, before, after, MoveContext(in_flight=300, spout_rate=100.0), 60.0)
    assert undrained.cost_s == pytest.approx(30.0 + 3.0)
    assert "an acker restarts: the trees it held time out after 30 s" in undrained.costs
    drained = price_move(running, plan, before, after,
                         MoveContext(drained=True, in_flight=300, spout_rate=100.0, metrics_period_s=2.0), 60.0)
    assert drained.cost_s == pytest.approx(1.5 * 2.0 + 5.0 + 4.5)   # prior pause + start on an idle big-b
    assert "drained: pause 8.0 s (prior" in drained.costs and "300 tuple(s) in flight now, acked before" in drained.costs
    measured = price_move(running, plan, before, after, MoveContext(drained=True, pause_s=2.5), 60.0)
    assert measured.cost_s == pytest.approx(2.5 + 4.5) and "pause 2.5 s (its last drain)" in measured.costs


def test_a_move_the_flow_survives_goes_undrained_and_costs_twice_its_start_and_the_replays():
    """Count [3-3] to a worker of its own on big-b (5 s start, prior: 4.5 s of a core beside the acker's
    10 %): the spout's worker and the acker's do not restart, and 300 in flight + 5 s at 100/s = 800 trees
    fit in 1,200 pending places beside the 300 in flight."""
    running = problem()
    plan = slots({**CURRENT, C2: "big-b:6701"})
    roomy = MoveContext(drained=True, in_flight=300, spout_rate=100.0, pending_room=1200.0)
    goes_on, why = flow_goes_on(running, plan, roomy)
    assert goes_on and "1 of 1 acker(s) keep running" in why and "hold the 800 tree(s)" in why
    assert skips_drain(running, plan, roomy).startswith("the flow goes on: no spout's worker restarts")
    price = price_move(running, plan, evaluate(running, running.current), evaluate(running, plan), roomy, 60.0)
    # twice the start, 300 in flight replayed at 100/s, and 800 fails at 120/s per % of big-a's core
    assert price.cost_s == pytest.approx(2 * 5.0 + 3.0 + 800 / (120 * 100)) and "not drained, the flow goes on" in price.costs
    assert "800 tree(s) failing at once take the spout on big-a (100 % of a core) 0.1 s" in price.costs
    assert skips_drain(running, plan, dataclasses.replace(roomy, drain_always=True)) == ""
    assert skips_drain(running, plan, dataclasses.replace(roomy, drained=False)) == ""   # not drainable anyway
    unbounded = dataclasses.replace(roomy, pending_room=float("inf"), in_flight=10**6)
    assert flow_goes_on(running, plan, unbounded)[0]


@pytest.mark.parametrize(("move", "context", "why"), [
    ({C2: "big-b:6701"}, {"pending_room": 1100.0}, "pending places, 1,100 (topology.max.spout.pending x spout "
                                                   "tasks), cannot hold 800 lost tree(s) beside the 300 in flight"),
    ({C2: "big-b:6701"}, {"pending_room": None}, "room in topology.max.spout.pending is unknown"),
    ({C2: "big-b:6701"}, {"in_flight": None}, "room in topology.max.spout.pending is unknown"),
    ({ACKER: "big-b:6701"}, {}, "all 1 acker(s) restart"),
    ({C1: "big-b:6701", C2: "big-b:6701"}, {}, "c cannot take a tuple while its workers restart: every tree through it dies"),
    ({C2: "big-a:6700"}, {}, "a spout's worker restarts"),      # the count joins the spout's worker
    ({SPOUT: "big-b:6701"}, {}, "a spout's worker restarts"),
])
def test_a_move_that_restarts_a_spout_or_every_acker_or_overfills_pending_is_drained(move, context, why):
    running = problem()
    plan = slots({**CURRENT, **move})
    ctx = dataclasses.replace(MoveContext(drained=True, in_flight=300, spout_rate=100.0, pending_room=1200.0),
                              **context)
    goes_on, reason = flow_goes_on(running, plan, ctx)
    assert not goes_on and why in reason
    assert skips_drain(running, plan, ctx) == ""


def test_a_topology_short_of_nothing_gains_nothing_from_a_move():
    calm = problem(loads={SPOUT: 10.0, C1: 10.0, C2: 10.0, ACKER: 10.0})
    plan = slots({**CURRENT, C2: "big-b:6701"})
    price = price_move(calm, plan, evaluate(calm, calm.current), evaluate(calm, plan), MoveContext(), 60.0)
    assert price.gain_s == 0 and "short of nothing" in price.gains


def test_a_capacity_gate_prices_the_rate_a_move_gains_not_only_the_busiest_node():
    """A node at its quota with mostly fixed CPU: moving its per-tuple work off leaves it at 80 % (a fifth of
    its work) but doubles the rate the capacity model predicts; the gain is the rate's."""
    pressed = {"max_utilisation": 100.0, "over_capacity": 0.0, "capacity_factor": 1.0}
    moved = {"max_utilisation": 80.0, "over_capacity": 0.0, "capacity_factor": 2.0}
    share, why = bottleneck_relief(pressed, moved)
    assert share == pytest.approx(0.5) and "predicted sustainable rate 1x -> 2x" in why
    # Without the model's factor (any other planner's gate) the busiest node is all it counts.
    plain = bottleneck_relief({k: v for k, v in pressed.items() if k != "capacity_factor"}, moved)
    assert plain[0] == pytest.approx(0.2) and "busiest node 100 -> 80 %" in plain[1]
    # A rate that falls gains nothing from the model; short of nothing, nothing at all.
    assert bottleneck_relief(pressed, {**moved, "capacity_factor": 0.5})[0] == pytest.approx(0.2)
    assert bottleneck_relief({**pressed, "max_utilisation": 50.0}, moved)[0] == 0


def test_a_relief_that_runs_a_new_worker_short_of_cpu_is_refused_though_it_pays():
    """small runs other work (6 % of a core); count [3-3] there puts it at 87 % (a relief: 94 -> 87 %), and
    its new worker's own 3 % of a core takes it to 97 %: refused, though a fast start measured there makes
    the move pay for itself."""
    running = problem(small_used=6.0)
    plan = {**CURRENT, C2: "small:6700"}
    assert "new worker on small would run at 97 %" in short_for_new_workers(running, slots(plan))
    assert short_for_new_workers(running, slots({**CURRENT, C2: "big-b:6701"})) == ""
    fast = MoveContext(start_times={"small": 1.0})
    answer = Replanner(clock=Clock(), runner=lambda p, a: Plan(algorithm=a, assignments=slots(plan))).plan(
        running, "topdown", fast)
    assert answer.assignments == running.current
    assert "busiest node 94 -> 87 % of its CPU, but its new worker on small would run at 97 %" in answer.notes[-1]
    assert "a move costs 1.0 s" in answer.notes[-1]


def test_ackers_move_with_the_spouts_or_not_at_all():
    running = problem()
    alone = slots({**CURRENT, ACKER: "big-b:6701"})
    assert ackers_with_spouts(running, alone) == (slots(CURRENT), 1)
    # The spout's worker restarts by another move (a count joins it): the acker may move with it.
    with_spout = slots({**CURRENT, ACKER: "big-b:6701", C1: "big-a:6700"})
    assert ackers_with_spouts(running, with_spout) == (with_spout, 0)
    # The acker leaving the spout's worker is no restart of the spouts by the plan's other moves.
    shared = problem({**CURRENT, ACKER: "big-a:6700"})
    leaving = slots({**CURRENT, ACKER: "big-b:6701"})
    assert ackers_with_spouts(shared, leaving).undone == 1


def test_a_cut_of_a_plan_keeps_an_acker_only_with_the_spout_moves_it_needs():
    """The planner moves the spout and the acker off the saturated big-a; a budget of one move cannot take
    both: the acker alone is never the cut."""
    current = {SPOUT: "big-a:6700", C1: "big-b:6700", C2: "big-a:6702", ACKER: "big-a:6701"}
    running = problem(current, {SPOUT: 40.0, ACKER: 34.0, C2: 20.0, C1: 10.0})
    options = dataclasses.replace(running.options, max_migrations=1)
    plan = slots({**current, ACKER: "big-b:6701", SPOUT: "big-b:6700"})
    answer = Replanner(clock=Clock(), runner=lambda p, a: Plan(algorithm=a, assignments=plan)).plan(
        running.replace(options=options), "topdown")
    assert answer.assignments[ACKER] == Slot("big-a", 6701)


def test_a_forced_move_names_executors_or_components_and_a_node():
    running = problem()
    assignment, moved = forced_move(running, "[2-2], c @ big-b")   # c: its first executor not there yet
    assert moved == [C1, C2] and assignment[C1] == Slot("big-b", 6700) == assignment[C2]   # the acker's worker
    _, moved = forced_move(running, "[1-1],c@small")
    assert moved == [ACKER, C1]
    assignment, _ = forced_move(running, "s@big-b:6701")
    assert assignment[SPOUT] == Slot("big-b", 6701)
    # node:new: a worker of their own in the node's lowest free slot, not the acker's worker there (6700)
    assert REPLAN_FORCE.read({REPLAN_FORCE.key: "c@big-b:new"}) == "c@big-b:new"
    assignment, moved = forced_move(running, "[2-2], c @ big-b:new")
    assert moved == [C1, C2] and assignment[C1] == Slot("big-b", 6701) == assignment[C2]
    assert assignment[ACKER] == running.current[ACKER] == Slot("big-b", 6700)
    # the acker's only executor is on big-b already: into the new worker there, rather than nowhere
    assignment, moved = forced_move(running, "__acker@big-b:new")
    assert moved == [ACKER] and assignment[ACKER] == Slot("big-b", 6701)
    assert forced_move(running, "__acker@big-b")[1] == []
    full = running.replace(nodes=[dataclasses.replace(n, slots=()) if n.id == "big-b" else n for n in running.nodes])
    with pytest.raises(ForceError, match="big-b has no free slot for a new worker"):
        forced_move(full, "c@big-b:new")
    for text, says in (("[9-9]@big-b", "no executor [9-9]"), ("x@big-b", "no component 'x'"),
                       ("c@nowhere", "no supervisor 'nowhere'"), ("c@big-b:7000", "no slot 7000")):
        with pytest.raises(ForceError, match=says.replace("[", r"\[").replace("]", r"\]")):
            forced_move(running, text)
    for bad in ("c", "@big-b", "c@", "c@@b", "-1", "c@*:6700", "c@big-b:old", "c@*:new"):
        with pytest.raises(SettingError, match="is not executors or components, then a node"):
            REPLAN_FORCE.read({REPLAN_FORCE.key: bad})


def test_a_forced_move_to_star_goes_where_the_component_has_fewest_executors():
    """``*``: whatever the first plan did, the move moves something (a fixed node may hold them all)."""
    both_on_big_b = problem(current={**CURRENT, C1: "big-b:6700", C2: "big-b:6700"})
    assert REPLAN_FORCE.read({REPLAN_FORCE.key: "c@*"}) == "c@*"
    assignment, moved = forced_move(both_on_big_b, "c@*")
    assert moved == [C1] and assignment[C1].node == "small"    # big-a and small hold none: the last by id
    _, moved = forced_move(both_on_big_b, "c@big-b")
    assert moved == []                                           # what a fixed target did in the soak
    one_each = problem(current={**CURRENT, C1: "big-a:6701", C2: "small:6700"})
    assignment, moved = forced_move(one_each, "[2-2]@*")         # an executor id: its component's count
    assert moved == [C1] and assignment[C1].node == "big-b"


def test_a_forced_move_comes_once_after_its_delay_past_every_gate():
    """planner.replan.force moves count [3-3] to small on the first offer 30 s after the first plan, though
    the topology is short of nothing, the move restarts a worker for nothing, and there are no metrics."""
    clock = Clock()
    calm = problem(loads={SPOUT: 10.0, C1: 10.0, C2: 10.0, ACKER: 10.0}).replace(measured=False)
    options = {"planner.replan.force": "[3-3]@small", "planner.replan.force.after.secs": "30"}
    running = calm.replace(options=dataclasses.replace(calm.options, extra=options))
    replanner = Replanner(clock=clock, runner=lambda p, a: Plan(algorithm=a, assignments=dict(p.current)))
    assert replanner.plan(running, "topdown").assignments == running.current   # 0 s: not yet
    clock.now += 30
    forced = replanner.plan(running, "topdown")
    assert forced.assignments == slots({**CURRENT, C2: "small:6700"}) and forced.figures["moves"] == 1
    assert forced.notes == ("forced move (planner.replan.force=[3-3]@small): 1 executor(s) move ([3-3]), past "
                            "every gate (caution, gain, price, budget, the acker rule)",)
    clock.now += 30
    assert replanner.plan(running, "topdown").assignments == running.current   # once
    bad = calm.replace(options=dataclasses.replace(calm.options, extra={"planner.replan.force": "[3-3]@nowhere"}))
    kept = Replanner(clock=clock).plan(bad, "topdown")
    assert kept.assignments == bad.current and "forced move not made: planner.replan.force: no supervisor" \
        in kept.notes[0]


def test_an_acker_alone_is_held_back_however_cheap_its_move():
    """The acker-only relief of test_move_costs_and_ackers, priced drained and fast: still held back (the
    rule is no price: the acker waits for the spouts)."""
    current = {SPOUT: "big-a:6700", C1: "big-b:6700", C2: "big-a:6702", ACKER: "big-a:6701"}
    running = problem(current, {SPOUT: 40.0, ACKER: 34.0, C2: 20.0, C1: 10.0})
    answer = Replanner(clock=Clock(), runner=lambda p, a: Plan(
        algorithm=a, assignments=slots({**current, ACKER: "big-b:6701"}))).plan(
        running, "topdown", MoveContext(drained=True, pause_s=1.0, start_times={"big-b": 1.0}))
    assert answer.assignments == running.current
    assert replan_with({**current, ACKER: "big-b:6701"}, running).assignments == running.current


def test_a_forced_move_of_a_component_leaves_the_spouts_workers_running_where_it_can():
    """A count beside the spout in its worker is passed over for one in a worker of its own, and the move
    goes to the target node's worker without a spout, else to a free slot there: no spout restarts."""
    beside = problem(current={SPOUT: "big-a:6700", C1: "big-a:6700", C2: "big-a:6701", ACKER: "big-b:6700"})
    assignment, moved = forced_move(beside, "c@big-b")
    assert moved == [C2] and assignment[C2] == Slot("big-b", 6700) and assignment[C1] == Slot("big-a", 6700)
    assert restarted_slots(beside.current, assignment).keys().isdisjoint({Slot("big-a", 6700)})
    # the spout's worker is the target node's only one: a free slot there instead
    spout_there = problem(current={SPOUT: "big-b:6700", C1: "big-a:6700", C2: "big-a:6701", ACKER: "big-b:6700"})
    assignment, moved = forced_move(spout_there, "c@big-b")
    assert moved == [C1] and assignment[C1] == Slot("big-b", 6701)
    # named by id, an executor in the spout's worker still moves: the experiment asked for it
    _, moved = forced_move(beside, "[2-2]@big-b")
    assert moved == [C1]


def test_a_forced_move_of_a_component_spares_a_worker_that_holds_a_whole_component():
    """Count [2-2] shares its worker with the only acker: moving it restarts that worker and every tree dies
    with the acker. Count [3-3], alone in its worker, is taken instead, and the flow goes on."""
    running = problem(current={SPOUT: "big-a:6700", C1: "big-a:6701", ACKER: "big-a:6701", C2: "big-b:6700"})
    assignment, moved = forced_move(running, "c@small:new")
    assert moved == [C2] and assignment[C2] == Slot("small", 6700)
    roomy = MoveContext(drained=True, in_flight=300, spout_rate=100.0, pending_room=float("inf"))
    assert flow_goes_on(running, assignment, roomy)[0]
    taken_first = {**running.current, C1: Slot("small", 6700)}
    assert flow_goes_on(running, taken_first, roomy) == (False, "all 1 acker(s) restart")


@pytest.mark.parametrize(("grouping", "down", "stopped"), [
    ("shuffle", {"[2-2]"}, []),                 # [3-3] takes them all
    ("fields", {"[2-2]"}, []),                  # the keys of [2-2] die, the others flow
    ("global", {"[3-3]"}, []),                  # global: the lowest task, [2-2], takes every tuple
    ("global", {"[2-2]"}, ["top"]),
    ("all", {"[3-3]"}, ["top"]),                # every executor gets every tuple
    ("direct", {"[3-3]"}, ["top"]),             # any tuple may go to any: taken as all
    ("shuffle", {"[2-2]", "[3-3]"}, ["top"]),
    ("shuffle", {"[1-1]"}, ["__acker"]),
])
def test_a_bolt_stops_when_no_running_executor_can_take_its_tuples(grouping, down, stopped):
    """Spout s -> top (two executors, [2-2] and [3-3]) by ``grouping``, one acker [1-1], a __metrics
    executor [5-5] that carries no trees."""
    running = Problem.from_dict({
        "nodes": [{"id": "n", "capacity": 100, "slots": [6700]}],
        "topology": {"id": "t-1", "components": [
            {"id": "__acker", "executors": 1, "system": True}, {"id": "top", "executors": 2},
            {"id": "s", "type": "spout", "executors": 1}, {"id": "__metrics", "executors": 1, "system": True}],
            "streams": [{"from": "s", "to": "top", "grouping": grouping}]},
        "executors": [{"id": "[1-1]", "component": "__acker"}, {"id": "[2-2]", "component": "top"},
                      {"id": "[3-3]", "component": "top"}, {"id": "[4-4]", "component": "s"},
                      {"id": "[5-5]", "component": "__metrics"}],
    })
    assert stopped_components(running, frozenset(down)) == stopped
    assert stopped_components(running, frozenset(down | {"[5-5]"})) == stopped


def test_the_fail_burst_of_lost_trees_grows_as_the_spouts_node_shrinks():
    """drain-5/6: on a 30 % node tens of thousands of fails held the spout 9-11 s, on 70 % about a second."""
    on_big = problem()
    on_small = problem(current={**CURRENT, SPOUT: "small:6700"})
    big_s, big_why = fail_burst(on_big, 36_000)
    small_s, small_why = fail_burst(on_small, 36_000)
    assert small_s == pytest.approx(36_000 / (120 * 30)) and "small (30 % of a core) 10.0 s" in small_why
    assert big_s == pytest.approx(small_s * 30 / 100)
    assert fail_burst(on_big, 0) == (0.0, "none")
    # an undrained move the flow survives costs more with the spout on the small node, by its burst
    plan = slots({**CURRENT, SPOUT: "small:6700", C2: "big-b:6701"})
    roomy = MoveContext(drained=True, in_flight=300, spout_rate=100.0, pending_room=10_000.0)
    cheap = price_move(on_big, slots({**CURRENT, C2: "big-b:6701"}), evaluate(on_big, on_big.current),
                       evaluate(on_big, on_big.current), roomy, 60.0)
    dear = price_move(on_small, plan, evaluate(on_small, on_small.current), evaluate(on_small, plan), roomy, 60.0)
    assert "not drained" in cheap.costs and "not drained" in dear.costs
    assert dear.cost_s - cheap.cost_s == pytest.approx(800 / (120 * 30) - 800 / (120 * 100))
