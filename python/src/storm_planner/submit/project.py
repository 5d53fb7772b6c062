"""A streamparse project directory, loaded without changing the working directory.

The layout streamparse defines: ``config.json`` (``topology_specs``, default
``topologies/``; ``envs``), ``topologies/<name>.py`` holding one
``streamparse.Topology`` subclass, and ``src/`` with the Python packages the
components live in. streamparse's own loader reads ``config.json`` from the
current directory and caches it in a global; this one takes a path, so one
process can submit several projects.
"""
from __future__ import annotations

import importlib.util
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.jsonfile import JsonFileError, read_json


class ProjectError(StormPlannerError, ValueError):
    """The directory is not a usable streamparse project; the message says why."""


@dataclass
class Project:
    directory: Path
    config: dict
    env_config: dict
    topology_name: str
    topology_file: Path
    topology_class: Any = field(repr=False)

    @property
    def src_dir(self) -> Path:
        return self.directory / "src"


def load_project(directory: str | Path, name: str | None = None, env: str | None = None) -> Project:
    """Read ``config.json``, pick the topology (``name`` or the only one) and import it."""
    directory = Path(directory).resolve()
    if not directory.is_dir():
        raise ProjectError(f"{directory}: no such directory")
    config_path = directory / "config.json"
    if config_path.is_file():
        try:
            config = read_json(config_path)  # bounded (core.limits)
        except JsonFileError as error:
            raise ProjectError(str(error)) from None
        if not isinstance(config, dict):
            raise ProjectError(f"{config_path}: a JSON object, got {type(config).__name__}")
    else:
        config = {}
    specs = directory / str(config.get("topology_specs", "topologies")).rstrip("/")
    if not specs.is_dir():
        raise ProjectError(f"{directory}: no topology directory {specs.name}/ (config.json topology_specs)")
    if not (directory / "src").is_dir():
        raise ProjectError(f"{directory}: no src/ directory with the components' Python packages")
    if name is None:
        files = sorted(p for p in specs.glob("*.py") if p.name != "__init__.py")
        if len(files) != 1:
            found = ", ".join(p.stem for p in files) or "none"
            raise ProjectError(f"{specs}: expected exactly one topology file, found {found}; pass --name")
        topology_file = files[0]
    else:
        topology_file = specs / f"{name}.py"
        if not topology_file.is_file():
            raise ProjectError(f"{topology_file}: no such topology file")
    envs = config.get("envs") or {}
    if env is not None and env not in envs:
        raise ProjectError(f"{config_path}: no env {env!r} (have: {', '.join(envs) or 'none'})")
    env_config = dict(envs[env] if env else (next(iter(envs.values())) if len(envs) == 1 else {}))
    topology_class = _import_topology(topology_file, directory / "src")
    return Project(directory, config, env_config, topology_file.stem, topology_file, topology_class)


def _import_topology(topology_file: Path, src: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # streamparse's pkg_resources warning
        from streamparse.dsl.topology import Topology, TopologyType

    # Component modules are imported by their package names from src/; forget
    # any same-named package a previous project loaded into this process.
    for package in (p.name for p in src.iterdir() if p.is_dir() or p.suffix == ".py"):
        package = package.removesuffix(".py")
        for loaded in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[loaded]
    sys.path.insert(0, str(src))
    try:
        module_name = f"_storm_planner_topology_{topology_file.stem}_{abs(hash(str(topology_file)))}"
        spec = importlib.util.spec_from_file_location(module_name, topology_file)
        if spec is None or spec.loader is None:
            raise ProjectError(f"{topology_file}: not importable as a Python module")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise ProjectError(f"{topology_file}: import failed: {type(error).__name__}: {error}") from error
    finally:
        sys.path.remove(str(src))
    classes = [
        value for value in vars(module).values()
        if isinstance(value, TopologyType) and value is not Topology
    ]
    if len(classes) != 1:
        raise ProjectError(f"{topology_file}: expected one streamparse Topology subclass, found {len(classes)}")
    return classes[0]
