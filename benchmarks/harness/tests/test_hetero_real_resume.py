"""`bench hetero-real` resumes: the runs a stopped sitting saved are read back from run.json and not run
again; a folder of other settings or another profile is refused; a record that does not read back runs
again without hiding the others."""
from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest
from test_hetero_real import made_run

from storm_planner_bench.hetero_real.driver import BenchSettings
from storm_planner_bench.hetero_real.report import jsonable, write_outputs
from storm_planner_bench.hetero_real.resume import check_profile, saved_runs
from storm_planner_bench.hetero_real.search import BenchError

SETTINGS = BenchSettings(shapes=["linear"], repetitions=2, capacities=(100.0, 50.0, 25.0),
                         rounds={"lowCompute": 300, "midCompute": 1500, "highCompute": 4000})
PROFILE = {"machines": {"large": {"spout": 0.5}}}


def saved_folder(tmp_path, runs, settings=SETTINGS, seconds=100.0):
    report = {"command": "storm-planner bench hetero-real", "settings": jsonable(dataclasses.asdict(settings)),
              "profile": PROFILE}
    tmp_path.mkdir(exist_ok=True)
    write_outputs(tmp_path, runs, report, started=0.0)
    data = json.loads((tmp_path / "run.json").read_text())
    data["seconds"] = seconds
    (tmp_path / "run.json").write_text(json.dumps(data))
    return tmp_path


def finished_runs():
    ras = made_run("ras", 0, 300.0)
    ras.ras_share, ras.declared_cpu, ras.counts = 0.9, {"spout": 12.5, "high": 40.0}, {"high@sup-large": 3}
    ras.parallelism, ras.load_avg, ras.notes = {"spout": 3, "high": 5}, [2.5, 3.0], ["a note"]
    ras.applied = [[1, "spout", "sup-large", 6700]]
    not_placed = made_run("ras", 1, 0.0, status="not scheduled: RAS placed no worker")
    return [made_run("hetero", 0, 500.0), made_run("default", 0, 200.0), ras, not_placed]


def test_saved_runs_read_back_equal_to_what_was_written(tmp_path):
    runs = finished_runs()
    saved = saved_runs(saved_folder(tmp_path, runs), SETTINGS, warn=pytest.fail)
    assert [r.row() for r in saved.runs] == [r.row() for r in runs]
    assert [[s.row() for s in r.steps] for r in saved.runs] == [[s.row() for s in r.steps] for r in runs]
    back = saved.runs[2]
    assert (back.applied, back.notes, back.load_avg) == (runs[2].applied, ["a note"], [2.5, 3.0])
    assert back.measured_throughput == runs[2].measured_throughput == 300.0
    assert back.top_step.task_cpu == {"large": 80.0} and back.top_step.machine_cpu == {"large": 90.0, "small": 25.0}
    assert saved.done() == {("linear", "hetero", 0), ("linear", "default", 0), ("linear", "ras", 0),
                            ("linear", "ras", 1)}


def test_a_folder_without_runs_is_no_resume_and_one_of_other_settings_is_refused(tmp_path):
    assert saved_runs(tmp_path, SETTINGS, warn=pytest.fail) is None
    saved_folder(tmp_path, finished_runs())
    other = dataclasses.replace(SETTINGS, repetitions=3, keep_up=0.9)
    with pytest.raises(BenchError, match=r"other settings \(repetitions: 2 there, 3 now, keep_up: 0.95 there"):
        saved_runs(tmp_path, other, warn=pytest.fail)
    (tmp_path / "run.json").unlink()
    with pytest.raises(BenchError, match="no run.json"):
        saved_runs(tmp_path, SETTINGS, warn=pytest.fail)


