"""Read a streamparse project's topology and describe a cluster, for ``storm-planner parallelism``.

A streamparse project keeps its topologies in ``config.json``'s
``topology_specs`` directory (``topologies/`` by default), each a Python module
with a ``streamparse.Topology`` subclass; its components live in ``src/``. The
topology module is imported the way ``sparse submit`` imports it (with ``src/``
and the topology directory on ``sys.path``, restored afterwards), so the
component graph — names, spout or bolt, parallelism hints, inputs and their
groupings — is exactly what would be submitted.

A cluster is either a file (JSON or YAML: a list of problem-file nodes, or an
object with ``nodes``) or an inline spec ``TYPE:COUNT[:CAPACITY],...``, e.g.
``i5:2:400,i3:4`` — machines named ``<type>-<k>``, capacity 100 by default.
"""
from __future__ import annotations

import importlib.util
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.core.jsonfile import read_json

GROUPING_FIELDS = ("shuffle", "all", "none", "direct", "local_or_shuffle", "custom_object", "custom_serialized")


@dataclass(frozen=True)
class ProjectComponent:
    name: str
    kind: str                           # "spout" or "bolt"
    hint: int | dict[str, int]          # parallelism hint (par), possibly per environment
    inputs: tuple[tuple[str, str, str], ...]  # (source component, stream, grouping)

    def hint_for(self, env: str | None) -> int:
        if isinstance(self.hint, dict):
            if env and env in self.hint:
                return self.hint[env]
            return max(self.hint.values(), default=1)
        return int(self.hint)


@dataclass(frozen=True)
class ProjectTopology:
    name: str
    path: Path
    components: tuple[ProjectComponent, ...]

    def problem_topology(self, env: str | None = None, start_from_hints: bool = False) -> dict[str, Any]:
        """The ``topology`` object of a problem file (one executor each unless ``start_from_hints``)."""
        return {
            "id": self.name,
            "components": [
                {"id": c.name, "type": c.kind, "executors": c.hint_for(env) if start_from_hints else 1}
                for c in self.components
            ],
            "streams": [
                {"from": source, "to": c.name, "grouping": grouping,
                 **({"stream": stream} if stream != "default" else {})}
                for c in self.components
                for source, stream, grouping in c.inputs
            ],
        }


def topology_files(project: Path) -> list[Path]:
    config = project / "config.json"
    specs = "topologies"
    if config.exists():
        data = read_json(config)
        specs = data.get("topology_specs", specs) if isinstance(data, dict) else specs
    directory = project / specs
    files = sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))
    if not files:
        raise ProblemError(f"no topology definitions in {directory}")
    return files


def load_project_topology(project: str | Path, name: str | None = None) -> ProjectTopology:
    """The topology ``name`` (a file stem in the topology specs directory; optional if only one)."""
    project = Path(project).resolve()
    if not project.is_dir():
        raise ProblemError(f"{project} is not a directory")
    files = topology_files(project)
    if name is None:
        if len(files) > 1:
            names = ", ".join(p.stem for p in files)
            raise ProblemError(f"several topologies in the project ({names}): choose one with --topology")
        path = files[0]
    else:
        matches = [p for p in files if p.stem == name]
        if not matches:
            raise ProblemError(f"no topology {name!r} in the project ({', '.join(p.stem for p in files)})")
        path = matches[0]
    topology_class = _import_topology(project, path)
    return ProjectTopology(name=path.stem, path=path, components=tuple(_components(topology_class)))


@contextmanager
def _import_path(project: Path, *entries: Path) -> Iterator[None]:
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    sys.path[:0] = [str(e) for e in entries]
    try:
        yield
    finally:
        sys.path[:] = saved_path
        # forget the project's own modules (spouts, bolts: generic names), keep libraries
        for name in set(sys.modules) - saved_modules:
            origin = getattr(sys.modules[name], "__file__", None) or ""
            if origin.startswith(str(project)):
                del sys.modules[name]


def _import_topology(project: Path, path: Path) -> type:
    try:
        from streamparse import Topology
    except ImportError:  # pragma: no cover - streamparse is a dependency
        raise ProblemError("reading a streamparse project needs streamparse installed") from None
    with _import_path(project, project / "src", path.parent):
        spec = importlib.util.spec_from_file_location(f"_storm_planner_topology_{uuid.uuid4().hex}", path)
        if spec is None or spec.loader is None:
            raise ProblemError(f"{path}: not importable as a Python module")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise ProblemError(f"cannot import {path}: {type(error).__name__}: {error}") from None
    found = [v for v in vars(module).values()
             if isinstance(v, type) and issubclass(v, Topology) and v is not Topology]
    if not found:
        raise ProblemError(f"{path} defines no streamparse Topology subclass")
    return found[0]


def _components(topology_class: Any) -> Iterator[ProjectComponent]:   # a streamparse Topology class
    spouts = set(getattr(topology_class, "thrift_spouts", {}))
    for spec in topology_class.specs:
        inputs = tuple(
            (stream_id.componentId, stream_id.streamId, _grouping_name(grouping))
            for stream_id, grouping in (spec.inputs or {}).items()
        )
        yield ProjectComponent(
            name=spec.name,
            kind="spout" if spec.name in spouts else "bolt",
            hint=spec.par,
            inputs=inputs,
        )


def _grouping_name(grouping: Any) -> str:
    fields = getattr(grouping, "fields", None)
    if fields is not None:
        return "fields" if fields else "global"  # streamparse's GLOBAL is an empty fields grouping
    for name in GROUPING_FIELDS:
        if getattr(grouping, name, None) is not None:
            return "custom" if name.startswith("custom") else name
    return "shuffle"


# -- clusters -------------------------------------------------------------------------------

def parse_cluster(spec: str) -> list[dict[str, Any]]:
    """Problem-file nodes from a cluster file or an inline ``TYPE:COUNT[:CAPACITY],...`` spec."""
    path = Path(spec)
    if spec and path.is_file():
        return _cluster_file(path)
    nodes = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        fields = part.split(":")
        if len(fields) not in (2, 3) or not fields[0]:
            raise ProblemError(f"--cluster {part!r}: expected TYPE:COUNT[:CAPACITY] (or a file)")
        machine_type = fields[0]
        try:
            count = int(fields[1])
            capacity = float(fields[2]) if len(fields) == 3 else 100.0
        except ValueError:
            raise ProblemError(f"--cluster {part!r}: COUNT must be a whole number, CAPACITY a number") from None
        if count < 1 or capacity <= 0:
            raise ProblemError(f"--cluster {part!r}: COUNT >= 1 and CAPACITY > 0")
        nodes += [{"id": f"{machine_type}-{k}", "capacity": capacity, "machine_type": machine_type,
                   "slots": [6700]} for k in range(count)]
    if not nodes:
        raise ProblemError("--cluster: no machines")
    return nodes


def _cluster_file(path: Path) -> list[dict[str, Any]]:
    if path.suffix not in (".yaml", ".yml"):
        data = read_json(path)  # bounded (core.limits); its errors name the file
    else:
        import yaml

        try:
            data = yaml.safe_load(path.read_text())
        except Exception as error:
            raise ProblemError(f"{path}: cannot parse: {error}") from None
    nodes = data.get("nodes") if isinstance(data, dict) else data
    if not isinstance(nodes, list) or not nodes:
        raise ProblemError(f"{path}: expected a list of nodes or an object with 'nodes'")
    return nodes
