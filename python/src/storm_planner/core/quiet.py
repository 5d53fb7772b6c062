"""Keep what native libraries print off standard output.

The CLI's standard output carries the answer (JSON) alone, and a notebook
calling ``storm_planner.plan`` should see no solver banner. Python's
``contextlib.redirect_stdout`` cannot help: HiGHS (through highspy and
through PuLP) prints its banner from C++ straight to file descriptor 1, and
does so while ``Highs()`` is constructed, before any ``output_flag`` option
can be set; METIS and the CBC binary write to the descriptor too.

:func:`native_output_to_log` points descriptor 1 at a temporary file for the
duration of a solver call and hands what was written there to the ``logging``
module at debug level. The descriptor is process-wide, so nested or
concurrent callers (the service plans in threads) share one redirection: the
first to enter makes it, the last to leave undoes it and logs the text.

:func:`answer_only_stdout` is the CLI's guard around a whole command: while a
command runs, descriptor 1 (inherited by child processes such as Spark's JVM
or the CBC binary) points at standard error, and ``sys.stdout`` writes to
the real standard output, so only what the command itself prints with
``print`` reaches it. When the reader of that output goes away (``storm-planner
... | head``), the command's writes fail with :class:`BrokenPipeError`;
:func:`stdout_to_devnull` lets the CLI end quietly then, as Unix tools do.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator

_STDOUT_FD = 1
_lock = threading.Lock()
_depth = 0
_saved_fd: int | None = None
_capture = None  # the temporary file descriptor 1 points at while captured


@contextlib.contextmanager
def native_output_to_log(logger: logging.Logger, what: str) -> Iterator[None]:
    """Capture descriptor 1 during the block; log what native code wrote there at debug level."""
    _enter()
    try:
        yield
    finally:
        text = _leave()
        if text and text.strip():
            logger.debug("%s printed:\n%s", what, text.rstrip())


def _enter() -> None:
    global _depth, _saved_fd, _capture
    with _lock:
        if _depth == 0:
            _flush_python_stdout()
            # Held across _enter/_leave (a context manager cannot span the two); _leave closes it.
            _capture = tempfile.TemporaryFile(mode="w+b", prefix="storm-planner-native-")  # noqa: SIM115
            _saved_fd = os.dup(_STDOUT_FD)
            os.dup2(_capture.fileno(), _STDOUT_FD)
        _depth += 1


def _leave() -> str:
    global _depth, _saved_fd, _capture
    with _lock:
        _depth -= 1
        if _depth > 0:
            return ""
        _flush_python_stdout()
        # _enter set both at depth 0 -> 1; this is the matching _leave.
        assert _saved_fd is not None and _capture is not None
        os.dup2(_saved_fd, _STDOUT_FD)
        os.close(_saved_fd)
        _saved_fd = None
        capture, _capture = _capture, None
    try:
        capture.seek(0)
        return capture.read().decode("utf-8", errors="replace")
    finally:
        capture.close()


def _flush_python_stdout() -> None:
    # Python-level text buffered for descriptor 1 belongs to whoever printed it before
    # (or after) the capture, not to the solver.
    with contextlib.suppress(Exception):
        sys.stdout.flush()


@contextlib.contextmanager
def answer_only_stdout() -> Iterator[None]:
    """Run a CLI command with descriptor 1 on standard error and ``sys.stdout`` on the real output.

    A no-op when ``sys.stdout`` is not the process' descriptor 1 (e.g. under a
    test harness that captures it): then nothing else can write there anyway.
    """
    if not _is_process_stdout(sys.stdout):
        yield
        return
    sys.stdout.flush()
    answer_fd = os.dup(_STDOUT_FD)
    os.dup2(2, _STDOUT_FD)
    answer = os.fdopen(answer_fd, "w", encoding=sys.stdout.encoding or "utf-8",
                       errors=sys.stdout.errors, closefd=True)
    original, sys.stdout = sys.stdout, answer
    try:
        yield
    finally:
        sys.stdout = original
        try:
            answer.flush()
        except BrokenPipeError:
            # The reader is gone: what is left goes nowhere, and closing ``answer`` must not flush again.
            _to_devnull(answer_fd)
            raise
        finally:
            os.dup2(answer_fd, _STDOUT_FD)
            answer.close()


def stdout_to_devnull() -> None:
    """Point descriptor 1 at the null device: after a :class:`BrokenPipeError` on standard output,
    Python's own flush at exit then has nowhere to fail (no "Exception ignored" message)."""
    with contextlib.suppress(OSError, ValueError):
        _to_devnull(sys.stdout.fileno())


def _to_devnull(fd: int) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _is_process_stdout(stream: object) -> bool:
    original = sys.__stdout__  # None when Python started without a standard output
    try:
        return original is not None and stream is original and original.fileno() == _STDOUT_FD
    except (AttributeError, OSError, ValueError):
        return False
