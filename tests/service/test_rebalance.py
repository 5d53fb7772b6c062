"""Runtime parallelism without a cluster: the service's rebalance decision, its timing (after the answer,
one at a time, then a cooldown), the ``rebalance`` command's checks and the ``<prefix>.tasks.*`` option.
The real-cluster test is ``tests/e2e/test_runtime_parallelism.py``."""
from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from storm_planner.cli import main
from storm_planner.core.plan import ParallelismAdvice
from storm_planner.core.settings import SettingError
from storm_planner.generators.hetero import micro_profile
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.service.planning.rebalance import (
    AutoRebalancer,
    RebalanceSettings,
    TopologyRebalance,
    _request_through_nimbus,
    decide,
)
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.client import connect
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.server import free_port
from storm_planner.submit import operations
from storm_planner.submit.operations import RunningComponents, SubmitError, check_rebalance

WORDCOUNT = Path(__file__).resolve().parents[1] / "cluster" / "fixtures" / "wordcount"
ON = RebalanceSettings(enabled=True)


def advice(advised: int = 4, now: int = 1, rate: float = 200.0, current_rate: float = 100.0) -> ParallelismAdvice:
    return ParallelismAdvice(parallelism={"words": 1, "count": advised}, current={"words": 1, "count": now},
                             tasks={"words": 1, "count": 4}, max_input_rate=rate, current_max_input_rate=current_rate)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Nimbus:
    """Stands in for the Nimbus call in the decision tests: records what it was asked; the
    request and its confirmation take ``takes_s`` of the clock."""

    def __init__(self, fail: Exception | None = None, clock: Clock | None = None, takes_s: float = 0.0) -> None:
        self.calls: list[tuple] = []
        self.fail = fail
        self.clock, self.takes_s = clock, takes_s

    def __call__(self, nimbus, name, executors, wait_secs) -> str:
        self.calls.append((nimbus, name, dict(executors), wait_secs))
        if self.clock:
            self.clock.now += self.takes_s
        if self.fail:
            raise self.fail
        return f"rebalance of {name!r} applied"


# -- settings and the decision ----------------------------------------------------------------------

def test_settings_come_from_topology_options_as_strings():
    assert RebalanceSettings.of({}) == RebalanceSettings(enabled=False, min_gain=0.10, cooldown_s=120.0)
    settings = RebalanceSettings.of({"planner.rebalance": "true", "planner.rebalance.min.gain": "0.25",
                                     "planner.rebalance.cooldown.secs": "30", "planner.rebalance.wait.secs": "5"})
    assert settings == RebalanceSettings(enabled=True, min_gain=0.25, cooldown_s=30.0, wait_secs=5)
    assert RebalanceSettings.of({"planner.rebalance": "yes"}) == RebalanceSettings(enabled=True)


@pytest.mark.parametrize("key,value,says", [
    ("planner.rebalance", "maybe", "is not true or false"),
    ("planner.rebalance.min.gain", "lots", "is not a number"),
    ("planner.rebalance.cooldown.secs", "-1", "must not be below 0"),
    ("planner.rebalance.wait.secs", "2.5", "is not an integer"),
])
def test_an_unusable_setting_is_refused_naming_the_key(key, value, says):
    """One error policy for every planner.* key (core.settings): refused, not silently the default."""
    with pytest.raises(SettingError) as refused:
        RebalanceSettings.of({"planner.rebalance": "true", key: value})
    assert refused.value.key == key and f"topology option {key}={value!r} {says}" in str(refused.value)


def test_only_an_opted_in_changing_advice_that_gains_enough_is_rebalanced():
    assert decide(RebalanceSettings(), advice(), None, 0).rebalance is False
    assert decide(ON, None, None, 0).note is None
    assert decide(ON, advice(advised=1), None, 0).note is None  # nothing to change
    small = decide(ON, advice(rate=105.0), None, 0)
    assert not small.rebalance and "+5%" in small.note and "min.gain 10%" in small.note
    assert decide(RebalanceSettings(enabled=True, min_gain=0.04), advice(rate=105.0), None, 0).rebalance
    yes = decide(ON, advice(), None, 0)
    assert yes.rebalance and yes.note == ("rebalance: asking Nimbus for count 1->4 (+100% predicted max input "
                                          "rate) once this answer is sent")
    nowhere = decide(ON, advice(), None, 0, has_nimbus=False)
    assert not nowhere.rebalance and "serve --nimbus" in nowhere.note


