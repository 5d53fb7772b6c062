"""``storm-planner scale run`` on a real multi-process cluster (ZooKeeper, Nimbus with the plugin,
supervisors, worker JVMs, Python shell components, the metrics hook, the planner service):

the pipeline's ``relay`` runs 2 executors over 4 tasks at a steady 100 tuples/s. With a template whose
one instance sustains almost nothing, QEScalor's controller wants more instances than tasks: it rebalances
``relay`` to all 4 (capped, and says so) and Nimbus runs 4. With instances that sustain far more than the
stream, it scales ``relay`` back to 1. Every epoch is a JSON line in the log, with the measured rate.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from storm_planner.adaptation.qescalor import ScalingController
from storm_planner.adaptation.scale_run import run_scaling
from storm_planner.cluster.launcher import running_cluster
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.generators.qescalor import paper_resources
from storm_planner.metrics.hookjar import default_hook_jar
from storm_planner.submit import nimbus
from storm_planner.submit.operations import running_components, submit_project

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


def relay_executors(cluster) -> int:
    a = cluster.addresses
    with nimbus.nimbus_client(a.nimbus_host, a.nimbus_port) as client:
        return running_components(client, "scaled").executors["relay"]


def test_scale_run_rebalances_the_component_to_what_qcesa_decides(tmp_path, capsys):
    log = tmp_path / "decisions.jsonl"
    data = tmp_path / "data"
    data.mkdir()
    with running_cluster(tmp_path, ui=False) as cluster:
        a = cluster.addresses
        submit_project(PIPELINE, nimbus=a.nimbus, name="scaled", wait_active=120, options={
            "pipeline.dir": str(data), "pipeline.rate": RATE,
            "pipeline.tasks.relay": TASKS, "topology.workers": 2, "planner.metrics.period.secs": 2,
            "planner.replan": False, "topology.message.timeout.secs": 20, "topology.max.spout.pending": 200})
        assert relay_executors(cluster) == 2

        def scale(performance: float, epochs: int) -> list[dict]:
            controller = ScalingController(template(performance), algorithm="qcesa-exact", horizon=3)
            return run_scaling(a.nimbus, a.zookeeper, "scaled", "relay", controller, epoch_s=8, epochs=epochs,
                               log_path=log, rebalance_wait_secs=0, progress=lambda message: None)

        up = scale(performance=1.0, epochs=3)
        measured = [d for d in up if d["rate"]]
        assert measured, up
        first = measured[0]
        assert first["action"] == "rebalance" and first["instances"] == TASKS and first["capped"], first
        # Under load the first epoch can measure 0 tuples/s (the Python spout not emitting yet): QCESA then
        # scales relay in to 1 first, so the first measured decision may start from 1 executor, not 2.
        assert first["executors_before"] < TASKS and first["executors_after"] == TASKS and first["applied"]
        assert 0.3 * RATE < first["rate"] < 3 * RATE  # the pipeline's steady rate, as the hook measured it
        assert relay_executors(cluster) == TASKS

        down = scale(performance=100 * RATE, epochs=3)
        rebalanced = [d for d in down if d["action"] == "rebalance"]
        assert rebalanced and rebalanced[0]["instances"] == 1 and rebalanced[0]["counts"] == {"r1": 1}, down
        assert relay_executors(cluster) == 1
        assert all(d["action"] in ("hold", "no-metrics") for d in down[down.index(rebalanced[0]) + 1:]), down

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 6 and {line["component"] for line in lines} == {"relay"}
    with capsys.disabled():
        print("\nscale run: " + "; ".join(f"{d['action']} {d.get('executors_before')}->{d.get('executors_after')} "
                                           f"at {d['rate']} tuples/s" for d in lines))
