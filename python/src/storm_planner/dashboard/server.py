"""The dashboard's web server: one page, its static files (JS libraries vendored from npm, since no
CDN is reachable from a cluster's network), a small JSON API, and the benchmark reports' plots.

Starlette (an ASGI app) served by uvicorn: a well-kept stack with no HTTP parsing of our own, and an
app object the tests can drive without a socket.

API:
  ``GET /api/snapshot``  everything the page shows (supervisors, topologies, the last ``--page-size`` plans,
                         fallbacks, rebalances; ``plans_total``; ``plan_log``: lines read, bad lines skipped)
  ``GET /api/plans``     plan summaries, newest last: ``?topology=ID``, ``limit=N`` (default the page size,
                         at most the history kept), ``before=I`` (plans numbered below I: the page before)
  ``GET /api/health``    ``{"ok": true, "plan_log": {...}}`` at once, even while a big log is read
  ``GET /reports/...``   files under the benchmark reports directory (plots, markdown)

Requests must name an allowed host (``--host``, localhost, 127.0.0.1, ::1, and each ``--allowed-host``):
any other ``Host`` header gets 421, so a web page whose name is re-pointed at this machine (DNS
rebinding) cannot read it. Every response carries a Content-Security-Policy (this server only),
``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY`` and ``Referrer-Policy: no-referrer``.
"""
from __future__ import annotations

import logging
import threading
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from storm_planner.core.boundedjson import JSONLimits
from storm_planner.dashboard.live import ClusterSource
from storm_planner.dashboard.model import DEFAULT_PAGE_SIZE, plan_summary, snapshot
from storm_planner.dashboard.planlog import DEFAULT_HISTORY, DEFAULT_LIMITS, PlanHistory, PlanLogReader

log = logging.getLogger(__name__)

_PLOT_SUFFIXES = (".png", ".svg")

DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost", "::1")
# Scripts, styles, images and requests from this server only; never framed; no referrer sent along.
_SECURITY_HEADERS = [(name.encode(), value.encode()) for name, value in (
    ("content-security-policy", "default-src 'self'; object-src 'none'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
)]


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
               reports_dir: Path | None = None, refresh_s: float = 3.0, *,
               history: int = DEFAULT_HISTORY, page_size: int = DEFAULT_PAGE_SIZE,
               limits: JSONLimits = DEFAULT_LIMITS, allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS) -> Starlette:
    """The dashboard app: from a plan log, a live cluster, or both. Reading the log and the cluster runs
    in worker threads, so a big log being read never holds up ``/api/health`` or the static files."""
    reader = PlanLogReader(plan_log, history=history, limits=limits) if plan_log else None
    cluster = cluster or ClusterSource()
    reports = list_reports(reports_dir)
    one_at_a_time = threading.Lock()   # the cluster source is not thread-safe; a second request waits

    def read_history() -> PlanHistory:
        return reader.read() if reader else PlanHistory()

    def current() -> dict[str, Any]:
        with one_at_a_time:
            state = snapshot(read_history(), cluster.read(), reports, page_size)
        state["sources"] = {"plan_log": str(plan_log) if plan_log else None,
                            "nimbus": "%s:%d" % cluster.nimbus if cluster.nimbus else None,
                            "zookeeper": cluster.zookeeper}
        state["plan_log"] = reader.progress() if reader else None
        state["refresh_s"] = refresh_s
        return state

    def plan_page(topology: str | None, limit: int, before: int | None) -> list[dict]:
        numbered = [(i, r) for i, r in read_history().entries if i is not None and (before is None or i < before)
                    and (topology is None or r.get("topology") == topology)]
        return [plan_summary(record, index) for index, record in numbered[-limit:]]

    async def index(_request: Request) -> FileResponse:
        return FileResponse(static_dir() / "index.html")

    async def api_snapshot(_request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(current))

    async def api_plans(request: Request) -> JSONResponse:
        try:
            limit = _int_param(request, "limit", page_size, 1, max(page_size, history))
            before = _int_param(request, "before", None, 0, None)
        except ValueError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        topology = request.query_params.get("topology")
        return JSONResponse(await run_in_threadpool(plan_page, topology, limit, before))

    async def health(_request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "plan_log": reader.progress() if reader else None})

    routes = [
        Route("/", index),
        Route("/api/snapshot", api_snapshot),
        Route("/api/plans", api_plans),
        Route("/api/health", health),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
    if reports_dir is not None and reports_dir.is_dir():
        routes.append(Mount("/reports", StaticFiles(directory=reports_dir), name="reports"))
    return Starlette(routes=routes, middleware=[Middleware(Guard, allowed_hosts=allowed_hosts)])


def _int_param(request: Request, name: str, default: int | None, low: int, high: int | None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) < low or (high is not None and int(raw) > high):
        span = f"{low}-{high}" if high is not None else f"{low} or more"
        raise ValueError(f"query parameter {name}={raw[:20]!r}: expected a whole number {span}")
    return int(raw)


class Guard:
    """Answers only requests addressed to an allowed host name (a page on another name reaching this
    server, as DNS rebinding does, gets 421) and sets the security headers on every response."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.allowed = {host.lower().strip("[]") for host in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + _SECURITY_HEADERS
            await send(message)

        host = host_name(Headers(scope=scope).get("host", ""))
        if host not in self.allowed:
            response = PlainTextResponse(f"unknown host {host[:80]!r}: start the dashboard with "
                                         f"--allowed-host {host[:80] or 'NAME'} to serve it", status_code=421)
            await response(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)


def host_name(header: str) -> str:
    """The name in a Host header, without its port (``[::1]:8090`` -> ``::1``), lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.partition(":")[0]


def serve(app: Starlette, host: str, port: int) -> None:
    """Run until interrupted. uvicorn logs through ``logging`` (standard error), never to stdout."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                            log_level="warning")
    uvicorn.Server(config).run()
