"""``bench e2e``'s profiles for ``planner:hetero`` and ``planner:hetero-optimal`` without a cluster: the
option reaches the hetero cells' topology options and no other cell's, a profile is made once and
reused, its machine types are the cluster's, and a bad saved profile is refused naming its file."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from storm_planner.cluster.description import load_description
from storm_planner.planners.hetero.profiles import Measurement, parse_profile
from storm_planner.profiling.cgroups import THROTTLE_JUDGED_PERIOD_US
from storm_planner.profiling.measurements import Step, WindowFigures
from storm_planner.streaming.pacing import RateFile, ReplayPacer
from storm_planner_bench.e2e import cells as e2e_cells
from storm_planner_bench.e2e import experiment as e2e
from storm_planner_bench.e2e import profiles as e2e_profiles
from storm_planner_bench.e2e.cells import Timing
from storm_planner_bench.e2e.profiles import (
    HeteroProfiles,
    cluster_machine_types,
    component_alphas,
    load_checked,
    profile_document,
)
from storm_planner_bench.e2e.workloads import TOPK_LINK, HeteroProfileError, parse_scheduler

REPO = Path(__file__).resolve().parents[3]
CLUSTER = REPO / "benchmarks" / "e2e" / "cluster.yaml"
KEY = "planner.hetero.profiles"


def topk_steps(machine_type: str = "i7", throttled: float = 0.0) -> list[Step]:
    """Top-K measured at three rates: CPU % = 2 + IR · per-tuple ms / 10 for each component."""
    per_tuple = {"requests": 0.4, "count": 0.8, "top": 0.3}
    return [Step(machine_type, rate, False, throttled,
                 [Measurement(c, machine_type, rate, 2.0 + rate * ms / 10.0, ms / 2 if c != "requests" else 0.0)
                  for c, ms in per_tuple.items()]) for rate in (15.0, 30.0, 60.0)]


def topk_profile(types=("i7", "i5")) -> dict:
    return profile_document(topk_steps(), {"requests": 1.0, "count": 1.0, "top": 0.1}, types, 15.0,
                            {"supervisor": "i7-a"})


def fake_bench(tmp_path: Path) -> SimpleNamespace:
    return SimpleNamespace(feeds={"worldcup": tmp_path / "feeds"}, repo=REPO, nimbus="127.0.0.1:6627",
                           timing=Timing(start_s=5), progress=lambda message: None, work=tmp_path / "cells")


@pytest.fixture
def captured(monkeypatch) -> list[dict]:
    """What ``submit_project`` was asked to submit (nothing is submitted)."""
    from storm_planner.submit import operations

    calls: list[dict] = []
    monkeypatch.setattr(operations, "submit_project",
                        lambda project, **kwargs: calls.append(kwargs) or SimpleNamespace(id="t-1"))
    return calls


def test_the_profile_reaches_hetero_cells_and_no_other(tmp_path, captured):
    bench, text = fake_bench(tmp_path), json.dumps(topk_profile())
    for label in ("planner:hetero", "planner:hetero-optimal", "planner:hetero+nohook", "planner:topdown",
                  "default", "ras"):
        e2e_cells.submit_workload(bench, TOPK_LINK, 60.0, parse_scheduler(label), tmp_path, "job", profile=text)
    options = [call["options"] for call in captured]
    assert [KEY in o for o in options] == [True, True, True, False, False, False]
    assert all(o[KEY] == text and o["planner.algorithm"].startswith("hetero") for o in options[:3])
    assert parse_profile(json.loads(options[0][KEY])).times("count", "i5").per_tuple_ms == pytest.approx(0.8)


def test_a_hetero_cell_without_a_profile_is_an_error_not_a_placement(tmp_path, captured):
    with pytest.raises(HeteroProfileError, match="planner:hetero needs a profile of topk-link"):
        e2e_cells.submit_workload(fake_bench(tmp_path), TOPK_LINK, 60.0, parse_scheduler("planner:hetero"),
                           tmp_path, "job")
    assert not captured


def test_the_profile_has_the_clusters_machine_types_and_the_fitted_times():
    types = cluster_machine_types(load_description(CLUSTER))
    assert types == ("i7", "i5")
    profile = topk_profile(types)
    assert {t for entry in profile["components"].values() for t in entry["times"]} == set(types)
    parsed = parse_profile(profile)
    for machine_type in types:   # the affine fit recovers base and per-tuple cost, the same on every type
        times = parsed.times("count", machine_type)
        assert (times.base, times.per_tuple_ms) == (pytest.approx(2.0), pytest.approx(0.8))
        assert times.et == pytest.approx(0.4)
    assert parsed.alpha("top", "anything") == pytest.approx(0.1)
    assert profile["profiling"]["supervisor"] == "i7-a" and len(profile["profiling"]["steps"]) == 3
    assert load_checked_ok(profile)


def load_checked_ok(profile: dict) -> bool:
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "topk-link.json"
        path.write_text(json.dumps(profile))
        return load_checked(path, TOPK_LINK, ("i7", "i5")) == profile


def test_throttled_steps_are_left_out_but_one_is_kept():
    steps = topk_steps()
    steps[2] = Step("i7", 60.0, False, 0.4, [Measurement("count", "i7", 60.0, 90.0, 0.4)])  # at capacity
    profile = parse_profile(profile_document(steps, {}, ("i7", "i5"), 15.0, {}))
    assert profile.times("count", "i5").per_tuple_ms == pytest.approx(0.8)   # the 90 % step did not count


def test_alpha_is_emitted_per_executed_and_a_spouts_is_one():
    def window(component, emitted, executed):
        return WindowFigures(component, 1, 1, 3000.0, 10.0, executed, emitted, 0.0, 0)

    windows = [window("requests", 90, 0), window("count", 60, 30), window("count", 30, 30), window("top", 1, 60),
               window("__acker", 5, 5)]
    assert component_alphas(windows, ["requests"]) == {"requests": 1.0, "count": 1.5, "top": pytest.approx(1 / 60, abs=1e-6)}


def test_a_profile_is_made_once_and_reused_by_later_cells_and_reruns(tmp_path, monkeypatch):
    made: list[str] = []
    monkeypatch.setattr(e2e_profiles, "profile_workload",
                        lambda bench, workload, types, top_rate: made.append((workload.name, top_rate))
                        or topk_profile(types))
    bench = SimpleNamespace(progress=lambda message: None)
    profiles = HeteroProfiles(tmp_path / "profiles", ("i7", "i5"), top_rates={"topk-link": 400.0})
    first = profiles.text(bench, TOPK_LINK)
    assert profiles.text(bench, TOPK_LINK) == first and made == [("topk-link", 400.0)]   # at the cells' rate
    kept = json.loads((tmp_path / "profiles" / "topk-link.json").read_text())
    assert kept == topk_profile() and json.loads(first) == {k: v for k, v in kept.items() if k != "profiling"}
    rerun = HeteroProfiles(tmp_path / "profiles", ("i7", "i5"))   # the same --out, another run
    rerun.check([TOPK_LINK])
    assert rerun.text(bench, TOPK_LINK) == first and made == [("topk-link", 400.0)]


def test_profiling_that_fails_says_what_to_do(tmp_path, monkeypatch):
    from storm_planner.submit.operations import SubmitError

    def fail(bench, workload, types, top_rate):
        raise SubmitError("nimbus said no")

    monkeypatch.setattr(e2e_profiles, "profile_workload", fail)
    profiles = HeteroProfiles(tmp_path / "profiles", ("i7", "i5"))
    with pytest.raises(HeteroProfileError, match="profiling it on the cluster failed: nimbus said no.*--profiles"):
        profiles.text(SimpleNamespace(progress=lambda message: None), TOPK_LINK)
    assert not (tmp_path / "profiles" / "topk-link.json").exists()


@pytest.mark.parametrize("content, named", [
    ("{not json", "topk-link.json"),
    (json.dumps({"format": "storm-planner-profile/1", "components": {"requests": {"times": {"i7": 0.1}}},
                 "bse": 1}), "unknown key 'bse'"),
    (json.dumps(topk_profile(("i7",))), "no times for machine type 'i5'"),
    (json.dumps({**topk_profile(), "components": {k: v for k, v in topk_profile()["components"].items()
                                                  if k != "top"}}), "no entry for component 'top'"),
    (json.dumps({**topk_profile(), "profiling": {"workload": "trends-link"}}), "a profile of trends-link"),
    (json.dumps({**topk_profile(), "components": {**topk_profile()["components"],
                                                  "tweets": topk_profile()["components"]["top"]}}),
     "components tweets are not topk-link's"),
])
def test_a_bad_saved_profile_is_refused_naming_the_file(tmp_path, content, named):
    (tmp_path / "topk-link.json").write_text(content)
    profiles = HeteroProfiles(tmp_path / "out" / "profiles", ("i7", "i5"), saved=tmp_path)
    with pytest.raises(HeteroProfileError, match=str(tmp_path / "topk-link.json")) as error:
        profiles.check([TOPK_LINK])
    assert named in str(error.value)


def test_a_missing_saved_profile_is_refused_and_not_profiled(tmp_path, monkeypatch):
    monkeypatch.setattr(e2e_profiles, "profile_workload", lambda *a: pytest.fail("profiled despite --profiles"))
    profiles = HeteroProfiles(tmp_path / "profiles", ("i7", "i5"), saved=tmp_path)
    with pytest.raises(HeteroProfileError, match="no profile topk-link.json for workload topk-link"):
        profiles.check([TOPK_LINK])
    with pytest.raises(HeteroProfileError, match="no profile topk-link.json"):
        profiles.text(SimpleNamespace(progress=lambda message: None), TOPK_LINK)


def test_the_bench_refuses_a_bad_saved_profile_before_any_cluster_starts(tmp_path, monkeypatch, capsys):
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "topk-link.json").write_text(json.dumps(topk_profile(("i7",))))
    monkeypatch.setattr(e2e, "open_bench", lambda *a, **k: pytest.fail("a cluster was started"))
    args = argparse.Namespace(
        workloads="topk-link", schedulers="default,planner:hetero", repeat=1, rate=None, quick=True, settle=1.0,
        measure=1.0, drain=1.0, start_timeout=180.0, out=str(tmp_path / "e2e"), cluster=str(CLUSTER),
        link_mbit=None, cpu_scale=None, feed_records=None, seed=1, report_only=False,
        profiles=str(tmp_path / "saved"))
    assert e2e._handler(args) == 2
    err = capsys.readouterr().err
    assert "saved/topk-link.json" in err and "'i5'" in err
    assert f"--profiles {tmp_path / 'saved'}" in e2e.e2e_command(args)   # the report names them


def test_the_spout_rate_can_change_while_it_runs(tmp_path):
    now = [0.0]
    pacer = ReplayPacer(rate=10.0, clock=lambda: now[0])
    assert pacer.wait_for(None) == 0.0
    pacer.emitted(10)
    assert pacer.wait_for(None) == pytest.approx(1.0)
    pacer.set_rate(100.0)                      # counted afresh from now: no backlog, no burst
    assert pacer.wait_for(None) == 0.0
    pacer.emitted(10)
    assert pacer.wait_for(None) == pytest.approx(0.1)
    with pytest.raises(ValueError):
        pacer.set_rate(0)

    path = tmp_path / "rate"
    rates = RateFile(str(path), clock=lambda: now[0])
    assert rates.changed() is None             # no file yet
    path.write_text("40")
    assert rates.changed() is None             # read again only after RATE_FILE_CHECK_S
    now[0] += 1.0
    assert rates.changed() == 40.0
    now[0] += 1.0
    assert rates.changed() is None             # unchanged
    path.write_text("junk")
    now[0] += 1.0
    assert rates.changed() is None
    path.write_text("80")
    now[0] += 1.0
    assert rates.changed() == 80.0
    assert RateFile(None).changed() is None


def service_plan(algorithm: str, profile: dict):
    """The planner service's answer for Top-K as e2e submits it, on the e2e cluster's four supervisors."""
    from storm_planner.profiling.project import load_project_topology
    from storm_planner.service.planning.handler import PlannerHandler
    from storm_planner.service.transport.contract import planner_thrift as T

    nodes = [T.Node(id=name, host=name, cpu_capacity=cpu, memory_mb=2048.0, free_ports=[6700, 6701, 6702],
                    used_ports=[], meta={"machine.type": name[:2], "speed": "1.0"})
             for name, cpu in (("i7-a", 45.0), ("i7-b", 45.0), ("i5-a", 35.0), ("i5-b", 35.0))]
    topology = load_project_topology(REPO / TOPK_LINK.project, TOPK_LINK.topology)
    components = [T.Component(id=c.name, type=c.kind, parallelism=c.hint_for(None)) for c in topology.components]
    components.append(T.Component(id="__acker", type="bolt", parallelism=TOPK_LINK.ackers, system=True))
    owners = [c.name for c in topology.components for _ in range(c.hint_for(None))] + ["__acker"] * TOPK_LINK.ackers
    executors = [T.Executor(id=f"[{i}-{i}]", component=c) for i, c in enumerate(owners, start=1)]
    streams = [T.Stream(from_component=source, to_component=c.name, grouping=grouping)
               for c in topology.components for source, _, grouping in c.inputs]
    spec = T.TopologySpec(id="e2e-topk-link-1", name="e2e-topk-link", components=components, streams=streams,
                          executors=executors, current={}, algorithm=algorithm, num_workers=TOPK_LINK.workers,
                          options={KEY: json.dumps(profile)})
    (plan,) = PlannerHandler().plan(T.PlanRequest(request_id="r", nodes=nodes, topologies=[spec],
                                                  deadline_ms=20000)).plans
    return plan, {e.id for e in executors}


def test_the_service_places_the_submitted_graph_with_hetero_and_names_why_hetero_optimal_cannot():
    plan, executors = service_plan("hetero", topk_profile())
    assert plan.error is None
    assert set(plan.assignments) == executors          # the fixed-graph mode: Storm's executors, placed
    assert any(note.startswith("parallelism kept (running topology)") for note in plan.notes), plan.notes
    plan, _ = service_plan("hetero-optimal", topk_profile())
    assert plan.error is not None and "split groupings only" in plan.error.message
    note = e2e_profiles.hetero_optimal_note(TOPK_LINK)
    assert note and "count->top (global)" in note


class FakeQuota:
    def __init__(self) -> None:
        self.capacities: list[float] = []
        self.set_periods: list[int | None] = []
        self.periods = 0

    def set_capacity(self, cpu: float, period: int | None = None) -> None:
        self.capacities.append(cpu)
        self.set_periods.append(period)

    def throttled(self) -> dict[str, int]:
        self.periods += 100
        return {"nr_periods": self.periods, "nr_throttled": 0}


def test_profiling_steps_the_rate_on_one_supervisor_and_gives_its_quota_back(tmp_path, monkeypatch):
    """The procedure's order against stand-ins for the cluster (no cluster here): the topology goes to one
    supervisor through storm-default in one worker, the rate file steps through the rates before each
    measurement, the supervisor's quota is lifted and restored, and the topology is killed."""
    from storm_planner.cluster import nimbus_restart
    from storm_planner.profiling import profiler as profiling
    from storm_planner_bench.common import cluster as cluster_common

    description = load_description(CLUSTER)
    quota, events = FakeQuota(), []
    rate_file = tmp_path / "cells" / "profile-topk-link" / "rate"

    def windows(zookeeper, topology_id, count, period_s, timeout_s):
        rate, seconds = float(rate_file.read_text()), period_s * count
        per_tuple = {"requests": 0.4, "count": 0.8, "top": 0.3}
        return [WindowFigures(c, i, 1, 1000.0 * seconds, (2.0 + rate * ms / 10.0) * 10 * seconds,
                              0 if c == "requests" else int(rate * seconds), int(rate * seconds), 0.4 * rate, int(rate))
                for i, (c, ms) in enumerate(per_tuple.items())]

    def submit(bench, workload, rate, scheduler, scratch, job, extra=None, profile=None):
        events.append(("submit", scheduler.algorithm, extra["topology.workers"], extra["topology.acker.executors"]))
        return SimpleNamespace(id="e2e-profile-topk-link-1")

    monkeypatch.setattr(e2e_cells, "submit_workload", submit)
    monkeypatch.setattr(e2e_cells, "wait_first_ack", lambda times, deadline: True)
    monkeypatch.setattr(cluster_common, "kill_and_wait", lambda *a: events.append(("kill",) + a[1:]))
    monkeypatch.setattr(nimbus_restart, "switch_scheduler", lambda cluster, name: events.append(("nimbus", name)))
    monkeypatch.setattr(profiling, "collect_windows", windows)
    cluster = SimpleNamespace(description=description, addresses=SimpleNamespace(zookeeper="zk:2181"),
                              assignment=lambda topology_id: [{"node": "i5-a"}, {"node": "i5-a"}])
    bench = SimpleNamespace(cluster=cluster, nimbus="nimbus:6627", timing=Timing(), work=tmp_path / "cells",
                            progress=lambda message: None, quotas={"i5-a": quota})
    profile = e2e_profiles.profile_workload(bench, TOPK_LINK, ("i7", "i5"), 400.0)   # the cells' rate
    assert events == [("nimbus", "planner"), ("submit", "storm-default", 1, 1),
                      ("kill", "e2e-profile-topk-link", "e2e-profile-topk-link-1")]
    assert quota.capacities == [e2e_profiles.PROFILE_CPU, 35.0]       # lifted, then the declared 35 %
    # judged by its throttled periods at the length MAX_THROTTLED was set at, then back to the node's own
    assert quota.set_periods == [THROTTLE_JUDGED_PERIOD_US, None]
    assert [s["rate"] for s in profile["profiling"]["steps"]] == [100.0, 200.0, 400.0]
    assert profile["profiling"]["supervisor"] == "i5-a" and "(i5)" in profile["source"]
    times = parse_profile(profile).times("count", "i7")
    assert (times.base, times.per_tuple_ms) == (pytest.approx(2.0), pytest.approx(0.8))
    assert load_checked_ok(profile)

    cluster.assignment = lambda topology_id: [{"node": "i5-a"}, {"node": "i7-b"}]
    quota.capacities.clear()
    with pytest.raises(HeteroProfileError, match="runs on i5-a, i7-b, not on one supervisor"):
        e2e_profiles.profile_workload(bench, TOPK_LINK, ("i7", "i5"))
    assert events[-1][0] == "kill" and not quota.capacities


