"""Unit tests of the drain before a move (service/planning/drain.py) with a fake Nimbus client, fake metrics
windows and a fake clock (the coordinator without its thread: ``tick()`` advances it): every phase (pause,
drain, move, start, resume) and every failure path ends with the topology activated or gone, and recorded.

The topology: acker [1-1], counts [2-2] [3-3], spout [4-4] (task 4); count [3-3] moves from big-a:6702 to
big-b:6701 (a new worker there; big-a:6702 is left empty and stops)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from storm_planner.adaptation.state import FileStateStore, MemoryStateStore
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.metrics.windows import Flow, TaskWindow
from storm_planner.service.planning.drain import (
    DEACTIVATION_LAG_MS,
    MARKERS_KEY,
    OFFER_WAIT_S,
    REOFFER_MS,
    UNANSWERED_S,
    DrainCoordinator,
)
from storm_planner.submit.operations import TopologyGone

TOPOLOGY, NAME = "words-1-100", "words"
DEACTIVATION_LAG_S = DEACTIVATION_LAG_MS / 1000 + 0.05
CURRENT = {"[4-4]": "big-a:6700", "[2-2]": "big-a:6701", "[3-3]": "big-a:6702", "[1-1]": "big-b:6700"}
MOVED = {**CURRENT, "[3-3]": "big-b:6701"}
COMPONENT = {"[1-1]": "__acker", "[2-2]": "c", "[3-3]": "c", "[4-4]": "s"}
PID = {"big-a:6700": 100, "big-a:6701": 101, "big-a:6702": 102, "big-b:6700": 200, "big-b:6701": 201}


def slots(assignment):
    return {e: Slot.parse(s) for e, s in assignment.items()}


def problem(current=CURRENT, options=None) -> Problem:
    return Problem.from_dict({
        "nodes": [{"id": "big-a", "capacity": 100, "slots": [6700, 6701, 6702]},
                  {"id": "big-b", "capacity": 100, "slots": [6700, 6701]}],
        "topology": {"id": TOPOLOGY, "components": [
            {"id": "__acker", "executors": 1, "system": True}, {"id": "c", "executors": 2},
            {"id": "s", "type": "spout", "executors": 1}], "streams": [{"from": "s", "to": "c"}]},
        "executors": [{"id": e, "component": c, "load": 10.0} for e, c in COMPONENT.items()],
        "current": current, "options": options or {},
    }).replace(measured=True)


def spec(options=None, max_spout_pending=10):
    """The topology as the plugin sends it; its spout has 10 pending places, too few for the flow to go on
    through an undrained move, so a move is drained unless a test gives it more."""
    return SimpleNamespace(id=TOPOLOGY, name=NAME, options=options or {}, message_timeout_secs=30,
                           max_spout_pending=max_spout_pending)


def move_plan() -> Plan:
    return Plan("topdown", slots(MOVED), notes=("re-planned (...): 1 executor(s) move; CPU pressure relieved",))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.wall = 1_700_000_000.0

    def mono(self) -> float:
        return self.now

    def epoch(self) -> float:
        return self.wall

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.wall += seconds


class FakeNimbus:
    """Records activate/deactivate; ``fail`` maps a call to what it raises (an exception, or a list of them
    for the calls in turn)."""

    def __init__(self, **fail) -> None:
        self.calls: list[str] = []
        self.fail = fail

    def _call(self, what: str, name: str) -> None:
        assert name == NAME
        self.calls.append(what)
        failure = self.fail.get(what)
        if isinstance(failure, list):
            failure = failure.pop(0) if failure else None
        if failure is not None:
            raise failure

    def deactivate(self, name: str) -> None:
        self._call("deactivate", name)

    def activate(self, name: str) -> None:
        self._call("activate", name)


class Windows:
    """Each task's latest window, as the metrics store would keep it."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.latest: dict[int, TaskWindow] = {}

    def __call__(self, topology_id: str):
        assert topology_id == TOPOLOGY
        return {task: [w] for task, w in self.latest.items()}

    def spout(self, started: int, acked: int, failed: int = 0, ago_s: float = 0.0) -> None:
        """The spout task's window ending now (less ``ago_s``): trees started, acked and failed since it began."""
        end = int((self.clock.epoch() - ago_s) * 1000)
        self.latest[4] = TaskWindow(TOPOLOGY, "s", 4, 1, end - 3000, end, 3.0, node="big-a", port=6700, pid=100,
                                    acked_total=acked, failed_total=failed,
                                    sent=(Flow("__ack_init", 1, 30, started), Flow("default", 2, 30, started)))

    def worker(self, task: int, slot: str, pid: int, started_after_s: float) -> None:
        """A window of ``task`` from the worker ``pid`` on ``slot`` whose tasks started ``started_after_s``
        after now (negative: before)."""
        node, port = slot.split(":")
        start = int((self.clock.epoch() + started_after_s) * 1000)
        self.latest[task] = TaskWindow(TOPOLOGY, COMPONENT[f"[{task}-{task}]"], task, 1, start, start + 3000, 3.0,
                                       node=node, port=int(port), pid=pid)


