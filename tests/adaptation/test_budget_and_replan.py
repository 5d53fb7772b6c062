"""The migration budget and the keep-or-re-plan decision (pure: no ZooKeeper, fake clock)."""
from __future__ import annotations

from storm_planner.adaptation.budget import limit_moves, moves_between
from storm_planner.adaptation.replan import Replanner
from storm_planner.core.evaluate import evaluate
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot

A, B = "sup-a:6700", "sup-b:6700"


def problem(current: dict[str, str], *, traffic=(), loads=None, options=None, capacity=(400, 400),
            measured=True) -> Problem:
    """Chain spout a1,a2 -> mid m1,m2 -> sink s1 (5 executors), on sup-a and sup-b."""
    executors = ["a1", "a2", "m1", "m2", "s1"]
    component = {"a1": "a", "a2": "a", "m1": "m", "m2": "m", "s1": "s"}
    loads = loads or {e: 10.0 for e in executors}
    data = {
        "nodes": [{"id": "sup-a", "capacity": capacity[0], "slots": [6700, 6701]},
                  {"id": "sup-b", "capacity": capacity[1], "slots": [6700, 6701]}],
        "topology": {"id": "t-1", "components": [
            {"id": "a", "type": "spout", "executors": 2}, {"id": "m", "executors": 2}, {"id": "s", "executors": 1}],
            "streams": [{"from": "a", "to": "m"}, {"from": "m", "to": "s"}]},
        "executors": [{"id": e, "component": component[e], "load": loads[e]} for e in executors],
        "traffic": [{"from": f, "to": t, "rate": r} for f, t, r in traffic],
        "current": current,
        "options": options or {},
    }
    return Problem.from_dict(data).replace(measured=measured)


SPREAD = {"a1": A, "a2": B, "m1": B, "m2": A, "s1": B}
HEAVY = [("a1", "m1", 100.0), ("a2", "m2", 100.0), ("m1", "s1", 10.0), ("m2", "s1", 10.0)]


def slots(assignment: dict[str, str]) -> dict[str, Slot]:
    return {e: Slot.parse(s) for e, s in assignment.items()}


def test_a_plan_within_the_budget_is_kept_whole():
    p = problem(SPREAD, traffic=HEAVY)
    target = slots({e: A for e in SPREAD})
    placed, moved = limit_moves(p, target, 5)
    assert placed == target and moved == ["a2", "m1", "s1"]


def test_over_budget_the_most_useful_moves_are_taken_first():
    p = problem(SPREAD, traffic=HEAVY)
    target = slots({e: A for e in SPREAD})
    placed, moved = limit_moves(p, target, 1)
    # Moving a2 next to m2 saves 100; m1 next to a1 saves 100 - 10 = 90 (it leaves s1); s1 saves 10 - 10 = 0.
    assert moved == ["a2"]
    assert placed["a2"] == Slot.parse(A) and placed["m1"] == Slot.parse(B)
    assert len(moves_between(p.current, placed)) == 1


def test_a_pair_that_talks_moves_together_when_neither_helps_alone():
    # a2 and m2 talk (100) and both sit on sup-b apart from everything; alone, each move cuts nothing.
    current = {"a1": A, "a2": B, "m1": A, "m2": B, "s1": A}
    traffic = [("a2", "m2", 100.0), ("m2", "s1", 50.0), ("a1", "m1", 100.0), ("m1", "s1", 50.0)]
    p = problem(current, traffic=traffic)
    placed, moved = limit_moves(p, slots({e: A for e in current}), 2)
    assert moved == ["a2", "m2"]


def test_moves_never_overload_a_node_beyond_what_the_plan_itself_does():
    p = problem(SPREAD, traffic=HEAVY, loads={"a1": 30, "a2": 30, "m1": 30, "m2": 30, "s1": 30},
                capacity=(100, 400))
    target = slots({e: A for e in SPREAD})  # the plan overloads sup-a with 150
    placed, moved = limit_moves(p, target, 2)
    assert len(moved) <= 2
    load_a = sum(30 for e, s in placed.items() if s.node == "sup-a")
    assert load_a <= 150


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingRunner:
    """Stands in for the registered planners: puts everything on sup-a (an IMC-greedy answer)."""

    def __init__(self) -> None:
        self.calls = 0
        self.budgets = []

    def __call__(self, problem: Problem, algorithm: str) -> Plan:
        self.calls += 1
        self.budgets.append(problem.options.max_migrations)
        return Plan(algorithm=algorithm, assignments={e.id: Slot("sup-a", 6700) for e in problem.executors})


def replanner():
    clock, runner = FakeClock(), CountingRunner()
    return Replanner(clock=clock, runner=runner), clock, runner


def test_a_topology_without_slots_is_planned_as_usual():
    r, _, runner = replanner()
    plan = r.plan(problem({}, traffic=HEAVY, measured=False), "topdown")
    assert runner.calls == 1 and set(plan.assignments.values()) == {Slot("sup-a", 6700)}


def test_a_running_topology_without_metrics_or_with_replan_off_keeps_its_place():
    r, _, runner = replanner()
    kept = r.plan(problem(SPREAD, traffic=HEAVY, measured=False), "topdown")
    assert kept.assignments == slots(SPREAD) and "no metrics" in kept.notes[0]
    off = r.plan(problem(SPREAD, traffic=HEAVY, options={"planner.replan": "false"}), "topdown")
    assert off.assignments == slots(SPREAD) and "planner.replan: false" in off.notes[0]
    assert runner.calls == 0


def test_measured_metrics_trigger_a_replan_within_the_budget_then_small_changes_do_not():
    r, clock, runner = replanner()
    r.plan(problem({}, measured=False), "topdown")                     # placed on estimates
    options = {"max_migrations": 1, "planner.replan.period.secs": "60", "planner.replan.settle.secs": "0",
               "planner.replan.cautious": "false"}   # nodes at 10 % CPU: moved for traffic alone
    first = r.plan(problem(SPREAD, traffic=HEAVY, options=options), "topdown")
    assert runner.budgets[-1] == 1, "the planner is told the budget left"
    assert len(moves_between(slots(SPREAD), first.assignments)) == 1
    assert first.assignments != slots(SPREAD)
    assert first.figures["inter_worker"] < 220 and "re-planned" in first.notes[-1]

    now_placed = {e: str(s) for e, s in first.assignments.items()}
    clock.now += 5
    nudged = [(f, t, rate * 1.05) for f, t, rate in HEAVY]
    quiet = r.plan(problem(now_placed, traffic=nudged, options=options), "topdown")
    assert quiet.assignments == first.assignments and "threshold" in quiet.notes[0]
    calls = runner.calls

    clock.now += 5  # a big change, but the period's budget (1 move) is spent
    swapped = [("a1", "m2", 100.0), ("a2", "m1", 100.0), ("m1", "s1", 10.0), ("m2", "s1", 10.0)]
    spent = r.plan(problem(now_placed, traffic=swapped, options=options), "topdown")
    assert spent.assignments == first.assignments and "budget" in spent.notes[0]
    assert runner.calls == calls

    clock.now += 60  # next period: budget back
    again = r.plan(problem(now_placed, traffic=swapped, options=options), "topdown")
    assert len(moves_between(first.assignments, again.assignments)) == 1