def test_one_request_at_a_time_then_the_cooldown():
    busy = decide(ON, advice(), TopologyRebalance(in_flight=True), 0)
    assert not busy.rebalance and "under way" in busy.note
    cooling = decide(ON, advice(), TopologyRebalance(next_allowed=100.0), 40.0)
    assert not cooling.rebalance and "60 s left" in cooling.note
    assert decide(ON, advice(), TopologyRebalance(next_allowed=100.0), 100.0).rebalance


# -- the rebalancer: after the answer, in flight, cooldown, failures ----------------------------------

def test_the_request_starts_only_after_the_answer_and_the_cooldown_counts_from_when_it_is_applied():
    clock = Clock()
    nimbus, records = Nimbus(clock=clock, takes_s=15), []
    rebalancer = AutoRebalancer("nimbus:6627", record=records.append, request=nimbus, clock=clock)
    options = {"planner.rebalance": "true", "planner.rebalance.wait.secs": "10",
               "planner.rebalance.cooldown.secs": "60"}
    assert rebalancer.consider("t-1", "t", options, advice()).startswith("rebalance: asking Nimbus")
    assert nimbus.calls == []  # decided while answering; nothing sent yet
    assert "under way" in rebalancer.consider("t-1", "t", options, advice())  # the next round meanwhile
    rebalancer.after_answer()
    rebalancer.wait_idle()
    assert nimbus.calls == [("nimbus:6627", "t", {"count": 4}, 10)]
    (record,) = records
    assert record["event"] == "rebalance" and record["outcome"] == "applied"
    assert record["executors"] == {"count": 4} and record["current"] == {"count": 1}
    assert record["predicted_gain"] == pytest.approx(1.0)

    clock.now += 59  # the request took 15 s (wait, redistribution, confirmation); 60 s cooldown, less one
    assert "waits for the cooldown" in rebalancer.consider("t-1", "t", options, advice())
    clock.now += 1
    assert rebalancer.consider("t-1", "t", options, advice()).startswith("rebalance: asking")
    rebalancer.after_answer()
    rebalancer.wait_idle()
    assert len(nimbus.calls) == 2
    assert rebalancer.consider("other-1", "other", {}, advice()) is None  # not opted in: no word


def test_a_failed_request_costs_a_record_and_a_cooldown_nothing_else():
    records = []
    port = free_port()  # nothing listens there: a Nimbus that is down
    rebalancer = AutoRebalancer(f"127.0.0.1:{port}", record=records.append)
    options = {"planner.rebalance": "true", "planner.rebalance.cooldown.secs": "30"}
    assert rebalancer.consider("t-1", "t", options, advice()).startswith("rebalance: asking")
    rebalancer.after_answer()
    rebalancer.wait_idle()
    (record,) = records
    assert record["outcome"] == "failed" and f"cannot reach Nimbus at 127.0.0.1:{port}" in record["message"]
    assert "waits for the cooldown" in rebalancer.consider("t-1", "t", options, advice())

    crashing = AutoRebalancer("n:1", record=records.append, request=Nimbus(fail=RuntimeError("boom")))
    crashing.consider("t-1", "t", options, advice())
    crashing.after_answer()
    crashing.wait_idle()
    assert records[-1]["outcome"] == "failed" and records[-1]["message"] == "RuntimeError: boom"
    assert "waits for the cooldown" in crashing.consider("t-1", "t", options, advice())  # not stuck in flight


# -- through the service, over Thrift ------------------------------------------------------------------

