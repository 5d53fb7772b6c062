"""One Storm daemon in its container: the JVM command line the local launcher would run, then exec.

``python -m storm_planner.cluster.container zookeeper|nimbus|supervisor`` is what the Storm image's
entrypoint runs (as the ``storm`` user, after seeding a supervisor's id). The command comes from
:meth:`StormHome.daemon_command` with the main classes of :mod:`.storm_home`, the same as
``storm-planner cluster up`` uses; only the paths are the container's:

- the Storm home is ``$STORM_HOME`` (``/opt/storm``), assembled from Maven Central like the launcher's;
- the daemon's storm.yaml is mounted at ``/conf/storm.yaml`` (ZooKeeper's zoo.cfg at ``/conf/zoo.cfg``);
- logs go to ``/logs``, the heap size is ``$STORM_PLANNER_HEAP_MB`` (the description's, set by compose).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from storm_planner.core.errors import StormPlannerError

from .storm_home import (
    MANIFEST,
    NIMBUS_MAIN,
    SUPERVISOR_MAIN,
    ZOOKEEPER_MAIN,
    StormHome,
)

CONF_DIR = Path("/conf")
LOG_DIR = Path("/logs")
DEFAULT_HOME = Path("/opt/storm")
HEAP_ENV = "STORM_PLANNER_HEAP_MB"
DEFAULT_HEAP_MB = 256
MAX_HEAP_MB = 64 * 1024
DAEMONS = ("zookeeper", "nimbus", "supervisor")


class ContainerError(StormPlannerError, ValueError):
    """The container's environment cannot start the daemon; the message names what is wrong."""


def storm_home(environ: dict[str, str] | None = None) -> StormHome:
    """The image's Storm home, with the version its manifest records."""
    environ = os.environ if environ is None else environ
    path = Path(environ.get("STORM_HOME") or DEFAULT_HOME)
    try:
        version = json.loads((path / MANIFEST).read_text())["version"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ContainerError(f"{path} is not a Storm home built by storm-planner ({error})") from None
    return StormHome(path, str(version))


def heap_mb(environ: dict[str, str]) -> int:
    text = environ.get(HEAP_ENV, "").strip()
    if not text:
        return DEFAULT_HEAP_MB
    if not text.isdigit() or not 16 <= int(text) <= MAX_HEAP_MB:
        raise ContainerError(f"${HEAP_ENV}={text[:40]!r} is not a heap size in MB (16 to {MAX_HEAP_MB})")
    return int(text)


def daemon_command(daemon: str, home: StormHome, *, heap: int, conf_dir: Path = CONF_DIR,
                   log_dir: Path = LOG_DIR) -> list[str]:
    """The daemon's JVM command line, as :meth:`LocalCluster._start_all` builds it."""
    if daemon == "zookeeper":
        # The launcher gives ZooKeeper a Storm conf only for its logging; the home's empty one does.
        return home.daemon_command("zookeeper", ZOOKEEPER_MAIN, conf_file=home.path / "conf" / "storm.yaml",
                                   heap_mb=heap, classpath=[home.lib / "*"], log_dir=log_dir) \
            + [str(conf_dir / "zoo.cfg")]
    main_class = {"nimbus": NIMBUS_MAIN, "supervisor": SUPERVISOR_MAIN}.get(daemon)
    if main_class is None:
        raise ContainerError(f"unknown daemon {daemon[:40]!r}; one of {', '.join(DAEMONS)}")
    classpath = [home.lib / "*", home.path / "extlib-daemon" / "*", conf_dir]
    return home.daemon_command(daemon, main_class, conf_file=conf_dir / "storm.yaml", heap_mb=heap,
                               classpath=classpath, log_dir=log_dir)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: python -m storm_planner.cluster.container {'|'.join(DAEMONS)}", file=sys.stderr)
        return 2
    try:
        command = daemon_command(argv[0], storm_home(), heap=heap_mb(dict(os.environ)))
    except ContainerError as error:
        print(f"storm-planner container: {error}", file=sys.stderr)
        return 2
    os.chdir(LOG_DIR if LOG_DIR.is_dir() else "/")
    os.execvp(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