def test_a_replan_that_does_not_pay_keeps_the_current_placement():
    r, clock, runner = replanner()
    together = {e: A for e in SPREAD}
    kept = r.plan(problem(together, traffic=HEAVY), "topdown")       # the planner answers the same
    assert runner.calls == 1 and kept.assignments == slots(together)
    assert "no move needed" in kept.notes[0]


def test_a_topology_short_of_nothing_is_not_moved_for_traffic():
    """Nodes at 10-15 % of their CPU, no links: the planner's better placement would only restart workers."""
    r, _, runner = replanner()
    kept = r.plan(problem(SPREAD, traffic=HEAVY), "topdown")
    assert runner.calls == 1 and kept.assignments == slots(SPREAD)
    assert "keeps up" in kept.notes[0] and "planner.replan.cautious" in kept.notes[0]
    assert kept.figures["moves"] == 0


def test_a_node_near_its_cpu_makes_a_move_worth_its_restarts():
    """sup-b at 90 % of its CPU (three executors of 30 on 100), both spouts in their own worker on sup-a:
    the planner's move of the bolts to a second worker on the roomy sup-a restarts no spout and is applied."""
    apart = {"a1": A, "a2": A, "m1": B, "m2": B, "s1": B}
    loads = {"a1": 10.0, "a2": 10.0, "m1": 30.0, "m2": 30.0, "s1": 30.0}
    pressed = problem(apart, traffic=HEAVY, loads=loads, capacity=(400, 100))
    before = evaluate(pressed, pressed.current)
    assert before["max_utilisation"] >= 90
    bolts_to_a = {**slots(apart), **{e: Slot("sup-a", 6701) for e in ("m1", "m2", "s1")}}
    r = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments=bolts_to_a))
    moved = r.plan(pressed, "topdown")
    assert moves_between(slots(apart), moved.assignments) and "re-planned" in moved.notes[-1]
    assert moved.figures["load_distance"] < before["load_distance"]


def test_a_move_for_traffic_that_leaves_the_busy_node_as_busy_waits():
    """sup-b at 90 % of its CPU; the planner joins the sink to its feeders' worker on the same node: less
    traffic between workers, the same 90 % on sup-b. Under the cautious gate the restarts buy nothing the
    topology is short of (the end-to-end bench: p99 0.6 -> 55 s after such a move); without it, applied."""
    split = {"a1": A, "a2": A, "m1": B, "m2": B, "s1": "sup-b:6701"}
    loads = {"a1": 10.0, "a2": 10.0, "m1": 30.0, "m2": 30.0, "s1": 30.0}
    feeders = [("m1", "s1", 100.0), ("m2", "s1", 100.0)]
    joined = {**slots(split), "s1": Slot("sup-b", 6700)}
    runner = lambda p, a: Plan(algorithm=a, assignments=joined)  # noqa: E731
    pressed = problem(split, traffic=feeders, loads=loads, capacity=(400, 100))
    assert evaluate(pressed, pressed.current)["max_utilisation"] >= 90
    kept = Replanner(clock=FakeClock(), runner=runner).plan(pressed, "topdown")
    assert kept.assignments == slots(split)
    assert "inter-worker traffic" in kept.notes[0] and "the busiest node stays at 90 %" in kept.notes[0]
    careless = problem(split, traffic=feeders, loads=loads, capacity=(400, 100),
                       options={"planner.replan.cautious": "false"})
    moved = Replanner(clock=FakeClock(), runner=runner).plan(careless, "topdown")
    assert moved.assignments == joined


def test_a_move_that_restarts_a_spouts_worker_waits_for_overload():
    """The same pressed sup-b (90 %), but the planner joins everything to the spouts' worker: each of its
    moves restarts a spout's worker, and neither balance nor the CPU pressure's relief pays for the tuples
    in flight it loses (the end-to-end bench's Top-K lost 439 to two such relief moves). Not sent to a new
    worker on sup-a (it has a free slot) either: measured on the bench's bargains, that relief restarted
    the busy worker and failed 4,000 tuples (benchmarks/README.md, e2e-relief)."""
    from storm_planner.adaptation.gate import relieves_overload

    apart = {"a1": A, "a2": A, "m1": B, "m2": B, "s1": B}
    loads = {"a1": 10.0, "a2": 10.0, "m1": 30.0, "m2": 30.0, "s1": 30.0}
    r, _, runner = replanner()
    kept = r.plan(problem(apart, traffic=HEAVY, loads=loads, capacity=(400, 100)), "topdown")
    assert runner.calls == 1 and kept.assignments == slots(apart)
    assert "move(s) held back that restart a spout's worker" in kept.notes[0]
    careless = replanner()[0].plan(problem(apart, traffic=HEAVY, loads=loads, capacity=(400, 100),
                                           options={"planner.replan.cautious": "false"}), "topdown")
    assert moves_between(slots(apart), careless.assignments)
    # Traffic and balance verdicts need a relief besides; overload's and the pressure's relief do not.
    assert not relieves_overload("inter-worker traffic 718.0 -> 530.0")
    assert not relieves_overload("load distance 40.0 -> 10.0")
    assert relieves_overload("overload 40.0 -> 0.0") and relieves_overload(
        "CPU pressure relieved: busiest node 94 -> 79 % of its CPU")


def test_a_replan_keeps_every_option_but_the_budget_it_narrows():
    """Regression: the re-plan rebuilt Options field by field and lost the heap limit and GMA's limits."""
    import dataclasses

    runner, seen = CountingRunner(), []
    r = Replanner(clock=FakeClock(), runner=lambda p, a: (seen.append(p.options), runner(p, a))[1])
    base = problem(SPREAD, traffic=HEAVY, options={"max_migrations": 3})
    options = dataclasses.replace(base.options, worker_max_heap_mb=768.0, max_cpu_utilisation=0.7,
                                  max_bandwidth_utilisation=0.5, max_migration_cost=9.0, time_limit_s=2.0, seed=7)
    r.plan(base.replace(options=options), "topdown")
    (told,) = seen
    assert told == dataclasses.replace(options, max_migrations=3)
    for field in dataclasses.fields(options):
        if field.name != "max_migrations":
            assert getattr(told, field.name) == getattr(options, field.name), field.name