@pytest.fixture
def clock():
    return Clock()


def coordinator(clock, nimbus=None, windows=None, markers=None, nimbus_address="nimbus:6627", **more):
    records, done = [], []
    drains = DrainCoordinator(nimbus_address, windows=windows if windows is not None else Windows(clock),
                              record=records.append, markers=markers or MemoryStateStore(),
                              control=nimbus or FakeNimbus(), on_done=done.append, clock=clock.mono,
                              wall=clock.epoch, threaded=False, **more)
    return drains, records, done


def phases(records):
    return [(r["phase"], r["outcome"]) for r in records]


def begin_and_pause(drains, clock):
    """The re-planner's move answered as a pause: the current placement, and the topology asked for soon."""
    answer, reoffer = drains.begin(spec(), problem(), move_plan())
    assert answer.assignments == slots(CURRENT) and reoffer == REOFFER_MS
    assert answer.notes[0].startswith("drain: the spouts pause (Nimbus deactivate) before 1 executor(s) move")
    assert answer.notes[1] == move_plan().notes[0]   # the re-plan's reasoning stays in the log
    drains.after_answer()
    clock.advance(0.2)
    drains.tick()


def test_unit_a_drain_goes_through_every_phase_and_resumes(clock):
    nimbus, windows = FakeNimbus(), None
    drains, records, done = coordinator(clock, nimbus)
    windows = drains.windows
    windows.worker(3, "big-a:6702", PID["big-a:6702"], -60)
    windows.spout(started=500, acked=480)                      # 20 in flight before the pause
    begin_and_pause(drains, clock)
    assert nimbus.calls == ["deactivate"]
    assert drains.markers.load(MARKERS_KEY) == {TOPOLOGY: {"name": NAME, "since": pytest.approx(clock.wall - 0.0)}}
    # Offers during the drain are answered with the current placement, the topology asked for again soon.
    answer, reoffer = drains.steer(spec(), problem())
    assert answer.assignments == slots(CURRENT) and reoffer == REOFFER_MS
    assert "drain under way (draining: in flight unknown yet)" in answer.notes[0]
    clock.advance(0.5)
    windows.spout(started=500, acked=500, ago_s=3.0)           # a window that ended before the pause: not counted
    drains.tick()
    assert drains.drain_of(TOPOLOGY).state == "draining"
    clock.advance(2.0)
    windows.spout(started=500, acked=495, failed=1)            # 4 still in flight
    drains.tick()
    assert drains.drain_of(TOPOLOGY).in_flight == 4
    clock.advance(3.0)
    windows.spout(started=500, acked=499, failed=1)            # drained
    drains.tick()
    assert drains.drain_of(TOPOLOGY).state == "ready"
    # The plugin's next offer gets the move.
    answer, reoffer = drains.steer(spec(), problem())
    assert answer.assignments == slots(MOVED) and reoffer == REOFFER_MS
    assert answer.notes[-1] == "drained: 1 executor(s) move with 0 tuple(s) in flight"
    clock.advance(1.0)
    kept, _ = drains.steer(spec(), problem(MOVED))             # applied: waiting for the new worker
    assert kept.assignments == slots(MOVED) and "waiting for the restarted workers' first windows" in kept.notes[0]
    drains.tick()
    assert drains.drain_of(TOPOLOGY).state == "moved"
    windows.worker(3, "big-b:6701", 777, started_after_s=-1.0 + 5.5)   # its tasks ran 5.5 s after the move
    clock.advance(8.0)
    drains.tick()
    assert drains.drain_of(TOPOLOGY).state == "resuming"
    drains.tick()
    assert nimbus.calls == ["deactivate", "activate"]
    assert drains.drain_of(TOPOLOGY) is None and done == [TOPOLOGY]
    assert drains.markers.load(MARKERS_KEY) == {}
    assert phases(records) == [("pause", "ok"), ("drain", "ok"), ("move", "ok"), ("start", "ok"), ("resume", "ok")]
    by_phase = {r["phase"]: r for r in records}
    assert by_phase["pause"]["note"] == "spouts paused (Nimbus deactivate); 20 tuple(s) in flight before"
    assert by_phase["drain"]["note"] == "0 tuples in flight after 5.5 s" and by_phase["drain"]["in_flight"] == 0
    assert by_phase["drain"]["seconds"] == pytest.approx(5.5)
    assert by_phase["start"]["note"] == "1 of 1 restarted worker(s) up (big-b:6701 in 5.5 s)"
    assert by_phase["start"]["seconds"] == pytest.approx(9.0)
    assert drains.start_times.snapshot() == {"big-b": pytest.approx(5.5)}
    # The next move of this topology is priced with what this drain measured.
    context = drains.context(spec(), problem(MOVED))
    # Paused 14.5 s in all (0.5 + 2 + 3 drain, 1 + 8 from the move to the resume), its start 5.5 s of that.
    assert context.drained and context.pause_s == pytest.approx(14.5 - 5.5)
    assert context.start_times == {"big-b": pytest.approx(5.5)}


