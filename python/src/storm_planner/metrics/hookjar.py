"""The metrics hook's classes, and the topology conf that switches the hook on.

``storm-planner submit`` copies the classes of ``storm-planner-metrics.jar``
(built by Maven from ``storm-metrics/``) into the topology jar and adds the
hook to ``topology.auto.task.hooks``: the workers then load it from the
topology jar, nothing is installed on the supervisors. For topologies
submitted otherwise, put the jar in ``<storm.home>/extlib/`` on every
supervisor and set the hook in the topology conf (or in the supervisors'
storm.yaml for every topology).

The hook is left out (and the topology runs without metrics) when the topology
says ``planner.metrics.enabled: false`` or when the jar is not found; the
returned note says which.
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storm_planner.core import settings

HOOK_CLASS = "org.stormplanner.metrics.MetricsTaskHook"
HOOKS_KEY = "topology.auto.task.hooks"
JAR_ENV = "STORM_PLANNER_METRICS_JAR"
JAR_NAME = "storm-planner-metrics.jar"
# The hook's package, and the kit's stream groupings (PartialKeyFieldsGrouping) that ride along with it.
_PACKAGE_DIRS = ("org/stormplanner/metrics/", "org/stormplanner/grouping/")


@dataclass(frozen=True)
class HookBundle:
    entries: tuple[tuple[str, bytes], ...]   # (name in the topology jar, bytes)
    note: str


def default_hook_jar() -> Path | None:
    """``$STORM_PLANNER_METRICS_JAR``, else the Maven build output of this checkout."""
    if os.environ.get(JAR_ENV):
        return Path(os.environ[JAR_ENV]).expanduser()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "storm-metrics").is_dir() and (parent / "python").is_dir():
            return parent / "storm-metrics" / "target" / JAR_NAME
    return None


def hook_entries(jar: Path) -> tuple[tuple[str, bytes], ...]:
    """The hook's class files and the kit's groupings (their packages only: Storm and its shaded deps are on
    the worker classpath)."""
    with zipfile.ZipFile(jar) as archive:
        entries = tuple(
            (name, archive.read(name)) for name in sorted(archive.namelist())
            if name.startswith(_PACKAGE_DIRS) and name.endswith(".class")
        )
    if not any(name == HOOK_CLASS.replace(".", "/") + ".class" for name, _ in entries):
        raise ValueError(f"{jar}: no {HOOK_CLASS} in it")
    return entries


def bundle_metrics_hook(options: dict[str, Any], jar: Path | None = None) -> HookBundle:
    """Switch the hook on in ``options`` (in place) and return the classes to bundle, or say why not."""
    if not settings.METRICS_ENABLED.read(options):
        return HookBundle((), "metrics hook off (planner.metrics.enabled: false)")
    jar = jar or default_hook_jar()
    if jar is None or not Path(jar).is_file():
        return HookBundle((), f"metrics hook jar not found ({jar or 'not in a checkout'}; build it with "
                              f"`mvn package` or set ${JAR_ENV}): the topology runs without metrics")
    entries = hook_entries(Path(jar))
    hooks = options.get(HOOKS_KEY) or []
    hooks = [hooks] if isinstance(hooks, str) else list(hooks)
    if HOOK_CLASS not in hooks:
        hooks.append(HOOK_CLASS)
    options[HOOKS_KEY] = hooks
    return HookBundle(entries, f"metrics hook on ({len(entries)} classes from {Path(jar).name})")