def test_the_idle_cpu_of_a_component_measured_together_is_charged_per_instance():
    """count's two tasks use 2 % together at no input: each instance is charged 1 %, its per-tuple cost whole."""
    profile = parse_profile(profile_document(topk_steps(), {}, ("i7", "i5"), 15.0, {}, {"count": 2, "top": 1}))
    assert profile.times("count", "i7").base == pytest.approx(1.0)
    assert profile.times("count", "i7").per_tuple_ms == pytest.approx(0.8)
    assert profile.times("top", "i5").base == pytest.approx(2.0)


def test_storms_own_streams_are_no_data_tuples_in_a_window():
    """With acking on, each acked tuple is an emit on __ack_ack (a spout's on __ack_init), a tick an execute."""
    from storm_planner.metrics.windows import Flow, TaskWindow
    from storm_planner.profiling.measurements import figures_from_window

    window = TaskWindow("t-1", "count", 3, 1, 0, 3000, 3.0, executed=62, emitted=90,
                        sent=(Flow("default", 5, 30, 30), Flow("__ack_ack", 1, 60, 60)),
                        received=(Flow("default", 2, 60, 60), Flow("__tick", -1, 2, 2)))
    figures = figures_from_window(window)
    assert (figures.executed, figures.emitted) == (60, 30)
    older = TaskWindow("t-1", "count", 3, 1, 0, 3000, 3.0, executed=62, emitted=90)   # a hook without flows
    assert (figures_from_window(older).executed, figures_from_window(older).emitted) == (62, 90)