def hetero_topology(options: dict[str, str]):
    """The micro linear topology as the plugin sends it: one high executor over four tasks."""
    components = [T.Component(id=c, type="spout" if c == "spout" else "bolt", parallelism=1)
                  for c in ("spout", "mid", "high", "sink")]
    components.append(T.Component(id="__acker", type="bolt", parallelism=1, system=True))
    executors = [T.Executor(id=e, component=c) for e, c in
                 (("[1-1]", "spout"), ("[2-2]", "mid"), ("[3-6]", "high"), ("[7-7]", "sink"), ("[8-8]", "__acker"))]
    streams = [T.Stream(from_component=a, to_component=b, grouping="shuffle")
               for a, b in (("spout", "mid"), ("mid", "high"), ("high", "sink"))]
    return T.TopologySpec(id="linear-7-1700000000", name="linear", components=components, streams=streams,
                          executors=executors, current={}, algorithm="hetero", num_workers=3,
                          options={"planner.hetero.profiles": json.dumps(micro_profile()), **options})


def nodes():
    return [T.Node(id=f"{kind}-0", host=kind, cpu_capacity=100.0, memory_mb=4096.0, meta={"machine.type": kind},
                   free_ports=[6700], used_ports=[]) for kind in ("pentium", "i3", "i5", "i5")]


def test_the_service_asks_for_the_rebalance_once_the_plugin_has_its_answer(tmp_path):
    answered = threading.Event()
    seen = {}

    def request(nimbus, name, executors, wait_secs):
        # Inside the call, the plugin could not have the answer yet: this would wait in vain.
        seen.update(answered=answered.wait(10), name=name, executors=dict(executors))
        return "requested"

    handler = PlannerHandler(plan_log=tmp_path / "plans.jsonl", nimbus="nimbus:6627")
    handler.rebalancer.request = request
    spec = hetero_topology({"planner.rebalance": "true"})
    with BackgroundServer(handler) as server, connect(server.host, server.port, timeout_ms=20000) as client:
        (plan,) = client.plan(T.PlanRequest(request_id="r", nodes=nodes(), topologies=[spec], deadline_ms=10000)).plans
        answered.set()
        handler.rebalancer.wait_idle()
    assert plan.error is None and set(plan.assignments) == {e.id for e in spec.executors}
    assert seen["answered"] is True, "the rebalance request ran before the answer was sent"
    assert seen["name"] == "linear" and seen["executors"]["high"] > 1
    assert any(n.startswith("rebalance: asking Nimbus for high 1->") for n in plan.notes)
    assert any("storm-planner rebalance linear -e" in n for n in plan.notes)

    (logged,) = read_plan_log(tmp_path / "plans.jsonl")
    assert logged["event"] == "plan" and logged["advice"]["tasks"]["high"] == 4
    assert logged["advice"]["parallelism"]["high"] == seen["executors"]["high"] <= 4
    (record,) = read_plan_log(tmp_path / "plans.jsonl", event="rebalance")
    assert record["topology"] == spec.id and record["name"] == "linear" and record["outcome"] == "applied"
    assert len(read_plan_log(tmp_path / "plans.jsonl", event=None)) == 2


def test_the_server_runs_after_answer_once_the_reply_is_flushed_even_when_the_call_fails():
    from thriftpy2.protocol import TBinaryProtocol
    from thriftpy2.thrift import TMessageType
    from thriftpy2.transport import TMemoryBuffer

    from storm_planner.service.transport.server import AnswerFirstProcessor

    events = []

    class Reply(TMemoryBuffer):
        def flush(self):
            events.append("reply flushed")

    class Handler:
        def health(self):
            events.append("call")
            return T.Health(status="ok", version="x", algorithms=[], uptime_ms=1)

        def after_answer(self):
            events.append("after_answer")

    call = TMemoryBuffer()
    protocol = TBinaryProtocol(call)
    protocol.write_message_begin("health", TMessageType.CALL, 1)
    T.PlannerService.health_args().write(protocol)
    protocol.write_message_end()
    processor = AnswerFirstProcessor(T.PlannerService, Handler())
    processor.process(TBinaryProtocol(TMemoryBuffer(call.getvalue())), TBinaryProtocol(Reply()))
    assert events == ["call", "reply flushed", "after_answer"]

    class Gone(TMemoryBuffer):  # the plugin gave up and closed the connection
        def flush(self):
            raise OSError("connection reset")

    events.clear()
    with pytest.raises(OSError):
        processor.process(TBinaryProtocol(TMemoryBuffer(call.getvalue())), TBinaryProtocol(Gone()))
    assert events == ["call", "after_answer"]  # what was decided still starts


