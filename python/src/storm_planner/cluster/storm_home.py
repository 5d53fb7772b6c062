"""A Storm home directory assembled from Maven artifacts, built once and cached.

Storm's launcher scripts expect a binary distribution; we only need the parts
the daemons read, and those all come from Maven Central:

``lib/``
    storm-server and its dependencies (storm-client, ZooKeeper, Curator, ...):
    the classpath of ZooKeeper, Nimbus and the supervisors. storm-core is left
    out on purpose: it depends on ``org.clojars.bipinprasad:carbonite``, which
    only Clojars serves, and no daemon we start needs it.
``lib-worker/``
    storm-client and its dependencies: the supervisor puts exactly this
    directory (``<storm.home>/lib-worker/*``) on every worker's classpath.
``lib-webapp/`` and ``public/``
    the UI. ``org.apache.storm:storm-webapp`` is not published to Maven
    Central, so these exist only when the home was copied from a binary
    distribution (``--storm-home``) or the user added them; the launcher then
    starts the UI, otherwise it reports it as not available.
``extlib/``, ``extlib-daemon/``
    empty; Storm adds them to classpaths. The planner plugin jar is *not*
    copied here because this home is shared by every cluster on the machine:
    each cluster copies its plugin jar into its own state directory instead.
``log4j2/cluster.xml``, ``log4j2/worker.xml``
    written by us (they are in no jar); the supervisor passes
    ``<storm.home>/log4j2/worker.xml`` to every worker it launches.
``conf/``
    on the workers' classpath; holds no cluster settings, each daemon gets its
    own file through ``-Dstorm.conf.file``.

The home is built in a scratch directory and renamed into place, so an
interrupted build never leaves a half home behind, and two concurrent builds
do not corrupt each other.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from storm_planner.core.errors import StormPlannerError
from storm_planner.progress import Progress, print_progress

from . import log4j2_configs

DEFAULT_STORM_VERSION = "2.8.3"
# A Maven version of Storm: numbers and dots, then maybe a qualifier (2.8.3, 2.8.3-SNAPSHOT, 3.0.0-M1).
# It becomes a directory name (storm-<version>) and is written into a POM: no slash, no "..", nothing
# XML would read as markup.
STORM_VERSION = re.compile(r"^\d{1,4}(?:\.\d{1,4}){0,3}(?:[.-][A-Za-z0-9][A-Za-z0-9.-]{0,39})?$")
# Bump when the layout or the generated files change, so cached homes rebuild.
LAYOUT_VERSION = 1
MANIFEST = "storm-planner-home.json"

# The main class of each daemon a Storm home runs: the local launcher and the
# containers of the docker-compose cluster start the same classes from the same home.
ZOOKEEPER_MAIN = "org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServerMain"
NIMBUS_MAIN = "org.apache.storm.daemon.nimbus.Nimbus"
SUPERVISOR_MAIN = "org.apache.storm.daemon.supervisor.Supervisor"
UI_MAIN = "org.apache.storm.daemon.ui.UIServer"

class StormHomeError(StormPlannerError, RuntimeError):
    """The Storm home could not be built or is unusable."""


def is_storm_version(text: object) -> bool:
    return isinstance(text, str) and STORM_VERSION.fullmatch(text) is not None and ".." not in text


def check_storm_version(version: str) -> str:
    if not is_storm_version(version):
        raise StormHomeError(f"Storm version {str(version)[:80]!r} is not a version (digits and dots, then maybe "
                             "a qualifier of letters, digits, '.' and '-', e.g. 2.8.3 or 2.8.3-SNAPSHOT)")
    return version


@dataclass(frozen=True)
class StormHome:
    """A ready Storm home directory."""

    path: Path
    version: str

    @property
    def lib(self) -> Path:
        return self.path / "lib"

    @property
    def lib_worker(self) -> Path:
        return self.path / "lib-worker"

    @property
    def lib_webapp(self) -> Path:
        return self.path / "lib-webapp"

    @property
    def log4j2_dir(self) -> Path:
        return self.path / "log4j2"

    def daemon_command(self, name: str, main_class: str, *, conf_file: Path, heap_mb: int,
                       classpath: list[Path], log_dir: Path, java: str = "java",
                       extra: list[str] = ()) -> list[str]:
        """The JVM command line of one Storm daemon (ZooKeeper, Nimbus, a supervisor, the UI) of this home:
        its own conf file, logs under ``log_dir`` as ``<name>.log`` through this home's log4j2 config."""
        return [
            java,
            "-server",
            f"-Xmx{heap_mb}m",
            "-Djava.net.preferIPv4Stack=true",
            f"-Dstorm.home={self.path}",
            f"-Dstorm.conf.file={conf_file}",
            f"-Dstorm.log.dir={log_dir}",
            f"-Dlogfile.name={name}.log",
            f"-Ddaemon.name={name}",
            f"-Dlog4j.configurationFile={self.log4j2_dir / 'cluster.xml'}",
            *extra,
            "-cp",
            os.pathsep.join(str(p) for p in classpath),
            main_class,
        ]

    @property
    def has_ui(self) -> bool:
        """True when the UI can start: storm-webapp jars and the public/ pages."""
        webapp = self.lib_webapp
        return (
            webapp.is_dir()
            and any(p.name.startswith("storm-webapp") for p in webapp.glob("*.jar"))
            and (self.path / "public").is_dir()
        )


