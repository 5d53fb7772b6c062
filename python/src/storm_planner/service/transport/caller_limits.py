"""What one caller may cost the planner service, and who may call it.

Every limit has a default, a ``storm-planner serve`` option and an environment variable (the option wins):

=========================  ===========  ================================  =====================================
limit                      default      option                            environment
=========================  ===========  ================================  =====================================
frame (one call's bytes)   64 MB        ``--max-frame-mb``                ``STORM_PLANNER_MAX_FRAME_MB``
executors per request      100,000      ``--max-executors``               ``STORM_PLANNER_MAX_EXECUTORS``
connections at once        8            ``--max-connections``             ``STORM_PLANNER_MAX_CONNECTIONS``
read timeout               60 s         ``--read-timeout-secs``           ``STORM_PLANNER_READ_TIMEOUT_SECS``
shared token               none         ``--token-file FILE``             ``STORM_PLANNER_TOKEN``
=========================  ===========  ================================  =====================================

* **Frame.** The wire is framed: a call's 4-byte length is read first and a length over the cap is refused
  (the connection is closed) before anything is allocated for it. The biggest request the scale bench makes
  (52,000 executors on 1,000 nodes, with their current slots and declared resources) is 4.9 MB, and
  100,000 executors are 9.5 MB: the default leaves room six times that. Every string and container of a
  call is read from its frame alone (a call that runs past its frame is refused), so the frame bounds them.
  Frames being read or decoded share one budget of the same size, so connections together cannot buffer
  more than one maximal frame (a frame waits, up to the read timeout, for room). The price: a client that
  announces a large frame and sends it slowly delays other large frames, up to the read timeout.
* **Structs.** Decoding turns bytes into objects: an empty struct is one byte on the wire and a hundred in
  memory. A request may hold at most ``max executors`` executors and four times as many structs of any kind
  (nodes, components, streams, executors, current slots); decoding stops at the first one over, and the
  call is answered with ``BAD_REQUEST`` naming the limit. (A 4 MB frame of empty executors, 476 MB of
  objects when decoded whole, is refused at 20 MB. Counting costs about 0.5 us a struct: some 27 ms of
  a 52,000-executor request's round trip.)
* **Connections.** Each connection is served by one worker of a pool of ``max connections``; a connection
  beyond them is closed at once (logged, counted in ``Health.counters``). A connection that sends nothing
  for the read timeout, or takes longer than it to send one call, is closed, so a stalled client cannot
  hold a worker. Nimbus opens one connection per call, one call at a time.
* **Token.** Every plan call changes what runs: it may start a rebalance through Nimbus
  (``service/planning/rebalance.py``), it spends a running topology's migration budget and resets its re-planning
  clock (``adaptation/replan.py``), and stateful planners keep what it taught them. With a token configured
  the service therefore answers ``plan`` only to calls that carry it (``PlanRequest.token``, the plugin's
  ``planner.service.token``); others get ``BAD_REQUEST``. ``health`` stays open (it changes nothing). Without
  a token every caller that reaches the port is trusted, as before: keep the service on loopback or on a
  network only Nimbus reaches.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.fields import env_number

MB = 1024 * 1024
DEFAULT_MAX_FRAME_MB = 64
DEFAULT_MAX_EXECUTORS = 100_000
STRUCTS_PER_EXECUTOR = 4
DEFAULT_MAX_CONNECTIONS = 8
DEFAULT_READ_TIMEOUT_S = 60.0

TOKEN_ENV = "STORM_PLANNER_TOKEN"
ENV = {
    "max_frame_mb": "STORM_PLANNER_MAX_FRAME_MB",
    "max_executors": "STORM_PLANNER_MAX_EXECUTORS",
    "max_connections": "STORM_PLANNER_MAX_CONNECTIONS",
    "read_timeout_s": "STORM_PLANNER_READ_TIMEOUT_SECS",
}


OPTION = {"max_frame_mb": "--max-frame-mb", "max_executors": "--max-executors",
          "max_connections": "--max-connections", "read_timeout_s": "--read-timeout-secs"}


class LimitError(StormPlannerError, ValueError):
    """A limit setting that cannot be used; the message names the setting."""


@dataclasses.dataclass(frozen=True)
class ServiceLimits:
    max_frame_mb: float = DEFAULT_MAX_FRAME_MB
    max_executors: int = DEFAULT_MAX_EXECUTORS
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S
    token: str | None = None

    def __post_init__(self) -> None:
        for name in ENV:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
                raise LimitError(f"{OPTION[name]} (${ENV[name]}) must be a positive number, not {value!r}")

    @property
    def max_frame_bytes(self) -> int:
        return int(self.max_frame_mb * MB)

    @property
    def max_structs(self) -> int:
        return STRUCTS_PER_EXECUTOR * self.max_executors

    def __repr__(self) -> str:  # never print the token
        return (f"ServiceLimits(max_frame_mb={self.max_frame_mb}, max_executors={self.max_executors}, "
                f"max_connections={self.max_connections}, read_timeout_s={self.read_timeout_s}, "
                f"token={'set' if self.token else 'none'})")


def limits_from(options: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> ServiceLimits:
    """The limits from command-line ``options`` (None: not given), else the environment, else the defaults."""
    values: dict[str, Any] = {}
    for name, variable in ENV.items():
        given = options.get(name)
        if given is None:
            given = env_number(environ, variable, int if name in ("max_executors", "max_connections") else float,
                               ServiceLimits.__dataclass_fields__[name].default, error=LimitError)
        if given is not None:
            values[name] = given
    return ServiceLimits(**values, token=read_token(options.get("token_file"), environ))


def read_token(token_file: str | Path | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The shared token: the first line of ``token_file``, else ``$STORM_PLANNER_TOKEN``, else none."""
    if token_file:
        try:
            token = Path(token_file).read_text().strip()
        except OSError as error:
            raise LimitError(f"--token-file {token_file}: {error.strerror or error}") from None
        if not token:
            raise LimitError(f"--token-file {token_file} is empty")
        return token
    return environ.get(TOKEN_ENV, "").strip() or None


