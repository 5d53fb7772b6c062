"""The dashboard's web server: one page, its static files (JS libraries vendored from npm, since no
CDN is reachable from a cluster's network), a small JSON API, and the benchmark reports' plots.

Starlette (an ASGI app) served by uvicorn: a well-kept stack with no HTTP parsing of our own, and an
app object the tests can drive without a socket.

API:
  ``GET /api/snapshot``  everything the page shows (supervisors, topologies, plans, fallbacks, rebalances)
  ``GET /api/plans``     the plan history alone (``?topology=ID`` to filter)
  ``GET /api/health``    ``{"ok": true}`` for launchers waiting on the port
  ``GET /reports/...``   files under the benchmark reports directory (plots, markdown)
"""
from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from storm_planner.dashboard.live import ClusterSource
from storm_planner.dashboard.model import PlanLogReader, snapshot

log = logging.getLogger(__name__)

_PLOT_SUFFIXES = (".png", ".svg")


def static_dir() -> Path:
    return Path(str(resources.files("storm_planner.dashboard") / "static"))


def find_reports_dir(start: Path | None = None) -> Path | None:
    """``benchmarks/reports`` of the checkout this package runs from (or above ``start``), if any:
    an installed wheel has no reports and the page then simply lists none."""
    here = Path(start or __file__).resolve()
    for parent in [here, *here.parents]:
        candidate = parent / "benchmarks" / "reports"
        if candidate.is_dir():
            return candidate
    return None


def list_reports(reports_dir: Path | None) -> list[dict]:
    """The plots under the reports directory, as links the page can show, newest report first."""
    if reports_dir is None or not reports_dir.is_dir():
        return []
    plots = [p for p in reports_dir.rglob("*") if p.suffix in _PLOT_SUFFIXES and p.is_file()]
    plots.sort(key=lambda p: (p.parent.name, p.name))
    return [{"report": str(p.parent.relative_to(reports_dir)), "name": p.name,
             "url": "/reports/" + p.relative_to(reports_dir).as_posix()} for p in plots]


def create_app(plan_log: Path | None = None, cluster: ClusterSource | None = None,
               reports_dir: Path | None = None, refresh_s: float = 3.0) -> Starlette:
    """The dashboard app: from a plan log, a live cluster, or both."""
    reader = PlanLogReader(plan_log) if plan_log else None
    cluster = cluster or ClusterSource()
    reports = list_reports(reports_dir)

    def current() -> dict[str, Any]:
        records = reader.records() if reader else []
        state = snapshot(records, cluster.read(), reports)
        state["sources"] = {"plan_log": str(plan_log) if plan_log else None,
                            "nimbus": "%s:%d" % cluster.nimbus if cluster.nimbus else None,
                            "zookeeper": cluster.zookeeper}
        state["refresh_s"] = refresh_s
        return state

    async def index(_request: Request) -> FileResponse:
        return FileResponse(static_dir() / "index.html")

    async def api_snapshot(_request: Request) -> JSONResponse:
        return JSONResponse(current())

    async def api_plans(request: Request) -> JSONResponse:
        topology = request.query_params.get("topology")
        plans = current()["plans"]
        return JSONResponse([p for p in plans if topology is None or p["topology"] == topology])

    async def health(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    routes = [
        Route("/", index),
        Route("/api/snapshot", api_snapshot),
        Route("/api/plans", api_plans),
        Route("/api/health", health),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
    if reports_dir is not None and reports_dir.is_dir():
        routes.append(Mount("/reports", StaticFiles(directory=reports_dir), name="reports"))
    return Starlette(routes=routes)


def serve(app: Starlette, host: str, port: int) -> None:
    """Run until interrupted. uvicorn logs through ``logging`` (standard error), never to stdout."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                            log_level="warning")
    uvicorn.Server(config).run()