def default_cache_dir() -> Path:
    """``$STORM_PLANNER_CACHE`` or ``$XDG_CACHE_HOME/storm-planner`` (~/.cache)."""
    if os.environ.get("STORM_PLANNER_CACHE"):
        return Path(os.environ["STORM_PLANNER_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(xdg).expanduser() / "storm-planner"


def ensure_storm_home(
    version: str = DEFAULT_STORM_VERSION,
    *,
    cache_dir: Path | None = None,
    storm_home: Path | None = None,
    rebuild: bool = False,
    progress: Progress = print_progress,
) -> StormHome:
    """Return a usable Storm home, building it from Maven the first time.

    ``storm_home`` uses an existing directory instead (e.g. an unpacked Apache
    Storm binary distribution); it is validated, never modified.
    """
    check_storm_version(version)  # it becomes a directory name and goes into a POM
    if storm_home is not None:
        home = StormHome(Path(storm_home).expanduser().resolve(), version)
        # A binary distribution has everything; a hand-made home may not:
        # fail now, naming what is missing, rather than when a worker starts.
        _validate(home)
        return home

    target = (cache_dir or default_cache_dir()) / f"storm-{version}"
    if not rebuild and _manifest_ok(target, version):
        return StormHome(target, version)

    started = time.monotonic()
    progress(f"building Storm {version} home in {target} (first time only; takes a few minutes)")
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".storm-{version}-", dir=target.parent))
    try:
        _build(scratch, version, progress)
        _write_manifest(scratch, version)
        if target.exists():
            # Move the old one aside first: rename() cannot replace a non-empty dir.
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
            shutil.rmtree(old, ignore_errors=True)
        try:
            scratch.rename(target)
        except OSError:
            # Another process won the race with an equivalent home: use theirs.
            if not _manifest_ok(target, version):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    progress(f"Storm {version} home ready in {time.monotonic() - started:.0f}s: {target}")
    home = StormHome(target, version)
    _validate(home)
    return home


def _manifest_ok(path: Path, version: str) -> bool:
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return manifest.get("version") == version and manifest.get("layout") == LAYOUT_VERSION


def _write_manifest(path: Path, version: str) -> None:
    manifest = {"version": version, "layout": LAYOUT_VERSION, "built": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (path / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def _validate(home: StormHome) -> None:
    missing = [
        str(home.path / part)
        for part in ("lib", "lib-worker", "log4j2/cluster.xml", "log4j2/worker.xml")
        if not (home.path / part).exists()
    ]
    if missing:
        raise StormHomeError(f"not a usable Storm home, missing: {', '.join(missing)}")
    if not any(home.lib.glob("storm-server-*.jar")):
        raise StormHomeError(f"no storm-server jar in {home.lib}")


def _build(root: Path, version: str, progress: Progress) -> None:
    for name in ("extlib", "extlib-daemon", "conf", "log4j2"):
        (root / name).mkdir()
    # The daemons' classpath; storm-server pulls in storm-client and ZooKeeper.
    _copy_dependencies(root, "lib", [("org.apache.storm", "storm-server", version)], progress)
    # The workers' classpath: storm-client only, as Storm's distribution does.
    _copy_dependencies(root, "lib-worker", [("org.apache.storm", "storm-client", version)], progress)
    (root / "log4j2" / "cluster.xml").write_text(log4j2_configs.CLUSTER_XML)
    (root / "log4j2" / "worker.xml").write_text(log4j2_configs.WORKER_XML)
    (root / "conf" / "storm.yaml").write_text(
        "# Intentionally empty: storm-planner gives every daemon its own file\n"
        "# through -Dstorm.conf.file. This directory is on the workers' classpath.\n"
    )


def _pom(artifacts: list[tuple[str, str, str]]) -> str:
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in artifacts
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by storm-planner to collect Storm's jars; not a build. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.stormplanner.home</groupId>
  <artifactId>storm-home</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def _copy_dependencies(
    root: Path, directory: str, artifacts: list[tuple[str, str, str]], progress: Progress
) -> None:
    """Resolve ``artifacts`` with Maven and copy them and their runtime deps into ``root/directory``."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise StormHomeError("Maven (mvn) is needed to build the Storm home; install it (apt-get install maven)")
    work = root / f".pom-{directory}"
    work.mkdir()
    (work / "pom.xml").write_text(_pom(artifacts))
    out = root / directory
    names = ", ".join(a for _, a, _ in artifacts)
    progress(f"  {directory}/: resolving {names} and dependencies with Maven ...")
    started = time.monotonic()
    command = [
        mvn, "-B", "-q", "-f", str(work / "pom.xml"),
        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies",
        f"-DoutputDirectory={out}", "-DincludeScope=runtime",
    ]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise StormHomeError(f"Maven could not resolve {names} {artifacts[0][2]}:\n{tail}")
    shutil.rmtree(work)
    jars = len(list(out.glob("*.jar")))
    progress(f"  {directory}/: {jars} jars ({time.monotonic() - started:.0f}s)")
