"""Profiling on the real cluster: the pure parts (rates, windows -> measurements, fit, prediction
accuracy, CPU quota bookkeeping, the built-in topology). The cluster run itself is a command
(`storm-planner profile`), reported in benchmarks/reports/hetero.md, not a test."""
from __future__ import annotations

import subprocess
import sys

import pytest

from storm_planner.cluster.description import parse_description
from storm_planner.planners.hetero.profiles import Measurement, profile_from_measurements
from storm_planner.profiling.builtin_project import write_builtin_project
from storm_planner.profiling.cgroups import CpuQuota, detect_emulation, period_us, quota_us
from storm_planner.profiling.errors import ProfilingError
from storm_planner.profiling.measurements import (
    WindowFigures,
    accuracy_percent,
    compare,
    measure_component,
    predict_cpu_percent,
)
from storm_planner.profiling.profiler import enough_windows, machine_types, parse_rates


def window(component, task, seq, *, cpu_ms, executed=0, emitted=0, latency_sum=0.0, samples=0, ms=3000):
    return WindowFigures(component, task, seq, ms, cpu_ms, executed, emitted, latency_sum, samples)


def test_rates_must_be_at_least_two_positive_and_rising():
    assert parse_rates("50, 100,200") == [50.0, 100.0, 200.0]
    for bad, says in [("100", "at least two"), ("50,-1", "positive"), ("200,100", "rise"), ("a,b", "numbers")]:
        with pytest.raises(ProfilingError, match=says):
            parse_rates(bad)


def test_a_bolts_measurement_sums_its_tasks_per_second_of_window():
    # Two tasks, two 3 s windows each: 600 tuples in 6 s per task -> 100 + 100 tuples/s.
    windows = [window("work", t, s, cpu_ms=450, executed=300, latency_sum=60, samples=300)
               for t in (4, 5) for s in (1, 2)]
    windows.append(window("rate", 3, 1, cpu_ms=90, emitted=600))
    m = measure_component(windows, "work", "small", spout=False)
    assert m.input_rate == pytest.approx(200.0)
    assert m.cpu_percent == pytest.approx(30.0)      # 1800 ms of CPU in 6 s of window
    assert m.execute_ms == pytest.approx(0.2)
    assert m.machine_type == "small"


def test_a_spouts_rate_is_what_it_emitted_and_its_cost_is_all_met():
    m = measure_component([window("rate", 3, 1, cpu_ms=90, emitted=600)], "rate", "big", spout=True)
    assert (m.input_rate, m.cpu_percent, m.execute_ms) == (pytest.approx(200.0), pytest.approx(3.0), 0.0)
    profile = profile_from_measurements([m])
    assert profile.times("rate", "big").et == 0.0
    assert profile.times("rate", "big").met == pytest.approx(0.15)   # 10 * 3 % / 200 tuples/s


def test_no_usable_window_gives_no_measurement():
    assert measure_component([], "work", "big", spout=False) is None
    assert measure_component([window("work", 4, 1, cpu_ms=10, executed=0)], "work", "big", spout=False) is None
    assert measure_component([window("work", 4, 1, cpu_ms=10, executed=5, ms=0)], "work", "big",
                             spout=False) is None


def test_a_linear_cpu_is_fitted_and_predicted_exactly_at_a_new_rate():
    per_tuple = {"big": 1.2, "small": 2.0}   # ms of CPU per tuple
    samples = [Measurement("work", t, r, r * per_tuple[t] / 10, 0.3) for t in per_tuple for r in (50, 100, 200)]
    profile = profile_from_measurements(samples)
    assert profile.times("work", "small").et == pytest.approx(0.3)
    assert profile.times("work", "small").met == pytest.approx(1.7)
    assert predict_cpu_percent(profile, "work", "big", 150) == pytest.approx(18.0)
    checks = compare(profile, [Measurement("work", "small", 150, 30.0, 0.3)])
    assert checks[0].predicted_cpu == pytest.approx(30.0) and checks[0].accuracy == pytest.approx(100.0)


def test_accuracy_is_one_minus_the_relative_error():
    assert accuracy_percent(92.0, 100.0) == pytest.approx(92.0)
    assert accuracy_percent(108.0, 100.0) == pytest.approx(92.0)
    assert accuracy_percent(500.0, 100.0) == 0.0
    with pytest.raises(ProfilingError, match="not positive"):
        accuracy_percent(1.0, 0.0)


