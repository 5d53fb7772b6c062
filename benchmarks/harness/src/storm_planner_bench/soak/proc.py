"""What /proc says of a process: its state, resident memory, open files, process group and children.

Reads only; a process that is gone (or goes while it is read) reads as None or empty, never as an error.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Stat:
    pid: int
    state: str       # R, S, D, T (stopped), Z (zombie), ...
    ppid: int
    pgrp: int


def stat(pid: int, proc: Path = PROC) -> Stat | None:
    try:
        text = (proc / str(int(pid)) / "stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text.rsplit(")", 1)[-1].split()
    try:
        return Stat(int(pid), fields[0], int(fields[1]), int(fields[2]))
    except (IndexError, ValueError):
        return None


def alive(pid: int, proc: Path = PROC) -> bool:
    """Running or stopped, not a zombie."""
    found = stat(pid, proc)
    return found is not None and found.state != "Z"


def rss_kb(pid: int, proc: Path = PROC) -> int | None:
    """Resident memory (``VmRSS`` of ``/proc/<pid>/status``) in kB."""
    try:
        for line in (proc / str(int(pid)) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def open_files(pid: int, proc: Path = PROC) -> int | None:
    """Entries of ``/proc/<pid>/fd``: files, sockets and pipes the process holds open."""
    try:
        return len(os.listdir(proc / str(int(pid)) / "fd"))
    except (OSError, ValueError):
        return None


def processes(proc: Path = PROC) -> list[Stat]:
    """Every live process."""
    found = []
    for entry in proc.iterdir():
        if entry.name.isdigit():
            one = stat(int(entry.name), proc)
            if one is not None and one.state != "Z":
                found.append(one)
    return found


def group_members(pgid: int, proc: Path = PROC) -> list[int]:
    """Live processes of process group ``pgid`` (a daemon's: the local cluster starts each in its own)."""
    return sorted(p.pid for p in processes(proc) if p.pgrp == pgid)


def descendants(pid: int, proc: Path = PROC) -> list[int]:
    """Live processes below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for p in processes(proc):
        children.setdefault(p.ppid, []).append(p.pid)
    found, todo = [], list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, ()))
    return sorted(found)


def command(pid: int, proc: Path = PROC) -> str:
    try:
        return (proc / str(int(pid)) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, ValueError):
        return ""
