"""The dashboard's web app, without a socket (Starlette's test client)."""
from __future__ import annotations

import json
import warnings

with warnings.catch_warnings():
    # Starlette 1.x would rather have httpx2 drive its test client; httpx (locked) still does the job.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from storm_planner.dashboard.live import ClusterSource
from storm_planner.dashboard.server import create_app

from .conftest import DATA


def test_page_static_files_and_api(tmp_path):
    reports = tmp_path / "reports"
    (reports / "albic").mkdir(parents=True)
    (reports / "albic" / "load.png").write_bytes(b"\x89PNG")
    client = TestClient(create_app(DATA / "plan-log.jsonl", reports_dir=reports), base_url="http://127.0.0.1")
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for script in ("/static/app.js", "/static/vendor/chart-4.6.1.umd.min.js",
                   "/static/vendor/cytoscape-3.34.4.min.js"):
        assert client.get(script).status_code == 200, script
    snap = client.get("/api/snapshot").json()
    assert {t["algorithm"] for t in snap["topologies"]} == {"topdown", "milp"}
    assert snap["reports"] == [{"report": "albic", "name": "load.png", "url": "/reports/albic/load.png"}]
    assert client.get("/reports/albic/load.png").content == b"\x89PNG"
    plans = client.get("/api/plans", params={"topology": "trends-1-1763949990"}).json()
    assert [p["algorithm"] for p in plans] == ["topdown", "topdown"]


def test_unreachable_cluster_is_reported_not_fatal():
    source = ClusterSource("127.0.0.1:1", None, timeout_ms=300)
    client = TestClient(create_app(DATA / "plan-log.jsonl", source), base_url="http://127.0.0.1")
    snap = client.get("/api/snapshot").json()
    assert "Nimbus 127.0.0.1:1" in snap["cluster"]["error"]
    assert len(snap["topologies"]) == 2


def client_for(plan_log, **options) -> TestClient:
    return TestClient(create_app(plan_log, **options), base_url="http://127.0.0.1")


def test_a_wrong_typed_field_no_longer_breaks_the_page_and_is_counted(tmp_path):
    log = tmp_path / "plans.jsonl"
    good = (DATA / "plan-log.jsonl").read_text().splitlines()[0]
    log.write_text(good + "\n" + '{"event": "plan", "topology": "x", "assignments": "sup-a:6700"}\n')
    client = client_for(log)
    response = client.get("/api/snapshot")
    assert response.status_code == 200
    snap = response.json()
    assert len(snap["plans"]) == 1 and snap["plan_log"]["bad_lines"] == 1
    assert snap["plan_log"]["last_bad_line"].startswith("line 2: field assignments: text")
    assert client.get("/api/health").json()["plan_log"]["bad_lines"] == 1


def test_other_host_names_are_refused_and_every_response_carries_the_security_headers():
    client = client_for(DATA / "plan-log.jsonl", allowed_hosts=["127.0.0.1", "localhost", "dash.example"])
    for host in ("127.0.0.1:8090", "localhost", "DASH.example:80"):
        assert client.get("/api/health", headers={"host": host}).status_code == 200, host
    refused = client.get("/api/snapshot", headers={"host": "attacker.example"})
    assert refused.status_code == 421 and "--allowed-host attacker.example" in refused.text
    for path in ("/", "/static/app.js", "/api/health", "/no-such-page"):
        headers = client.get(path).headers
        assert headers["content-security-policy"].startswith("default-src 'self'"), path
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "no-referrer"
    assert refused.headers["x-frame-options"] == "DENY"