def test_what_the_node_used_beyond_the_components_tasks_is_shared_out_by_tuples_handled():
    """The worker JVM, the ackers and the supervisor come from the same quota: 30 % over the tasks' 20 %."""
    measured = [Measurement("requests", "i5", 100.0, 5.0, 0.0), Measurement("count", "i5", 300.0, 15.0, 0.3)]
    priced = e2e_profiles.with_worker_overhead(measured, 50.0)
    assert [m.cpu_percent for m in priced] == [pytest.approx(12.5), pytest.approx(37.5)]
    assert [m.input_rate for m in priced] == [100.0, 300.0]
    assert e2e_profiles.with_worker_overhead(measured, 10.0) == measured     # less than the tasks: as measured


def test_profiling_prices_the_whole_nodes_cpu_when_its_account_is_known(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(e2e_profiles, "with_worker_overhead", lambda found, node: calls.append(node) or found)
    account = SimpleNamespace(usage_ns=iter(range(0, 10**12, 10**9)).__next__)   # one more second each read
    bench = SimpleNamespace(quotas={}, accounts={"i5-a": account}, cluster=SimpleNamespace(
        description=load_description(CLUSTER), addresses=SimpleNamespace(zookeeper="zk:2181")),
        progress=lambda message: None)
    from storm_planner.profiling import profiler as profiling

    monkeypatch.setattr(profiling, "collect_windows", lambda *a, **k: [WindowFigures("count", 1, 1, 3000.0, 30.0,
                                                                                      30, 30, 0.0, 0)])
    rate_file = tmp_path / "rate"
    steps, _, tasks = e2e_profiles._steps(bench, "t-1", "i5-a", "i5", [10.0, 20.0], rate_file, ["requests"])
    assert len(calls) == 2 and all(node > 0 for node in calls) and tasks == {"count": 1}


def test_profiling_gives_the_node_back_the_quota_it_is_held_to_not_its_scaled_declaration(tmp_path, monkeypatch):
    """topdown-real declares 1.5x what each node has: after profiling on one core, the node is held to what
    it has again, not to its declaration."""
    from storm_planner.profiling import profiler as profiling
    from storm_planner_bench.e2e import experiment as e2e

    set_to = []
    quota = SimpleNamespace(set_capacity=lambda cpu, period=None: set_to.append(cpu), throttled=lambda: {})
    description = e2e.with_cpu_scale(load_description(CLUSTER), 1.5, quotas=False)
    bench = SimpleNamespace(quotas={"i5-a": quota}, accounts={}, cluster=SimpleNamespace(
        description=description, addresses=SimpleNamespace(zookeeper="zk:2181")), progress=lambda message: None)
    monkeypatch.setattr(profiling, "collect_windows", lambda *a, **k: [])
    e2e_profiles._steps(bench, "t-1", "i5-a", "i5", [10.0], tmp_path / "rate", ["requests"])
    held = next(s.cpu for s in load_description(CLUSTER).supervisors if s.name == "i5-a")
    assert set_to == [e2e_profiles.PROFILE_CPU, held]