def test_a_record_that_does_not_read_back_runs_again_and_the_others_are_kept(tmp_path):
    saved_folder(tmp_path, finished_runs())
    data = json.loads((tmp_path / "run.json").read_text())
    data["runs"][1]["step_records"][0]["verdict"]["sustained"] = "yes"          # not a boolean
    data["runs"][2]["placement_counts"] = "high@sup-large"     # not key=value
    (tmp_path / "run.json").write_text(json.dumps(data))
    warnings = []
    saved = saved_runs(tmp_path, SETTINGS, warn=warnings.append)
    assert [r.name for r in saved.runs] == ["linear-hetero-1", "linear-ras-2"]
    assert len(warnings) == 2 and "run 1 does not read back" in warnings[0] and "it runs again" in warnings[0]


def test_resuming_on_another_profile_is_refused(tmp_path):
    saved = saved_runs(saved_folder(tmp_path, finished_runs()), SETTINGS, warn=pytest.fail)
    check_profile(saved, PROFILE)
    with pytest.raises(BenchError, match="profile differs"):
        check_profile(saved, {"machines": {"large": {"spout": 0.6}}})


def test_the_finished_runs_are_not_run_again():
    from storm_planner_bench.hetero_real import experiment as hetero_real

    ran = []

    class Bench:
        def run(self, shape, placement, repetition, parallelism, declared):
            ran.append((placement, repetition))
            return SimpleNamespace(placement=placement, repetition=repetition)

    plan = SimpleNamespace(shape="linear", skipped={}, parallelism_of=lambda placement: {}, declared_cpu={})
    settings = SimpleNamespace(repetitions=2, placements=["hetero", "default"])
    hetero_real.run_shape(Bench(), plan, settings, done={("linear", "hetero", 0), ("diamond", "default", 0)})
    assert ran == [("default", 0), ("hetero", 1), ("default", 1)]


def test_a_rerun_of_the_same_command_resumes_and_other_settings_are_refused(tmp_path, capsys, monkeypatch):
    """Through the command line, before any cluster or profiling: the second run gets the first's runs."""
    from storm_planner import cli
    from storm_planner_bench.hetero_real import experiment as hetero_real

    calls = []

    def first_sitting(settings, out, work_dir, args, saved=None):
        calls.append(saved)
        report = {"command": "c", "settings": jsonable(dataclasses.asdict(settings)), "profile": PROFILE}
        write_outputs(out, [made_run("hetero", 0, 500.0)], report, started=0.0)
        return {"seconds": 1}

    monkeypatch.setattr(hetero_real, "run_bench", first_sitting)
    assert cli.main(["bench", "hetero-real", "--out", str(tmp_path)]) == 0
    assert cli.main(["bench", "hetero-real", "--out", str(tmp_path)]) == 0
    assert calls[0] is None and [r.name for r in calls[1].runs] == ["linear-hetero-1"]
    assert cli.main(["bench", "hetero-real", "--out", str(tmp_path), "--repetitions", "3"]) == 2
    assert "repetitions: 2 there, 3 now" in capsys.readouterr().err and len(calls) == 2
    assert cli.main(["bench", "hetero-real", "--out", str(tmp_path), "--repetitions", "3", "--overwrite"]) == 0
    assert calls[2] is None


def test_a_resumed_bench_plans_from_the_saved_profile_and_a_differing_one_is_not_written(tmp_path):
    """Resuming without --profile reads the folder's profile.json; a profile other than the saved runs' is
    refused before profile.json is rewritten."""
    from test_hetero_real import REFERENCE

    from storm_planner_bench.hetero_real import experiment as hetero_real
    from storm_planner_bench.hetero_real.project import real_profile

    types = ["large", "medium", "small"]
    report = {"command": "c", "settings": jsonable(dataclasses.asdict(SETTINGS)),
              "profile": jsonable(real_profile(REFERENCE, types))}
    write_outputs(tmp_path, finished_runs(), report, started=0.0)
    (tmp_path / "profile.json").write_text(json.dumps({"reference_times": REFERENCE}))
    saved = saved_runs(tmp_path, SETTINGS, warn=pytest.fail)
    args = SimpleNamespace(profile=None)
    sitting: dict = {}
    reference = hetero_real._reference_times(SETTINGS, args, tmp_path, sitting, resumed=tmp_path)
    assert reference == REFERENCE
    hetero_real._write_profile(tmp_path, reference, types, sitting, saved)     # the same profile: resumes
    other = {**REFERENCE, "highCompute": {"et": 0.2, "met": 9.9}}
    before = (tmp_path / "profile.json").read_text()
    with pytest.raises(BenchError, match="profile differs"):
        hetero_real._write_profile(tmp_path, other, types, sitting, saved)
    assert (tmp_path / "profile.json").read_text() == before


