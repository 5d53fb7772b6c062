"""The docker-compose cluster's images, built from what these machines reach: Debian, Maven Central, PyPI.

:func:`build_images` stages a small build context (``build/docker-context/``: only what
``docker/Dockerfile`` copies) and builds its two targets:

- ``storm``: ZooKeeper, Nimbus with the plugin, the supervisors. Its Storm home is the one the local
  launcher runs, assembled from Maven Central by :func:`storm_home.ensure_storm_home` (the same code and
  the same cache, ``~/.cache/storm-planner/storm-<version>``); ZooKeeper is Storm's shaded server in it.
- ``planner``: the planner service, the dashboard, and the benchmark topologies with the metrics hook.

Both install the Python environment from ``python/requirements.lock`` in a build stage that trusts the
host's CA bundle (:func:`host_ca_bundle`); the runtime stages copy its venv and nothing else of it.
Staging hard-links files where it can, and Docker's layer cache keys on their contents, so an
unchanged checkout rebuilds nothing.
"""
from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import time
from pathlib import Path

from storm_planner.progress import Progress, print_progress

from .docker_engine import Engine, EngineError
from .storm_home import ensure_storm_home

DOCKERFILE = "docker/Dockerfile"
CONTEXT_DIR = "build/docker-context"
PLANNER_IMAGE = "storm-planner-planner:latest"
IMAGE_LABEL = "org.stormplanner.image"  # on both images (docker/Dockerfile): what a rebuild may prune
STORM_IMAGE_NAME = "storm-planner-storm"
PLUGIN_JAR = "storm-scheduler/target/storm-planner-scheduler.jar"
METRICS_JAR = "storm-metrics/target/storm-planner-metrics.jar"
DOCKER_FILES = ("docker/storm/entrypoint.sh", "docker/storm/seed_supervisor_id.py", "docker/storm/healthcheck.py")
# Never staged: caches and build leftovers in the copied source trees, and what running daemons write into
# the shared Storm home (Nimbus' RocksDB metrics store, storm.metricstore.rocksdb.location = storm_rocks).
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache", "target", "storm_rocks")


def storm_image(storm_version: str) -> str:
    return f"{STORM_IMAGE_NAME}:{storm_version}"


def ensure_jars(root: Path, progress: Progress = print_progress) -> None:
    """The plugin and metrics-hook jars, built with Maven when missing (``make plugin`` does the same)."""
    if all((root / jar).is_file() for jar in (PLUGIN_JAR, METRICS_JAR)):
        return
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EngineError("Maven (mvn) builds the plugin and metrics-hook jars; install it (apt-get install maven)")
    progress("building the plugin and metrics-hook jars (mvn -DskipTests package) ...")
    result = subprocess.run([mvn, "-B", "-q", "-DskipTests", "package"], cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise EngineError(f"mvn package failed:\n{tail}")


def stage_context(root: Path, storm_version: str, progress: Progress = print_progress, *,
                  context: Path | None = None) -> Path:
    """Write the build context (default ``root/build/docker-context``): the Storm home, the jars, the
    Python package and lock, the topologies, the container scripts, the host's CA bundle."""
    home = ensure_storm_home(storm_version, progress=progress)
    ensure_jars(root, progress)
    context = context or root / CONTEXT_DIR
    if context.exists():
        shutil.rmtree(context)
    context.mkdir(parents=True)
    _copy_tree(home.path, context / "storm-home")
    (context / "jars").mkdir()
    for jar in (PLUGIN_JAR, METRICS_JAR):
        _link_or_copy(root / jar, context / "jars" / Path(jar).name)
    python = context / "python"
    python.mkdir()
    for name in ("pyproject.toml", "requirements.lock"):
        _link_or_copy(root / "python" / name, python / name)
    (context / "dependencies.txt").write_text(runtime_dependencies(root / "python" / "pyproject.toml"))
    _copy_tree(root / "python" / "src", python / "src")
    _copy_tree(root / "topologies", context / "topologies")
    shutil.copyfile(host_ca_bundle(), context / "host-ca.crt")
    for relative in (DOCKERFILE, *DOCKER_FILES):
        (context / relative).parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(root / relative, context / relative)
    return context


def build_images(root: Path, engine: Engine, storm_version: str,
                 progress: Progress = print_progress) -> dict[str, float]:
    """Build both images (cached layers are reused); returns each target's build seconds."""
    context = stage_context(root, storm_version, progress)
    seconds = {}
    for target, tag in (("planner", PLANNER_IMAGE), ("storm", storm_image(storm_version))):
        progress(f"building {tag} (docker/Dockerfile, target {target}; FROM {engine.base_image}) ...")
        started = time.monotonic()
        command = [engine.docker, "build", "-q", "-f", str(context / DOCKERFILE), "--target", target,
                   "--build-arg", f"BASE_IMAGE={engine.base_image}", "-t", tag, str(context)]
        # BuildKit builds only the stages a target needs; Debian's docker 20.10 has it built in.
        result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, DOCKER_BUILDKIT="1"))
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-25:])
            raise EngineError(f"building {tag} failed:\n{tail}")
        seconds[target] = time.monotonic() - started
        progress(f"  {tag} ready ({seconds[target]:.0f}s)")
    # The images these builds replaced, now untagged: only ours (the label), never anyone else's.
    subprocess.run([engine.docker, "image", "prune", "-f", "--filter", f"label={IMAGE_LABEL}"],
                   capture_output=True, text=True)
    return seconds


def runtime_dependencies(pyproject: Path) -> str:
    """The package's runtime requirements (pyproject's ``dependencies``), one a line: the dependency layer
    keys on these and the lock only, so an edit elsewhere in pyproject.toml reinstalls nothing."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    requirements = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return "".join(f"{requirement}\n" for requirement in requirements)


def host_ca_bundle() -> Path:
    """The CA bundle this host's TLS clients trust: pip in the image's build stage uses it, so a build
    works wherever a ``pip install`` on the host does (behind a proxy that re-signs TLS, too)."""
    for candidate in (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"),
                      ssl.get_default_verify_paths().cafile):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise EngineError("no CA bundle found for the image build (set SSL_CERT_FILE, or apt-get install "
                      "ca-certificates)")


def _copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, ignore=IGNORED, copy_function=_link_or_copy, symlinks=False)


def _link_or_copy(source, target) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
