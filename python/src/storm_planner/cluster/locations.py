"""Where things are: the checkout this package runs from, the planner plugin jar, cluster state."""
from __future__ import annotations

import os
from pathlib import Path

PLUGIN_JAR_ENV = "STORM_PLANNER_PLUGIN_JAR"


def repo_root() -> Path | None:
    """The storm-planner checkout this package runs from, if it runs from one."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "storm-scheduler").is_dir() and (parent / "python").is_dir():
            return parent
    return None


def default_plugin_jar() -> Path | None:
    if os.environ.get(PLUGIN_JAR_ENV):
        return Path(os.environ[PLUGIN_JAR_ENV]).expanduser()
    root = repo_root()
    return root / "storm-scheduler" / "target" / "storm-planner-scheduler.jar" if root else None


def default_state_root() -> Path:
    """``$STORM_PLANNER_STATE`` or ``$XDG_STATE_HOME/storm-planner`` (~/.local/state)."""
    if os.environ.get("STORM_PLANNER_STATE"):
        return Path(os.environ["STORM_PLANNER_STATE"]).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME") or "~/.local/state"
    return Path(xdg).expanduser() / "storm-planner"
