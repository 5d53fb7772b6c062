"""The dashboard in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
driven by Selenium) loads the page served by ``storm-planner dashboard --plan-log FILE`` and checks
what a person would: each topology, its algorithm, its ``supervisor:port`` slots, a fallback's cause,
the torn line's warning, and no console errors. Screenshots go to ``tests/artifacts/dashboard/``."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

PLAN_LOG = Path(__file__).parent / "data" / "plan-log.jsonl"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "dashboard"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def dashboard(tmp_path):
    """``storm-planner dashboard --plan-log`` on a free loopback port; its URL."""
    plan_log = tmp_path / "plan-log.jsonl"
    shutil.copy(PLAN_LOG, plan_log)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "storm_planner", "dashboard", "--plan-log", str(plan_log),
                                "--port", str(port), "--refresh", "0.5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        if process.poll() is not None:
            pytest.fail(f"the dashboard exited: {process.stderr.read().decode()}")
        time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/", plan_log
    process.terminate()
    process.wait(timeout=10)


def test_the_page_shows_topologies_slots_and_why_a_plan_fell_back(dashboard, browser, wait_for):
    from selenium.webdriver.common.by import By

    url, _ = dashboard
    browser.get(url)
    cards = {c.get_attribute("data-topology"): c for c in wait_for(browser, "[data-topology]", 2)}
    assert set(cards) == {"trends-1-1795299990", "airline-1-1795299999"}
    trends = cards["trends-1-1795299990"]
    assert "algorithm topdown" in trends.find_element(By.CLASS_NAME, "algorithm").text
    assert [s.text for s in trends.find_elements(By.CLASS_NAME, "slot")] == ["sup-a:6700", "sup-b:6701"]
    assert "algorithm hetero" in cards["airline-1-1795299999"].text
    fallbacks = browser.find_element(By.ID, "fallbacks").text
    assert "bargains-1-1795299995" in fallbacks and "INFEASIBLE: no placement fits" in fallbacks
    assert "plan-log.jsonl:3: skipped" in browser.find_element(By.ID, "problems").text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "plan-log.png"))
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


def test_the_page_follows_a_growing_plan_log(dashboard, browser, wait_for):
    url, plan_log = dashboard
    browser.get(url)
    wait_for(browser, "[data-topology]", 2)
    with plan_log.open("a") as out:
        out.write('{"time": 1795300100.0, "event": "plan", "topology": "late-1", "algorithm": "even", '
                  '"assignments": {"[1-1]": "sup-d:6700"}, "figures": {}, "solve_ms": 1.0, "notes": [], '
                  '"error": null}\n')
    wait_for(browser, "[data-topology]", 3)
    browser.save_screenshot(str(ARTIFACTS / "plan-log-grown.png"))