def test_a_resumed_report_is_the_one_an_unbroken_sitting_writes(tmp_path):
    """Step figures read back unrounded: a share throttled 0.49962 stays below saturation (0.5), a CPU of
    72.54 % stays 73 in the table."""
    runs = finished_runs()
    runs[0].steps[0].throttled = {"large": 0.49962, "small": 1.0}
    runs[0].steps[0].machine_cpu = {"large": 72.54, "small": 25.0}
    first = saved_folder(tmp_path / "first", runs)
    saved = saved_runs(first, SETTINGS, warn=pytest.fail)
    again = saved_folder(tmp_path / "again", saved.runs)
    for name in ("results.md", "summary.csv", "runs.csv", "steps.csv"):
        assert (again / name).read_text() == (first / name).read_text(), name


def test_a_setting_a_folder_does_not_name_counts_as_its_default(tmp_path):
    saved_folder(tmp_path, finished_runs())
    data = json.loads((tmp_path / "run.json").read_text())
    del data["settings"]["max_steps"]                       # written before the setting existed
    (tmp_path / "run.json").write_text(json.dumps(data))
    assert len(saved_runs(tmp_path, SETTINGS, warn=pytest.fail).runs) == 4
    with pytest.raises(BenchError, match="max_steps: 30 there, 12 now"):
        saved_runs(tmp_path, dataclasses.replace(SETTINGS, max_steps=12), warn=pytest.fail)


def test_a_folder_none_of_whose_runs_reads_back_is_refused_not_rewritten(tmp_path):
    saved_folder(tmp_path, finished_runs())
    data = json.loads((tmp_path / "run.json").read_text())
    for record in data["runs"]:
        record["repetition"] = "first"
    (tmp_path / "run.json").write_text(json.dumps(data))
    with pytest.raises(BenchError, match="none of its 4 runs reads back"):
        saved_runs(tmp_path, SETTINGS, warn=lambda message: None)