def test_after_moves_the_topology_settles_before_metrics_are_compared_again():
    """A move restarts workers; their first windows must not trigger the next move (re-plan thrash)."""
    r, clock, runner = replanner()
    r.plan(problem({}, measured=False), "topdown")
    options = {"planner.replan.settle.secs": "30", "planner.replan.period.secs": "600",
               "planner.replan.cautious": "false"}
    first = r.plan(problem(SPREAD, traffic=HEAVY, options=options), "topdown")
    assert first.assignments != slots(SPREAD)
    now_placed = {e: str(s) for e, s in first.assignments.items()}
    swapped = [("a1", "m2", 100.0), ("a2", "m1", 100.0), ("m1", "s1", 10.0), ("m2", "s1", 10.0)]
    calls = runner.calls
    for _ in range(5):  # the moved workers' windows differ wildly while they restart
        clock.now += 5
        settling = r.plan(problem(now_placed, traffic=swapped, options=options), "topdown")
        assert settling.assignments == first.assignments and "settling" in settling.notes[0]
    assert runner.calls == calls
    clock.now += 10  # settled: what it measures now is the basis, so the same metrics do not trigger
    same = r.plan(problem(now_placed, traffic=swapped, options=options), "topdown")
    assert same.assignments == first.assignments and "threshold" in same.notes[0]


def test_a_small_drop_in_overload_does_not_pay_for_moves():
    from storm_planner.adaptation.gate import improvement

    figures = {"inter_worker": 10.0, "load_distance": 5.0}
    assert improvement({**figures, "over_capacity": 40.0}, {**figures, "over_capacity": 38.0}, 0.10) is None
    assert improvement({**figures, "over_capacity": 40.0}, {**figures, "over_capacity": 30.0}, 0.10)
    assert improvement({**figures, "over_capacity": 4.0}, {**figures, "over_capacity": 0.0}, 0.10) is None


def test_with_sizes_known_and_a_busy_link_the_gate_weighs_bytes_between_nodes_before_tuples():
    """Fewer tuples between workers but more bytes between nodes (small acks kept off the wire, the
    large requests put on it) is a worse placement once sizes are measured and a link is busy; with
    the links idle, the bytes buy nothing a restart is worth and the tuples decide."""
    from storm_planner.adaptation.gate import LINK_PRESSURE_PCT, improvement

    calm = {"over_capacity": 0.0, "load_distance": 5.0, "max_network_utilisation": LINK_PRESSURE_PCT + 10}
    before = {**calm, "inter_worker": 718.0, "network": 0.30}
    parted = {**calm, "inter_worker": 530.0, "network": 0.45}
    assert improvement(before, parted, 0.10) == "inter-worker traffic 718.0 -> 530.0"
    assert improvement(before, parted, 0.10, by_bytes=True) is None
    lighter = {**calm, "inter_worker": 800.0, "network": 0.20}
    assert improvement(before, lighter, 0.10, by_bytes=True) == "inter-node traffic (Mbit/s) 0.300 -> 0.200"
    same_bytes = {**calm, "inter_worker": 500.0, "network": 0.30}
    assert improvement(before, same_bytes, 0.10, by_bytes=True) == "inter-worker traffic 718.0 -> 500.0"
    idle = {"max_network_utilisation": LINK_PRESSURE_PCT / 5}
    assert improvement({**before, **idle}, {**lighter, **idle}, 0.10, by_bytes=True) is None
    assert improvement({**before, **idle}, {**parted, **idle}, 0.10, by_bytes=True) == \
        "inter-worker traffic 718.0 -> 530.0"


def test_a_replan_takes_the_fewest_of_the_planners_moves_that_pay():
    """Each move restarts workers: of a plan that moves everything, only as many moves as its gain needs."""
    from storm_planner.adaptation.decision import fewest_moves as _fewest_moves

    base = problem(SPREAD, traffic=HEAVY)
    before = evaluate(base, base.current)
    # The planner's plan: a1 joins m1, a2 joins m2 (each saves 100 of 220 tuples/s), and s1 moves too.
    plan = slots({"a1": B, "a2": A, "m1": B, "m2": A, "s1": A})
    limited, moved, verdict = _fewest_moves(base, plan, None, before, 0.10)
    assert verdict is not None and len(moved) == 1 and len(moves_between(base.current, plan)) == 3
    assert evaluate(base, limited)["inter_worker"] <= before["inter_worker"] * 0.9
    # Nothing that pays (s1 alone only trades one crossing stream for another): no verdict.
    _, _, none = _fewest_moves(base, slots({**SPREAD, "s1": A}), None, before, 0.10)
    assert none is None


def three_nodes(current: dict[str, str], loads: dict[str, float], options=None) -> Problem:
    """Spouts a1, a2 -> m1, m2 -> s1 on three 100 % nodes (sup-c idle unless told)."""
    component = {"a1": "a", "a2": "a", "m1": "m", "m2": "m", "s1": "s"}
    return Problem.from_dict({
        "nodes": [{"id": n, "capacity": 100, "slots": [6700, 6701]} for n in ("sup-a", "sup-b", "sup-c")],
        "topology": {"id": "t-1", "components": [
            {"id": "a", "type": "spout", "executors": 2}, {"id": "m", "executors": 2}, {"id": "s", "executors": 1}],
            "streams": [{"from": "a", "to": "m"}, {"from": "m", "to": "s"}]},
        "executors": [{"id": e, "component": component[e], "load": loads[e]} for e in component],
        "traffic": [{"from": f, "to": t, "rate": r} for f, t, r in HEAVY],
        "current": current, "options": options or {},
    }).replace(measured=True)


SATURATED = {"a1": A, "a2": A, "m1": A, "m2": B, "s1": B}          # sup-a: both spouts and m1
SATURATED_LOADS = {"a1": 30.0, "a2": 30.0, "m1": 34.0, "m2": 34.0, "s1": 6.0}
SATURATED_APART = {**SATURATED, "m1": "sup-a:6701"}                 # m1 in a worker of its own on sup-a


