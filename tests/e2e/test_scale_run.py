"""``storm-planner scale run`` on a real multi-process cluster (ZooKeeper, Nimbus with the plugin,
supervisors, worker JVMs, Python shell components, the metrics hook, the planner service):

the pipeline's ``relay`` runs 2 executors over 4 tasks at a steady 100 tuples/s. With a template whose
one instance sustains almost nothing, QEScalor's controller wants more instances than tasks: it rebalances
``relay`` to all 4 (capped, and says so) and Nimbus runs 4. With instances that sustain far more than the
stream, it scales ``relay`` back to 1. Every epoch is a JSON line in the log, with the measured rate.

The decisions must not hinge on the rate a loaded machine happens to measure (the Python spout may
fall well behind its 100 tuples/s): "almost nothing" is 0.2 tuples a second and "far more" 100 times the
stream, so any rate from 2 tuples a second up to three times the offered one decides alike (a smaller
performance would make the exact scaler's search explode at the higher rates).

With ``enforce`` (``scale run --enforce-provisions``), each instance of ``relay`` — the subprocess its
executor runs in — gets its provision's CPU quota and memory limit, and a busy instance is held to it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from storm_planner.cluster.launcher import running_cluster
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.metrics.hookjar import default_hook_jar
from storm_planner.profiling.cgroups import detect_emulation
from storm_planner.scaling import ScalingController
from storm_planner.scaling.generator import paper_resources
from storm_planner.scaling.live.instances import (
    InstanceProvisions,
    ProvisionEnforcer,
    provisions_from_template,
    running_instances,
)
from storm_planner.scaling.live.scale_run import processed_rate, run_scaling
from storm_planner.scaling.performance import PerformanceModel
from storm_planner.submit import nimbus
from storm_planner.submit.operations import kill_topology, running_components, submit_project

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(not (default_plugin_jar() and default_plugin_jar().is_file()
                            and default_hook_jar() and default_hook_jar().is_file()),
                       reason="plugin or metrics jar not built (mvn package)"),
]

PIPELINE = Path(__file__).resolve().parents[1] / "metrics" / "fixtures" / "pipeline"
TASKS, RATE = 4, 100


def template(performance: float) -> dict:
    return {"resources": paper_resources()[:2], "performance": {"r1": performance, "r2": 1.8 * performance},
            "startup_cost": 0.1, "shutdown_cost": 0.1}


def relay_executors(cluster, name: str = "scaled") -> int:
    a = cluster.addresses
    with nimbus.nimbus_client(a.nimbus_host, a.nimbus_port) as client:
        return running_components(client, name).executors["relay"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with running_cluster(tmp_path_factory.mktemp("scale-run"), ui=False) as running:
        yield running


def submit_pipeline(cluster, tmp_path: Path, name: str, **options):
    """Submit the pipeline and return its id once relay processes tuples (see :func:`wait_flowing`)."""
    data = tmp_path / "data"
    data.mkdir()
    row = submit_project(PIPELINE, nimbus=cluster.addresses.nimbus, name=name, wait_active=120, options={
        "pipeline.dir": str(data), "pipeline.rate": RATE,
        "pipeline.tasks.relay": TASKS, "topology.workers": 2, "planner.metrics.period.secs": 2,
        "planner.replan": False, "topology.message.timeout.secs": 20, "topology.max.spout.pending": 200, **options})
    wait_flowing(cluster, row.id)
    return row.id


# ACTIVE in Nimbus is not running: a loaded machine can take minutes to start the workers and their
# Python components. The scaler's epochs are meant to measure a running pipeline, not the start.
FLOWING_TIMEOUT_S = 300


def wait_flowing(cluster, topology_id: str, since_ms: int = 0) -> None:
    """Until relay's tasks have published windows (begun at ``since_ms`` or later: after a rebalance) and
    relay processed tuples in them."""
    from storm_planner.metrics.windows import fetch_windows

    deadline = time.monotonic() + FLOWING_TIMEOUT_S
    while True:
        relay = [w for w in fetch_windows(cluster.addresses.zookeeper, topology_id).values()
                 if w.component == "relay" and w.start_ms >= since_ms]
        if relay and processed_rate(relay) > 0:
            return
        assert time.monotonic() < deadline, f"relay processed nothing {FLOWING_TIMEOUT_S} s after submission " \
                                            f"(worker logs in {cluster.log_dir})"
        time.sleep(2)


def test_scale_run_rebalances_the_component_to_what_qcesa_decides(cluster, tmp_path, capsys):
    log = tmp_path / "decisions.jsonl"
    a = cluster.addresses
    topology_id = submit_pipeline(cluster, tmp_path, "scaled")
    try:
        assert relay_executors(cluster) == 2

        def scale(performance: float, epochs: int) -> list[dict]:
            controller = ScalingController(template(performance), algorithm="qcesa-exact", horizon=3)
            return run_scaling(a.nimbus, a.zookeeper, "scaled", "relay", controller, epoch_s=8, epochs=epochs,
                               log_path=log, rebalance_wait_secs=0, progress=lambda message: None)

        up = scale(performance=0.2, epochs=3)
        measured = [d for d in up if d["rate"]]
        assert measured, up
        first = measured[0]
        assert first["action"] == "rebalance" and first["instances"] == TASKS and first["capped"], first
        # Under load the first epoch can measure 0 tuples/s (the Python spout not emitting yet): QCESA then
        # scales relay in to 1 first, so the first measured decision may start from 1 executor, not 2.
        assert first["executors_before"] < TASKS and first["executors_after"] == TASKS and first["applied"]
        # The hook's rate: tuples relay processed, never more than the spout offers (a loaded machine
        # only lowers it; the first epoch may catch the start).
        assert all(d["rate"] < 3 * RATE for d in measured), measured
        assert relay_executors(cluster) == TASKS

        # The rebalance restarted relay's executors: scale down once the new ones process tuples (an
        # epoch that measures 0 tuples/s would plan no instance at all).
        wait_flowing(cluster, topology_id, since_ms=int(time.time() * 1000))
        down = scale(performance=100 * RATE, epochs=3)
        rebalanced = [d for d in down if d["action"] == "rebalance"]
        assert rebalanced and rebalanced[0]["instances"] == 1 and rebalanced[0]["counts"] == {"r1": 1}, down
        assert relay_executors(cluster) == 1
        assert all(d["action"] in ("hold", "no-metrics") for d in down[down.index(rebalanced[0]) + 1:]), down
    finally:
        kill_topology(a.nimbus, "scaled", wait_secs=0, progress=lambda message: None)

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 6 and {line["component"] for line in lines} == {"relay"}
    with capsys.disabled():
        print("\nscale run: " + "; ".join(f"{d['action']} {d.get('executors_before')}->{d.get('executors_after')} "
                                           f"at {d['rate']} tuples/s" for d in lines))


RELAY_CPU = 0.15  # cores each relay instance may use: far below what the work below takes at RATE


@pytest.mark.skipif(not detect_emulation().cgroup_quota, reason="needs a writable cgroup v1 CPU hierarchy (root)")
def test_scale_run_enforces_each_instances_provision_on_its_subprocess(cluster, tmp_path, capsys):
    a = cluster.addresses
    # 4,000 SHA-256 rounds per tuple: at RATE tuples/s an unthrottled relay instance would take about a core.
    submit_pipeline(cluster, tmp_path, "provisioned", **{"pipeline.tasks.relay": 2, "pipeline.work": 4000})
    # Instances believed to sustain 0.2 tuples a second: at any rate above one a second (whatever a loaded
    # machine measures), both provisions need more instances than relay's 2 tasks.
    provisions = {"resources": [{"id": "r1", "cpu": 0.1, "memory_mb": 512, "price": 0.1},
                                {"id": "r2", "cpu": RELAY_CPU, "memory_mb": 768, "price": 0.2}],
                  "performance": {"r1": 0.2, "r2": 0.36}, "startup_cost": 0.1, "shutdown_cost": 0.1}
    try:
        with InstanceProvisions(f"storm-planner-test-{tmp_path.name}") as groups:
            enforce = ProvisionEnforcer(groups, cluster.log_dir, "relay", provisions_from_template(provisions))
            controller = ScalingController(provisions, algorithm="qcesa-exact", horizon=3)
            decisions = run_scaling(a.nimbus, a.zookeeper, "provisioned", "relay", controller, epoch_s=8, epochs=2,
                                    log_path=None, rebalance_wait_secs=0, progress=lambda message: None,
                                    enforce=enforce)
            enforced = [d for d in decisions if d.get("provisions")]
            assert enforced, decisions
            last = enforced[-1]
            # The cheaper r1 would need far more instances than the 2 tasks, so the controller plans with
            # the stronger r2 alone (capped at 2): both instances run under r2.
            assert [p["provision"] for p in last["provisions"]] == ["r2", "r2"], last
            assert last["capped"] and "planned with" not in last["notes"][0], last
            with nimbus.nimbus_client(a.nimbus_host, a.nimbus_port) as client:
                topology_id = running_components(client, "provisioned").id
            instances = running_instances(cluster.log_dir, topology_id, "relay")
            assert [i.first_task for i in instances] == [p["task"] for p in last["provisions"]]
            pids = [pid for i in instances for pid in i.pids]
            for instance in instances:
                assert groups.quota_of(instance) == pytest.approx(RELAY_CPU)
                for pid in instance.pids:
                    assert f"{groups.cpu_parent.name}/{instance.key}" in Path(f"/proc/{pid}/cgroup").read_text()
            used = cpu_use(pids, seconds=4.0)
            assert all(cores < RELAY_CPU * 1.3 for cores in used.values()), used
    finally:
        kill_topology(a.nimbus, "provisioned", wait_secs=0, progress=lambda message: None)
    with capsys.disabled():
        print(f"\nscale run with provisions: relay instances at {RELAY_CPU} cores used "
              + ", ".join(f"{cores:.3f}" for cores in used.values()) + " cores")


def cpu_use(pids: list[int], seconds: float) -> dict[int, float]:
    """Cores each process used over ``seconds`` (from /proc/<pid>/stat)."""
    import os
    import time

    def cpu_seconds(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = {pid: cpu_seconds(pid) for pid in pids}
    time.sleep(seconds)
    return {pid: (cpu_seconds(pid) - t) / seconds for pid, t in before.items()}


@pytest.mark.skipif(not detect_emulation().cgroup_quota, reason="needs a writable cgroup v1 CPU hierarchy (root)")
def test_a_sampling_instance_in_the_live_topology_measures_its_throughput_per_provision(cluster, tmp_path, capsys):
    from storm_planner.scaling.live.live_sampler import LIVE_SAMPLING_OPTIONS, sample_live
    from storm_planner.scaling.live.oopser import SamplerSettings

    a = cluster.addresses
    # relay: 2 executors over 3 tasks, ~7 ms of SHA-256 per tuple (20,000 rounds). Plain shuffle gives
    # the sampling instance a third of RATE; held to 0.05 or 0.15 cores it cannot take that (about 7
    # and 20 tuples/s): it is saturated, so what it executes is what the provision sustains.
    submit_pipeline(cluster, tmp_path, "sampled", **{"pipeline.tasks.relay": 3, "pipeline.work": 20_000},
                    **LIVE_SAMPLING_OPTIONS)
    try:
        settings = SamplerSettings(levels=[(0.05, 512.0), (0.15, 512.0)], method="fssa", step=1, period_s=2,
                                   settle_windows=2, measure_windows=3)
        instance, samples = sample_live(a.nimbus, a.zookeeper, cluster.log_dir, "sampled", "relay", settings,
                                        progress=lambda message: None)
        assert instance.component == "relay"
        low, high = samples
        assert (low.cpu, high.cpu) == (0.05, 0.15)
        assert low.saturated and high.saturated, samples
        # Three times the CPU; on this busy 2-core machine the throughput grows less (measured 1.8x).
        assert high.throughput > 1.4 * low.throughput > 0, samples
        assert relay_executors(cluster, "sampled") == 2  # back to its executors
        # OPRPMer and QECer on what OOPSer measured: the forest's performance per provision, then a decision.
        model = PerformanceModel(seed=0).fit([(s.cpu, s.memory_mb, s.throughput) for s in samples])
        performance = dict(zip(("small", "large"), map(float, model.predict([(0.05, 512.0), (0.15, 512.0)]))))
        assert performance["large"] > performance["small"] > 0
        controller = ScalingController({"resources": [{"id": "small", "cpu": 0.05, "memory_mb": 512, "price": 0.05},
                                                      {"id": "large", "cpu": 0.15, "memory_mb": 512, "price": 0.15}],
                                        "performance": performance, "startup_cost": 0.01, "shutdown_cost": 0.01},
                                       horizon=2)
        decision = controller.decide([3 * high.throughput], {"small": 2})
        capacity = sum(performance[rid] * n for rid, n in decision.counts.items())
        assert capacity >= 3 * high.throughput, decision
    finally:
        kill_topology(a.nimbus, "sampled", wait_secs=0, progress=lambda message: None)
    with capsys.disabled():
        print("\nlive sampling: " + "; ".join(f"{s.cpu:g} cores {s.throughput:.1f} tuples/s "
                                              f"(throttled {100 * s.throttled:.0f} %)" for s in samples))