def test_run_json_is_replaced_whole_or_not_at_all(tmp_path):
    saved_folder(tmp_path, finished_runs())
    before = (tmp_path / "run.json").read_text()
    report = {"command": "c", "settings": {}, "profile": PROFILE, "unwritable": object()}
    with pytest.raises(TypeError):
        write_outputs(tmp_path, finished_runs(), report, started=0.0)
    assert (tmp_path / "run.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "tmp" in p.name) == []


def test_a_resumed_ras_repetition_starts_at_the_share_the_saved_ones_were_placed_at(tmp_path):
    runs = finished_runs()             # ras repetition 1 placed at 0.9; repetition 2 placed nowhere
    saved = saved_runs(saved_folder(tmp_path, runs), SETTINGS, warn=pytest.fail)
    assert saved.ras_start(SETTINGS.ras_shares) == {"linear": 1}
    assert saved.ras_start((1.0, 0.8)) == {}


def test_nothing_is_left_to_run_when_every_run_is_saved():
    from storm_planner_bench.hetero_real import experiment as hetero_real

    settings = SimpleNamespace(shapes=["linear"], repetitions=2, placements=["hetero", "ras"])
    plans = {"linear": SimpleNamespace(skipped={})}
    every = {("linear", p, k) for k in range(2) for p in ("hetero", "ras")}
    assert hetero_real.runs_left(settings, plans, every) == 0
    assert hetero_real.runs_left(settings, plans, every - {("linear", "ras", 1)}) == 1
    assert hetero_real.runs_left(settings, {"linear": SimpleNamespace(skipped={"ras": "no"})},
                                 every - {("linear", "ras", 1)}) == 0


def test_a_folder_from_before_step_records_reads_its_steps_from_their_rows(tmp_path):
    runs = finished_runs()
    saved_folder(tmp_path, runs)
    data = json.loads((tmp_path / "run.json").read_text())
    for record in data["runs"]:
        del record["step_records"]
    (tmp_path / "run.json").write_text(json.dumps(data))
    saved = saved_runs(tmp_path, SETTINGS, warn=pytest.fail)
    assert [[s.row() for s in r.steps] for r in saved.runs] == [[s.row() for s in r.steps] for r in runs]


def test_a_run_nimbus_moved_while_it_ran_is_marked_counts_nowhere_and_runs_again_on_resume(tmp_path):
    from storm_planner_bench.hetero_real.compare import summaries
    from storm_planner_bench.hetero_real.driver import MOVED, moved_status

    start = [{"executor": "[1-1]", "node": "sup-medium", "port": 6701},
             {"executor": "[2-2]", "node": "sup-large", "port": 6700}]
    assert moved_status(start, list(reversed(start))) == ""
    moved = moved_status(start, [start[1], {**start[0], "node": "sup-large", "port": 6700}])
    assert moved == f"{MOVED}: [1-1] sup-medium:6701 -> sup-large:6700"
    runs = finished_runs()
    runs[0].status = moved                                    # hetero, repetition 1
    (shape,) = summaries(runs)
    assert shape["placements"]["hetero"]["runs"] == 0 and shape["placements"]["hetero"]["not_run"] == [moved]
    saved = saved_runs(saved_folder(tmp_path, runs), SETTINGS, warn=pytest.fail)
    assert ("linear", "hetero", 0) not in saved.done()
    assert [r.name for r in saved.kept()] == ["linear-default-1", "linear-ras-1", "linear-ras-2"]


def test_a_run_waits_until_the_last_runs_workers_have_freed_their_slots():
    """A worker still holding its slot's port would make the next worker on it fail to bind."""
    import socket
    import threading
    import time

    from storm_planner_bench.hetero_real.driver import Bench

    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    port = held.getsockname()[1]
    description = SimpleNamespace(host="127.0.0.1", supervisors=[SimpleNamespace(slot_ports=(port,))])
    said = []
    bench = SimpleNamespace(cluster=SimpleNamespace(description=description), progress=said.append)
    Bench._wait_slots_free(bench, timeout_s=0.5)              # still held: it says so and goes on
    assert said and f"[{port}] still held" in said[0]
    threading.Timer(1.0, held.close).start()
    started = time.monotonic()
    Bench._wait_slots_free(bench, timeout_s=30)
    assert 0.9 < time.monotonic() - started < 10 and len(said) == 1


def test_a_resumed_benchs_runs_take_their_place_in_the_run_order():
    from storm_planner_bench.hetero_real import experiment as hetero_real

    settings = dataclasses.replace(SETTINGS, shapes=["linear", "diamond"], placements=["hetero", "default", "ras"])
    runs = [made_run("default", 0, 1.0), made_run("ras", 0, 1.0), made_run("hetero", 1, 1.0), made_run("hetero", 0, 1.0)]
    runs.insert(0, dataclasses.replace(made_run("hetero", 0, 1.0), shape="diamond"))
    hetero_real.in_run_order(runs, settings)
    assert [r.name for r in runs] == ["linear-hetero-1", "linear-default-1", "linear-ras-1", "linear-hetero-2",
                                      "diamond-hetero-1"]