def test_a_saturated_node_is_relieved_even_when_more_tuples_then_cross_workers():
    """sup-a at 94 % (the spouts and a bolt: a quota-held node shows no more, its queue grows), sup-b at 40 %,
    sup-c idle. Moving m1 to sup-c ends the pressure (94 -> 60 %) but puts a1 -> m1 (100 t/s) between
    workers. Before, the gate refused it on traffic (up 10 % or more) and on load distance (pinned by the
    idle node). It restarts the spouts' worker, though (m1 shares it): that relief is held back; with m1 in
    a worker of its own on sup-a, the same move is taken. The trends reconstruction
    (tests/service/test_trends_replan.py) is the first shape."""
    relieved = {**slots(SATURATED), "m1": Slot("sup-c", 6700)}
    r = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments=relieved))
    pressed = three_nodes(SATURATED, SATURATED_LOADS)
    before, after = evaluate(pressed, pressed.current), evaluate(pressed, relieved)
    assert before["max_utilisation"] == 94 and after["max_utilisation"] == 60
    assert after["inter_worker"] > 1.1 * before["inter_worker"]   # the old gate refused it on traffic first
    kept = r.plan(pressed, "topdown")
    assert kept.assignments == pressed.current and "held back that restart a spout's worker" in kept.notes[0]
    apart = three_nodes(SATURATED_APART, SATURATED_LOADS)
    relieved_apart = {**slots(SATURATED_APART), "m1": Slot("sup-c", 6700)}
    r2 = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments=relieved_apart))
    moved = r2.plan(apart, "topdown")
    assert moved.assignments == relieved_apart
    assert "CPU pressure relieved: busiest node 94 -> 60 % of its CPU" in moved.notes[-1]


def test_a_move_that_leaves_a_node_at_the_pressure_line_is_no_relief():
    """Relief ends the pressure: a plan that leaves a node at 90 % or more, or takes under 5 points off the
    busiest, relieves nothing; and a topology short of nothing has nothing to relieve."""
    from storm_planner.adaptation.gate import ends_cpu_pressure

    pressed = three_nodes(SATURATED, SATURATED_LOADS)
    before = evaluate(pressed, pressed.current)
    still = evaluate(pressed, {**slots(SATURATED), "a1": Slot("sup-c", 6700), "m2": Slot("sup-a", 6700)})
    assert still["max_utilisation"] >= 90 and not ends_cpu_pressure(before, still)
    barely = {**before, "max_utilisation": before["max_utilisation"] - 4.0}   # under 5 points of relief
    assert not ends_cpu_pressure({**before, "max_utilisation": 92.0}, {**barely, "max_utilisation": 88.0})
    calm = evaluate(pressed, {**slots(SATURATED), "m1": Slot("sup-c", 6700)})
    assert not ends_cpu_pressure(calm, calm)   # nothing short before: nothing to relieve


def test_a_topology_short_of_cpu_is_replanned_within_the_share_the_gate_accepts():
    """Short of CPU, the planner is asked for every node within RELIEF_TARGET_PCT (D_CPU), not to fill nodes
    to 100 % again; not when nothing is short, when the load does not fit under the line, or when the
    topology asks for less itself."""
    import dataclasses

    from storm_planner.adaptation.gate import RELIEF_TARGET_PCT

    seen = []

    def runner(p, a):
        seen.append(p.options.max_cpu_utilisation)
        return Plan(algorithm=a, assignments=dict(p.current))

    Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(SATURATED, SATURATED_LOADS), "topdown")
    calm_loads = {e: 10.0 for e in SATURATED_LOADS}
    Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(SATURATED, calm_loads), "topdown")
    packed = {e: 56.0 for e in SATURATED_LOADS}   # 280 % of 300: no placement under 85 % of each node
    everything_on = {e: ("sup-a:6700" if e in ("a1",) else "sup-b:6700" if e in ("a2", "m1") else "sup-c:6700")
                     for e in SATURATED}
    Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(everything_on, packed), "topdown")
    own = three_nodes(SATURATED, SATURATED_LOADS)
    own = own.replace(options=dataclasses.replace(own.options, max_cpu_utilisation=0.7))
    Replanner(clock=FakeClock(), runner=runner).plan(own, "topdown")
    assert seen == [RELIEF_TARGET_PCT / 100, None, None, 0.7]


def test_under_cpu_pressure_the_fewest_moves_that_relieve_are_taken():
    """The planner moves m1 off the saturated sup-a and also s1 and m2 to sup-c. Ranked by traffic alone the
    first moves taken were the bolts' (m2 -> s1 kept together), which relieve nothing; ranked within the
    relief's D_CPU, m1 comes first and one move ends the pressure: the other two restart workers for nothing."""
    plan = {**slots(SATURATED_APART), "m1": Slot("sup-c", 6700), "m2": Slot("sup-c", 6700),
            "s1": Slot("sup-c", 6700)}
    r = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments=plan))
    moved = r.plan(three_nodes(SATURATED_APART, SATURATED_LOADS), "topdown")
    assert moves_between(slots(SATURATED_APART), moved.assignments) == ["m1"]
    assert "1 executor(s) move; CPU pressure relieved: busiest node 94 -> 60 % of its CPU" in moved.notes[-1]


def test_a_trusted_replan_applies_the_planners_plan_within_the_budget_without_the_gates():
    """planner.replan.trust: no caution (nodes at 10 % CPU), no cut to the fewest moves, no gain gate; only
    moves that restart a spout's worker are held back (the source stays put)."""
    trusted = {"planner.replan.trust": "true", "planner.replan.settle.secs": "0"}
    apart = {"a1": "sup-a:6701", "a2": "sup-a:6701", "m1": B, "m2": A, "s1": B}   # the spouts in a worker of their own
    r, _, _ = replanner()
    whole = r.plan(problem(apart, traffic=HEAVY, options=trusted), "cola")   # the runner wants all on sup-a:6700
    assert sorted(moves_between(slots(apart), whole.assignments)) == ["m1", "s1"], whole.notes
    assert "planner.replan.trust" in whole.notes[-1] and "2 move(s) held back" in whole.notes[-1]
    # Within a budget the plan is cut to it (the budget's cut takes only moves that pay: here none alone).
    r2, _, _ = replanner()
    within = r2.plan(problem(apart, traffic=HEAVY, options={**trusted, "max_migrations": 2}), "albic")
    assert sorted(moves_between(slots(apart), within.assignments)) == ["m1", "s1"]
    r2b, _, _ = replanner()
    cut = r2b.plan(problem(apart, traffic=HEAVY, options={**trusted, "max_migrations": 1}), "albic")
    assert len(moves_between(slots(apart), cut.assignments)) <= 1
    # Every wanted move restarts a spout's worker: nothing moves.
    r3, _, _ = replanner()
    kept = r3.plan(problem(SPREAD, traffic=HEAVY, options=trusted), "cola")
    assert kept.assignments == slots(SPREAD) and "restart a spout's worker" in kept.notes[0]
    # Untrusted, the same offer keeps the placement: the topology is short of nothing.
    r4, _, _ = replanner()
    assert r4.plan(problem(apart, traffic=HEAVY), "cola").assignments == slots(apart)


