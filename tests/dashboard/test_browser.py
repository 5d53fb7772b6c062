"""The dashboard in a real browser (headless Chromium): what a person would check on the page."""
from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from .conftest import DATA


def console_errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def wait_for(driver, css: str, count: int = 1, timeout_s: float = 20.0):
    WebDriverWait(driver, timeout_s).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, css)) >= count)
    return driver.find_elements(By.CSS_SELECTOR, css)


def test_plan_log_page_shows_topologies_algorithms_slots_and_fallbacks(dashboard_process, browser):
    url = dashboard_process("--plan-log", str(DATA / "plan-log.jsonl"))
    browser.get(url)
    topologies = wait_for(browser, "[data-testid=topology]", 2)
    by_id = {t.get_attribute("data-id"): t for t in topologies}
    assert set(by_id) == {"trends-1-1763949990", "bargains-2-1763949995"}

    trends = by_id["trends-1-1763949990"]
    assert trends.find_element(By.CSS_SELECTOR, "[data-testid=algorithm]").text == "topdown"
    slots = {s.text for s in trends.find_elements(By.CSS_SELECTOR, "[data-testid=slot]")}
    assert slots == {"sup-a:6700", "sup-b:6701"}  # the latest plan (re-plan), not the first

    bargains = by_id["bargains-2-1763949995"]
    assert bargains.find_element(By.CSS_SELECTOR, "[data-testid=algorithm]").text == "milp"
    # Its last round fell back: the last good placement stays, flagged with the cause.
    assert {s.text for s in bargains.find_elements(By.CSS_SELECTOR, "[data-testid=slot]")} == \
        {"sup-b:6700", "sup-c:6702"}
    assert "milp ran past its 5 s time limit" in bargains.text

    reasons = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "[data-testid=fallback-reason]")]
    assert reasons == ["TIMEOUT: milp ran past its 5 s time limit"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "[data-testid=plan-row]")) == 4
    assert "applied" in browser.find_element(By.CSS_SELECTOR, "[data-testid=rebalance]").text
    supervisors = {s.get_attribute("data-id") for s in browser.find_elements(By.CSS_SELECTOR, "[data-testid=supervisor]")}
    assert supervisors == {"sup-a", "sup-b", "sup-c"}
    # The graphs were drawn (Cytoscape and Chart.js render into canvases).
    assert len(browser.find_elements(By.CSS_SELECTOR, "#topologies canvas")) >= 4
    assert browser.find_element(By.ID, "history-chart").size["height"] > 50
    # Labels readable at the default zoom: no graph label renders below 11 px.
    smallest = browser.execute_script(
        "return Math.min(...Object.values(graphs).flatMap((g) => g.nodes().map("
        "  (n) => parseFloat(n.style('font-size')) * g.zoom())));")
    assert smallest >= 11, smallest
    # Plans over time: a time axis (clock times at the plans' times), not plan numbers.
    axis = browser.execute_script(
        "const x = historyChart.scales.x;"
        "return {min: x.min, max: x.max, labels: x.ticks.map((t) => x.options.ticks.callback(t.value))};")
    assert axis["min"] >= 1763949990 * 1000 - 3600_000 and axis["max"] <= 1763950100 * 1000 + 3600_000
    assert all(label.count(":") == 2 for label in axis["labels"]), axis["labels"]
    # The garbled third line of the log is counted on the page.
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid=bad-lines]").text.startswith(
        "1 bad plan-log line(s) skipped (last: line 3: not JSON")
    # Everything above ran under the Content-Security-Policy (this server only, no inline styles):
    # a violation would be a console error.
    assert console_errors(browser) == []


def test_page_refreshes_when_the_plan_log_grows(dashboard_process, browser, tmp_path):
    log = tmp_path / "plans.jsonl"
    log.write_text("")
    url = dashboard_process("--plan-log", str(log), "--refresh", "0.5")
    browser.get(url)
    wait_for(browser, "#topologies p.muted")
    first = (DATA / "plan-log.jsonl").read_text().splitlines()[0]
    with log.open("a") as out:
        out.write(first + "\n")
    topology = wait_for(browser, "[data-testid=topology]")[0]
    assert topology.get_attribute("data-id") == "trends-1-1763949990"
    assert console_errors(browser) == []