def test_unit_a_drain_that_times_out_moves_anyway_and_says_how_many_were_in_flight(clock):
    drains, records, _ = coordinator(clock)
    begin_and_pause(drains, clock)
    drains.windows.spout(started=900, acked=893)
    for _ in range(6):
        clock.advance(5.0)
        drains.windows.spout(started=900, acked=893)
        drains.tick()
    assert drains.drain_of(TOPOLOGY).state == "ready"
    assert records[-1]["note"] == ("timed out after 30 s (planner.replan.drain.secs) with 7 tuple(s) in flight: "
                                   "the move goes ahead")
    answer, _ = drains.steer(spec(), problem())
    assert answer.assignments == slots(MOVED)
    assert answer.notes[-1] == "drain: 1 executor(s) move with 7 tuple(s) in flight after 30 s (planner.replan.drain.secs)"


def test_unit_nimbus_unreachable_at_the_pause_moves_undrained_and_still_activates(clock):
    nimbus = FakeNimbus(deactivate=OSError("connection refused"))
    drains, records, done = coordinator(clock, nimbus)
    begin_and_pause(drains, clock)
    assert records[-1]["phase"] == "pause" and "could not pause the spouts (connection refused)" in records[-1]["note"]
    answer, _ = drains.steer(spec(), problem())
    assert answer.assignments == slots(MOVED)
    clock.advance(61.0)          # no window from the new worker: the start's bound
    drains.tick()
    drains.tick()
    assert nimbus.calls == ["deactivate", "activate"] and drains.drain_of(TOPOLOGY) is None
    assert "the rest not after 60 s (planner.replan.start.secs)" in records[-2]["note"]


def test_unit_nimbus_unreachable_at_the_resume_is_retried_until_it_answers(clock):
    nimbus = FakeNimbus(activate=[OSError("connection refused"), OSError("connection refused")])
    drains, records, _ = coordinator(clock, nimbus)
    begin_and_pause(drains, clock)
    drains.steer(spec(), problem({e: s for e, s in CURRENT.items() if e != "[2-2]"}))   # a worker died: resume
    drains.tick()
    assert drains.markers.load(MARKERS_KEY), "still marked paused while the activation fails"
    drains.tick()                       # not yet: backing off
    assert nimbus.calls.count("activate") == 1
    clock.advance(1.0)
    drains.tick()
    clock.advance(2.0)
    drains.tick()
    assert nimbus.calls.count("activate") == 3 and drains.drain_of(TOPOLOGY) is None
    assert drains.markers.load(MARKERS_KEY) == {}
    assert [r["outcome"] for r in records if r["phase"] == "resume"] == ["retrying", "ok"]   # the failure said once
    assert "activating failed (connection refused): retrying until Nimbus answers" in records[-2]["note"]