class RequestTooLarge(StormPlannerError):
    """A request over a limit, found while it was decoded; the message names the limit, ``limit`` its
    name in ``Health.counters`` (``requests_refused.<limit>``): ``executors`` or ``structs``."""

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class _ActiveBudget(threading.local):
    budget: DecodeBudget | None = None


class DecodeBudget:
    """Structs one call may create while it is decoded (see :func:`count_request_structs`)."""

    _active = _ActiveBudget()

    def __init__(self, limits: ServiceLimits) -> None:
        self.limits = limits
        self.structs = 0
        self.executors = 0
        self.max_structs = limits.max_structs
        self.max_executors = limits.max_executors

    def over(self) -> None:
        """Raise for the limit just passed."""
        if self.executors > self.max_executors:
            raise RequestTooLarge(f"the request has more than {self.max_executors} executors "
                                  f"(serve --max-executors)", "executors")
        raise RequestTooLarge(f"the request has more than {self.max_structs} structs (nodes, components, "
                              f"streams, executors, slots: {STRUCTS_PER_EXECUTOR} x serve --max-executors)",
                              "structs")

    def __enter__(self) -> DecodeBudget:
        DecodeBudget._active.budget = self
        return self

    def __exit__(self, *exc: object) -> None:
        DecodeBudget._active.budget = None

    @classmethod
    def current(cls) -> DecodeBudget | None:
        return cls._active.budget


def count_request_structs(service: Any, request_structs: tuple[type, ...]) -> None:
    """Make the decoders count every struct of ``request_structs`` they build for ``service``'s calls.

    thriftpy2's decoders (the Cython one and the pure Python one) build a struct by calling the class
    named in its parent's ``thrift_spec``; that class is replaced, in the specs of the request side
    only, by a factory that charges the decoding thread's :class:`DecodeBudget` (none: free) first. The
    classes themselves, and the specs of replies, are untouched.
    """
    factories = {cls: _counting_factory(cls) for cls in request_structs}
    holders = [getattr(service, name) for name in dir(service) if name.endswith("_args")]
    for holder in [*holders, *request_structs]:
        holder.thrift_spec = {fid: _with_factories(spec, factories) for fid, spec in holder.thrift_spec.items()}


def _counting_factory(cls: type) -> Callable[[], Any]:
    """``cls()``, charged to the thread's budget first. Called once per struct decoded (52,000 times for
    a 52,000-executor request): kept to a few attribute operations."""
    active = DecodeBudget._active
    is_executor = cls.__name__ == "Executor"

    def build() -> Any:
        budget = active.budget
        if budget is not None:
            budget.structs += 1
            if is_executor:
                budget.executors += 1
                if budget.executors > budget.max_executors:
                    budget.over()
            if budget.structs > budget.max_structs:
                budget.over()
        return cls()

    build.__name__ = build.__qualname__ = f"counted_{cls.__name__}"
    return build


def _with_factories(spec: Any, factories: Mapping[type, Any]) -> Any:
    if isinstance(spec, tuple):
        return tuple(_with_factories(part, factories) for part in spec)
    if isinstance(spec, type) and spec in factories:
        return factories[spec]
    return spec


class FrameRoom:
    """Bytes of frames being read or decoded, across connections, at most ``capacity``."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._used = 0
        self._changed = threading.Condition()

    def reserve(self, size: int, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for room for ``size`` bytes; False when there was none."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while self._used + size > self.capacity:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            self._used += size
            return True

    def release(self, size: int) -> None:
        with self._changed:
            self._used -= size
            self._changed.notify_all()
