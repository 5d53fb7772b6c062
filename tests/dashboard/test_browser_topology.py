"""The topology page in headless Chromium against a real ZooKeeper, with no Storm cluster: a writer in
the test (standing in for the workers' hook, whose real windows the cluster test reads) publishes
window documents every second as the hook does, including its behaviour while ZooKeeper is away
(keep counting, write one longer window when back). The page must show the rates and latencies those
windows say, put a re-plan from the plan log on the time axis with its before/after, and stay
correct through a ZooKeeper outage."""
from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from .conftest import ARTIFACTS
from .test_browser import console_errors

TOPOLOGY = "words-7-1700000000"
ROOT = "/storm-planner/metrics"
BOUNDS = [1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100]


class HookLikeWriter:
    """Publishes the windows of one spout task (1) and two bolt tasks (2, 3) every ``period_s``: the
    spout emits ``rate`` tuples/s, half to each bolt task; bolts take 4 ms a tuple; every complete
    latency falls in the 10-15 ms bucket. A task whose write fails keeps its window open, as the hook
    does: its next window covers both periods."""

    def __init__(self, hosts: str, period_s: float = 1.0) -> None:
        from kazoo.client import KazooClient
        from kazoo.retry import KazooRetry

        self.client = KazooClient(hosts=hosts, timeout=2.0,
                                  connection_retry=KazooRetry(max_tries=-1, delay=0.2, max_delay=1.0),
                                  command_retry=KazooRetry(max_tries=0))
        self.client.start(timeout=15)
        self.period_s = period_s
        now_ms = int(time.time() * 1000)
        self.rates = [(now_ms, 40.0)]          # (from ms, tuples/s), oldest first
        self.window_start = {task: now_ms for task in (1, 2, 3)}
        self.since_ms = now_ms   # the worker's start: totals count from here
        self.seq = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def emitted(self, start_ms: int, end_ms: int) -> int:
        """Tuples the spout emitted in [start_ms, end_ms) at the rates set."""
        total = 0.0
        for i, (since, rate) in enumerate(self.rates):
            until_ms = self.rates[i + 1][0] if i + 1 < len(self.rates) else end_ms
            total += rate * max(0, min(until_ms, end_ms) - max(since, start_ms)) / 1000
        return int(round(total))

    def _doc(self, task: int, end_ms: int) -> dict:
        start_ms = self.window_start[task]
        n = self.emitted(start_ms, end_ms)
        half = n // 2
        total = self.emitted(self.since_ms, end_ms)   # cumulative, as the hook's totals
        total_half = total // 2
        seconds = (end_ms - self.since_ms) / 1000   # each host's interfaces: 5,000 B/s in, 7,500 B/s out
        common = {"version": 1, "topology": TOPOLOGY, "task": task,
                  "host_net": {"received_bytes": int(5000 * seconds), "sent_bytes": int(7500 * seconds)},
                  "window": {"seq": self.seq, "start_ms": start_ms, "end_ms": end_ms, "period_s": self.period_s},
                  "failed": {"tuples": 0, "total": 0}, "received": []}
        cpu = {"thread_cpu_supported": True, "subprocess_ms": 0, "subprocesses": 0}
        if task == 1:
            return {**common, "component": "words",
                    "worker": {"host": "127.0.0.1", "port": 6700, "node": "sup-a", "pid": 11},
                    "cpu": {**cpu, "threads": [{"id": 1, "name": "spout", "ms": 1.0}]},
                    "emitted": {"tuples": n, "total": total}, "executed": {"tuples": 0, "total": 0},
                    "acked": {"tuples": n, "total": total, "complete_latency_ms_sum": 12 * n,
                              "complete_latency_samples": n,
                              "complete_latency_buckets": {"le_ms": BOUNDS, "counts": [0] * 6 + [n] + [0] * 6}},
                    "sent": [{"stream": "default", "to": t, "tuples": half, "bytes": 0, "total": total_half,
                              "bytes_total": 0} for t in (2, 3)]}
        node, port = {2: ("sup-a", 6701), 3: ("sup-b", 6700)}[task]
        return {**common, "component": "count",
                "worker": {"host": "127.0.0.1", "port": port, "node": node, "pid": 10 + task},
                "cpu": {**cpu, "threads": [{"id": task, "name": "bolt", "ms": 2.0}]},
                "emitted": {"tuples": 0, "total": 0},
                "executed": {"tuples": half, "total": total_half, "latency_ms_sum": 4 * half, "latency_samples": half},
                "acked": {"tuples": half, "total": total_half}, "sent": []}

    def _run(self) -> None:
        while not self.stop.wait(self.period_s):
            end_ms = int(time.time() * 1000)
            self.seq += 1
            for task in (1, 2, 3):
                path = f"{ROOT}/{TOPOLOGY}/{task}"
                try:
                    data = json.dumps(self._doc(task, end_ms)).encode()
                    if self.client.exists(path):
                        self.client.set(path, data)
                    else:
                        self.client.create(path, data, makepath=True)
                except Exception:  # noqa: BLE001 - ZooKeeper away: the next window covers this one too
                    continue
                self.window_start[task] = end_ms

    def set_rate(self, rate: float) -> None:
        self.rates.append((int(time.time() * 1000), rate))

    def __enter__(self) -> HookLikeWriter:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(5)
        self.client.stop()
        self.client.close()