def test_unit_a_topology_killed_mid_drain_is_gone_and_unmarked(clock):
    nimbus = FakeNimbus(activate=TopologyGone("no topology named 'words' is running on nimbus:6627"))
    drains, records, done = coordinator(clock, nimbus)
    begin_and_pause(drains, clock)
    drains.windows.latest.clear()            # the killed topology's metrics were deleted
    clock.advance(31.0)
    drains.tick()                            # the drain's bound: ready, in flight unknown
    assert "with an unknown number of tuple(s) in flight" in records[-1]["note"]
    clock.advance(OFFER_WAIT_S + 1)          # no offer comes for a killed topology
    drains.tick()
    drains.tick()
    assert drains.drain_of(TOPOLOGY) is None and drains.markers.load(MARKERS_KEY) == {} and done == []
    assert records[-1]["phase"] == "resume" and records[-1]["outcome"] == "gone"
    # Killed before the pause: nothing to resume.
    gone = FakeNimbus(deactivate=TopologyGone("no topology named 'words'"))
    drains2, records2, _ = coordinator(clock, gone)
    begin_and_pause(drains2, clock)
    assert drains2.drain_of(TOPOLOGY) is None and drains2.markers.load(MARKERS_KEY) == {}
    assert phases(records2) == [("pause", "gone")]


def test_unit_a_restarted_service_activates_what_its_predecessor_paused(clock, tmp_path):
    markers = FileStateStore(tmp_path / "plans.jsonl.paused.json")
    first, _, _ = coordinator(clock, FakeNimbus(), markers=markers)
    begin_and_pause(first, clock)            # paused; then the service dies (no close: killed)
    assert set(markers.load(MARKERS_KEY)) == {TOPOLOGY}
    nimbus = FakeNimbus()
    second, records, _ = coordinator(clock, nimbus, markers=FileStateStore(tmp_path / "plans.jsonl.paused.json"))
    second.recover()
    second.tick()
    assert nimbus.calls == ["activate"] and markers.load(MARKERS_KEY) == {}
    assert records[-1]["phase"] == "resume" and "the service restarted during its drain" in records[-1]["note"]
    # Without Nimbus' address it cannot: it says so, and leaves the marks.
    begin_and_pause(coordinator(clock, FakeNimbus(), markers=markers)[0], clock)
    blind = DrainCoordinator(None, markers=markers, threaded=False)
    blind.recover()
    assert blind.drain_of(TOPOLOGY) is None and set(markers.load(MARKERS_KEY)) == {TOPOLOGY}


def test_unit_a_topology_that_loses_executors_mid_drain_resumes_and_is_planned_as_usual(clock):
    """A worker died (or the plugin fell back to Storm's scheduler for the lost executors): the offer shows
    executors without a slot; the drain gives the move up and the spouts resume."""
    nimbus = FakeNimbus()
    drains, records, _ = coordinator(clock, nimbus)
    begin_and_pause(drains, clock)
    lost = problem({e: s for e, s in CURRENT.items() if e != "[2-2]"})
    assert drains.steer(spec(), lost) is None          # planned as usual
    drains.tick()
    assert nimbus.calls == ["deactivate", "activate"] and drains.drain_of(TOPOLOGY) is None
    assert "the topology lost executors during its drain" in records[-1]["note"]


@pytest.mark.parametrize("how", ["no offer", "placement changed", "move not applied", "service stops"])
def test_unit_every_other_way_a_drain_ends_resumes_the_spouts(clock, how):
    nimbus = FakeNimbus()
    drains, records, _ = coordinator(clock, nimbus)
    begin_and_pause(drains, clock)
    clock.advance(2.0)
    drains.windows.spout(started=10, acked=10)
    drains.tick()
    assert drains.drain_of(TOPOLOGY).state == "ready"
    if how == "no offer":
        clock.advance(OFFER_WAIT_S + 1)
        says = "no offer came within 30 s of the drain"
    elif how == "placement changed":
        answer, reoffer = drains.steer(spec(), problem({**CURRENT, "[2-2]": "big-b:6700"}))
        assert answer.assignments == slots({**CURRENT, "[2-2]": "big-b:6700"}) and reoffer is None
        says = "the placement changed during the drain"
    elif how == "move not applied":
        drains.steer(spec(), problem())                  # the move answered...
        drains.steer(spec(), problem())                  # ...and the next offer shows the old placement
        says = "the plugin did not apply the move"
    else:
        drains.close()
        says = "the service is stopping"
    drains.tick()
    drains.tick()
    assert nimbus.calls == ["deactivate", "activate"] and drains.drain_of(TOPOLOGY) is None
    assert records[-1]["phase"] == "resume" and says in records[-1]["note"]
    assert drains.markers.load(MARKERS_KEY) == {}


def test_unit_an_answer_that_never_reached_the_plugin_pauses_nothing(clock):
    nimbus = FakeNimbus()
    drains, records, _ = coordinator(clock, nimbus)
    drains.begin(spec(), problem(), move_plan())        # no after_answer: the reply was not sent
    drains.tick()
    clock.advance(UNANSWERED_S + 1)
    drains.tick()
    assert nimbus.calls == [] and drains.drain_of(TOPOLOGY) is None
    assert phases(records) == [("pause", "dropped")]


