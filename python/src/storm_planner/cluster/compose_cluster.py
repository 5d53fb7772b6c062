"""A running docker-compose cluster: rendered, built, started, waited for, inspected and stopped.

:class:`ComposeCluster` renders a cluster description into ``build/compose/<name>/`` (:mod:`.compose`),
starts and stops it with the compose CLI (``docker compose``, or Debian's ``docker-compose`` 1.29,
which has no ``up --wait``: it waits on the services' health checks itself), and inspects and enters
the containers with the docker CLI (one call for all services: the Python compose CLI takes seconds
per call on a loaded machine). Everything the CLIs print is
captured: the caller decides what reaches a terminal.
"""
from __future__ import annotations

import io
import json
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from storm_planner.progress import Progress, print_progress

from . import compose, images
from .description import ClusterDescription
from .docker_engine import Engine, EngineError, ensure_engine

COMPOSE_ROOT = "build/compose"
HEALTH_TIMEOUT_S = 300.0
# Bounds on what is read back from the containers (plan log, sinks): they are untrusted input.
MAX_READ_BYTES = 64 * 1024 * 1024
LOG_DIR = "/logs"          # where the Storm containers' daemons write their logs (container.LOG_DIR)
DIAGNOSE_LOG_LINES = 40
ERROR_SEARCH_LINES = 2000


class ComposeClusterError(EngineError):
    """The compose cluster did not start, answer or stop; the message says which service and why."""


@dataclass(frozen=True)
class ServiceState:
    service: str
    container: str   # id, "" when it has none
    state: str       # running, exited, ... ("absent" without a container)
    health: str      # healthy, starting, unhealthy, "" without a health check

    @property
    def healthy(self) -> bool:
        return self.state == "running" and self.health in ("healthy", "")


