"""The Docker engine under the docker-compose cluster: installed, started and given a base image when missing.

What this machine class offers, and what this module does with it:

- Debian's ``docker.io`` package: installed with apt-get when ``dockerd`` is missing (as root), and
  ``docker-compose`` (1.29) when no compose CLI is there.
- ``dockerd`` with no service manager: started in the background when the socket does not answer, with its
  default bridge and address pools inside 198.18.0.0/15 (RFC 2544's benchmarking block, which the local
  cluster's emulated network also uses, from its bottom up; Docker's pools are at its top). No bridge or
  container may take 10/8, 172.16/12 or 192.168/16: those are the networks people's machines live on.
- No image registry, perhaps: the base image ``debian:bookworm-slim`` is pulled where a registry serves
  it and otherwise built from the host's apt sources with ``mmdebstrap`` and imported.

Starting ``dockerd`` turns on bridge netfilter and sets iptables' ``FORWARD`` policy to ``DROP``. The
local cluster's emulated network keeps forwarding anyway: its own chain accepts what its bridge
switches (``netfilter.py``), and Docker only inserts its chains above it, it never removes it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from storm_planner.core.errors import StormPlannerError
from storm_planner.progress import Progress, print_progress

# Docker's share of 198.18.0.0/15: the default bridge, the pool its networks come from, and the compose
# network's own subnet (fixed, so several hosts' descriptions can name it).
BRIDGE_ADDRESS = "198.19.255.1/24"
ADDRESS_POOL = "198.19.0.0/17"
ADDRESS_POOL_PREFIX = 24
COMPOSE_SUBNET = "198.19.254.0/24"

DOCKERD_LOG = Path("/var/log/storm-planner-dockerd.log")
DOCKER_SOCKET = Path("/var/run/docker.sock")
DOCKERD_PID_FILE = Path("/var/run/docker.pid")
START_TIMEOUT_S = 60.0

# The base every image starts from; built locally under LOCAL_BASE where no registry serves it.
REGISTRY_BASE = "debian:bookworm-slim"
LOCAL_BASE = "storm-planner-base:bookworm"
PULL_TIMEOUT_S = 120.0
# Like debian:bookworm-slim: no manuals, documentation or translations (and none in later apt-get
# installs either: mmdebstrap keeps these dpkg options in the image).
SLIM_DPKG_OPTIONS = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/lintian/*",
)


class EngineError(StormPlannerError, RuntimeError):
    """Docker could not be installed, started or given its base image; the message says why and what to do."""


@dataclass(frozen=True)
class Engine:
    docker: str           # the docker CLI
    compose: list[str]    # `docker compose` (v2) or `docker-compose` (1.x)
    base_image: str       # the image every Dockerfile stage starts FROM


def dockerd_arguments() -> list[str]:
    """The flags ``dockerd`` is started with: its bridge and address pools inside 198.18.0.0/15."""
    return ["--bip", BRIDGE_ADDRESS,
            "--default-address-pool", f"base={ADDRESS_POOL},size={ADDRESS_POOL_PREFIX}"]


def ensure_engine(progress: Progress = print_progress, *, install: bool = True) -> Engine:
    """Docker ready to build and run: installed, ``dockerd`` answering, a base image present."""
    docker = _docker_cli(progress, install=install)
    if not _answers(docker):
        _start_dockerd(docker, progress)
    return Engine(docker=docker, compose=_compose_cli(docker, progress, install=install),
                  base_image=ensure_base_image(docker, progress))


def _docker_cli(progress: Progress, *, install: bool) -> str:
    if shutil.which("dockerd") is None:
        if not install:
            raise EngineError("Docker is not installed (apt-get install docker.io)")
        _apt_install(["docker.io"], progress, why="the Docker engine")
    # Debian's CLI first: it matches its dockerd (another docker CLI on PATH may need plugins it lacks).
    for candidate in ("/usr/bin/docker", shutil.which("docker")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise EngineError("docker.io is installed but no docker CLI is on PATH")


def _compose_cli(docker: str, progress: Progress, *, install: bool) -> list[str]:
    if _run([docker, "compose", "version"], check=False).returncode == 0:
        return [docker, "compose"]
    if shutil.which("docker-compose") is None and install:
        _apt_install(["docker-compose"], progress, why="the compose CLI")
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    raise EngineError("neither `docker compose` nor `docker-compose` is available "
                      "(apt-get install --no-install-recommends docker-compose)")


def _apt_install(packages: list[str], progress: Progress, *, why: str) -> None:
    if os.geteuid() != 0:
        raise EngineError(f"{why} is missing: run `sudo apt-get install {' '.join(packages)}` "
                          f"(or this command as root, which installs it)")
    progress(f"installing {' '.join(packages)} from Debian ({why}) ...")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                     "-o", "DPkg::Lock::Timeout=300", *packages]):
        result = _run(command, check=False, env=env)
        if result.returncode != 0:
            raise EngineError(f"{' '.join(command)} failed:\n{_tail(result)}")


def _answers(docker: str) -> bool:
    return _run([docker, "info", "--format", "{{.ServerVersion}}"], check=False, timeout=20).returncode == 0


def _start_dockerd(docker: str, progress: Progress) -> None:
    if os.geteuid() != 0:
        raise EngineError("dockerd is not running and only root can start it "
                          f"(sudo dockerd {' '.join(dockerd_arguments())})")
    stale = remove_stale_pid_file()
    if stale:
        progress(stale)
    progress(f"starting dockerd (log {DOCKERD_LOG}; bridge {BRIDGE_ADDRESS}, pool {ADDRESS_POOL}) ...")
    DOCKERD_LOG.parent.mkdir(parents=True, exist_ok=True)
    with open(DOCKERD_LOG, "ab") as log:
        # Its own session: it outlives this command, as a service would.
        daemon = subprocess.Popen(["dockerd", *dockerd_arguments()], stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=log, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _answers(docker):
        if daemon.poll() is not None and not _answers(docker):   # not another dockerd that came up meanwhile
            raise EngineError(f"dockerd exited with status {daemon.returncode} as it started: "
                              f"{_last_line(DOCKERD_LOG)} (in {DOCKERD_LOG})")
        if time.monotonic() > deadline:
            raise EngineError(f"dockerd did not answer within {START_TIMEOUT_S:.0f}s; "
                              f"see the end of {DOCKERD_LOG}")
        time.sleep(1)


def remove_stale_pid_file(pid_file: Path | None = None) -> str:
    """Remove ``pid_file`` (dockerd's) when the process it names is no dockerd (one that died and left it;
    its pid may since belong to another process, and dockerd then refuses to start). Returns what it did,
    or ""."""
    pid_file = pid_file or DOCKERD_PID_FILE
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return ""
    try:
        command = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        command = ""
    if command == "dockerd":
        return ""
    pid_file.unlink(missing_ok=True)
    held = f"now {command}" if command else "not running"
    return f"removed {pid_file}: it named pid {pid} ({held}), left by a dockerd that is gone"


def _last_line(path: Path, max_bytes: int = 4096) -> str:
    try:
        with open(path, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - max_bytes))
            lines = log.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return "its log cannot be read"
    return lines[-1][:300] if lines else "its log is empty"


# -- the base image -------------------------------------------------------------------
def ensure_base_image(docker: str, progress: Progress = print_progress) -> str:
    """``debian:bookworm-slim`` when present or pullable, else :data:`LOCAL_BASE` (built once)."""
    for image in (REGISTRY_BASE, LOCAL_BASE):
        if _has_image(docker, image):
            return image
    progress(f"pulling {REGISTRY_BASE} ...")
    try:
        pulled = _run([docker, "pull", "-q", REGISTRY_BASE], check=False, timeout=PULL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pulled = None
    if pulled is not None and pulled.returncode == 0:
        return REGISTRY_BASE
    progress(f"no registry serves {REGISTRY_BASE}: building {LOCAL_BASE} from this host's apt sources "
             "with mmdebstrap (once; a minute or two)")
    build_local_base(docker, progress)
    return LOCAL_BASE


def build_local_base(docker: str, progress: Progress = print_progress) -> None:
    """``mmdebstrap --variant=minbase bookworm - | docker import - storm-planner-base:bookworm``."""
    if shutil.which("mmdebstrap") is None:
        _apt_install(["mmdebstrap"], progress, why="the tool that builds the base image")
    started = time.monotonic()
    dpkg = [f"--dpkgopt={option}" for option in SLIM_DPKG_OPTIONS]
    bootstrap = subprocess.Popen(["mmdebstrap", "--quiet", "--variant=minbase", *dpkg, "bookworm", "-"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    imported = subprocess.run([docker, "import", "-", LOCAL_BASE], stdin=bootstrap.stdout,
                              capture_output=True, text=True)
    bootstrap.stdout.close()
    errors = bootstrap.stderr.read().decode(errors="replace")
    if bootstrap.wait() != 0 or imported.returncode != 0:
        raise EngineError(f"building {LOCAL_BASE} failed:\n{errors[-2000:]}{imported.stderr[-2000:]}")
    progress(f"{LOCAL_BASE} built in {time.monotonic() - started:.0f}s")


def _has_image(docker: str, image: str) -> bool:
    return _run([docker, "image", "inspect", image], check=False).returncode == 0


def _run(command: list[str], *, check: bool = True, timeout: float | None = None,
         env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    if check and result.returncode != 0:
        raise EngineError(f"{' '.join(command)} failed:\n{_tail(result)}")
    return result


def _tail(result: subprocess.CompletedProcess, lines: int = 15) -> str:
    return "\n".join(((result.stdout or "") + (result.stderr or "")).strip().splitlines()[-lines:])
