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
  ``GET /topology?id=ID`` the topology page; ``GET /api/topology?id=ID`` what it shows (summary, components,
                         supervisors, the trend's steps, the plans on its time axis with before/after)
  ``GET /compare``       the benchmark comparison page; ``GET /api/benchmarks`` the comparable tables,
                         ``GET /api/benchmarks/table?path=REL`` one table, schedulers side by side per workload
  ``GET /reports/...``   files under the benchmark reports directory (plots, markdown)

Requests must name an allowed host (``--host``, localhost, 127.0.0.1, ::1, and each ``--allowed-host``):
any other ``Host`` header gets 421, so a web page whose name is re-pointed at this machine (DNS
rebinding) cannot read it. Every response carries a Content-Security-Policy (this server only),
``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY`` and ``Referrer-Policy: no-referrer``.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterable
from importlib import resources
from pathlib import Path
from typing import Any, overload

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
from storm_planner.dashboard.benchmarks import BenchmarkTableError, compare, list_tables, resolve_table
from storm_planner.dashboard.live import ClusterSource
from storm_planner.dashboard.model import DEFAULT_PAGE_SIZE, plan_summary, snapshot, supervisors_view
from storm_planner.dashboard.planlog_reader import DEFAULT_HISTORY, DEFAULT_LIMITS, PlanHistory, PlanLogReader
from storm_planner.dashboard.timeline import DEFAULT_METRICS_HISTORY, DEFAULT_SETTLE_S, Trends
from storm_planner.dashboard.topology_page import link_rate, metrics_state, topology_page

log = logging.getLogger(__name__)

_PLOT_SUFFIXES = (".png", ".svg")
MAX_TOPOLOGY_ID = 256

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


class _Views:
    """What the pages show, read from the plan log, the live cluster and the metrics trends. Every method
    runs in a worker thread; the cluster source is not thread-safe, so its reads take turns."""

    def __init__(self, plan_log: Path | None, reader: PlanLogReader | None, cluster: ClusterSource,
                 reports_dir: Path | None, trends: Trends, *, refresh_s: float, page_size: int,
                 settle_s: float) -> None:
        self.plan_log, self.reader, self.cluster, self.trends = plan_log, reader, cluster, trends
        self.reports_dir, self.reports, self.tables = reports_dir, list_reports(reports_dir), list_tables(reports_dir)
        self.refresh_s, self.page_size, self.settle_s = refresh_s, page_size, settle_s
        self.one_at_a_time = threading.Lock()

    def history(self) -> PlanHistory:
        return self.reader.read() if self.reader else PlanHistory()

    def current(self) -> dict[str, Any]:
        """The cluster page's snapshot: plans, supervisors with their link use, trends, benchmark tables."""
        with self.one_at_a_time:
            state = snapshot(self.history(), self.cluster.read(), self.reports, self.page_size)
        state["sources"] = {"plan_log": str(self.plan_log) if self.plan_log else None,
                            "nimbus": "{}:{}".format(*self.cluster.nimbus) if self.cluster.nimbus else None,
                            "zookeeper": self.cluster.zookeeper}
        state["plan_log"] = self.reader.progress() if self.reader else None
        state["refresh_s"] = self.refresh_s
        state["trends"] = self.trends.topologies()
        links = self.trends.host_links()
        for sup in state["supervisors"]:
            sup["host_mbit"] = round(links[sup["id"]], 4) if sup["id"] in links else None
            sup["link_mbit"] = link_rate(sup)
        state["benchmark_tables"] = self.tables
        return state

    def topology(self, topology: str) -> dict[str, Any] | None:
        """One topology's page, or None when no source knows it."""
        with self.one_at_a_time:
            plans = self.history()
            cluster_state = self.cluster.read()
            info = dict((cluster_state.get("topologies") or {}).get(topology) or {})
            store = self.cluster.metrics_store() if self.cluster.zookeeper else None
            supervisors = supervisors_view(plans, cluster_state)
        timeline = self.trends.timeline(topology)
        records = [record for _, record in plans.entries]
        if timeline is None and not info and not any(r.get("topology") == topology for r in records):
            return None
        state = topology_page(topology, timeline=timeline, info=info, records=records, supervisors=supervisors,
                              metrics=metrics_state(store.view(topology) if store else None),
                              settle_s=self.settle_s, marker_limit=self.page_size)
        state["refresh_s"] = self.refresh_s
        state["cluster_error"] = cluster_state.get("error")
        return state

    def plan_page(self, topology: str | None, limit: int, before: int | None) -> list[dict]:
        numbered = [(i, r) for i, r in self.history().entries if i is not None and (before is None or i < before)
                    and (topology is None or r.get("topology") == topology)]
        return [plan_summary(record, index) for index, record in numbered[-limit:]]


class _Handlers:
    """The HTTP endpoints: parameters checked here, the reading done by :class:`_Views` in a thread."""

    def __init__(self, views: _Views, *, page_size: int, history: int) -> None:
        self.views, self.page_size, self.history = views, page_size, history

    async def index(self, _request: Request) -> FileResponse:
        return FileResponse(static_dir() / "index.html")

    async def topology_html(self, _request: Request) -> FileResponse:
        return FileResponse(static_dir() / "topology.html")

    async def compare_html(self, _request: Request) -> FileResponse:
        return FileResponse(static_dir() / "compare.html")

    async def snapshot(self, _request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(self.views.current))

    async def plans(self, request: Request) -> JSONResponse:
        try:
            limit = _int_param(request, "limit", self.page_size, 1, max(self.page_size, self.history))
            before = _int_param(request, "before", None, 0, None)
        except ValueError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        topology = request.query_params.get("topology")
        return JSONResponse(await run_in_threadpool(self.views.plan_page, topology, limit, before))

    async def topology(self, request: Request) -> JSONResponse:
        topology = request.query_params.get("id", "")
        if not topology or len(topology) > MAX_TOPOLOGY_ID:
            return JSONResponse({"error": f"query parameter id: expected a topology id of 1-{MAX_TOPOLOGY_ID} "
                                          f"characters"}, status_code=400)
        state = await run_in_threadpool(self.views.topology, topology)
        if state is None:
            return JSONResponse({"error": f"no topology {topology[:80]!r} known (plan log, Nimbus, metrics)"},
                                status_code=404)
        return JSONResponse(state)

    async def benchmarks(self, _request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(list_tables, self.views.reports_dir))

    async def benchmark_table(self, request: Request) -> JSONResponse:
        relative = request.query_params.get("path", "")
        try:
            path = resolve_table(self.views.reports_dir, relative)
            return JSONResponse(await run_in_threadpool(compare, path, relative))
        except BenchmarkTableError as error:
            return JSONResponse({"error": str(error)}, status_code=400)

    async def health(self, _request: Request) -> JSONResponse:
        reader = self.views.reader
        return JSONResponse({"ok": True, "plan_log": reader.progress() if reader else None})


def create_app(plan_log: Path | None = None, cluster: ClusterSource | None = None,
               reports_dir: Path | None = None, refresh_s: float = 3.0, *,
               history: int = DEFAULT_HISTORY, page_size: int = DEFAULT_PAGE_SIZE,
               limits: JSONLimits = DEFAULT_LIMITS, allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS,
               metrics_history: int = DEFAULT_METRICS_HISTORY, settle_s: float = DEFAULT_SETTLE_S,
               trends_poll_s: float = 1.0) -> Starlette:
    """The dashboard app: from a plan log, a live cluster, or both. Reading the log and the cluster runs
    in worker threads, so a big log being read never holds up ``/api/health`` or the static files.
    With ZooKeeper given, a background thread keeps each topology's trend from the metrics windows
    (started and stopped with the app)."""
    cluster = cluster or ClusterSource()
    trends = Trends(cluster.metrics_store, cluster.topology_info, history=metrics_history, poll_s=trends_poll_s)
    reader = PlanLogReader(plan_log, history=history, limits=limits) if plan_log else None
    views = _Views(plan_log, reader, cluster, reports_dir, trends, refresh_s=refresh_s, page_size=page_size,
                   settle_s=settle_s)
    handle = _Handlers(views, page_size=page_size, history=history)
    routes = [
        Route("/", handle.index),
        Route("/api/snapshot", handle.snapshot),
        Route("/api/plans", handle.plans),
        Route("/api/health", handle.health),
        Route("/topology", handle.topology_html),
        Route("/api/topology", handle.topology),
        Route("/compare", handle.compare_html),
        Route("/api/benchmarks", handle.benchmarks),
        Route("/api/benchmarks/table", handle.benchmark_table),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
    if reports_dir is not None and reports_dir.is_dir():
        routes.append(Mount("/reports", StaticFiles(directory=reports_dir), name="reports"))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if cluster.zookeeper:
            trends.start()
        try:
            yield
        finally:
            trends.stop()

    app = Starlette(routes=routes, middleware=[Middleware(Guard, allowed_hosts=allowed_hosts)], lifespan=lifespan)
    app.state.trends = trends
    return app


@overload
def _int_param(request: Request, name: str, default: int, low: int, high: int | None) -> int: ...


@overload
def _int_param(request: Request, name: str, default: None, low: int, high: int | None) -> int | None: ...


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
