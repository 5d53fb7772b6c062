"""A replay spout task's progress on file: its committed and emitted record numbers (``C E``).

What the numbers mean and how a restarted task uses them is the spout's business
(:mod:`storm_planner.streaming.spout`, "Resuming after a restart"); this module keeps the file: where it
lives, how it is written (atomically, only when a number advanced, at most every ``CHECKPOINT_S`` when
periodic, ``E`` never below the one on file: two incarnations of a task may overlap for a moment) and how
it is read back (bounded, never blocking, anything unusable ignored with the reason). A write that fails is
logged, not raised: the spout goes on, and a restart then replays from the last numbers written (records
emitted past an ``E`` that never reached the file are not emitted again after the stop).
"""
from __future__ import annotations

import os
import re
import stat
import time
from typing import Any

CHECKPOINT_SUFFIX = ".checkpoint"
# A task's committed progress is written at most this often (and at exhaustion and exit).
CHECKPOINT_S = 1.0
# A checkpoint file longer than this is not ours (two decimal counts, a space and a newline): ignored.
MAX_CHECKPOINT_BYTES = 32


class Checkpoint:
    """One spout task's committed record number in a file (module docstring: resuming after a restart)."""

    def __init__(self, path: str, logger: Any) -> None:
        self.path = path
        self.logger = logger
        self.written: tuple[int, int] | None = None
        self._saved_at = time.monotonic()
        self._failing = ""

    @classmethod
    def of(cls, directory: str | None, run_id: str, component: str, task_index: int, task_count: int,
           logger: Any) -> Checkpoint | None:
        """The task's checkpoint under ``directory`` (None: no checkpointing). Per run (a rerun starts over)
        and per split of the feed (its records are numbered within the task's share)."""
        if not directory:
            return None
        name = f"{file_safe(component)}-{task_index}-of-{task_count}{CHECKPOINT_SUFFIX}"
        return cls(os.path.join(directory, file_safe(run_id), name), logger)

    def load(self) -> tuple[int, int]:
        """The committed and emitted record numbers a predecessor saved, or (0, 0) (none, or one that is
        ignored with a warning naming the file: unreadable, malformed, too large)."""
        value, why = read_checkpoint(self.path)
        if why:
            self.logger.warning("ignoring checkpoint %s: %s; this task starts from its first record", self.path, why)
        self.written = value or (0, 0)
        return self.written

    def due(self) -> bool:
        return time.monotonic() - self._saved_at >= CHECKPOINT_S

    def save(self, committed: int, emitted: int) -> None:
        """Write ``committed`` and ``emitted`` when either advanced past what was written (atomically), the
        emitted number never below the one on file or written before; a failure is logged once per kind,
        never raised (the spout goes on; a later save may succeed)."""
        self._saved_at = time.monotonic()
        on_file, _ = read_checkpoint(self.path)
        if on_file:
            # Two incarnations of a task can overlap for a moment (the old worker not yet killed when the new
            # one starts): the E the other reserved on file stays, or records it emitted would be lost.
            emitted = max(emitted, on_file[1])
        if self.written is not None:
            if committed <= self.written[0] and emitted <= self.written[1]:
                return
            emitted = max(emitted, self.written[1])   # what a predecessor or a reservation said stays said
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            write_atomically(self.path, f"{committed} {emitted}")
        except OSError as error:
            why = f"{type(error).__name__}: {error.strerror or error}"
            if why != self._failing:
                self._failing = why
                self.logger.warning("cannot write checkpoint %s (%s); a restart would replay from the last one "
                                    "written", self.path, why)
            return
        self._failing = ""
        self.written = (committed, emitted)


def read_checkpoint(path: str) -> tuple[tuple[int, int] | None, str]:
    """((committed, emitted) record numbers, "") from a checkpoint file (one number alone: both); (None, "")
    when there is none; (None, why) when it cannot be used. Reads at most ``MAX_CHECKPOINT_BYTES + 1`` bytes
    of a regular file, never blocks on anything else (a FIFO in its place)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None, ""
    except OSError as error:
        return None, f"unreadable ({error.strerror or error})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "not a regular file"
        data = os.read(fd, MAX_CHECKPOINT_BYTES + 1)
    except OSError as error:
        return None, f"unreadable ({error.strerror or error})"
    finally:
        os.close(fd)
    if len(data) > MAX_CHECKPOINT_BYTES:
        return None, f"larger than {MAX_CHECKPOINT_BYTES} bytes"
    text = data.decode("ascii", errors="replace").strip()
    found = re.fullmatch(r"([0-9]+)(?: ([0-9]+))?", text)
    if not found:
        return None, f"{text[:MAX_CHECKPOINT_BYTES]!r} is not one or two non-negative integers"
    committed = int(found[1])
    emitted = int(found[2]) if found[2] is not None else committed
    if emitted < committed:
        return None, f"{text!r}: its emitted record number is below its committed one"
    return (committed, emitted), ""


def file_safe(name: str) -> str:
    """``name`` with every character a file name should not hold replaced by ``_`` (never empty)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` and a newline to ``path`` through a temporary file renamed over it: a reader sees
    the old content or the new, never part of it."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    os.replace(tmp, path)
