"""The dashboard against a live local cluster (one for the module), in headless Chromium:

* the dashboard the cluster starts shows a planned topology with its algorithm and the
  `supervisor:port` slots Nimbus really runs it on, and the supervisors with their machine types;
* the topology page of a topology running with the metrics hook shows processed rates and execute
  latencies that the hook's windows in ZooKeeper bear out (the page's time step against the windows
  overlapping it), and a re-plan (a rebalance Nimbus hands to the planner) on the time axis at the
  plan log's time, with its before/after figures.

(The page through a ZooKeeper outage is tested against a ZooKeeper of its own in test_browser_topology:
stopping the cluster's would stop Storm too.)
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.metrics.hookjar import default_hook_jar
from storm_planner.metrics.windows import fetch_windows
from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.submit.operations import kill_topology, rebalance_topology, submit_project

from .conftest import ARTIFACTS
from .test_browser import console_errors, wait_for
from .test_browser_topology import component_cell, markers, until

pytestmark = [pytest.mark.cluster, pytest.mark.skipif(
    default_plugin_jar() is None or not default_plugin_jar().is_file()
    or default_hook_jar() is None or not default_hook_jar().is_file(),
    reason="plugin or metrics jar not built (make plugin)")]

PIPELINE = Path(__file__).resolve().parents[1] / "metrics" / "fixtures" / "pipeline"
PERIOD_S = 3
RATE = 40


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from storm_planner.cluster import running_cluster

    with running_cluster(tmp_path_factory.mktemp("dashboard-cluster"), plugin=True, planner=True, ui=False) as running:
        yield running


def test_live_cluster_dashboard_shows_the_planned_topology(cluster, tmp_path, wordcount_project, browser):
    a = cluster.addresses
    assert a.dashboard_url
    options = {"wordcount.output": str(tmp_path / "counts.txt"), "topology.workers": 2,
               "planner.algorithm": "even"}
    row = submit_project(wordcount_project, nimbus=a.nimbus, options=options, wait_active=120)
    placed = {f"{p['node']}:{p['port']}" for p in cluster.assignment(row.id)}

    browser.get(a.dashboard_url)
    topology = wait_for(browser, f"[data-testid=topology][data-id='{row.id}']", timeout_s=60)[0]
    assert topology.find_element(By.CSS_SELECTOR, "[data-testid=algorithm]").text == "even"
    slots = {s.text for s in topology.find_elements(By.CSS_SELECTOR, "[data-testid=slot]")}
    assert slots == placed
    supervisors = {s.get_attribute("data-id")
                   for s in browser.find_elements(By.CSS_SELECTOR, "[data-testid=supervisor]")}
    assert supervisors >= set(a.supervisors)
    machine_types = {sup.meta.get("machine.type") for sup in cluster.description.supervisors} - {None}
    page = browser.find_element(By.ID, "supervisors").text
    assert all(f"machine type {t}" in page for t in machine_types)
    assert "declared CPU" in page  # Storm's resource accounting of the placed executors
    # The live cluster names executors' components: the placement shows them.
    assert "words" in topology.text and "count" in topology.text
    assert console_errors(browser) == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "live-cluster.png"))  # while the cluster still runs
    kill_topology(a.nimbus, "wordcount", wait_secs=0)


class WindowSampler:
    """Every window the hook publishes for a topology, read from ZooKeeper three times a period (ZooKeeper
    holds only each task's latest): task -> {(pid, seq): window}."""

    def __init__(self, zookeeper: str, topology_id: str) -> None:
        self.zookeeper, self.topology_id = zookeeper, topology_id
        self.windows: dict[int, dict] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(PERIOD_S / 3):
            try:
                for task, w in fetch_windows(self.zookeeper, self.topology_id).items():
                    self.windows.setdefault(task, {})[(w.pid, w.seq)] = w
            except Exception:  # noqa: BLE001 - a missed read is a gap the check below notices
                pass

    def __enter__(self) -> WindowSampler:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(10)


def _window_bounds(sampler: WindowSampler, component: str, start_ms: int, end_ms: int):
    """The sum over the component's tasks of the lowest and highest processed rate among each task's
    windows overlapping the step, and the range of their mean execute latencies; None until the
    windows sampled cover the step for every task of the component."""
    low = high = 0.0
    latencies = []
    tasks = [ws for ws in sampler.windows.values() if any(w.component == component for w in ws.values())]
    for task_windows in tasks:
        overlapping = sorted((w for w in task_windows.values() if w.start_ms < end_ms and w.end_ms > start_ms
                              and w.duration_ms > 0), key=lambda w: w.start_ms)
        covered = start_ms
        for w in overlapping:
            if w.start_ms > covered:
                break
            covered = max(covered, w.end_ms)
        if covered < end_ms:
            return None
        rates = [1000.0 * w.executed / w.duration_ms for w in overlapping]
        low, high = low + min(rates), high + max(rates)
        latencies += [w.execute_latency_ms for w in overlapping if w.execute_latency_ms is not None]
    return (low, high, latencies) if tasks else None


def test_topology_page_matches_the_windows_and_shows_a_replan(cluster, tmp_path, browser, dashboard_process):
    a = cluster.addresses
    options = {"pipeline.dir": str(tmp_path), "pipeline.rate": RATE, "topology.workers": 2,
               "planner.metrics.period.secs": PERIOD_S, "topology.stats.sample.rate": 1.0,
               "planner.replan": False, "planner.algorithm": "even",
               "topology.message.timeout.secs": 20, "topology.max.spout.pending": 200}
    row = submit_project(PIPELINE, nimbus=a.nimbus, name="dashpipe", options=options, wait_active=120)
    try:
        url = dashboard_process("--plan-log", str(cluster.plan_log), "--nimbus", a.nimbus,
                                "--zookeeper", a.zookeeper, "--refresh", "1", "--settle", str(3 * PERIOD_S))
        with WindowSampler(a.zookeeper, row.id) as sampler:
            browser.get(f"{url}/topology?id={row.id}")
            until(lambda: (component_cell(browser, "relay", "processed-rate") or 0) > 0, 150,
                  "a processed rate for relay on the page")

            def shown_and_sampled():
                page = browser.execute_script("return window.topologyPage.data")
                now = page["summary"]["now"]
                # The first steps with relay busy may precede the first completed trees (the sink's Python
                # still starting): wait for a step that has both.
                if not now.get("acked_per_s"):
                    return None
                bounds = _window_bounds(sampler, "relay", now["start_ms"], now["end_ms"])
                return bounds and (page, now, bounds)
            page, now, (low, high, latencies) = until(shown_and_sampled, 90,
                                                      "a step with acks whose windows were all sampled", every_s=1)
            relay = next(c for c in page["components"] if c["component"] == "relay")
            print(f"\nrelay on the page {relay['executed_per_s']}/s, {relay['execute_latency_ms']} ms; windows "
                  f"{low:.2f}-{high:.2f}/s, {min(latencies or [0]):.3f}-{max(latencies or [0]):.3f} ms")
            assert relay["executed_per_s"] > 0 and relay["executors"] == 2
            assert low - 0.01 <= relay["executed_per_s"] <= high + 0.01
            assert latencies and min(latencies) - 1e-3 <= relay["execute_latency_ms"] <= max(latencies) + 1e-3
            assert now["acked_per_s"] > 0 and now["complete_p99_ms"] is not None
            assert 0 <= relay["capacity"] < 1

        # Steady: the shell components have started and the spout's catch-up is over.
        def steady():
            steps = browser.execute_script("return window.topologyPage.data.steps")[-3:]
            return len(steps) == 3 and all(0.5 * RATE <= s["acked_per_s"] <= 1.5 * RATE for s in steps)
        until(steady, 120, "three steps at the spout's rate", every_s=1)

        # A re-plan: Nimbus hands the rebalanced topology to the planner, which places it anew.
        asked = time.time()
        placed = [r for r in read_plan_log(cluster.plan_log) if r["topology"] == row.id and not r.get("error")]
        rebalance_topology(a.nimbus, "dashpipe", {"relay": 1}, wait_secs=0, wait_applied=90, requests=3,
                           progress=lambda _: None)
        replan = until(lambda: [r for r in read_plan_log(cluster.plan_log)
                                if r["topology"] == row.id and r["time"] >= asked and not r.get("error")
                                and r["assignments"] != placed[-1]["assignments"]], 60,
                       "the re-plan in the plan log", every_s=1)[0]
        # The rebalance's re-plan, found by its time: under load Nimbus may have asked again before it (a
        # worker slow to start), and that plan, placed anew, is a re-plan marker of its own.
        shown = until(lambda: [m for m in markers(browser) if m["kind"] == "re-plan"
                               and abs(m["time"] - replan["time"]) < 1e-3], 30, "the re-plan on the page")
        logged = {r["time"] for r in read_plan_log(cluster.plan_log) if r["topology"] == row.id}
        assert all(any(abs(m["time"] - t) < 1e-3 for t in logged) for m in markers(browser) if m["kind"] == "re-plan")
        assert len(shown) == 1
        drawn = browser.execute_script(
            "return window.topologyPage.charts['chart-throughput'].data.datasets"
            ".find((d) => d.label === 'plans').data.map((p) => p.x);")
        assert any(abs(x - replan["time"] * 1000) < 1 for x in drawn)

        def settled():
            page = browser.execute_script("return window.topologyPage.data")
            m = next(m for m in page["markers"] if m["kind"] == "re-plan" and abs(m["time"] - replan["time"]) < 1e-3)
            return m["settled"] and (page, m)
        page, m = until(settled, 120, "the re-plan's before/after figures", every_s=1)
        at_ms, settle_ms = m["time"] * 1000, page["settle_s"] * 1000
        previous = max(x["time"] for x in page["markers"] if x["time"] < m["time"]) * 1000
        steps = page["steps"]
        before = [s["acked_per_s"] for s in steps if s["start_ms"] >= previous + settle_ms and s["end_ms"] <= at_ms][-6:]
        after = [s["acked_per_s"] for s in steps if s["start_ms"] >= at_ms + settle_ms][:m["after_steps"]]
        print(f"re-plan at {replan['time']:.1f}: acked/s {m['before']['acked_per_s']} before "
              f"({len(before)} steps), {m['after']['acked_per_s']} after ({len(after)} steps)")
        # The means of the steps drawn on the same page, before it and once it settled.
        assert m["before"]["acked_per_s"] == pytest.approx(sum(before) / len(before), abs=1e-3)
        assert m["after"]["acked_per_s"] == pytest.approx(sum(after) / len(after), abs=1e-3)
        # Measured before it (up to six steps: the pipeline's start may be among them, so no lower bound; so
        # may the rebalance, which deactivates the topology until the re-plan: in a slow CI run all six
        # steps fell there, at 0 acked/s).
        assert 0 <= m["before"]["acked_per_s"] <= 1.5 * RATE
        assert (m["before"]["acked_per_s"] > 0) == any(rate > 0 for rate in before)
        # The page follows the new placement: relay, now one executor, processes again.
        until(lambda: (page := browser.execute_script("return window.topologyPage.data")) and any(
            c["component"] == "relay" and c["executors"] == 1 and c["executed_per_s"] > 0
            for c in page["components"]), 120, "relay processing again after the re-plan", every_s=1)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "live-topology-page.png"))
        assert console_errors(browser) == []
    finally:
        kill_topology(a.nimbus, "dashpipe", wait_secs=0)
