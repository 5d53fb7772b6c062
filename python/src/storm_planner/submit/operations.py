"""Submit, kill, rebalance and list topologies over Nimbus Thrift: no Leiningen, no ssh.

Submission reuses streamparse's own pieces: the topology class's Thrift
structure (built by streamparse's DSL), ``streamparse.cli.submit._upload_jar``
(chunked upload) and ``_submit_topology`` (serializer, name check,
``submitTopologyWithOpts``). What we change is what streamparse would do with
Leiningen, ssh and virtualenvs:

- the jar is built with :mod:`zipfile` (:mod:`.jar`);
- every shell component runs an *absolute* ``streamparse_run`` (the one next
  to the Python that has the project's dependencies), because the worker's
  PATH is the supervisor's, not a virtualenv's;
- Nimbus is reached directly (``use_ssh_for_nimbus: false``).

Topology options merge like streamparse's: config.json env ``options``, then
the Topology class's ``config``, then the command line.

A rebalance (Storm's ``storm rebalance``, which a Storm home built from Maven
artifacts lacks) changes a running topology's executors per component, up to
each component's task count: :func:`rebalance_topology` reads the task counts
from the task ranges of the executors Nimbus reports and refuses what Storm
would silently cap or reject.
"""
from __future__ import annotations

import contextlib
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import yaml

from storm_planner.core.errors import StormPlannerError
from storm_planner.progress import Progress, print_progress
from storm_planner.submit.nimbus import nimbus_client, storm_thrift

from .jar import build_topology_jar
from .project import Project, load_project


class SubmitError(StormPlannerError, RuntimeError):
    """Submission, kill or listing failed; the message says why."""


class TopologyGone(SubmitError):
    """Nimbus runs no topology of that name (killed, or never submitted)."""


@dataclass(frozen=True)
class TopologyRow:
    name: str
    id: str
    status: str
    workers: int
    executors: int
    tasks: int
    uptime_secs: int


def _streamparse_submit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources / paramiko deprecations
        from streamparse.cli import submit
    return submit