def test_windows_are_enough_when_every_known_task_has_its_count():
    seen = {(4, 1): 0, (4, 2): 0, (5, 1): 0}
    assert not enough_windows(seen, {4, 5}, 2)
    assert enough_windows({**seen, (5, 2): 0}, {4, 5}, 2)
    assert not enough_windows({**seen, (5, 2): 0}, {4, 5, 6}, 2)   # task 6 wrote nothing new yet
    assert not enough_windows({}, set(), 1)


def test_supervisor_cpu_becomes_a_cfs_quota_per_linux_default_period_or_a_chosen_one():
    assert (period_us(100), quota_us(100)) == (100_000, 100_000)
    assert (period_us(60), quota_us(60)) == (100_000, 60_000)
    assert (period_us(250), quota_us(250)) == (100_000, 250_000)    # more than a core: more than a period
    assert (period_us(60, 10_000), quota_us(60, 10_000)) == (10_000, 6_000)
    assert period_us(5, 10_000) == 20_000                           # the kernel's least quota: a longer period
    assert (period_us(0.5), quota_us(0.5)) == (200_000, 1000)
    assert (period_us(0.01), quota_us(0.01)) == (1_000_000, 1000)  # the kernel's longest period
    with pytest.raises(ProfilingError, match="positive"):
        quota_us(0)


def test_groups_judged_by_their_throttled_periods_keep_the_period_their_thresholds_were_set_at(tmp_path):
    """The profiler's max_throttled and the live sampler's min_throttled count throttled periods, set at 100 ms;
    a 10 ms period throttles the same load in more of them."""
    from storm_planner.profiling.cgroups import THROTTLE_JUDGED_PERIOD_US

    (tmp_path / "cgroup.procs").write_text("")
    with CpuQuota("judged", 60, root=tmp_path, period=THROTTLE_JUDGED_PERIOD_US) as quota:
        assert (tmp_path / "judged" / "cpu.cfs_period_us").read_text() == "100000"
        quota.set_capacity(30)
        assert (tmp_path / "judged" / "cpu.cfs_period_us").read_text() == "100000"
        assert (tmp_path / "judged" / "cpu.cfs_quota_us").read_text() == "30000"


def test_a_capacity_may_be_judged_at_another_period_and_the_group_returns_to_its_own(tmp_path):
    """A hetero profile step counts throttled periods at 100 ms on a machine the bench holds at 10 ms."""
    (tmp_path / "cgroup.procs").write_text("")
    with CpuQuota("machine", 30, root=tmp_path, period=10_000) as quota:
        quota.set_capacity(100, period=100_000)
        assert (tmp_path / "machine" / "cpu.cfs_period_us").read_text() == "100000"
        assert (tmp_path / "machine" / "cpu.cfs_quota_us").read_text() == "100000"
        quota.set_capacity(30)
        assert (tmp_path / "machine" / "cpu.cfs_period_us").read_text() == "10000"
        assert (tmp_path / "machine" / "cpu.cfs_quota_us").read_text() == "3000"
        with pytest.raises(ProfilingError, match="CFS period 0"):
            period_us(30, 0)


def test_a_period_the_kernel_refuses_is_refused_before_any_group_is_made(tmp_path):
    for period in (999, 1_000_001):
        with pytest.raises(ProfilingError, match=f"CFS period {period}"):
            CpuQuota("refused", 60, root=tmp_path, period=period)
    assert not (tmp_path / "refused").exists()


def test_one_supervisor_per_machine_type_is_profiled():
    description = parse_description({"supervisors": [
        {"name": "a1", "cpu": 200, "meta": {"machine.type": "big"}},
        {"name": "a2", "cpu": 200, "meta": {"machine.type": "big"}},
        {"name": "b1", "cpu": 60, "meta": {"machine.type": "small"}},
    ]})
    chosen = machine_types(description)
    assert {t: s.name for t, s in chosen.items()} == {"big": "a1", "small": "b1"}


def test_a_cpu_quota_group_is_written_and_removed(tmp_path):
    (tmp_path / "cgroup.procs").write_text("")
    daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # one this process started
    try:
        with CpuQuota("profile-small", 60, root=tmp_path, period=10_000) as quota:
            assert (tmp_path / "profile-small" / "cpu.cfs_quota_us").read_text() == "6000"
            assert (tmp_path / "profile-small" / "cpu.cfs_period_us").read_text() == "10000"
            assert quota.cores == pytest.approx(0.6)
            quota.set_capacity(5)                        # under 10 %: a longer period keeps the least quota
            assert (tmp_path / "profile-small" / "cpu.cfs_period_us").read_text() == "20000"
            assert (tmp_path / "profile-small" / "cpu.cfs_quota_us").read_text() == "1000"
            quota.add(daemon.pid)
            assert (tmp_path / "profile-small" / "cgroup.procs").read_text() == str(daemon.pid)
            (tmp_path / "profile-small" / "cpu.stat").write_text("nr_periods 10\nnr_throttled 3\n")
            assert quota.throttled() == {"nr_periods": 10, "nr_throttled": 3}
        # Leaving moves the group's processes back where they came from: the root group of this stand-in
        # hierarchy (a plain directory here keeps its files).
        assert (tmp_path / "cgroup.procs").read_text() == str(daemon.pid)
    finally:
        daemon.kill()
        daemon.wait()


