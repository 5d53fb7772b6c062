"""The dashboard's web application (Starlette): one page and ``/api/state``.

The page (``templates/dashboard.html``) renders what ``/api/state`` returns and polls it every
``refresh_s`` seconds; nothing is loaded from elsewhere, so it works on an air-gapped cluster.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .state import Supervisor, dashboard_state

PAGE = Path(__file__).with_name("templates") / "dashboard.html"


def create_app(plan_log: Path | None, supervisors: Callable[[], Mapping[str, Supervisor]] | None = None,
               refresh_s: float = 3.0, reports_dir: Path | None = None) -> Starlette:
    """The application for one plan log and (optionally) one cluster's supervisors; ``reports_dir``
    (a checkout's ``benchmarks/reports``) is served under ``/reports/`` and its reports are linked."""
    page = PAGE.read_text().replace("{{REFRESH_MS}}", str(int(refresh_s * 1000)))

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page)

    async def state(request: Request) -> JSONResponse:
        return JSONResponse({**dashboard_state(plan_log, supervisors), "reports": reports})

    reports = sorted(p.name for p in reports_dir.glob("*.md")) if reports_dir and reports_dir.is_dir() else []
    routes = [Route("/", index), Route("/api/state", state)]
    if reports:
        routes.append(Mount("/reports", app=StaticFiles(directory=reports_dir), name="reports"))
    return Starlette(routes=routes)