def parse_nimbus(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep:
        return address, 6627
    if not host or not port.isdigit():
        raise SubmitError(f"expected Nimbus as HOST[:PORT], got {address!r}")
    return host, int(port)


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` strings to a dict; values are read as YAML (2 → int, true → bool)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SubmitError(f"--option expects KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            options[key.strip()] = value
    return options


def streamparse_run_for(python: str | None) -> Path:
    """The ``streamparse_run`` beside ``python`` (default: this interpreter's environment)."""
    if python:
        candidate = Path(python).expanduser().absolute().parent / "streamparse_run"
    else:
        candidate = Path(sys.prefix) / "bin" / "streamparse_run"
    if not candidate.is_file():
        raise SubmitError(
            f"{candidate} not found: the Python that runs the components needs streamparse installed "
            f"(pass --python PATH of an environment that has it)"
        )
    return candidate


def set_shell_command(topology_class: Any, command: str) -> int:
    """Point every streamparse shell component at ``command``; returns how many changed."""
    changed = 0
    for component in chain(topology_class.thrift_bolts.values(), topology_class.thrift_spouts.values()):
        obj = getattr(component, "bolt_object", None) or getattr(component, "spout_object", None)
        shell = getattr(obj, "shell", None)
        if shell is not None and "streamparse_run" in (shell.execution_command or ""):
            shell.execution_command = command
            changed += 1
    return changed


# Storm's multilang serializer turns JSON arrays and objects in Python tuples into these
# (shaded json-smart) classes. Kryo refuses unregistered classes, so a Python component
# emitting a list or dict fails as soon as its tuple crosses workers; registering them
# lets Kryo use its collection and map serializers.
MULTILANG_KRYO_CLASSES = [
    "org.apache.storm.shade.net.minidev.json.JSONArray",
    "org.apache.storm.shade.net.minidev.json.JSONObject",
]


def topology_options(project: Project, name: str, cli_options: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {"topology.kryo.register": list(MULTILANG_KRYO_CLASSES)}
    options.update(project.env_config.get("options") or {})
    options.update(getattr(project.topology_class, "config", None) or {})
    options.update(cli_options)
    options["topology.original_name"] = project.topology_name
    if options.get("topology.debug"):
        options.setdefault("pystorm.log.level", "debug")
    return options


def submit_project(
    project_dir: str | Path,
    *,
    nimbus: str = "127.0.0.1:6627",
    name: str | None = None,
    topology: str | None = None,
    options: dict[str, Any] | None = None,
    python: str | None = None,
    wait_active: float | None = None,
    timeout_ms: int = 30000,
    progress: Progress = print_progress,
) -> TopologyRow | None:
    """Build, upload and submit a streamparse project; optionally wait until it runs.

    ``topology`` picks the file in ``topologies/`` (default: the only one);
    ``name`` is the name in Storm (default: the topology file's name).
    With ``wait_active`` seconds, returns the topology once it is ACTIVE with
    workers assigned (raises :class:`SubmitError` on timeout).
    """
    project = load_project(project_dir, topology)
    storm_name = name or project.topology_name
    runner = streamparse_run_for(python)
    changed = set_shell_command(project.topology_class, str(runner))
    merged = topology_options(project, storm_name, options or {})
    restructured = apply_structure_options(project, merged)
    if restructured:
        progress(f"structure from options: {restructured}")
    from storm_planner.metrics.hookjar import bundle_metrics_hook

    metrics_hook = bundle_metrics_hook(merged)  # switches topology.auto.task.hooks on when it can
    host, port = parse_nimbus(nimbus)
    submit = _streamparse_submit()
    env_config = dict(project.env_config, nimbus=f"{host}:{port}", use_ssh_for_nimbus=False,
                      use_virtualenv=False)
    with tempfile.TemporaryDirectory(prefix="storm-planner-jar-") as scratch:
        jar = build_topology_jar(project.src_dir, Path(scratch) / f"{storm_name}.jar",
                                 extra_entries=metrics_hook.entries)
        progress(f"built {jar.name} ({jar.stat().st_size} bytes; {changed} shell components run {runner}; "
                 f"{metrics_hook.note})")
        try:
            with nimbus_client(host, port, timeout_ms) as client:
                if any(t.name == storm_name for t in client.getClusterInfo().topologies or []):
                    raise SubmitError(f"a topology named {storm_name!r} is already running; kill it first")
                # streamparse prints its upload progress with print(): standard output carries a command's
                # answer alone, so whatever it prints goes to standard error.
                with contextlib.redirect_stdout(sys.stderr):
                    remote = submit._upload_jar(client, str(jar))
                    submit._submit_topology(
                        storm_name, project.topology_class, remote, project.config, env_config, client,
                        options=merged, active=True,
                    )
        except SubmitError:
            raise
        except Exception as error:  # noqa: BLE001 - Thrift/socket errors become one clear line
            raise SubmitError(f"submitting {storm_name!r} to Nimbus {host}:{port} failed: "
                              f"{type(error).__name__}: {_thrift_message(error)}") from error
    progress(f"submitted {storm_name!r} to {host}:{port}")
    if wait_active:
        return wait_until_running(f"{host}:{port}", storm_name, wait_active, progress=progress)
    return None


def apply_structure_options(project: Project, options: dict[str, Any]) -> str:
    """Parallelism, task counts and groupings are part of the topology's structure, not its conf:
    apply ``<prefix>.parallelism.<component>`` / ``<prefix>.tasks.<component>`` /
    ``<prefix>.grouping.<component>`` options to the topology class before it is serialised.
    Returns a summary of what changed ('' if nothing)."""
    from storm_planner.streaming.conf import ConfError
    from storm_planner.streaming.topology import configure_topology

    try:
        changed = configure_topology(project.topology_class, options)
    except ConfError as error:
        raise SubmitError(str(error)) from None
    parts = [f"{c} x{n}" for c, n in sorted(changed["parallelism"].items())]
    parts += [f"{c} tasks={n}" for c, n in sorted(changed["tasks"].items())]
    parts += [f"{c} {g}" for c, g in sorted(changed["grouping"].items())]
    parts += [f"{c} cpu={v:g}%" for c, v in sorted(changed["cpu"].items())]
    return ", ".join(parts)


def wait_until_running(nimbus: str, name: str, timeout_s: float, *, progress: Progress = print_progress) -> TopologyRow:
    """Wait until ``name`` is ACTIVE and Nimbus has assigned its workers."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        row = next((t for t in list_topologies(nimbus) if t.name == name), None)
        if row is not None and row.status == "ACTIVE" and row.workers > 0:
            progress(f"{name} is ACTIVE ({row.id}: {row.workers} workers, {row.executors} executors)")
            return row
        last = row
        time.sleep(1)
    raise SubmitError(f"{name!r} not running after {timeout_s:.0f}s (last seen: {last})")


def kill_topology(nimbus: str, name: str, *, wait_secs: int | None = None, wait_gone: float = 60.0,
                  progress: Progress = print_progress) -> None:
    """Kill ``name``; ``wait_secs`` is Storm's deactivation wait; then wait until it is gone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from streamparse.cli.kill import _kill_topology
    host, port = parse_nimbus(nimbus)
    try:
        with nimbus_client(host, port) as client:
            _kill_topology(name, client, wait=wait_secs)
    except Exception as error:  # noqa: BLE001
        if type(error).__name__ == "NotAliveException":
            raise SubmitError(f"no topology named {name!r} is running on {host}:{port}") from None
        raise SubmitError(f"killing {name!r} failed: {type(error).__name__}: {_thrift_message(error)}") from error
    progress(f"killing {name!r} (Storm waits {wait_secs if wait_secs is not None else 'topology.message.timeout.secs'} s)")
    if wait_gone:
        deadline = time.monotonic() + wait_gone + (wait_secs or 30)
        while time.monotonic() < deadline:
            if not any(t.name == name for t in list_topologies(nimbus)):
                progress(f"{name!r} is gone")
                return
            time.sleep(1)
        raise SubmitError(f"{name!r} still listed by Nimbus after the kill")


@dataclass(frozen=True)
class RunningComponents:
    """What Nimbus runs of one topology: executors and tasks per component (its getTopologyInfo)."""

    name: str
    id: str
    status: str
    executors: dict[str, int]
    tasks: dict[str, int]


@dataclass(frozen=True)
class RebalanceRequest:
    """A rebalance Nimbus accepted: executors per changed component before and after, and — when
    it was waited for — whether Nimbus runs them now and how many requests that took."""

    topology: RunningComponents          # as it was before the (first) request
    executors: dict[str, int]
    wait_secs: int | None
    applied: bool | None = None          # None: not waited for
    requests: int = 1

    def describe(self) -> str:
        changes = ", ".join(f"{c} {self.topology.executors[c]}->{n}" for c, n in self.executors.items())
        if self.applied:
            again = f" ({self.requests} requests: Storm lost the first)" if self.requests > 1 else ""
            return f"rebalance of {self.topology.name!r} applied: {changes}{again}"
        wait = f"{self.wait_secs} s" if self.wait_secs is not None else "topology.message.timeout.secs"
        return f"rebalance of {self.topology.name!r} requested: {changes} (Storm applies it after {wait})"


def running_components(client: Any, name: str, where: str = "Nimbus") -> RunningComponents:
    """Executors and tasks per component of the running topology ``name``, from the task ranges
    of its executors in ``getTopologyInfo`` (system executors with negative task ids left out)."""
    summary = next((t for t in client.getClusterInfo().topologies or [] if t.name == name), None)
    if summary is None:
        raise SubmitError(f"no topology named {name!r} is running on {where}")
    info = client.getTopologyInfo(summary.id)
    executors: dict[str, int] = {}
    tasks: dict[str, int] = {}
    for executor in info.executors or []:
        first, last = executor.executor_info.task_start, executor.executor_info.task_end
        if first < 0:
            continue
        executors[executor.component_id] = executors.get(executor.component_id, 0) + 1
        tasks[executor.component_id] = tasks.get(executor.component_id, 0) + last - first + 1
    return RunningComponents(name, summary.id, str(info.status or summary.status), executors, tasks)


def check_rebalance(topology: RunningComponents, executors: Mapping[str, int]) -> None:
    """Refuse, before Nimbus does something else, what a rebalance cannot do: unknown components,
    fewer than one executor, more executors than the component has tasks, a rebalance under way."""
    if not executors:
        raise SubmitError("nothing to rebalance: give at least one -e component=N")
    if topology.status == "REBALANCING":
        raise SubmitError(f"{topology.name!r} is being rebalanced already; try again once it is ACTIVE")
    if not topology.executors:
        raise SubmitError(f"{topology.name!r} has no executors assigned yet; try again once it runs")
    for component, count in executors.items():
        if component not in topology.tasks:
            raise SubmitError(f"{topology.name!r} has no component {component!r} "
                              f"(components: {', '.join(sorted(topology.tasks))})")
        if count < 1:
            raise SubmitError(f"{component}={count}: a component needs at least one executor")
        if count > topology.tasks[component]:
            raise SubmitError(
                f"{component}={count}: {topology.name!r} has {topology.tasks[component]} task(s) of "
                f"{component!r}, and a rebalance cannot give it more executors than tasks (submit with "
                f"<prefix>.tasks.{component}=N to leave room; docs/rebalance.md)")


def rebalance_topology(nimbus: str, name: str, executors: Mapping[str, int], *, wait_secs: int | None = None,
                       wait_applied: float | None = None, wait_assigned: float = 0.0, requests: int = 2,
                       timeout_ms: int = 10000, progress: Progress = print_progress) -> RebalanceRequest:
    """Ask Nimbus to run ``executors`` (component -> count) for ``name`` after checking that it can.

    ``wait_secs`` is how long Storm deactivates the topology before it redistributes
    the tasks (default: the topology's ``topology.message.timeout.secs``). Without
    ``wait_applied``, returns once Nimbus accepted the request. With it, waits up to
    that many seconds per request until the rebalance is over and checks that Nimbus
    runs the new executors: Storm 2.8 can lose a rebalance when a client reads the
    topology (``getClusterInfo``/``getTopologyInfo``, e.g. the UI) at the moment
    Nimbus redistributes the tasks — it caches the old executors again — so the
    request is repeated, up to ``requests`` times, before this gives up.

    ``wait_assigned`` is how long to wait, before the first request, for Nimbus to show the
    topology's executors: a topology planned in its first scheduling round has none until Nimbus
    has written that round's assignment, and a request before then is refused.
    """
    if wait_secs is not None and wait_secs < 0:
        raise SubmitError(f"--wait-secs {wait_secs}: seconds to wait cannot be negative")
    host, port = parse_nimbus(nimbus)
    if wait_assigned > 0:
        _wait_running(host, port, name, wait_assigned, timeout_ms)
    first = None
    for attempt in range(1, max(1, requests) + 1):
        before = _request_rebalance(host, port, name, executors, wait_secs, timeout_ms)
        first = first or before
        if wait_applied is None:
            return RebalanceRequest(first, dict(executors), wait_secs)
        after = _wait_rebalanced(host, port, name, wait_secs, wait_applied, timeout_ms)
        if all(after.executors.get(c) == n for c, n in executors.items()):
            return RebalanceRequest(first, dict(executors), wait_secs, applied=True, requests=attempt)
        running = ", ".join(f"{c}={after.executors.get(c)}" for c in executors)
        if attempt < requests:
            progress(f"rebalance of {name!r} is over but Nimbus still runs {running}; asking again")
    raise SubmitError(f"Nimbus did not apply the rebalance of {name!r} after {attempt} request(s): "
                      f"it runs {running}")


def _request_rebalance(host: str, port: int, name: str, executors: Mapping[str, int], wait_secs: int | None,
                       timeout_ms: int) -> RunningComponents:
    """One checked rebalance request; returns the topology as it was before it."""
    thrift = storm_thrift()
    try:
        with nimbus_client(host, port, timeout_ms) as client:
            topology = running_components(client, name, f"{host}:{port}")
            check_rebalance(topology, executors)
            options = thrift.RebalanceOptions(num_executors=dict(executors))
            if wait_secs is not None:
                options.wait_secs = int(wait_secs)
            client.rebalance(name, options)
    except SubmitError:
        raise
    except Exception as error:  # noqa: BLE001 - Thrift/socket errors become one clear line
        raise _nimbus_error(error, f"rebalancing {name!r}", name, host, port) from None
    return topology


def _wait_rebalanced(host: str, port: int, name: str, wait_secs: int | None, timeout_s: float,
                     timeout_ms: int) -> RunningComponents:
    """The topology once its rebalance is over (no longer REBALANCING): Nimbus has assigned the
    executors it redistributed by then. Reading it while Nimbus redistributes is what loses a
    rebalance, so the known wait is slept through first."""
    time.sleep(min(timeout_s, (wait_secs or 0) + 1))
    return _wait_running(host, port, name, timeout_s, timeout_ms)


def _wait_running(host: str, port: int, name: str, timeout_s: float, timeout_ms: int) -> RunningComponents:
    """The topology once Nimbus shows it running: executors assigned and no rebalance under way."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with nimbus_client(host, port, timeout_ms) as client:
                topology = running_components(client, name, f"{host}:{port}")
        except SubmitError:
            raise
        except Exception as error:  # noqa: BLE001
            raise _nimbus_error(error, f"reading {name!r}", name, host, port) from None
        if topology.status != "REBALANCING" and topology.executors:
            return topology
        if time.monotonic() > deadline:
            state = topology.status if topology.executors else f"{topology.status} without executors"
            raise SubmitError(f"{name!r} is still {state} after {timeout_s:.0f} s")
        time.sleep(1)


def set_active(nimbus: str, name: str, active: bool, *, timeout_ms: int = 10000) -> None:
    """Nimbus' ``activate`` (``active``) or ``deactivate`` of the topology ``name``: its spouts are called
    again, or no more (they still take acks and fails). Activating an active topology, or deactivating an
    inactive one, changes nothing. :class:`TopologyGone` when Nimbus runs no such topology,
    :class:`SubmitError` when it cannot be reached or refuses."""
    host, port = parse_nimbus(nimbus)
    doing = "activating" if active else "deactivating"
    try:
        with nimbus_client(host, port, timeout_ms) as client:
            (client.activate if active else client.deactivate)(name)
    except Exception as error:  # noqa: BLE001 - Thrift/socket errors become one clear line
        raise _nimbus_error(error, f"{doing} {name!r}", name, host, port) from None


def _nimbus_error(error: Exception, doing: str, name: str, host: str, port: int) -> SubmitError:
    if type(error).__name__ == "NotAliveException":
        return TopologyGone(f"no topology named {name!r} is running on {host}:{port}")
    if isinstance(error, OSError) or type(error).__name__ == "TTransportException":
        return SubmitError(f"cannot reach Nimbus at {host}:{port}: {error}")
    return SubmitError(f"{doing} on Nimbus {host}:{port} failed: {type(error).__name__}: {_thrift_message(error)}")


def list_topologies(nimbus: str) -> list[TopologyRow]:
    host, port = parse_nimbus(nimbus)
    try:
        with nimbus_client(host, port) as client:
            summaries = client.getClusterInfo().topologies or []
    except Exception as error:  # noqa: BLE001
        raise SubmitError(f"cannot reach Nimbus at {host}:{port}: {type(error).__name__}: {error}") from error
    return sorted(
        (TopologyRow(t.name, t.id, t.status, t.num_workers, t.num_executors, t.num_tasks, t.uptime_secs)
         for t in summaries),
        key=lambda r: r.name,
    )


def _thrift_message(error: Exception) -> str:
    # Storm's Thrift exceptions (InvalidTopologyException, ...) carry `msg`.
    return getattr(error, "msg", None) or str(error) or repr(error)
