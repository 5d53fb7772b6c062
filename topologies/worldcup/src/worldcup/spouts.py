"""The ``requests`` spout: replays a World Cup requests feed, one tuple per request."""
from __future__ import annotations

from storm_planner.streaming import ReplaySpout
from worldcup.paths import shipped_requests


class RequestSpout(ReplaySpout):
    """Emits ``(object_id, size, url)`` per request, paced by its ``timestamp``."""

    conf_prefix = "worldcup"
    outputs = ["object_id", "size", "url"]

    def default_feed(self):
        return str(shipped_requests())

    def tuples_for(self, request):
        return [([int(request["object_id"]), int(request.get("size") or 0), request.get("url") or ""], None)]

    def event_time(self, request):
        return float(request["timestamp"]) if request.get("timestamp") is not None else None