def test_without_nimbus_or_without_opting_in_the_service_only_advises(tmp_path):
    handler = PlannerHandler(plan_log=tmp_path / "plans.jsonl")
    on = hetero_topology({"planner.rebalance": "true"})
    (plan,) = handler.plan(T.PlanRequest(request_id="r", nodes=nodes(), topologies=[on], deadline_ms=10000)).plans
    assert any("serve --nimbus" in n for n in plan.notes)
    off = hetero_topology({})
    (plan,) = PlannerHandler(nimbus="nimbus:6627").plan(
        T.PlanRequest(request_id="r", nodes=nodes(), topologies=[off], deadline_ms=10000)).plans
    assert not any(n.startswith("rebalance:") for n in plan.notes)
    assert read_plan_log(tmp_path / "plans.jsonl", event="rebalance") == []


# -- storm-planner rebalance: checks before Nimbus ------------------------------------------------------

RUNNING = RunningComponents(name="hot", id="hot-1-1", status="ACTIVE",
                            executors={"words": 1, "count": 1}, tasks={"words": 1, "count": 4})


@pytest.mark.parametrize("executors, message", [
    ({}, "at least one -e"),
    ({"cuont": 2}, "no component 'cuont'"),
    ({"count": 5}, "has 4 task\\(s\\) of 'count'"),
    ({"count": 0}, "at least one executor"),
])
def test_a_rebalance_storm_cannot_do_is_refused_before_nimbus(executors, message):
    with pytest.raises(SubmitError, match=message):
        check_rebalance(RUNNING, executors)
    check_rebalance(RUNNING, {"count": 4, "words": 1})


def test_a_rebalance_under_way_or_of_an_unscheduled_topology_is_refused():
    with pytest.raises(SubmitError, match="being rebalanced already"):
        check_rebalance(replace(RUNNING, status="REBALANCING"), {"count": 2})
    with pytest.raises(SubmitError, match="no executors assigned yet"):
        check_rebalance(replace(RUNNING, executors={}, tasks={}), {"count": 2})


class UnassignedThenRunning:
    """Stands in for Nimbus's Thrift client around a topology's first scheduling round: its first
    ``unassigned`` reads show no executors (the assignment is not written yet), later ones show it
    running; it records the rebalance requests it accepts."""

    def __init__(self, unassigned: int) -> None:
        self.unassigned, self.reads, self.requests = unassigned, 0, []

    @contextlib.contextmanager
    def client(self, host, port, timeout_ms=None):
        yield self

    def read(self, client, name, where="Nimbus") -> RunningComponents:
        self.reads += 1
        executors = {} if self.reads <= self.unassigned else {"count": 4 if self.requests else 1, "words": 1}
        return replace(RUNNING, executors=executors, tasks={"count": 4, "words": 1} if executors else {})

    def rebalance(self, name, options) -> None:
        self.requests.append(dict(options.num_executors))

    def install(self, monkeypatch) -> UnassignedThenRunning:
        monkeypatch.setattr(operations, "nimbus_client", self.client)
        monkeypatch.setattr(operations, "running_components", self.read)
        monkeypatch.setattr(operations.time, "sleep", lambda s: None)
        return self