def plan(time_s: float, algorithm: str, notes: list[str], moves: float | None = None) -> str:
    return json.dumps({"event": "plan", "time": time_s, "topology": TOPOLOGY, "algorithm": algorithm,
                       "assignments": {"[1-1]": "sup-a:6700", "[2-2]": "sup-a:6701", "[3-3]": "sup-b:6700"},
                       "figures": {} if moves is None else {"moves": moves}, "notes": notes, "solve_ms": 3.0,
                       "error": None}) + "\n"


# Read through one script each: the page re-renders every half second, a found element goes stale.
def figure(browser, testid: str) -> float | None:
    raw = browser.execute_script(
        f"const e = document.querySelector('[data-testid={testid}]'); return e && e.dataset.value;")
    return float(raw) if raw else None


def component_cell(browser, component: str, testid: str) -> float | None:
    raw = browser.execute_script(
        f"const e = document.querySelector('[data-testid=component-row][data-component={component}] "
        f"[data-testid={testid}]'); return e && e.dataset.value;")
    return float(raw) if raw else None


def markers(browser) -> list[dict]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('[data-testid=marker]')).map((r) => {"
        "  const ba = r.querySelector('[data-testid=ba-acked_per_s]');"
        "  return {kind: r.dataset.kind, time: Number(r.dataset.time), before: ba.dataset.before,"
        "          after: ba.dataset.after}; });")


def metrics_status(browser) -> str:
    return browser.execute_script("return document.querySelector('[data-testid=metrics-status]').textContent")


def until(check, timeout_s: float, what: str, every_s: float = 0.3):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            result = check()
        except Exception:  # noqa: BLE001 - the page is between two renders
            result = None
        if result:
            return result
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


@pytest.mark.slow
def test_topology_page_follows_the_windows_a_replan_and_a_zookeeper_outage(
        own_zookeeper, dashboard_process, browser, tmp_path):
    plan_log = tmp_path / "plans.jsonl"
    plan_log.write_text(plan(time.time(), "even", ["first placement"]))
    with HookLikeWriter(own_zookeeper.hosts) as writer:
        url = dashboard_process("--zookeeper", own_zookeeper.hosts, "--plan-log", str(plan_log),
                                "--refresh", "0.5", "--settle", "2")
        browser.get(f"{url}/topology?id={TOPOLOGY}")

        # What the windows say: 40 tuples/s emitted and acked at the spout, 20/s processed by each bolt
        # task, 4 ms a tuple (capacity 20 x 4 ms / 1 s = 0.08), complete latencies all in (10, 15] ms.
        until(lambda: component_cell(browser, "count", "processed-rate"), 20, "a processed rate on the page")
        assert component_cell(browser, "count", "processed-rate") == pytest.approx(40.0, rel=0.1)
        assert component_cell(browser, "count", "execute-latency") == pytest.approx(4.0)
        assert component_cell(browser, "count", "capacity") == pytest.approx(0.08, rel=0.1)
        assert figure(browser, "acked") == pytest.approx(40.0, rel=0.1)
        assert 10.0 < figure(browser, "p50") <= 15.0 and 10.0 < figure(browser, "p99") <= 15.0
        assert figure(browser, "inter-worker") == pytest.approx(40.0, rel=0.1)   # both bolts in other workers
        assert figure(browser, "inter-node") == pytest.approx(20.0, rel=0.1)     # task 3 on sup-b
        assert set(browser.execute_script(
            "return Array.from(document.querySelectorAll('[data-testid=component-row]')).map((r) => r.dataset.component)"
        )) == {"words", "count"}

        # The hosts' links as their interfaces counted: 12,500 B/s = 0.1 Mbit/s, on the overview too. A
        # link's rate needs two windows of a task on it; the rates above need only one, so wait for it.
        def host_links() -> dict | None:
            with urllib.request.urlopen(f"{url}/api/snapshot") as response:
                links = {s["id"]: s["host_mbit"] for s in json.load(response)["supervisors"]}
            return links if None not in links.values() else None
        links = until(host_links, 10, "both hosts' link rates")
        assert links == {"sup-a": pytest.approx(0.1, rel=0.05), "sup-b": pytest.approx(0.1, rel=0.05)}

        # A re-plan: the rate doubles from then on; it shows at its time, with before and after.
        time.sleep(3)
        replanned_at = time.time()
        with plan_log.open("a") as out:
            out.write(plan(replanned_at, "topdown", ["re-planned (metrics changed 40%): 2 executor(s) move"], 2.0))
        writer.set_rate(80.0)
        marker = until(lambda: [m for m in markers(browser) if m["kind"] == "re-plan"], 15, "the re-plan on the page")[0]
        assert marker["time"] == pytest.approx(replanned_at, abs=1e-3)
        drawn = browser.execute_script(
            "const c = window.topologyPage.charts['chart-throughput'];"
            "return c.data.datasets.find((d) => d.label === 'plans').data.map((p) => [p.x, p.marker.kind]);")
        assert [replanned_at * 1000, "re-plan"] in [[pytest.approx(x, abs=1), kind] for x, kind in drawn]

        def settled():
            replan = [m for m in markers(browser) if m["kind"] == "re-plan"][0]
            return replan["after"] and (float(replan["before"]), float(replan["after"]))
        before, after = until(settled, 20, "the re-plan's after figures")
        assert before == pytest.approx(40.0, rel=0.1) and after == pytest.approx(80.0, rel=0.1)
        until(lambda: component_cell(browser, "count", "processed-rate") > 70, 10, "the doubled rate")

        # ZooKeeper away: the page says so and keeps what it showed; back: it goes on by itself.
        steps_before = browser.execute_script("return window.topologyPage.data.steps.length")
        own_zookeeper.stop()
        outage_at = time.time()
        until(lambda: "unreachable since" in metrics_status(browser), 30, "the outage on the page")
        time.sleep(1)   # a refresh under way when ZooKeeper went
        shown = component_cell(browser, "count", "processed-rate")
        time.sleep(2)
        assert component_cell(browser, "count", "processed-rate") == shown
        assert [m["kind"] for m in markers(browser)] == ["re-plan", "plan"]   # newest first
        assert browser.execute_script("return window.topologyPage.data.steps.length") >= steps_before
        own_zookeeper.start()
        back_at = time.time()
        until(lambda: "connected" in metrics_status(browser), 60, "the page to see ZooKeeper back")
        # The long window that covers the outage fills its steps at the rate it kept: no dip to 0.
        until(lambda: browser.execute_script("return window.topologyPage.data.steps.length") >= steps_before + 6,
              30, "steps after the outage")
        steps = browser.execute_script("return window.topologyPage.data.steps")
        rates = [s["acked_per_s"] for s in steps if s["start_ms"] >= (replanned_at + 3) * 1000]
        assert rates and min(rates) == pytest.approx(80.0, rel=0.15), [
            (round(s["start_ms"] / 1000 - replanned_at, 1), s["acked_per_s"], s["tasks"]) for s in steps
            if s["start_ms"] >= (replanned_at + 3) * 1000] + [outage_at - replanned_at, back_at - replanned_at]
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "topology-page.png"))
        assert console_errors(browser) == []