def test_a_trusted_move_into_a_spouts_worker_joins_another_worker_on_its_node():
    """The planner chose the node; the slot was only where the topology ran there. m1 and s1 join sup-a, whose
    6701 runs the spouts: they go to the worker m2 runs in, and the spouts' worker keeps running."""
    trusted = {"planner.replan.trust": "true", "planner.replan.settle.secs": "0"}
    apart = {"a1": "sup-a:6701", "a2": "sup-a:6701", "m1": B, "m2": A, "s1": B}
    into_spouts = {**slots(apart), "m1": Slot("sup-a", 6701), "s1": Slot("sup-a", 6701)}
    r = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments=into_spouts))
    moved = r.plan(problem(apart, traffic=HEAVY, options=trusted), "cola")
    assert {e: str(moved.assignments[e]) for e in ("m1", "s1")} == {"m1": A, "s1": A}
    assert {e: str(moved.assignments[e]) for e in ("a1", "a2")} == {"a1": "sup-a:6701", "a2": "sup-a:6701"}
    # A node whose only other slot is taken by nothing still has one to open; a node of one slot has none.
    lone = {"a1": "sup-a:6701", "a2": "sup-a:6701", "m1": B, "m2": B, "s1": B}
    r2 = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments={
        **slots(lone), "m1": Slot("sup-a", 6701)}))
    opened = r2.plan(problem(lone, traffic=HEAVY, options=trusted), "cola")
    assert str(opened.assignments["m1"]) == "sup-a:6700"
    # Already on the chosen node (m2 in sup-a's other worker): a move into the spouts' worker gains nothing
    # there and is no move at all, nor one held back.
    near = {"a1": "sup-a:6701", "a2": "sup-a:6701", "m1": B, "m2": A, "s1": B}
    r3 = Replanner(clock=FakeClock(), runner=lambda p, a: Plan(algorithm=a, assignments={
        **slots(near), "m2": Slot("sup-a", 6701)}))
    stays = r3.plan(problem(near, traffic=HEAVY, options=trusted), "cola")
    assert stays.assignments == slots(near) and "held back" not in " ".join(stays.notes)


def test_the_initial_algorithm_places_a_new_topology_and_the_algorithm_replans_it():
    import pytest

    from storm_planner.core.settings import SettingError

    r, clock, runner = replanner()
    seen = []
    r.runner = lambda p, algorithm: (seen.append(algorithm), runner(p, algorithm))[1]
    options = {"planner.initial.algorithm": "spread", "planner.replan.trust": "true",
               "planner.replan.settle.secs": "0", "planner.replan.period.secs": "120"}
    r.plan(problem({}, measured=False, options=options), "albic")
    # Under trust the first metrics do not re-plan before a period has passed since they came (however
    # late they came after the first plan): they are the warm-up's.
    clock.now += 150
    early = r.plan(problem(SPREAD, traffic=HEAVY, options=options), "albic")
    assert seen == ["spread"] and early.assignments == slots(SPREAD)
    assert "the first re-plan waits for the period (120 s after the first metrics)" in early.notes[-1]
    clock.now += 100
    assert r.plan(problem(SPREAD, traffic=HEAVY, options=options), "albic").assignments == slots(SPREAD)
    clock.now += 20
    r.plan(problem(SPREAD, traffic=HEAVY, options=options), "albic")
    assert seen == ["spread", "albic"]
    with pytest.raises(SettingError, match="planner.initial.algorithm='nope'"):
        r.plan(problem({}, measured=False, options={"planner.initial.algorithm": "nope"}), "albic")


RESUMABLE = {"planner.source.resumable": "true"}


def test_a_resumable_source_lets_the_cpu_pressures_relief_restart_the_spouts_worker():
    """The saturated sup-a (94 %) of the test above, m1 sharing the spouts' worker: the only relief moves m1
    out and so restarts that worker. A replay spout without a checkpoint starts its feed over and loses
    what it had in flight: held back. With planner.source.resumable the spouts resume from their committed
    progress, and the relief is taken; the note says a spout's worker restarts and why."""
    relieved = {**slots(SATURATED), "m1": Slot("sup-c", 6700)}
    runner = lambda p, a: Plan(algorithm=a, assignments=relieved)  # noqa: E731
    kept = Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(SATURATED, SATURATED_LOADS), "topdown")
    assert kept.assignments == slots(SATURATED)
    assert "held back that restart a spout's worker" in kept.notes[0] and "planner.source.resumable" in kept.notes[0]
    moved = Replanner(clock=FakeClock(), runner=runner).plan(
        three_nodes(SATURATED, SATURATED_LOADS, options=RESUMABLE), "topdown")
    assert moved.assignments == relieved
    assert "CPU pressure relieved: busiest node 94 -> 60 % of its CPU" in moved.notes[-1]
    assert "1 move(s) restart a spout's worker: its source resumes from its committed progress " \
           "(planner.source.resumable)" in moved.notes[-1]


def test_a_resumable_source_still_holds_back_a_spouts_restart_for_traffic():
    """sup-c at 94 % with m2 alone; the planner joins m1 to the spouts' worker on sup-a (100 tuples/s fewer
    between workers), which leaves sup-c as it is: a traffic verdict. Its move restarts the spouts' worker,
    and a restart stops the source for tens of seconds even when it loses nothing: held back with
    planner.source.resumable too."""
    current = {"a1": A, "a2": A, "m1": "sup-b:6700", "m2": "sup-c:6700", "s1": "sup-b:6700"}
    loads = {"a1": 10.0, "a2": 10.0, "m1": 10.0, "m2": 94.0, "s1": 6.0}
    joined = {**slots(current), "m1": Slot.parse(A)}
    runner = lambda p, a: Plan(algorithm=a, assignments=joined)  # noqa: E731
    for options in (None, RESUMABLE):
        pressed = three_nodes(current, loads, options=options)
        before, after = evaluate(pressed, pressed.current), evaluate(pressed, joined)
        assert before["max_utilisation"] == after["max_utilisation"] == 94
        assert after["inter_worker"] < 0.9 * before["inter_worker"]
        kept = Replanner(clock=FakeClock(), runner=runner).plan(pressed, "topdown")
        assert kept.assignments == pressed.current
        assert "1 move(s) held back that restart a spout's worker" in kept.notes[0]
        assert ("CPU pressure is worth that" in kept.notes[0]) == (options is not None)


