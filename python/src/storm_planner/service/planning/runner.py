"""How the service runs a planner: in this process, or in the worker process it can stop.

:class:`PlannerRunner` is the ``runner(problem, algorithm)`` of the service's plans and re-plans. It is built
first and handed to everything that plans (the handler, the
:class:`~storm_planner.adaptation.replan.Replanner`, a
:class:`~storm_planner.adaptation.state.StatefulRunner`), so a solver planner is stoppable whichever of them
runs it.

**The worker process**, for the planners the service must be able to stop. The service plans in threads,
and Python cannot stop a thread: a planner that overruns its share of the deadline is abandoned, but it keeps
computing. For the solver planners (``milp``, ``albic``: Python model building that grows with executors ×
nodes, outside the solver's own time limit) that meant minutes of a core taken from every later request.
Planners that set ``Planner.isolated`` therefore run in :class:`PlannerProcess`, a long-lived child process the
handler kills when the topology's share of the deadline passes (:meth:`PlannerProcess.stop`); the next such
plan starts a fresh one.

The child is forked from a ``forkserver`` that has imported the planners
already, so a restart costs milliseconds, not an interpreter start. Problems
and plans cross the pipe pickled (``MappingProxyType`` fields as dicts).
"""
from __future__ import annotations

import copyreg
import logging
import multiprocessing
import threading
from multiprocessing.connection import Connection
from types import MappingProxyType
from typing import Any

from storm_planner.core.errors import PlanningError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners import run

log = logging.getLogger("storm_planner.service")


class PlannerRunner:
    """``planners.run``, in the worker process for isolated planners (``Planner.isolated``)."""

    def __init__(self, isolate: bool = True, worker: PlannerProcess | None = None) -> None:
        self.isolate = isolate  # False: every planner runs in this process (tests that spy on planners)
        self.worker = worker or PlannerProcess()

    def __call__(self, problem: Problem, algorithm: str, **params: Any) -> Plan:
        if self.isolates(algorithm):
            return self.worker.run(problem, algorithm, **params)
        return run(problem, algorithm, **params)

    def isolates(self, algorithm: str) -> bool:
        return self.isolate and is_isolated(algorithm)

    def abandon(self, algorithm: str) -> None:
        """A plan of ``algorithm`` overran its time: stop it if it runs in the worker (frees the core for
        the next topologies at once; a plan in this process cannot be stopped, its answer is ignored)."""
        if self.isolates(algorithm):
            self.worker.stop()

    def close(self) -> None:
        self.worker.close()


# -- the worker process --------------------------------------------------------------------------------------
def _read_only(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


# Problems and plans hold read-only mappings; they cross the pipe as plain dicts (the type itself
# cannot be pickled by name: builtins has no ``mappingproxy``).
copyreg.pickle(MappingProxyType, lambda proxy: (_read_only, (dict(proxy),)))

_PRELOAD = ["storm_planner.planners", "storm_planner.service.planning.runner"]


class PlannerStopped(PlanningError):
    """The planner's worker process was stopped (the deadline passed) or died."""

    kind = "TIMEOUT"


class PlannerProcess:
    """One child process that plans one problem at a time; :meth:`stop` kills it mid-plan."""

    def __init__(self, imports: tuple[str, ...] = ()) -> None:
        self.imports = tuple(imports)      # modules the child imports first (planners registered elsewhere)
        self._lock = threading.Lock()      # one plan at a time
        self._state = threading.Lock()     # guards the process handle between run() and stop()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._connection: Connection | None = None
        self.stops = 0  # how often a plan under way was killed

    def run(self, problem: Problem, algorithm: str, **params: Any) -> Plan:
        """``planners.run(problem, algorithm, **params)`` in the child; its errors are raised here."""
        with self._lock:
            connection = self._ensure_started()
            try:
                connection.send((problem, algorithm, params))
                outcome, value = connection.recv()
            except (EOFError, OSError, BrokenPipeError):
                self._forget()
                raise PlannerStopped(f"{algorithm}: its worker process was stopped before it answered") from None
            if outcome == "error":
                raise value
            plan: Plan = value  # the worker answers ("plan", Plan) or ("error", exception)
            return plan

    def start(self) -> None:
        """Start the child now (it is otherwise started by the first plan, which then waits for it)."""
        with self._lock:
            self._ensure_started()

    def stop(self) -> None:
        """Kill the child (a plan under way ends with :class:`PlannerStopped`)."""
        with self._state:
            process = self._process
        if process is not None and process.is_alive():
            log.info("stopping planner worker process %s", process.pid)
            process.kill()
            self.stops += 1
            process.join(5)

    def close(self) -> None:
        self.stop()
        self._forget()

    @property
    def pid(self) -> int | None:
        with self._state:
            return self._process.pid if self._process is not None and self._process.is_alive() else None

    def _ensure_started(self) -> Connection:
        with self._state:
            if self._process is not None and self._process.is_alive() and self._connection is not None:
                return self._connection
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, self.imports), name="storm-planner-worker",
                                      daemon=True)
            process.start()
            child.close()
            self._process, self._connection = process, parent
            return parent

    def _forget(self) -> None:
        with self._state:
            if self._connection is not None:
                self._connection.close()
            self._process, self._connection = None, None


def _serve(connection: Connection, imports: tuple[str, ...] = ()) -> None:
    """The child: plan what arrives until the pipe closes."""
    import importlib

    from storm_planner.planners import run

    for module in imports:
        importlib.import_module(module)

    while True:
        try:
            problem, algorithm, params = connection.recv()
        except (EOFError, OSError):
            return
        try:
            connection.send(("plan", run(problem, algorithm, **params)))
        except Exception as error:  # sent back whole: the handler turns it into the topology's error
            connection.send(("error", _portable(error)))


def _portable(error: Exception) -> Exception:
    """The error itself when it survives pickling, else one that keeps its kind and message."""
    import pickle

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        if isinstance(error, PlanningError):
            portable = PlanningError(str(error))
            portable.kind = error.kind
            return portable
        return RuntimeError(f"{type(error).__name__}: {error}")


def is_isolated(algorithm: str) -> bool:
    """Whether the named planner runs in the worker process (unknown names: no, the run refuses them)."""
    from storm_planner.planners.base import planner_class

    try:
        return bool(getattr(planner_class(algorithm), "isolated", False))
    except Exception:
        return False

