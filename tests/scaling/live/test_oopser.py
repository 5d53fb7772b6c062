"""OOPSer on the local cluster (hetero.oopser): throughput of an operator instance under CPU quotas,
then QEScalor's model and QCESA on those samples. The cluster test needs cgroup v1 CPU quotas (root)."""
from __future__ import annotations

import pytest

import storm_planner
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.metrics.hookjar import default_hook_jar
from storm_planner.profiling.cgroups import detect_emulation
from storm_planner.profiling.errors import ProfilingError
from storm_planner.scaling.live.oopser import SamplerSettings, parse_levels, sample_on_cluster


def test_levels_are_a_list_or_an_inclusive_range():
    assert parse_levels("1,0.25,0.5", 33.5) == [(0.25, 33.5), (0.5, 33.5), (1.0, 33.5)]
    assert [cpu for cpu, _ in parse_levels("0.2:1.0:0.2", 40)] == [0.2, 0.4, 0.6, 0.8, 1.0]
    with pytest.raises(ProfilingError, match="every CPU provision must be > 0"):
        parse_levels("0,1", 33.5)
    with pytest.raises(ProfilingError, match="--cpu 'a,b'"):
        parse_levels("a,b", 33.5)
    with pytest.raises(ProfilingError, match="dsa or fssa"):
        SamplerSettings(levels=[(1.0, 33.5)], method="grid")


@pytest.mark.cluster
@pytest.mark.skipif(not (default_plugin_jar() and default_plugin_jar().is_file()
                         and default_hook_jar() and default_hook_jar().is_file()),
                    reason="plugin or metrics jar not built (mvn package)")
@pytest.mark.skipif(not detect_emulation().cgroup_quota, reason="no writable cgroup v1 CPU quota here")
def test_throughput_grows_with_the_cpu_quota_and_feeds_the_model_and_qcesa(tmp_path, capsys):
    from storm_planner.cluster import default_description

    settings = SamplerSettings(levels=[(0.25, 33.5), (1.0, 33.5)], method="fssa", step=1, period_s=2)
    samples = sample_on_cluster(default_description(), settings, tmp_path, progress=lambda message: None)
    (low_cpu, _, low), (high_cpu, _, high) = samples
    assert (low_cpu, high_cpu) == (0.25, 1.0)
    assert low > 0 and high > 2 * low, samples  # four times the CPU: clearly more than twice the throughput
    problem = {"resources": [{"id": "small", "cpu": 0.25, "memory_mb": 33.5, "price": 0.25},
                             {"id": "large", "cpu": 1.0, "memory_mb": 33.5, "price": 1.0}],
               "samples": [{"cpu": c, "memory_mb": m, "throughput": t} for c, m, t in samples],
               "startup_cost": 0.1, "shutdown_cost": 0.1, "workload": [0.5 * high, 3 * high, high]}
    schedule = storm_planner.scale(problem, "qcesa-exact")
    assert all(c >= w for c, w in zip(schedule["capacity"], schedule["workload"]))
    assert schedule["performance"]["large"] > schedule["performance"]["small"] > 0
    with capsys.disabled():
        print(f"\noopser: {low:.0f} tuples/s at 0.25 cores, {high:.0f} at 1.0; qcesa-exact: {schedule['epochs']}")