def test_the_resumable_source_option_is_read_through_the_catalogue():
    from storm_planner.adaptation.replan import ReplanSettings
    from storm_planner.core.settings import SettingError

    assert not ReplanSettings.of(three_nodes(SATURATED, SATURATED_LOADS)).resumable
    assert ReplanSettings.of(three_nodes(SATURATED, SATURATED_LOADS, options=RESUMABLE)).resumable
    try:
        ReplanSettings.of(three_nodes(SATURATED, SATURATED_LOADS, options={"planner.source.resumable": "maybe"}))
    except SettingError as error:
        assert error.key == "planner.source.resumable"
    else:
        raise AssertionError("an unusable planner.source.resumable was accepted")


def test_a_resumable_source_is_restarted_only_when_no_relief_spares_it():
    """sup-a at 94 %: the spouts' worker (a1, a2) and m1 in a worker of its own. The planner moves a2 and m1
    to sup-c; its first move alone (a2's) ends the pressure but restarts the spouts' worker, m1's alone ends
    it too and restarts nothing: with planner.source.resumable, m1's is taken (a restart still stops the
    source)."""
    current = {"a1": A, "a2": A, "m1": "sup-a:6701", "m2": B, "s1": B}
    loads = {"a1": 30.0, "a2": 30.0, "m1": 34.0, "m2": 34.0, "s1": 6.0}
    plan = {**slots(current), "a2": Slot("sup-c", 6700), "m1": Slot("sup-c", 6701)}
    runner = lambda p, a: Plan(algorithm=a, assignments=plan)  # noqa: E731
    moved = Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(current, loads, options=RESUMABLE), "topdown")
    assert moves_between(slots(current), moved.assignments) == ["m1"]
    assert "held back that restart a spout's worker (a relief without them was found)" in moved.notes[-1]


CORRECT = {"planner.replan.first.correction": "true"}


def test_the_first_measured_replan_of_a_placement_made_on_estimates_may_correct_it_once():
    """SPREAD at 10 % of every node: short of nothing, so the cautious gate keeps it. With
    planner.replan.first.correction the first measured re-plan of a placement made without metrics faces the
    gain gate alone: every move of the planner's answer restarts a spout's worker, so they are taken only
    when the source is resumable; a later re-plan is cautious again, and a topology this service did not
    place on estimates (a restarted service) gets no correction."""
    swapped = [("a1", "m2", 100.0), ("a2", "m1", 100.0), ("m1", "s1", 10.0), ("m2", "s1", 10.0)]
    for options, corrected in ((CORRECT, False), ({**CORRECT, **RESUMABLE}, True), (RESUMABLE, False)):
        r, clock, runner = replanner()
        r.plan(problem({}, measured=False, options=options), "topdown")          # placed on estimates
        first = r.plan(problem(SPREAD, traffic=HEAVY, options=options), "topdown")
        assert bool(moves_between(slots(SPREAD), first.assignments)) == corrected, (options, first.notes)
        if corrected:
            assert "first correction of a placement made on estimates" in first.notes[-1]
            assert "1 move(s) restart a spout's worker" in first.notes[-1]   # the fewest moves that pay
            assert first.figures["inter_worker"] < evaluate(problem(SPREAD, traffic=HEAVY), slots(SPREAD))["inter_worker"]
        elif "planner.replan.first.correction" in options:
            assert "first correction: no move needed" in first.notes[0] and "held back" in first.notes[0]
        else:
            assert "keeps up" in first.notes[0]
        clock.now += 3600
        again = r.plan(problem(SPREAD, traffic=swapped, options=options), "topdown")
        assert again.assignments == slots(SPREAD) and "keeps up" in again.notes[0], again.notes
    fresh = replanner()[0].plan(problem(SPREAD, traffic=HEAVY, options={**CORRECT, **RESUMABLE}), "topdown")
    assert fresh.assignments == slots(SPREAD) and "keeps up" in fresh.notes[0]


def test_the_first_correction_option_is_read_through_the_catalogue():
    from storm_planner.adaptation.replan import ReplanSettings

    assert not ReplanSettings.of(problem(SPREAD)).first_correction
    assert ReplanSettings.of(problem(SPREAD, options=CORRECT)).first_correction


def test_a_node_newly_short_of_cpu_is_replanned_at_once_below_the_change_threshold():
    """sup-b climbs from 75 to 93 % of its CPU: the topology's loads change 16 %, under the 25 % threshold, so
    before it waited for the next period (on the end-to-end bench, bargains' i7 at 97 % for a minute, then
    a re-plan inside the measured window). Under planner.replan.cautious the first round that finds a node
    short of CPU re-plans; while it stays short, no further round does; without the caution nothing does."""
    apart = {"a1": A, "a2": A, "m1": B, "m2": B, "s1": B}
    calm = {"a1": 10.0, "a2": 10.0, "m1": 25.0, "m2": 25.0, "s1": 25.0}
    hot = {**calm, "m1": 31.0, "m2": 31.0, "s1": 31.0}
    for cautious in ("true", "false"):
        options = {"planner.replan.settle.secs": "0", "planner.replan.cautious": cautious,
                   "planner.replan.min.gain": "100"}  # the gain gate keeps the placement: only the trigger is tested
        r, clock, runner = replanner()
        r.plan(problem(apart, traffic=HEAVY, loads=calm, capacity=(400, 100), options=options), "topdown")
        calls = runner.calls
        clock.now += 5
        pressed = r.plan(problem(apart, traffic=HEAVY, loads=hot, capacity=(400, 100), options=options), "topdown")
        if cautious == "true":
            assert runner.calls == calls + 1
            assert "re-planned (a node is short of CPU (busiest at 93 % of its CPU))" in pressed.notes[0]
            clock.now += 5
            still = r.plan(problem(apart, traffic=HEAVY, loads=hot, capacity=(400, 100), options=options), "topdown")
            assert runner.calls == calls + 1 and "threshold" in still.notes[0]
        else:
            assert runner.calls == calls and "metrics changed 16%" in pressed.notes[0]


def test_a_node_short_of_cpu_at_the_last_replan_does_not_trigger_another():
    """Short of CPU already when re-planned (the placement kept): the next round waits for the threshold or
    the period like any other, rather than re-planning the same pressure again."""
    apart = {"a1": A, "a2": A, "m1": B, "m2": B, "s1": B}
    hot = {"a1": 10.0, "a2": 10.0, "m1": 31.0, "m2": 31.0, "s1": 31.0}
    options = {"planner.replan.settle.secs": "0", "planner.replan.min.gain": "100"}
    r, clock, runner = replanner()
    first = r.plan(problem(apart, traffic=HEAVY, loads=hot, capacity=(400, 100), options=options), "topdown")
    assert runner.calls == 1 and "re-planned" in first.notes[0]
    clock.now += 5
    again = r.plan(problem(apart, traffic=HEAVY, loads=hot, capacity=(400, 100), options=options), "topdown")
    assert runner.calls == 1 and "threshold" in again.notes[0]