@pytest.mark.parametrize("why, build", [
    ("planner.replan.drain: false", lambda c: coordinator(c)),
    ("this service does not know Nimbus (serve --nimbus HOST:PORT)", lambda c: coordinator(c, nimbus_address=None)),
])
def test_unit_a_move_not_drained_is_answered_at_once_and_its_start_measured(clock, why, build):
    drains, records, done = build(clock)
    if why.startswith("this service"):
        drains.control = None
    options = {"planner.replan.drain": "false"} if why.startswith("planner") else {}
    drains.windows.worker(3, "big-a:6702", PID["big-a:6702"], -60)
    answer, reoffer = drains.begin(spec(options), problem(options=options), move_plan())
    assert answer.assignments == slots(MOVED) and reoffer is None
    assert answer.notes[-1] == f"not drained: {why}: moved at once"
    assert drains.steer(spec(options), problem(MOVED, options)) is None
    drains.windows.worker(3, "big-b:6701", 888, started_after_s=4.0)
    clock.advance(7.0)
    drains.tick()
    assert phases(records) == [("move", "ok"), ("start", "ok")] and records[-1]["drained"] is False
    assert drains.start_times.snapshot() == {"big-b": pytest.approx(4.0)} and done == [TOPOLOGY]
    assert drains.drain_of(TOPOLOGY) is None


@pytest.mark.parametrize("pending, options, drained", [
    (1000, {}, False),                                     # 40 in flight + a start at 10/s fit in 1,000
    (0, {}, False),                                        # unset in the conf: unbounded
    (None, {}, True),                                      # an older plugin does not say: unknown
    (1000, {"planner.replan.drain.always": "true"}, True),
    (10, {}, True),                                        # 40 in flight do not fit in 10
])
def test_unit_a_move_the_flow_survives_goes_at_once_unless_told_to_drain_always(clock, pending, options, drained):
    """Count [3-3] to a worker of its own on big-b: the spout's worker and the acker's do not restart."""
    drains, _, _ = coordinator(clock)
    drains.windows.spout(started=1200, acked=1150, failed=10)
    answer, reoffer = drains.begin(spec(options, max_spout_pending=pending), problem(options=options), move_plan())
    if drained:
        assert answer.assignments == slots(CURRENT) and reoffer == REOFFER_MS
        assert answer.notes[0].startswith("drain: the spouts pause")
    else:
        assert answer.assignments == slots(MOVED) and reoffer is None
        assert answer.notes[-1].startswith("not drained: the flow goes on: no spout's worker restarts, "
                                           "every bolt and 1 of 1 acker(s) keep running")
        assert answer.notes[-1].endswith(": moved at once")


def test_unit_a_stale_spout_window_leaves_the_tuples_in_flight_unknown_and_the_move_drained(clock):
    """The spout's latest window ended a minute ago (6 metrics periods): it may undercount what is in flight
    now, so the flow rule cannot vouch for the move and the drain goes ahead, however much room there is."""
    drains, _, _ = coordinator(clock)
    drains.windows.spout(started=1200, acked=1150, failed=10, ago_s=60.0)
    context = drains.context(spec(max_spout_pending=0), problem())
    assert context.in_flight is None and context.pending_room == float("inf")
    answer, reoffer = drains.begin(spec(max_spout_pending=0), problem(), move_plan(), context)
    assert answer.assignments == slots(CURRENT) and reoffer == REOFFER_MS


def test_unit_the_context_prices_the_drain_and_the_tuples_in_flight(clock):
    drains, _, _ = coordinator(clock)
    drains.windows.spout(started=1200, acked=1150, failed=10)
    context = drains.context(spec({"planner.metrics.period.secs": "3"}), problem())
    assert (context.drained, context.in_flight, context.spout_rate) == (True, 40, pytest.approx(10.0))
    assert (context.pause_s, context.metrics_period_s, context.message_timeout_s) == (None, 3.0, 30.0)
    assert (context.pending_room, context.drain_always) == (10.0, False)   # 10 per task, one spout task
    blind, _, _ = coordinator(clock, nimbus_address=None)
    blind.control = None
    assert blind.context(spec(), problem()).not_drained == "this service does not know Nimbus (serve --nimbus HOST:PORT)"


