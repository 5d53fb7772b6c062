"""The dashboard's web app, without a socket (Starlette's test client)."""
from __future__ import annotations

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
    client = TestClient(create_app(DATA / "plan-log.jsonl", reports_dir=reports))
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
    client = TestClient(create_app(DATA / "plan-log.jsonl", source))
    snap = client.get("/api/snapshot").json()
    assert "Nimbus 127.0.0.1:1" in snap["cluster"]["error"]
    assert len(snap["topologies"]) == 2