def test_a_replan_evaluates_the_current_placement_once(monkeypatch):
    """Every gate of a re-plan (newly short of CPU, the relief share, the pressure remembered, the gain gate,
    the kept plan's figures) compares with the current placement's figures: evaluated once, they are the
    same figures for each, and at production scale an evaluation takes a fifth of a second."""
    import storm_planner.adaptation.decision as decision
    import storm_planner.adaptation.replan as replan

    apart = {"a1": A, "a2": A, "m1": B, "m2": B, "s1": B}
    hot = {"a1": 10.0, "a2": 10.0, "m1": 31.0, "m2": 31.0, "s1": 31.0}
    options = {"planner.replan.settle.secs": "0", "planner.replan.min.gain": "100"}
    r, clock, runner = replanner()
    r.plan(problem(apart, traffic=HEAVY, loads=hot, capacity=(400, 400), options=options), "topdown")
    clock.now += 5
    pressed = problem(apart, traffic=HEAVY, loads=hot, capacity=(400, 100), options=options)
    of_current = []
    def counted(p, assignment):
        of_current.append(assignment == p.current)
        return evaluate(p, assignment)
    for module in (replan, decision):   # the re-planner, and the gate it decides with
        monkeypatch.setattr(module, "evaluate", counted)
    kept = r.plan(pressed, "topdown")
    assert "re-planned (a node is short of CPU" in kept.notes[0] and runner.calls == 2
    assert of_current.count(True) == 1
    assert kept.figures["max_utilisation"] == evaluate(pressed, pressed.current)["max_utilisation"]


def test_auto_corrects_its_first_placement_once_on_the_rate_it_predicts_then_is_cautious():
    """``auto``'s calibration (docs/capacity.md): its first placement, made on declared loads, is corrected
    once on the first measured re-plan, gated on the sustainable rate the capacity model predicts, without
    being told planner.replan.first.correction; a later re-plan faces the cautious gate as any other."""
    from storm_planner.adaptation.replan import ReplanSettings

    class Packing:   # the planner's answer: every executor on sup-b (what the gate must judge)
        calls = 0

        def __call__(self, problem, algorithm):
            self.calls += 1
            return Plan(algorithm=algorithm, assignments={e.id: Slot("sup-b", 6700) for e in problem.executors})

    assert ReplanSettings.of(problem(SPREAD), "auto").first_correction
    assert ReplanSettings.of(problem(SPREAD), "auto").capacity and not ReplanSettings.of(problem(SPREAD)).capacity
    assert not ReplanSettings.of(problem(SPREAD, options={"planner.replan.first.correction": "false"}),
                                 "auto").first_correction
    # All five executors (10 % each) on sup-a (capacity 60): 83 % of it, short of nothing, so the cautious gate
    # alone keeps it; but the placement sustains little more than the rate it serves (under the calibration's
    # headroom), and on sup-b (capacity 400) the same load sustains about seven times the rate.
    packed = {e: A for e in ("a1", "a2", "m1", "m2", "s1")}
    loads = {e: 10.0 for e in ("a1", "a2", "m1", "m2", "s1")}
    r = Replanner(clock=FakeClock(), runner=Packing())
    options = {**RESUMABLE}
    r.plan(problem({}, measured=False, options=options, capacity=(60, 400)), "auto")   # placed on estimates
    first = r.plan(problem(packed, loads=loads, options=options, capacity=(60, 400)), "auto")
    assert moves_between(slots(packed), first.assignments), first.notes
    assert "predicted sustainable rate raised" in first.notes[-1] and "first correction" in first.notes[-1]
    # The same placement offered to topdown (no correction asked for): short of nothing, kept.
    r2 = Replanner(clock=FakeClock(), runner=Packing())
    r2.plan(problem({}, measured=False, options=options, capacity=(60, 400)), "topdown")
    kept = r2.plan(problem(packed, loads=loads, options=options, capacity=(60, 400)), "topdown")
    assert kept.assignments == slots(packed) and "keeps up" in kept.notes[0]


def test_a_placement_made_on_remembered_loads_is_not_corrected_but_faces_the_cautious_gate():
    """A resubmission placed on an earlier run's loads (planner.loads.remembered) was placed on a real run's
    costs, not on estimates: its first measured re-plan, at the first windows' rate, is no correction. Word
    Count on the 2 Mbit/s cluster: that re-plan moved 6 executors of the calibration's placement, and what
    it left sustained 0.84 x RAS. The same offer after a placement on declared loads is corrected."""
    class Packing:   # the planner's answer: every executor on sup-b
        def __call__(self, problem, algorithm):
            return Plan(algorithm=algorithm, assignments={e.id: Slot("sup-b", 6700) for e in problem.executors})

    packed = {e: A for e in ("a1", "a2", "m1", "m2", "s1")}
    loads = {e: 10.0 for e in packed}
    outcomes = {}
    for remembered in (True, False):
        r = Replanner(clock=FakeClock(), runner=Packing())
        first = problem({}, measured=False, options=RESUMABLE, capacity=(60, 400)).replace(
            loads_remembered=remembered)
        r.plan(first, "auto")
        assert r._states["t-1"].placed_on_estimates is not remembered
        outcomes[remembered] = r.plan(problem(packed, loads=loads, options=RESUMABLE, capacity=(60, 400)), "auto")
    kept, corrected = outcomes[True], outcomes[False]
    assert kept.assignments == slots(packed) and "keeps up" in kept.notes[0], kept.notes
    assert moves_between(slots(packed), corrected.assignments) and "first correction" in corrected.notes[-1]


def test_auto_keeps_its_correction_while_the_topology_has_room_and_never_moves_for_balance_alone():
    """At a rate far below what the placement sustains (``make demo``'s 4 tuples/s), a move buys capacity
    nobody asks for and restarts workers, losing what their bolts hold: auto keeps its placement, keeps its
    chance of a correction for when the rate comes close, and a better load distance alone moves nothing."""
    from storm_planner.adaptation.replan import CALIBRATION_HEADROOM

    class Spreading:   # the planner's answer: a1, m1 to sup-b (balance), all else where it is
        def __call__(self, problem, algorithm):
            moved = {"a1": Slot("sup-b", 6700), "m1": Slot("sup-b", 6700)}
            return Plan(algorithm=algorithm, assignments={
                e.id: moved.get(e.id, problem.current.get(e.id, Slot("sup-a", 6700))) for e in problem.executors})

    packed = {e: A for e in ("a1", "a2", "m1", "m2", "s1")}
    r = Replanner(clock=FakeClock(), runner=Spreading())
    r.plan(problem({}, measured=False, options=RESUMABLE, capacity=(400, 400)), "auto")
    roomy = r.plan(problem(packed, loads={e: 5.0 for e in packed}, options=RESUMABLE, capacity=(400, 400)), "auto")
    assert roomy.assignments == slots(packed), roomy.notes
    state = r._states["t-1"]
    assert state.placed_on_estimates   # the correction is kept for later
    assert CALIBRATION_HEADROOM > 1