class ComposeCluster:
    def __init__(self, description: ClusterDescription, root: Path, *, engine: Engine | None = None,
                 progress: Progress = print_progress):
        self.description = description
        self.root = root
        self.directory = root / COMPOSE_ROOT / description.name
        self.progress = progress
        self._engine = engine

    # -- the engine and the files -------------------------------------------------------
    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = ensure_engine(self.progress)
        return self._engine

    @property
    def services(self) -> list[str]:
        return list(compose.compose_document(self.description)["services"])

    def render(self) -> Path:
        compose.write(compose.render(self.description), self.directory)
        return self.directory / compose.COMPOSE_FILE

    def build(self) -> dict[str, float]:
        return images.build_images(self.root, self.engine, self.description.storm_version, self.progress)

    # -- lifecycle -------------------------------------------------------------------------
    def up(self, *, build: bool = True, timeout_s: float = HEALTH_TIMEOUT_S) -> list[ServiceState]:
        """Build (cached), start every service, wait until all are healthy."""
        if build:
            self.build()
        self.render()
        self.progress(f"starting the compose cluster {self.description.name!r} ({self.directory}) ...")
        self._compose("up", "-d", "--remove-orphans")
        return self.wait_healthy(timeout_s)

    def down(self) -> None:
        """Stop and remove the containers, the network and the volumes (results, plan log)."""
        if not (self.directory / compose.COMPOSE_FILE).exists():
            self.render()
        self._compose("down", "--volumes", "--remove-orphans", "--timeout", "20")

    def wait_healthy(self, timeout_s: float = HEALTH_TIMEOUT_S,
                     services: list[str] | None = None) -> list[ServiceState]:
        wanted = services or self.services
        started = time.monotonic()
        reported: set[str] = set()
        while True:
            states = self.status(wanted)
            for s in states:
                if s.healthy and s.service not in reported:
                    reported.add(s.service)
                    self.progress(f"  {s.service:<22} healthy ({time.monotonic() - started:.0f}s)")
            if all(s.healthy for s in states):
                return states
            failed = [s for s in states if s.state in ("exited", "dead", "absent") or s.health == "unhealthy"]
            if failed or time.monotonic() - started > timeout_s:
                culprit = (failed or [s for s in states if not s.healthy])[0]
                raise ComposeClusterError(
                    f"service {culprit.service} is {culprit.state}"
                    f"{f' ({culprit.health})' if culprit.health else ''} after {time.monotonic() - started:.0f}s; "
                    f"its last health check and log:\n{self.diagnose(culprit)}")
            time.sleep(2)

    def status(self, services: list[str] | None = None) -> list[ServiceState]:
        """Each service's container state and health: one ``docker ps`` and one ``docker inspect``
        (the compose CLI takes seconds per call on a loaded machine)."""
        containers = self.containers()
        states: dict[str, dict] = {}
        if containers:
            result = self._docker("inspect", "--format", "{{json .State}}", *containers.values(), check=False)
            for service, line in zip(containers, result.stdout.splitlines()):
                try:
                    states[service] = json.loads(line)
                except ValueError:
                    pass
        rows = []
        for service in services or self.services:
            state = states.get(service)
            if state is None:
                rows.append(ServiceState(service, containers.get(service, ""), "absent", ""))
            else:
                rows.append(ServiceState(service, containers[service], str(state.get("Status", "")),
                                         str((state.get("Health") or {}).get("Status", ""))))
        return rows

    def containers(self) -> dict[str, str]:
        """Service name -> container id, from the labels both compose CLIs put on their containers."""
        result = self._docker("ps", "-a", "--no-trunc", "--filter",
                              f"label=com.docker.compose.project={self.description.name}",
                              "--format", '{{.ID}} {{.Label "com.docker.compose.service"}}', check=False)
        pairs = (line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
        return {service: container for container, service in pairs}

    def diagnose(self, state: ServiceState) -> str:
        parts = []
        if state.container:
            exited = self._docker("inspect", "--format", "exit code {{.State.ExitCode}}, OOM-killed {{.State.OOMKilled}}",
                                  state.container, check=False)
            parts.append(exited.stdout.strip())
            health = self._docker("inspect", "--format", "{{json .State.Health}}", state.container, check=False)
            try:
                checks = (json.loads(health.stdout) or {}).get("Log") or []
                if checks:
                    parts.append("health: " + str(checks[-1].get("Output", "")).strip()[-500:])
            except ValueError:
                pass
            logs = self._docker("logs", "--tail", "15", state.container, check=False)
            parts.append((logs.stdout + logs.stderr).strip())
            daemon_log = self.daemon_log(state.service)
            if daemon_log:
                parts.append(f"end of {LOG_DIR}/{_daemon(state.service)}.log:\n{daemon_log}")
        return "\n".join(parts) or "(no container)"

    def daemon_log(self, service: str, lines: int = DIAGNOSE_LOG_LINES) -> str:
        """The end of a Storm daemon's own log in its container, running or exited ("" for other services):
        what a daemon says before it exits (a supervisor's uncaught exception, exit code 20) is there,
        not on its standard output."""
        container, daemon = self.container(service), _daemon(service)
        if not container or daemon is None:
            return ""
        result = subprocess.run([self.engine.docker, "cp", f"{container}:{LOG_DIR}/{daemon}.log", "-"], check=False,
                                capture_output=True)
        if result.returncode != 0:
            return ""
        try:
            with tarfile.open(fileobj=io.BytesIO(result.stdout[:MAX_READ_BYTES])) as archive:
                member = archive.next()
                data = archive.extractfile(member).read() if member is not None and member.isfile() else b""
        except (tarfile.TarError, OSError):
            return ""
        return log_excerpt(data.decode(errors="replace").splitlines(), lines)

    # -- inside the containers -----------------------------------------------------------------
    def container(self, service: str) -> str:
        return self.containers().get(service, "")

    def exec(self, service: str, *command: str, check: bool = True,
             timeout: float | None = None) -> subprocess.CompletedProcess:
        container = self.container(service)
        if not container:
            raise ComposeClusterError(f"service {service} has no container (is the compose cluster up?)")
        return _run([self.engine.docker, "exec", container, *command], check=check, timeout=timeout)

    def read_file(self, service: str, path: str) -> str:
        """A file in a service's container ("" when absent), at most :data:`MAX_READ_BYTES`."""
        result = self.exec(service, "head", "-c", str(MAX_READ_BYTES), path, check=False)
        return result.stdout if result.returncode == 0 else ""

    def file_exists(self, service: str, path: str) -> bool:
        return self.exec(service, "test", "-e", path, check=False).returncode == 0

    def kill(self, service: str) -> None:
        """SIGKILL the service's container (its daemon and every process in it, workers included)."""
        state = self.status([service])[0]
        if state.state != "running":
            raise ComposeClusterError(f"service {service} is {state.state}, not running, so it cannot be killed; "
                                      f"its last health check and log:\n{self.diagnose(state)}")
        self._docker("kill", state.container)

    def start(self, service: str) -> None:
        self._docker("start", self.container(service))

    # -- the CLIs ------------------------------------------------------------------------------
    def _compose(self, *args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
        command = [*self.engine.compose, "-p", self.description.name,
                   "-f", str(self.directory / compose.COMPOSE_FILE), *args]
        return _run(command, check=check, timeout=timeout)

    def _docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return _run([self.engine.docker, *args], check=check)


def log_excerpt(lines: list[str], count: int = DIAGNOSE_LOG_LINES) -> str:
    """What a Storm log says about its end: its first ERROR line among its last :data:`ERROR_SEARCH_LINES`
    and the lines after it (the exception and its cause; a daemon that halts then dumps every thread's
    stack, which says nothing), else its last ``count`` lines."""
    recent = lines[-ERROR_SEARCH_LINES:]
    errors = [i for i, line in enumerate(recent) if " ERROR " in line or line.startswith("ERROR")]
    if errors:
        return "\n".join(recent[errors[0]:errors[0] + count])
    return "\n".join(lines[-count:])


def _daemon(service: str) -> str | None:
    """The Storm daemon a service runs (its log is ``/logs/<daemon>.log``), None for the planner's services."""
    if service.startswith("supervisor-"):
        return "supervisor"
    return service if service in ("zookeeper", "nimbus") else None


def _run(command: list[str], *, check: bool, timeout: float | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise ComposeClusterError(f"{' '.join(command[:6])} ... failed:\n{tail}")
    return result
