"""Which process a pid names, from ``/proc``: before a process joins a cgroup, it must be the one meant.

A pid is only a number: its process may have exited and the number been given to another program (pid
reuse), and a pid read from text (a worker's log, a file) may name any process on the host. A process is
therefore named by its pid *and its start time* (``/proc/<pid>/stat`` field 22, clock ticks after boot,
:class:`ProcessId`), and :func:`refusal` says why a process may not be put under a quota: it is pid 1 or
gone, it is not the process seen when it was found (its pid was reused), it started before the process
whose tree it should belong to, or it is not a descendant of that process.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
# /proc/<pid>/stat after the ")" closing the command name: field 3 (state) is index 0.
_STATE, _PARENT, _START = 0, 1, 19
# Parent links followed at most (pid_max is at most 2**22, a chain is far shorter in practice).
MAX_TREE_DEPTH = 4096


@dataclass(frozen=True, order=True)
class ProcessId:
    """One process: its pid and its start time (ticks after boot), which pid reuse cannot repeat."""

    pid: int
    start: int

    @classmethod
    def of(cls, pid: int) -> ProcessId | None:
        """The live (not zombie) process with this pid now, or None."""
        fields = _stat(pid)
        if fields is None or fields[_STATE] == "Z":
            return None
        return cls(pid, int(fields[_START]))

    def alive(self) -> bool:
        """Still running, and still this process (its pid not reused since)."""
        return ProcessId.of(self.pid) == self


def _stat(pid: int) -> list[str] | None:
    try:
        text = (PROC / str(int(pid)) / "stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields if len(fields) > _START else None


def parent_of(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[_PARENT]) if fields else None


def descends_from(pid: int, ancestor: int) -> bool:
    """``pid`` is a child, grandchild, ... of ``ancestor`` (a process never descends from itself)."""
    current = parent_of(pid)
    for _ in range(MAX_TREE_DEPTH):
        if current is None or current <= 0:
            return False
        if current == ancestor:
            return True
        current = parent_of(current)
    return False


def refusal(process: ProcessId, tree: ProcessId) -> str | None:
    """Why ``process`` may not join a cgroup on behalf of the process tree of ``tree`` (None: it may)."""
    if process.pid <= 1 or tree.pid <= 1:
        return "pid 1 (init) and its whole tree are never moved"
    now = ProcessId.of(process.pid)
    if now is None:
        return "no such live process"
    if now != process:
        return f"pid reused: the process now started at tick {now.start}, the one found at tick {process.start}"
    if not tree.alive():
        return f"process {tree.pid} whose tree it should belong to is gone or its pid reused"
    if process.start < tree.start:
        return f"started (tick {process.start}) before process {tree.pid} (tick {tree.start}): not one of its children"
    if not descends_from(process.pid, tree.pid):
        return f"not a descendant of process {tree.pid}"
    return None


def cgroup_of(pid: int, controller: str) -> str | None:
    """The cgroup v1 path (``/a/b``) of ``pid`` in the hierarchy of ``controller`` (None: gone or not mounted)."""
    try:
        lines = (PROC / str(int(pid)) / "cgroup").read_text().splitlines()
    except (OSError, ValueError):
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def command_line(pid: int) -> list[str]:
    """The arguments of ``pid`` (empty: gone, or a kernel thread)."""
    try:
        raw = (PROC / str(int(pid)) / "cmdline").read_bytes()
    except (OSError, ValueError):
        return []
    return [arg.decode(errors="replace") for arg in raw.split(b"\0")[:-1]]