def linked(current: dict[str, str], measured: bool = True, options=None) -> Problem:
    """Spout a1 -> m1 -> s1 on three nodes behind 1 Mbit/s links: a1 (80 % of a core) fills most of sup-a
    (100), and its tuples to m1 (812.5/s of 100 bytes: 0.65 Mbit/s) leave through one link wherever it runs."""
    data = {
        "nodes": [{"id": "sup-a", "capacity": 100, "bandwidth": 1, "slots": [6700]},
                  {"id": "sup-b", "capacity": 400, "bandwidth": 1, "slots": [6700]},
                  {"id": "sup-c", "capacity": 400, "bandwidth": 1, "slots": [6700]}],
        "topology": {"id": "t-1", "components": [
            {"id": "a", "type": "spout", "executors": 1}, {"id": "m", "executors": 1}, {"id": "s", "executors": 1}],
            "streams": [{"from": "a", "to": "m", "tuple_bytes": 100}, {"from": "m", "to": "s", "tuple_bytes": 100}]},
        "executors": [{"id": "a1", "component": "a", "load": 80.0}, {"id": "m1", "component": "m", "load": 10.0},
                      {"id": "s1", "component": "s", "load": 10.0}],
        "traffic": [{"from": "a1", "to": "m1", "rate": 812.5}, {"from": "m1", "to": "s1", "rate": 1.0}],
        "current": current,
        "options": {**RESUMABLE, **(options or {})},
    }
    return Problem.from_dict(data).replace(measured=measured)


def test_auto_takes_its_first_correction_for_rate_though_the_price_at_the_rate_served_sees_no_gain():
    """The capacity bench's Top-K on the 2 Mbit/s cluster: auto's first placement, on costs remembered from a
    spread placement, was predicted at 1.69 x the rate served; its correction, at 2.9 x, was refused because
    the busiest link (65 %, short of link) stayed as busy, so the price saw no gain over the period, and the
    topology sustained less than RAS. Here a1 on sup-a sustains 1.25 x (sup-a's CPU); on sup-c, 1.54 x (the
    link): the correction raises the predicted rate 23 % and leaves the busiest link at 65 %. auto takes it
    (the first correction notes its price without refusing on it); a later re-plan offered the same answer
    faces the cautious gate, which holds back a move that restarts the spout's worker for anything but a
    relief."""
    current = {"a1": "sup-a:6700", "m1": "sup-b:6700", "s1": "sup-b:6700"}
    answer = {**slots(current), "a1": Slot("sup-c", 6700)}
    before = evaluate(linked(current), slots(current))
    assert 50 <= before["max_network_utilisation"] < 100 and before["max_utilisation"] < 90
    assert evaluate(linked(current), answer)["max_network_utilisation"] == before["max_network_utilisation"]
    runner = lambda p, a: Plan(algorithm=a, assignments=answer)  # noqa: E731
    clock = FakeClock()
    r = Replanner(clock=clock, runner=runner)
    r.plan(linked({}, measured=False), "auto")          # placed on estimates
    first = r.plan(linked(current), "auto")
    assert moves_between(slots(current), first.assignments) == ["a1"], first.notes
    assert "predicted sustainable rate raised" in first.notes[-1] and "first correction" in first.notes[-1]
    assert "against a gain of 0.0 s" in first.notes[-1]
    clock.now += 3600
    later = r.plan(linked(current), "auto")
    assert later.assignments == slots(current), later.notes
    assert "held back that restart a spout's worker" in later.notes[0], later.notes


def test_a_resumable_source_lets_a_capacity_planners_rate_rise_restart_the_spouts_worker():
    """The saturated sup-a of the tests above under ``auto``: its gate weighs the predicted sustainable rate
    first, so moving m1 to sup-c reads "predicted sustainable rate raised", not the CPU pressure's relief. The
    spout's restart was then held back though the source was resumable: on the capacity run's hetero cluster
    40 re-plans of Word Count under CPU pressure were refused so. A rate rise while short of CPU is the
    pressure's relief and is weighed as one; the price counts the rate gained, not only the busiest node."""
    relieved = {**slots(SATURATED), "m1": Slot("sup-c", 6700)}
    runner = lambda p, a: Plan(algorithm=a, assignments=relieved)  # noqa: E731
    kept = Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(SATURATED, SATURATED_LOADS), "auto")
    assert kept.assignments == slots(SATURATED)
    assert "held back that restart a spout's worker" in kept.notes[0]
    moved = Replanner(clock=FakeClock(), runner=runner).plan(
        three_nodes(SATURATED, SATURATED_LOADS, options=RESUMABLE), "auto")
    assert moved.assignments == relieved, moved.notes
    assert "predicted sustainable rate raised" in moved.notes[-1]
    assert "restart a spout's worker: its source resumes from its committed progress" in moved.notes[-1]
    assert "against a gain of" in moved.notes[-1]       # priced, and the price did not refuse it


def test_the_cut_that_spares_the_spouts_is_judged_by_the_same_gate(monkeypatch):
    """Under ``auto`` the gate weighs the predicted sustainable rate; the cut that holds a spout's restart back
    was judged without it (the old rules: traffic, balance), so a capacity planner's alternative could be
    refused or taken for reasons its own gate ignores. Every cut of one decision is judged alike."""
    from storm_planner.adaptation import decision

    seen = []
    original = decision.fewest_moves

    def spy(*args, **kwargs):
        seen.append(args[7] if len(args) > 7 else kwargs.get("capacity", False))
        return original(*args, **kwargs)

    monkeypatch.setattr(decision, "fewest_moves", spy)
    relieved = {**slots(SATURATED), "m1": Slot("sup-c", 6700)}
    runner = lambda p, a: Plan(algorithm=a, assignments=relieved)  # noqa: E731
    for options in (None, RESUMABLE):
        seen.clear()
        Replanner(clock=FakeClock(), runner=runner).plan(three_nodes(SATURATED, SATURATED_LOADS, options=options),
                                                         "auto")
        assert len(seen) >= 2 and all(seen), seen      # the plan's cut and the one sparing the spouts