def test_the_service_waits_for_the_first_assignment_before_it_asks_nimbus(monkeypatch):
    # The service's rebalance of a first plan starts while Nimbus is still writing that plan's
    # assignment: asked then, check_rebalance refuses "no executors assigned yet" (seen in CI).
    nimbus = UnassignedThenRunning(unassigned=2).install(monkeypatch)
    request = operations.rebalance_topology("127.0.0.1:1", "hot", {"count": 4}, wait_secs=0, wait_applied=5,
                                            wait_assigned=5, progress=lambda m: None)
    assert request.applied and nimbus.requests == [{"count": 4}]
    assert request.topology.executors == {"count": 1, "words": 1}

    # Without the wait, the same moment is refused, and the service's request waits.
    UnassignedThenRunning(unassigned=1).install(monkeypatch)
    with pytest.raises(SubmitError, match="no executors assigned yet"):
        operations.rebalance_topology("127.0.0.1:1", "hot", {"count": 4}, progress=lambda m: None)
    service = UnassignedThenRunning(unassigned=3).install(monkeypatch)
    assert "applied" in _request_through_nimbus("127.0.0.1:1", "hot", {"count": 4}, 0)
    assert service.requests == [{"count": 4}]


def test_waiting_for_an_assignment_that_never_comes_names_it(monkeypatch):
    nimbus = UnassignedThenRunning(unassigned=10**6).install(monkeypatch)
    monkeypatch.setattr(operations.time, "sleep", time.sleep)
    with pytest.raises(SubmitError, match="'hot' is still ACTIVE without executors after 0 s"):
        operations.rebalance_topology("127.0.0.1:1", "hot", {"count": 4}, wait_assigned=0.01, progress=lambda m: None)
    assert nimbus.requests == []


@pytest.mark.parametrize("argv, message", [
    (["rebalance", "hot", "-e", "count"], "expects COMPONENT=N"),
    (["rebalance", "hot", "-e", "=3"], "expects COMPONENT=N"),
    (["rebalance", "hot", "-e", "count=-1"], "positive integer"),
    (["rebalance", "hot", "-e", "count=two"], "positive integer"),
    (["rebalance", "hot", "-e", "count=2", "-e", "count=3"], "given twice"),
    (["rebalance", "hot", "-e", "count=2", "--wait-secs", "-1"], "cannot be negative"),
    (["rebalance", "hot", "-e", "count=2", "--nimbus", "nimbus:x"], "HOST\\[:PORT\\]"),
])
def test_the_rebalance_command_names_what_is_wrong(capsys, argv, message):
    assert main(argv) == 2
    assert re.search(message, capsys.readouterr().err)


def test_the_rebalance_command_needs_executors_and_a_reachable_nimbus(capsys):
    with pytest.raises(SystemExit):
        main(["rebalance", "hot"])
    assert "-e/--executors" in capsys.readouterr().err
    assert main(["rebalance", "hot", "-e", "count=2", "--nimbus", f"127.0.0.1:{free_port()}"]) == 2
    assert "cannot reach Nimbus at 127.0.0.1:" in capsys.readouterr().err


# -- task counts at submission -------------------------------------------------------------------------

def test_the_tasks_option_sets_the_components_task_count_and_is_undone_by_the_next_submit():
    from storm_planner.submit.operations import apply_structure_options
    from storm_planner.submit.project import load_project

    project = load_project(WORDCOUNT)
    count = project.topology_class.thrift_bolts["count"]
    declared = json.loads(count.common.json_conf)
    summary = apply_structure_options(project, {"wordcount.parallelism.count": 1, "wordcount.tasks.count": "6",
                                                "wordcount.output": "/tmp/x"})
    assert summary == "count x1, count tasks=6"
    assert json.loads(count.common.json_conf) == {**declared, "topology.tasks": 6}
    assert count.common.parallelism_hint == 1
    with pytest.raises(SubmitError, match="below its parallelism hint 2"):
        apply_structure_options(project, {"wordcount.tasks.count": 1})  # the declared par=2
    with pytest.raises(SubmitError, match="positive integer"):
        apply_structure_options(project, {"wordcount.tasks.count": "many"})
    with pytest.raises(SubmitError, match="no component 'cuont'"):
        apply_structure_options(project, {"wordcount.tasks.cuont": 4})
    assert apply_structure_options(project, {}) == ""
    assert json.loads(count.common.json_conf) == declared and count.common.parallelism_hint == 2