def test_plans_come_in_bounded_pages(tmp_path):
    log = tmp_path / "plans.jsonl"
    record = json.loads((DATA / "plan-log.jsonl").read_text().splitlines()[0])
    log.write_text("".join(json.dumps({**record, "request_id": f"r{i}"}) + "\n" for i in range(50)))
    client = client_for(log, page_size=10, history=30)
    assert [p["index"] for p in client.get("/api/plans").json()] == list(range(40, 50))
    assert [p["index"] for p in client.get("/api/plans", params={"limit": 5, "before": 40}).json()] == \
        list(range(35, 40))
    assert len(client.get("/api/plans", params={"limit": 30}).json()) == 30  # all the history kept
    for bad in ({"limit": 0}, {"limit": 31}, {"limit": "nan"}, {"before": "-1"}):
        response = client.get("/api/plans", params=bad)
        assert response.status_code == 400 and "query parameter" in response.json()["error"], bad
    snap = client.get("/api/snapshot").json()
    assert len(snap["plans"]) == 10 and snap["plans_total"] == 50


CELLS = """workload,rate,scheduler,repetition,status,processed_tps,latency_p99_ms,placement
topk,400,default,1,ran,400.0,324.1,a:2 b:2
topk,400,default,2,ran,402.0,300.0,a:2 b:2
topk,400,ras,1,ran,398.0,216.5,a:4
topk,400,ras,2,failed,,,
wc,50,ras,1,ran,50.0,NaN,a:1
"""


def test_topology_api_from_the_plan_log_alone_and_its_bounds():
    client = TestClient(create_app(DATA / "plan-log.jsonl"), base_url="http://127.0.0.1")
    assert client.get("/topology", params={"id": "x"}).status_code == 200
    page = client.get("/api/topology", params={"id": "trends-1-1763949990"}).json()
    assert [m["kind"] for m in page["markers"]] == ["plan", "rebalance", "re-plan"]   # as the log has them
    assert page["steps"] == [] and page["summary"]["now"] is None and page["metrics"] == {"available": False, "future_windows_ignored": 0}
    assert client.get("/api/topology").status_code == 400
    assert client.get("/api/topology", params={"id": "x" * 257}).status_code == 400
    assert client.get("/api/topology", params={"id": "gone-9-1"}).status_code == 404


def test_benchmark_tables_side_by_side_and_only_from_the_reports(tmp_path):
    reports = tmp_path / "reports"
    (reports / "e2e").mkdir(parents=True)
    (reports / "e2e" / "cells.csv").write_text(CELLS)
    (reports / "e2e.md").write_text("# e2e")
    (reports / "e2e" / "other.csv").write_text("a,b\n1,2\n")
    (tmp_path / "secret.csv").write_text(CELLS)
    client = TestClient(create_app(DATA / "plan-log.jsonl", reports_dir=reports), base_url="http://127.0.0.1")
    assert client.get("/compare").status_code == 200
    assert client.get("/api/benchmarks").json() == [
        {"table": "e2e/cells.csv", "report": "e2e", "report_url": "/reports/e2e.md"}]
    table = client.get("/api/benchmarks/table", params={"path": "e2e/cells.csv"}).json()
    topk = table["workloads"]["topk @ 400"]
    assert topk["default"]["processed_tps"] == {"median": 401.0, "n": 2, "values": [400.0, 402.0]}
    assert topk["ras"]["processed_tps"]["n"] == 1 and table["not_run"] == 1
    assert topk["ras"]["placement"] == {"text": ["a:4"]}
    assert "latency_p99_ms" not in table["workloads"]["wc @ 50"]["ras"] or \
        "median" not in table["workloads"]["wc @ 50"]["ras"]["latency_p99_ms"]   # NaN is no figure
    assert set(table["numeric"]) == {"processed_tps", "latency_p99_ms"}
    assert client.get("/api/benchmarks/table", params={"path": "../secret.csv"}).status_code == 400
    assert client.get("/api/benchmarks/table", params={"path": "e2e/other.csv"}).status_code == 400
    assert client.get("/api/benchmarks/table", params={"path": "e2e.md"}).status_code == 400
    snap = client.get("/api/snapshot").json()
    assert snap["benchmark_tables"][0]["table"] == "e2e/cells.csv"
