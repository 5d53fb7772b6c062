"""A small driver for Storm's multilang protocol, playing the worker's part.

It starts a component the way a Storm supervisor does — ``streamparse_run
<module.Class>`` with the working directory holding ``resources/<packages>`` —
and talks to it over stdin/stdout with Storm's JSON messages (each followed by
a line ``end``): the handshake (conf, context, pidDir → pid), tuples, tick
tuples, heartbeats (``__heartbeat`` stream, answered with ``sync``) for bolts;
``next``/``ack``/``fail`` commands (answered with ``sync``) for spouts.
Messages the component sends are read on a thread into a queue, so every wait
has a timeout and a hung component fails the test instead of hanging it.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
STREAMPARSE_RUN = VENV_BIN / "streamparse_run"


def storm_context(component: str, task_id: int, task_to_component: dict[int, str],
                  sources: dict | None = None) -> dict:
    """The handshake context Storm 2.x sends to a shell component."""
    return {
        "taskid": task_id,
        "componentid": component,
        "task->component": {str(t): c for t, c in task_to_component.items()},
        "source->stream->fields": sources or {},
        "stream->target->grouping": {},
    }


class MultilangError(AssertionError):
    pass


class MultilangComponent:
    """One shell component subprocess and its end of the protocol."""

    def __init__(self, target: str, src_dir: str | os.PathLike, conf: dict, context: dict,
                 timeout: float = 20.0, python_path: list[str] | None = None):
        """``python_path``: the component's PYTHONPATH (as ``topology.environment`` sets it; the bench points
        it at its checkout's kit). Unset, the kit is the one installed in the venv."""
        self.target = target
        self.timeout = timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="multilang-")
        workdir = Path(self._tmp.name)
        # The supervisor's layout: cwd holds resources/<python packages>.
        (workdir / "resources").symlink_to(Path(src_dir).resolve(), target_is_directory=True)
        self.pid_dir = workdir / "pids"
        self.pid_dir.mkdir()
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the component must find its package via resources/
        if python_path:
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in python_path)
        self.proc = subprocess.Popen(
            [str(STREAMPARSE_RUN), target], cwd=workdir, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._messages: queue.Queue = queue.Queue()
        self.logs: list[str] = []
        self.errors: list[str] = []
        self._stderr: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        self.pid = self.handshake(conf, context)

    # -- wire ----------------------------------------------------------------
    def _read_stdout(self) -> None:
        buffer: list[str] = []
        for raw in self.proc.stdout:
            line = raw.decode("utf-8")
            if line == "end\n":
                self._messages.put(json.loads("".join(buffer)))
                buffer = []
            else:
                buffer.append(line)
        self._messages.put(None)  # EOF

    def _read_stderr(self) -> None:
        for raw in self.proc.stderr:
            self._stderr.append(raw.decode("utf-8", "replace"))

    def send(self, message) -> None:
        try:
            self.proc.stdin.write((json.dumps(message) + "\nend\n").encode("utf-8"))
            self.proc.stdin.flush()
        except BrokenPipeError:
            # The component exited before reading: report it as reading would,
            # once its stderr is in, so callers see one failure either way.
            try:
                code = self.proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:   # closed its stdin but runs on
                code = None
            self._stderr_reader.join(timeout=self.timeout)
            raise MultilangError(f"{self.target} exited (code {code}){self._diagnostics()}") from None

    def read(self, timeout: float | None = None):
        """The next protocol message, skipping (and keeping) log and error commands."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = self._messages.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                raise MultilangError(f"{self.target}: no message within {timeout or self.timeout}s"
                                     f"{self._diagnostics()}") from None
            if message is None:
                self._stderr_reader.join(timeout=self.timeout)
                raise MultilangError(f"{self.target} exited (code {self.proc.poll()}){self._diagnostics()}")
            if isinstance(message, dict) and message.get("command") == "log":
                self.logs.append(message.get("msg", ""))
                continue
            if isinstance(message, dict) and message.get("command") == "error":
                self.errors.append(message.get("msg", ""))
                continue
            return message

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def _diagnostics(self) -> str:
        tail = "".join(self._stderr[-30:]) + "\n".join(self.logs[-10:] + self.errors[-3:])
        return f"\n--- component output ---\n{tail}" if tail.strip() else ""

    def read_until_sync(self, timeout: float | None = None) -> list[dict]:
        """Messages up to the next ``sync`` (emits, acks, fails...), without the sync."""
        out = []
        while True:
            message = self.read(timeout)
            if isinstance(message, dict) and message.get("command") == "sync":
                return out
            out.append(message)

    # -- protocol steps ------------------------------------------------------
    def handshake(self, conf: dict, context: dict) -> int:
        self.send({"conf": conf, "context": context, "pidDir": str(self.pid_dir)})
        answer = self.read()
        if not isinstance(answer, dict) or "pid" not in answer:
            raise MultilangError(f"handshake answer {answer!r}")
        if not (self.pid_dir / str(answer["pid"])).exists():
            raise MultilangError("component did not write its pid file into pidDir")
        return answer["pid"]

    def send_tuple(self, values, tup_id: str = "1", comp: str = "src", stream: str = "default",
                   task: int = 1) -> None:
        self.send({"id": tup_id, "comp": comp, "stream": stream, "task": task, "tuple": list(values)})

    def send_tick(self, tup_id: str = "tick") -> None:
        self.send_tuple([1], tup_id=tup_id, comp="__system", stream="__tick", task=-1)

    def heartbeat(self) -> None:
        """Send a heartbeat tuple and require the ``sync`` answer Storm waits for."""
        self.send_tuple([], tup_id="hb", comp="__system", stream="__heartbeat", task=-1)
        answer = self.read()
        if answer != {"command": "sync"}:
            raise MultilangError(f"heartbeat answered with {answer!r}")

    def process(self, values, tup_id: str, **kwargs) -> list[dict]:
        """Send a tuple to a bolt; return what it sent up to and including its ack/fail."""
        self.send_tuple(values, tup_id=tup_id, **kwargs)
        return self.read_until_ack(tup_id)

    def process_batch(self, tuples: list[dict]) -> list[dict]:
        """Send many tuples at once (``{"values", "comp", "stream", "task"}``); return all emits.

        Sending ahead instead of waiting for each ack keeps a long replay fast;
        the reader thread drains the component's output meanwhile, so the pipes
        never fill up both ways.
        """
        waiting = set()
        for number, item in enumerate(tuples):
            tup_id = item.get("id") or f"batch-{number}"
            waiting.add(tup_id)
            self.send_tuple(item["values"], tup_id=tup_id, comp=item.get("comp", "src"),
                            stream=item.get("stream") or "default", task=item.get("task", 1))
        out = []
        while waiting:
            message = self.read()
            if isinstance(message, dict) and message.get("command") in ("ack", "fail"):
                if message.get("command") == "fail":
                    raise MultilangError(f"{self.target} failed tuple {message.get('id')}")
                waiting.discard(message.get("id"))
            elif isinstance(message, dict) and message.get("command") == "emit":
                out.append(message)
        return out

    def ack_all(self, tup_ids: list[str]) -> None:
        """Ack many spout tuples at once (each answered with a sync)."""
        for tup_id in tup_ids:
            self.send({"command": "ack", "id": tup_id})
        for _ in tup_ids:
            self.read_until_sync()

    def drain(self) -> list[dict]:
        """Call ``next`` until the spout emits nothing; return every emit."""
        out = []
        while True:
            batch = emits(self.next())
            if not batch:
                return out
            out += batch

    def tick(self, tup_id: str = "tick") -> list[dict]:
        self.send_tick(tup_id)
        return self.read_until_ack(tup_id)

    def read_until_ack(self, tup_id: str) -> list[dict]:
        out = []
        while True:
            message = self.read()
            out.append(message)
            if isinstance(message, dict) and message.get("command") in ("ack", "fail") \
                    and message.get("id") == tup_id:
                return out

    def next(self) -> list[dict]:
        """Ask a spout for tuples; return its emits (up to the sync)."""
        self.send({"command": "next"})
        return self.read_until_sync()

    def ack(self, tup_id: str) -> list[dict]:
        self.send({"command": "ack", "id": tup_id})
        return self.read_until_sync()

    def fail(self, tup_id: str) -> list[dict]:
        self.send({"command": "fail", "id": tup_id})
        return self.read_until_sync()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # EOF: pystorm exits on its own
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._tmp.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def emits(messages: list[dict]) -> list[dict]:
    return [m for m in messages if isinstance(m, dict) and m.get("command") == "emit"]
