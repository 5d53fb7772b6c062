"""The plugin and the metrics hook built for a Storm line other than the default one.

Maven builds both for any line: ``mvn -Dstorm.version=V -Dstorm.build.dir=target/storm-V package``
(storm-scheduler/README.md). The default line's jars (pom.xml's ``storm.version``, the same as
:data:`~.storm_home.DEFAULT_STORM_VERSION`) stay in each module's ``target/``; another line's go to
``target/storm-V/`` beside them. ``cluster up --storm-version V`` runs Nimbus with the plugin built for
V, and builds it (skipping the tests) when this checkout has none yet.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from storm_planner.metrics import hookjar
from storm_planner.progress import Progress, print_progress

from .errors import ClusterError
from .locations import PLUGIN_JAR_ENV, default_plugin_jar, repo_root
from .storm_home import DEFAULT_STORM_VERSION, check_storm_version

PLUGIN_MODULE, PLUGIN_JAR = "storm-scheduler", "storm-planner-scheduler.jar"
METRICS_MODULE, METRICS_JAR = "storm-metrics", hookjar.JAR_NAME


def build_dir(version: str) -> str:
    """The modules' Maven build directory for a Storm line, relative to each module."""
    return "target" if version == DEFAULT_STORM_VERSION else f"target/storm-{check_storm_version(version)}"


def line_jar(root: Path, module: str, jar: str, version: str) -> Path:
    return root / module / build_dir(version) / jar


def plugin_jar_for(version: str, progress: Progress = print_progress) -> Path | None:
    """The plugin jar for Nimbus on Storm ``version``: ``$STORM_PLANNER_PLUGIN_JAR`` or the default line's
    as ever (:func:`~.locations.default_plugin_jar`), else this checkout's build for that line, built now
    when missing. ``None`` outside a checkout."""
    root = repo_root()
    if version == DEFAULT_STORM_VERSION or os.environ.get(PLUGIN_JAR_ENV) or root is None:
        return default_plugin_jar()
    jar = line_jar(root, PLUGIN_MODULE, PLUGIN_JAR, version)
    if not jar.is_file():
        build_line(root, version, progress)
    progress(f"Storm {version}: Nimbus gets the plugin built for it ({jar}); submit topologies with "
             f"{hookjar.JAR_ENV}={line_jar(root, METRICS_MODULE, METRICS_JAR, version)} for the metrics hook "
             "built for it")
    return jar


def build_line(root: Path, version: str, progress: Progress = print_progress) -> None:
    """Build the plugin and the metrics hook for Storm ``version`` in ``target/storm-<version>/``."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ClusterError(f"Maven (mvn) is needed to build the plugin for Storm {version} (apt-get install maven)")
    command = [mvn, "-B", "-q", "-f", str(root / "pom.xml"), "-pl", f"{PLUGIN_MODULE},{METRICS_MODULE}",
               f"-Dstorm.version={version}", f"-Dstorm.build.dir={build_dir(version)}", "-DskipTests", "package"]
    progress(f"building the plugin and the metrics hook for Storm {version} (first time only): "
             f"{' '.join(command[1:])}")
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise ClusterError(f"Maven could not build the plugin for Storm {version}:\n{tail}")
    progress(f"  built in {time.monotonic() - started:.0f}s: "
             f"{line_jar(root, PLUGIN_MODULE, PLUGIN_JAR, version).parent}")
