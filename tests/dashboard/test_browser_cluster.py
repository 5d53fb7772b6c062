"""The dashboard the local cluster starts, against the live cluster, in headless Chromium: a planned
topology shows with its algorithm and the `supervisor:port` slots Nimbus really runs it on, and the
supervisors with their machine types."""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from storm_planner.cluster.launcher import default_plugin_jar
from storm_planner.submit.operations import kill_topology, submit_project

from .conftest import ARTIFACTS
from .test_browser import console_errors, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.skipif(
    default_plugin_jar() is None or not default_plugin_jar().is_file(),
    reason="plugin jar not built (make plugin)")]


def test_live_cluster_dashboard_shows_the_planned_topology(tmp_path, wordcount_project, browser):
    from storm_planner.cluster import running_cluster

    with running_cluster(tmp_path, plugin=True, planner=True, ui=False) as cluster:
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