def test_unit_through_the_service_a_forced_move_is_drained_and_the_answers_say_so(tmp_path):
    """The handler with a re-planner forcing the move (planner.replan.force), its drain thread running on a
    fake Nimbus and fake windows: the first answer keeps the placement and asks for the topology again in
    REOFFER_MS, Nimbus is asked to deactivate only once the answer has gone back, the next offer after the
    drain gets the move, and the plan log holds every phase."""
    import time

    from storm_planner.adaptation.replan import Replanner
    from storm_planner.service.planning.handler import PlannerHandler
    from storm_planner.service.planning.planlog import read_plan_log
    from storm_planner.service.transport.contract import planner_thrift as T

    real = Clock()
    real.mono, real.epoch = time.monotonic, time.time   # the thread runs on the real clock
    windows, nimbus = Windows(real), FakeNimbus()
    windows.worker(3, "big-a:6702", PID["big-a:6702"], -60)
    replanner = Replanner()
    log = tmp_path / "plans.jsonl"
    drains = DrainCoordinator("nimbus:6627", windows=windows, control=nimbus, on_done=replanner.settle,
                              poll_s=0.02)
    handler = PlannerHandler(plan_log=log, replanner=replanner, isolate=False, drains=drains)
    drains.record = handler.plan_log.event
    options = {"planner.replan.force": "[3-3]@big-b:6701", "planner.algorithm": "even"}
    nodes = [T.Node(id="big-a", host="a", cpu_capacity=100.0, memory_mb=4096.0, free_ports=[], used_ports=[6700, 6701, 6702]),
             T.Node(id="big-b", host="b", cpu_capacity=100.0, memory_mb=4096.0, free_ports=[6701], used_ports=[6700])]

    def offer(current):
        spec = T.TopologySpec(
            id=TOPOLOGY, name=NAME, options=options, num_workers=4, message_timeout_secs=30,
            components=[T.Component(id="__acker", type="bolt", parallelism=1, system=True),
                        T.Component(id="c", type="bolt", parallelism=2), T.Component(id="s", type="spout", parallelism=1)],
            streams=[T.Stream(from_component="s", to_component="c")],
            executors=[T.Executor(id=e, component=c) for e, c in COMPONENT.items()],
            current={e: T.WorkerSlot(node_id=s.split(":")[0], port=int(s.split(":")[1])) for e, s in current.items()})
        (answer,) = handler.plan(T.PlanRequest(request_id="r", nodes=nodes, topologies=[spec], deadline_ms=5000)).plans
        return answer, {e: f"{s.node_id}:{s.port}" for e, s in answer.assignments.items()}

    def until(check, what):
        deadline = time.monotonic() + 10
        while not check():
            assert time.monotonic() < deadline, what
            time.sleep(0.01)

    try:
        answer, placed = offer(CURRENT)
        assert placed == CURRENT and answer.reoffer_ms == REOFFER_MS and answer.figures["moves"] == 0
        time.sleep(0.1)
        assert nimbus.calls == [], "Nimbus is inside its scheduling round until the answer has gone back"
        handler.after_answer()
        until(lambda: nimbus.calls == ["deactivate"], "the pause")
        until(lambda: drains.drain_of(TOPOLOGY).state == "draining", "the drain")
        answer, placed = offer(CURRENT)
        assert placed == CURRENT and answer.reoffer_ms == REOFFER_MS and "drain under way" in answer.notes[0]
        time.sleep(DEACTIVATION_LAG_S)
        windows.spout(started=40, acked=40)
        until(lambda: drains.drain_of(TOPOLOGY).state == "ready", "drained")
        answer, placed = offer(CURRENT)
        assert placed == MOVED and answer.reoffer_ms == REOFFER_MS
        assert answer.notes[0].startswith("forced move (planner.replan.force=[3-3]@big-b:6701)")
        assert "drained: 1 executor(s) move with 0 tuple(s) in flight" in answer.notes
        windows.worker(3, "big-b:6701", 999, started_after_s=0.0)
        until(lambda: drains.drain_of(TOPOLOGY) is None, "the resume")
        assert nimbus.calls == ["deactivate", "activate"]
        answer, placed = offer(MOVED)          # the re-planner again; settling after the move
        assert placed == MOVED and answer.reoffer_ms is None
    finally:
        handler.close()
    events = read_plan_log(log, "drain")
    assert [e["phase"] for e in events] == ["pause", "drain", "move", "start", "resume"]
    assert all(e["topology"] == TOPOLOGY and e["seconds"] >= 0 for e in events)
