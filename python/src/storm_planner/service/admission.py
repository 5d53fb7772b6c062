"""Whether the service takes a plan call at all: its token, its shape, its size.

A refused call gets ``PlannerError(BAD_REQUEST)`` naming why; no topology of it is planned. The limits
and the token are :mod:`storm_planner.service.limits`'.
"""
from __future__ import annotations

import hmac
import logging
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.service.checks import check_request
from storm_planner.service.contract import planner_thrift as T
from storm_planner.service.counters import ServiceCounters
from storm_planner.service.limits import ServiceLimits

log = logging.getLogger("storm_planner.service")


def admit(request: Any, limits: ServiceLimits, counters: ServiceCounters) -> None:
    """Refuse (``PlannerError``) a call without the service's token, malformed, or over its executor limit
    (calls decoded from the wire were counted already; this covers calls made in process)."""
    token = limits.token
    if token and not hmac.compare_digest(_bytes(request.token), token.encode()):
        counters.note("token_refused", log, "refused a plan call (request %r): %s token", request.request_id,
                      "wrong" if request.token else "no")
        raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST,
                             message="this planner service requires its token: PlanRequest.token (the plugin's "
                                     "planner.service.token) is " + ("wrong" if request.token else "missing"))
    try:
        check_request(request)
    except ProblemError as error:
        raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST, message=str(error)) from None
    executors = sum(len(spec.executors) for spec in request.topologies)
    if executors > limits.max_executors:
        counters.add("requests_refused")
        raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST,
                             message=f"the request has {executors} executors, more than "
                                     f"{limits.max_executors} (serve --max-executors)")


def _bytes(value: Any) -> bytes:
    """A token as bytes for a constant-time comparison (a token that is not UTF-8 arrives as bytes)."""
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()
