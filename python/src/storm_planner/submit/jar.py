"""The topology jar, built with zipfile instead of Leiningen.

A topology made only of Python shell components needs no Java classes of its
own: Storm puts the jar on the worker's classpath and the supervisor extracts
its ``resources/`` directory next to it; shell components run with that
directory as their working directory, which is where ``streamparse_run``
imports them from. So the jar is a manifest plus ``resources/<src/...>``.

Entries are sorted and time-stamped alike, so the same sources give the same
bytes (handy for caching and for comparing uploads).
"""
from __future__ import annotations

import zipfile
from pathlib import Path

_SKIP_DIRS = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".tox", ".venv"}
_SKIP_SUFFIXES = {".pyc", ".pyo"}
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_MANIFEST = "Manifest-Version: 1.0\r\nCreated-By: storm-planner\r\n\r\n"


def jar_entries(src_dir: Path) -> list[tuple[str, Path]]:
    """(name in jar, file) for every file the jar carries, sorted by name."""
    src_dir = Path(src_dir)
    entries = []
    for path in src_dir.rglob("*"):
        relative = path.relative_to(src_dir)
        if any(part in _SKIP_DIRS for part in relative.parts) or not path.is_file():
            continue
        if path.suffix in _SKIP_SUFFIXES:
            continue
        entries.append(("resources/" + relative.as_posix(), path))
    return sorted(entries)


def build_topology_jar(src_dir: Path, jar_path: Path, extra_entries=()) -> Path:
    """Write ``jar_path`` with ``src_dir``'s files under ``resources/``.

    ``extra_entries``: (name, bytes) pairs added as they are, e.g. the metrics
    hook's classes (``storm_planner.metrics.hookjar``), which workers then load
    from the topology jar.
    """
    src_dir = Path(src_dir)
    if not src_dir.is_dir():
        raise FileNotFoundError(f"{src_dir}: no such directory (a streamparse project keeps its code in src/)")
    jar_path = Path(jar_path)
    jar_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar_path, "w", compression=zipfile.ZIP_DEFLATED) as jar:
        _add(jar, "META-INF/MANIFEST.MF", _MANIFEST.encode())
        for name, path in jar_entries(src_dir):
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            # Keep the executable bit (shell scripts a component may run).
            info.external_attr = (path.stat().st_mode & 0o777 | 0o100000) << 16
            jar.writestr(info, path.read_bytes())
        for name, data in sorted(extra_entries):
            _add(jar, name, data)
    return jar_path


def _add(jar: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16
    jar.writestr(info, data)