def test_emulation_support_is_detected_without_leaving_a_group(tmp_path):
    support = detect_emulation(tmp_path)
    assert "cgroup v1 CPU quota" in support.detail and "taskset" in support.detail
    assert list(tmp_path.glob("storm-planner-probe-*")) == [] or support.cgroup_quota


def test_the_builtin_project_is_a_streamparse_project_the_planner_can_read(tmp_path):
    from storm_planner.profiling.project import load_project_topology

    project = write_builtin_project(tmp_path / "project")
    topology = load_project_topology(project)
    assert [c.name for c in topology.components] == ["rate", "work"]


def test_extra_topology_options_are_read_as_json_when_they_are():
    from storm_planner.profiling.profiler import parse_options

    assert parse_options(["topology.bolt.wait.park.microsec=100", "a.b=org.X", "c=true"]) == {
        "topology.bolt.wait.park.microsec": 100, "a.b": "org.X", "c": True}
    with pytest.raises(ProfilingError, match="KEY=VALUE"):
        parse_options(["novalue"])


def step(machine_type, rate, throttled, cpu, *, check=False):
    from storm_planner.profiling.measurements import Step

    return Step(machine_type, rate, check, throttled, [Measurement("work", machine_type, rate, cpu, 0.2)])


def test_throttled_steps_are_left_out_of_the_fit_but_one_step_per_type_stays():
    from storm_planner.profiling.measurements import fit_samples

    steps = [step("big", 50, 0.0, 10), step("big", 100, 0.0, 20), step("small", 50, 0.01, 10),
             step("small", 100, 0.3, 15), step("small", 75, 0.0, 15, check=True), step("tiny", 50, 0.6, 30),
             step("tiny", 100, 0.9, 30)]
    fitted = fit_samples(steps, max_throttled=0.05)
    assert [(m.machine_type, m.input_rate) for m in fitted] == [
        ("big", 50), ("big", 100), ("small", 50), ("tiny", 50)]


def test_the_throttled_share_is_taken_between_two_reads_of_cpu_stat():
    from storm_planner.profiling.cgroups import throttled_share

    assert throttled_share({"nr_periods": 100, "nr_throttled": 10}, {"nr_periods": 200, "nr_throttled": 35}) == 0.25
    assert throttled_share({}, {}) == 0.0


def test_a_result_fits_on_unthrottled_steps_and_reports_them(tmp_path):
    from storm_planner.profiling.measurements import Result, format_checks, format_steps

    result = Result(steps=[step("small", 50, 0.0, 10), step("small", 100, 0.5, 12),
                           step("small", 75, 0.0, 15, check=True)])
    result.profile = profile_from_measurements(result.samples)
    result.checks = compare(result.profile, result.check_samples)
    assert result.checks[0].accuracy == pytest.approx(100.0)
    data = result.to_dict()
    assert [s["rate"] for s in data["steps"]] == [50, 100, 75] and len(data["fit_samples"]) == 1
    table = format_steps(result.steps, result.max_throttled)
    assert "left out (throttled)" in table and "| check |" in table
    assert "100.0 |" in format_checks(result.checks)


def test_the_affine_fit_recovers_the_idle_base_and_predicts_with_it():
    from storm_planner.profiling.measurements import Result, format_fits

    rising = [step("big", r, 0.0, 20 + r * 1.5 / 10) for r in (25, 50, 100, 200)]
    result = Result(steps=[*rising, step("big", 150, 0.0, 42.5, check=True)])
    result.profile = profile_from_measurements(result.samples, method="affine")
    times = result.profile.times("work", "big")
    assert times.base == pytest.approx(20.0) and times.per_tuple_ms == pytest.approx(1.5)
    checks = compare(result.profile, result.check_samples)
    assert checks[0].predicted_cpu == pytest.approx(42.5) and checks[0].accuracy == pytest.approx(100.0)
    fit = result.to_dict()["fit"][0]
    assert fit["r2"] == pytest.approx(1.0) and len(fit["residuals"]) == 4
    assert "| work | big | 20.00 | 1.5000 | 1.000 |" in format_fits(result.fits)

