"""Starting, tracking and stopping the daemon processes of one cluster.

Every daemon runs in its own session (so its own process group): the
supervisor's workers, their LogWriters and the Python shell components they
fork all stay in that group, and stopping the group stops them all. A pid
file per daemon (``<state>/run/<daemon>.json``) records what ``up`` started,
so ``down`` stops exactly that and nothing else; before signalling, the
recorded command line is compared with the live one, so a recycled pid is
never killed.

As a last sweep, :func:`stray_processes` finds any process whose command line
or working directory lies inside the cluster's state directory (a worker or a
shell component that escaped its group) so ``down`` leaves nothing behind.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class DaemonRecord:
    """What ``up`` started: enough to report on it and to stop it safely."""

    name: str
    pid: int
    command: list[str]
    port: int | None
    log: str
    started: float

    @classmethod
    def load(cls, path: Path) -> DaemonRecord:
        return cls(**json.loads(path.read_text()))

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        tmp.replace(path)


def start_daemon(
    name: str,
    command: list[str],
    *,
    run_dir: Path,
    out_file: Path,
    cwd: Path,
    port: int | None = None,
    env: dict[str, str] | None = None,
) -> DaemonRecord:
    """Start ``command`` in a new session, stdout+stderr to ``out_file``; record it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    with open(out_file, "ab") as out:
        out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {name}: {' '.join(command)}\n".encode())
        out.flush()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=str(cwd),
            env=env,
            start_new_session=True,
        )
    record = DaemonRecord(name, process.pid, command, port, str(out_file), time.time())
    record.save(run_dir / f"{name}.json")
    # Popen objects reap their child when collected; keep it so the pid stays
    # ours (and is reaped, not left a zombie) for the life of this process.
    _children[process.pid] = process
    return record


_children: dict[int, subprocess.Popen] = {}


def records(run_dir: Path) -> list[DaemonRecord]:
    if not run_dir.is_dir():
        return []
    found = []
    for path in sorted(run_dir.glob("*.json")):
        try:
            found.append(DaemonRecord.load(path))
        except (OSError, ValueError, TypeError):
            continue
    return found


def is_alive(record: DaemonRecord) -> bool:
    """The recorded process is running (not a zombie) and is still the one we started."""
    child = _children.get(record.pid)
    if child is not None:
        # Ours: Popen knows. (Reading /proc right after the fork would still show
        # this process's command line until the child has exec'd.)
        return child.poll() is None
    try:
        cmdline = Path(f"/proc/{record.pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{record.pid}/stat").read_text()
    except OSError:
        return _alive_without_proc(record.pid)
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        return False
    running = cmdline.split(b"\0")
    return any(running[: len(command)] == [c.encode() for c in command] for command in _command_forms(record.command))


def _command_forms(command: list[str]) -> list[list[str]]:
    """What the recorded command looks like in /proc once running: ``nsenter [options] -- PROGRAM ...``
    (a supervisor inside its network namespace) execs PROGRAM, so the live command line is the part
    after ``--``; until then it is the whole command."""
    if command and os.path.basename(command[0]) == "nsenter" and "--" in command:
        return [command, command[command.index("--") + 1:]]
    return [command]


def exit_status(record: DaemonRecord) -> str:
    """How a daemon this process started ended ("exit code 1", "killed by SIGKILL"), if known."""
    child = _children.get(record.pid)
    if child is None or child.poll() is None:
        return "exit status unknown"
    code = child.returncode
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _alive_without_proc(pid: int) -> bool:
    # Systems without /proc (macOS): fall back to "some process has that pid".
    if Path("/proc/self").exists():
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _group_has_live_members(pgid)


def _group_has_live_members(pgid: int) -> bool:
    """killpg(0) succeeds while zombies remain; look for a non-zombie member."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        # fields: state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_daemon(record: DaemonRecord, *, grace_s: float = 10.0) -> str:
    """SIGTERM the daemon's process group, SIGKILL what is left after ``grace_s``.

    Returns what happened, for progress output.
    """
    pgid = record.pid  # start_new_session: the daemon leads its own group
    if not is_alive(record) and not group_alive(pgid):
        _reap(record.pid)
        return "not running"
    if not is_alive(record) and not _group_is_ours(pgid, record):
        return "not running (pid reused by another program; left alone)"
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap(record.pid)
        if not group_alive(pgid):
            return "stopped"
        time.sleep(0.2)
    _signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and group_alive(pgid):
        _reap(record.pid)
        time.sleep(0.1)
    _reap(record.pid)
    return "killed" if not group_alive(pgid) else "could not be stopped"


def _group_is_ours(pgid: int, record: DaemonRecord) -> bool:
    # The leader exited but its group lives on (orphaned workers): those are
    # ours if they run inside the cluster's directories, which every command
    # line we start names.
    marker = os.path.dirname(os.path.dirname(record.log)).encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            if int(fields[2]) != pgid:
                continue
            if marker in (entry / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    child = _children.get(pid)
    if child is not None:
        child.poll()


def stray_processes(state_dir: Path) -> list[int]:
    """Processes of this cluster that outlived their group: workers, LogWriters, shell components.

    A Storm JVM of the cluster names the cluster's log or conf directory on
    its command line (``-Dstorm.log.dir=<state>/logs``,
    ``-Dstorm.conf.file=<state>/conf/...``); a shell component runs with its
    working directory inside a supervisor's data directory. Merely mentioning
    the state directory is not enough (a shell running ``cluster down
    --state-dir ...`` does), and this process and its ancestors never count.
    """
    state = Path(state_dir).resolve()
    markers = [f"-Dstorm.log.dir={state / 'logs'}", f"-Dstorm.conf.file={state / 'conf'}{os.sep}"]
    data = str(state / "data")
    spared = _ancestors()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            stat = (entry / "stat").read_text()
            if stat.rsplit(")", 1)[-1].split()[0] == "Z":
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                cwd = ""
        except OSError:
            continue
        if any(m in cmdline for m in markers) or cwd == data or cwd.startswith(data + os.sep):
            found.append(int(entry.name))
    return found


def _ancestors() -> set[int]:
    pids = {os.getpid()}
    pid = os.getpid()
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        pids.add(pid)
    return pids


def kill_pids(pids: list[int], *, grace_s: float = 3.0) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_pid_alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if _pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def log_files(log_dir: Path) -> dict[str, Path]:
    """Daemon name → its main log in ``log_dir`` (log4j file, or stdout file for the planner), and each
    worker's log as ``worker-<topology>-<port>``."""
    files = {}
    for path in sorted(log_dir.glob("*.log")):
        files[path.stem] = path
    for path in sorted(log_dir.glob("*.out")):
        files.setdefault(path.stem, path)
        files[f"{path.stem}.out"] = path
    for path in sorted(log_dir.glob("workers-artifacts/*/*/worker.log")):
        files[f"worker-{path.parent.parent.name}-{path.parent.name}"] = path
    return files
