"""Profiling on a real Storm cluster: fit base, ET and MET per (component, machine type).

Nasiri et al. §5.2 profile every component on every machine type before planning.
This module does that on the local multi-process cluster
(:mod:`storm_planner.cluster.launcher`) with the metrics task hook
(``docs/metrics.md``):

1. For each machine type of a cluster description, start a cluster with one
   supervisor of that type (so Storm can only place the topology there).
2. Emulate the machine type on this host (see *Emulation* below).
3. Submit a small streamparse topology — by default the built-in one,
   ``rate`` spout -shuffle-> ``work`` bolt burning a fixed amount of CPU per
   tuple (:func:`write_builtin_project`) — whose spout reads its input rate
   from a file, so the rate can rise without resubmitting.
4. At every rate of ``--rates``: wait for the rate to settle, read the hook's
   windows from ZooKeeper, and turn them into one :class:`Measurement` per
   component: CPU percent = 100 × (executor-thread CPU ms + Python subprocess
   CPU ms) / window length, summed over the component's tasks; the input rate
   is the *measured* tuples/s (executed for a bolt, emitted for a spout);
   execute latency from the hook's ``boltExecute`` (a spout has none: ET 0,
   its whole cost is MET).
5. Fit with :func:`~storm_planner.planners.nasiri.profiles.profile_from_measurements`
   and write the profile in the documented format. The default method,
   ``affine`` (issue #18), fits base and slope of ``CPU % = base + IR · (ET +
   MET) / 10`` by least squares over the rising rates of each (component,
   machine type) and reports each fit (R², residuals; also in the profile's
   informational ``fit`` key); ``max_point`` is the paper's (base 0).
6. Optionally measure once more at ``--check-rates`` (rates not used for the
   fit) and compare the CPU the fitted profile predicts with the CPU measured.

Emulation (what this machine allows, checked by :func:`detect_emulation`):

* **cgroup v1 CPU quota** (``/sys/fs/cgroup/cpu/<group>/cpu.cfs_quota_us``):
  the supervisor's pid goes into a group whose quota is the supervisor's
  ``cpu`` (100 = one core); its workers and their Python subprocesses are
  forked later and inherit the group. This caps the machine's *capacity*:
  a throttled task waits, so its execute latency (wall clock) grows, but one
  tuple still costs the same CPU *time* — a quota cannot make a CPU slower
  per instruction.
* **taskset** works here too (detected and reported) but is not used: pinning
  separates machine types from each other on one host, it slows none of them.
* Nothing on a shared host changes the CPU time per tuple (no cpufreq in a
  container), so machine types emulated here differ in capacity and latency,
  not in per-tuple CPU cost; a profile for real types needs real machines.

Steps where the quota throttled more than ``max_throttled`` of the CFS periods
ran at the machine's capacity, where the model does not hold; they are left out
of the fit (:func:`fit_samples`). Storm 2's default executor wait strategy burns
CPU while idle, a floor the paper's eq. 7 lacks and the fitted base captures;
parking idle executors
(``topology.bolt.wait.strategy: org.apache.storm.policy.WaitStrategyPark``,
``-o`` options) makes it small (``benchmarks/reports/hetero.md``).
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from storm_planner.planners.nasiri.profiles import (
    METHODS,
    Measurement,
    Profile,
    SeriesFit,
    fit_report,
    profile_from_measurements,
)

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
CFS_PERIOD_US = 100_000
RATE_FILE_OPTION = "profiling.rate_file"
WORK_OPTION = "profiling.work_iterations"
Progress = Callable[[str], None]


class ProfilingError(RuntimeError):
    """The profiling run cannot go on (bad arguments, cluster or topology trouble)."""


# -- pure parts: arguments, windows -> measurements, accuracy ---------------------------------

def parse_rates(text: str) -> list[float]:
    """``"50,100,200"`` -> ``[50.0, 100.0, 200.0]``: positive, at least two, rising."""
    try:
        rates = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ProfilingError(f"--rates {text!r}: comma-separated numbers, e.g. 50,100,200") from None
    if len(rates) < 2:
        raise ProfilingError(f"--rates {text!r}: at least two rates are needed to see CPU grow with the rate")
    if any(r <= 0 for r in rates):
        raise ProfilingError(f"--rates {text!r}: rates must be positive (tuples/s)")
    if sorted(set(rates)) != rates:
        raise ProfilingError(f"--rates {text!r}: rates must rise (the procedure raises the input rate)")
    return rates


def parse_check_rates(text: str) -> list[float]:
    """``"75,150"`` -> ``[75.0, 150.0]``; empty -> no check."""
    try:
        rates = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ProfilingError(f"--check-rates {text!r}: comma-separated numbers, e.g. 75,150") from None
    if any(r <= 0 for r in rates):
        raise ProfilingError(f"--check-rates {text!r}: rates must be positive (tuples/s)")
    return rates


def parse_options(pairs: Sequence[str]) -> dict[str, object]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}`` (values read as JSON when they are JSON)."""
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ProfilingError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


@dataclass(frozen=True)
class WindowFigures:
    """What one task's window says, reduced to what profiling needs."""

    component: str
    task: int
    seq: int
    duration_ms: float
    cpu_ms: float
    executed: int
    emitted: int
    latency_ms_sum: float
    latency_samples: int


def figures_from_window(window) -> WindowFigures:
    """Reduce a :class:`storm_planner.metrics.windows.TaskWindow` (hook document) to :class:`WindowFigures`."""
    return WindowFigures(
        component=window.component, task=window.task, seq=window.seq,
        duration_ms=float(window.duration_ms), cpu_ms=float(window.cpu_ms),
        executed=int(window.executed), emitted=int(window.emitted),
        latency_ms_sum=float(window.latency_ms_sum), latency_samples=int(window.latency_samples),
    )


def measure_component(windows: Iterable[WindowFigures], component: str, machine_type: str,
                      *, spout: bool) -> Measurement | None:
    """One :class:`Measurement` of ``component`` from its tasks' windows (several windows per task allowed).

    CPU percent and rate are per second of window, summed over the component's tasks; the input
    rate is tuples executed per second (emitted for a spout); ET is the hook's mean execute
    latency (0 for a spout). ``None`` when no window of the component covers any time.
    """
    own = [w for w in windows if w.component == component and w.duration_ms > 0]
    if not own:
        return None
    tasks = {w.task for w in own}
    seconds_per_task = sum(w.duration_ms for w in own) / 1000.0 / len(tasks)
    tuples = sum(w.emitted if spout else w.executed for w in own)
    rate = tuples / seconds_per_task
    if rate <= 0:
        return None
    cpu_percent = 100.0 * sum(w.cpu_ms for w in own) / 1000.0 / seconds_per_task
    samples = sum(w.latency_samples for w in own)
    execute_ms = 0.0 if spout or not samples else sum(w.latency_ms_sum for w in own) / samples
    return Measurement(component, machine_type, rate, cpu_percent, execute_ms)


def predict_cpu_percent(profile: Profile, component: str, machine_type: str, input_rate: float) -> float:
    """TCU [% of a core] = base + IR [tuples/s] · (ET + MET) [ms] / 10 (eq. 7 with the base of issue #18)."""
    return profile.times(component, machine_type).cpu_percent(input_rate)


def accuracy_percent(predicted: float, measured: float) -> float:
    """The paper's accuracy: 100 · (1 − |predicted − measured| / measured), floored at 0."""
    if measured <= 0:
        raise ProfilingError(f"measured CPU {measured} is not positive: nothing to compare the prediction with")
    return max(0.0, 100.0 * (1.0 - abs(predicted - measured) / measured))


@dataclass(frozen=True)
class Check:
    """Predicted vs measured CPU of one component on one machine type at a rate not used for the fit."""

    component: str
    machine_type: str
    input_rate: float
    predicted_cpu: float
    measured_cpu: float

    @property
    def accuracy(self) -> float:
        return accuracy_percent(self.predicted_cpu, self.measured_cpu)


def compare(profile: Profile, measured: Iterable[Measurement]) -> list[Check]:
    """Predict each measurement's CPU from ``profile`` at the measured input rate."""
    return [
        Check(m.component, m.machine_type, m.input_rate,
              predict_cpu_percent(profile, m.component, m.machine_type, m.input_rate), m.cpu_percent)
        for m in measured
    ]


def quota_us(cpu_capacity: float, period_us: int = CFS_PERIOD_US) -> int:
    """A supervisor's ``cpu`` (100 = one core) as a CFS quota per period (at least 1 ms)."""
    if cpu_capacity <= 0:
        raise ProfilingError(f"supervisor cpu {cpu_capacity}: must be positive to become a CPU quota")
    return max(1000, int(round(period_us * cpu_capacity / 100.0)))


def machine_types(description) -> dict[str, object]:
    """One supervisor per machine type (``meta['machine.type']``), the first of each type."""
    chosen: dict[str, object] = {}
    for sup in description.supervisors:
        chosen.setdefault(str(sup.meta.get("machine.type", sup.name)), sup)
    return chosen


# -- emulation ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class EmulationSupport:
    """What this host allows to make one machine type differ from another."""

    cgroup_quota: bool
    taskset: bool
    detail: str


def detect_emulation(cgroup_root: Path = CGROUP_CPU) -> EmulationSupport:
    """Try a throw-away cgroup with a quota, and ``taskset``; say what works."""
    notes = []
    cgroup_ok = False
    probe = cgroup_root / f"storm-planner-probe-{os.getpid()}"
    try:
        probe.mkdir()
        (probe / "cpu.cfs_quota_us").write_text("50000")
        cgroup_ok = (probe / "cpu.cfs_quota_us").read_text().strip() == "50000"
        notes.append(f"cgroup v1 CPU quota in {cgroup_root}: {'works' if cgroup_ok else 'not applied'}")
    except OSError as error:
        notes.append(f"cgroup v1 CPU quota in {cgroup_root}: unavailable ({error.strerror or error})")
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass
    taskset_ok = shutil.which("taskset") is not None and subprocess.run(
        ["taskset", "-p", str(os.getpid())], capture_output=True).returncode == 0
    notes.append(f"taskset: {'works' if taskset_ok else 'unavailable'}")
    return EmulationSupport(cgroup_ok, taskset_ok, "; ".join(notes))


class CgroupGroup:
    """A cgroup v1 group under ``root``; processes moved in take their future children along.

    On exit, leftover processes (already stopped daemons cannot be) go back to the root group and
    the group is removed.
    """

    def __init__(self, name: str, root: Path) -> None:
        self.path = root / name

    def __enter__(self):
        self.path.mkdir(exist_ok=True)
        return self

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def __exit__(self, *exc) -> None:
        root_procs = self.path.parent / "cgroup.procs"
        for pid in (self.path / "cgroup.procs").read_text().split():
            try:
                root_procs.write_text(pid)
            except OSError:
                pass
        try:
            self.path.rmdir()
        except OSError:
            pass


class CpuQuota(CgroupGroup):
    """A cgroup v1 CPU group with a CFS quota: a machine of ``cpu_capacity`` (100 = one core)."""

    def __init__(self, name: str, cpu_capacity: float, root: Path = CGROUP_CPU) -> None:
        super().__init__(name, root)
        self.quota = quota_us(cpu_capacity)

    def __enter__(self) -> "CpuQuota":
        super().__enter__()
        (self.path / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (self.path / "cpu.cfs_quota_us").write_text(str(self.quota))
        return self

    def throttled(self) -> dict[str, int]:
        """``cpu.stat`` of the group (nr_throttled, throttled_time ns, ...)."""
        stat = {}
        for line in (self.path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            stat[key] = int(value)
        return stat


# -- the built-in profiling topology -------------------------------------------------------------

_COMPONENTS = '''\
"""Profiling topology: a spout whose rate is read from a file, and a bolt of fixed CPU work per tuple."""
import hashlib
import time

from streamparse import Bolt, Spout


class RateSpout(Spout):
    outputs = ["id", "payload"]

    def initialize(self, stormconf, context):
        self.rate_file = stormconf["profiling.rate_file"]
        self.rate, self.checked = 0.0, 0.0
        self.sent, self.since = 0, time.time()
        self.next_id = 0

    def _read_rate(self):
        now = time.time()
        if now - self.checked < 0.5:
            return
        self.checked = now
        try:
            rate = float(open(self.rate_file).read().strip() or 0)
        except (OSError, ValueError):
            return
        if rate != self.rate:  # a new step: pace from now on
            self.rate, self.sent, self.since = rate, 0, now

    def next_tuple(self):
        self._read_rate()
        if self.rate <= 0 or self.sent >= (time.time() - self.since) * self.rate:
            time.sleep(0.002)
            return
        self.sent += 1
        self.next_id += 1
        self.emit([self.next_id, "x" * 32])


class WorkBolt(Bolt):
    outputs = []

    def initialize(self, conf, context):
        self.iterations = int(conf.get("profiling.work_iterations", 2000))

    def process(self, tup):
        digest = str(tup.values[0]).encode()
        for _ in range(self.iterations):
            digest = hashlib.sha256(digest).digest()
'''

_TOPOLOGY = '''\
"""rate (spout) -shuffle-> work (bolt): storm-planner's profiling topology."""
from streamparse import Grouping, Topology

from profiling_topology.components import RateSpout, WorkBolt


class Profiling(Topology):
    rate = RateSpout.spec()
    work = WorkBolt.spec(inputs={rate: Grouping.SHUFFLE})
'''

_CONFIG = {
    "serializer": "json", "topology_specs": "topologies/", "virtualenv_specs": "virtualenvs/",
    "envs": {"local": {"nimbus": "127.0.0.1:6627", "workers": [], "use_ssh_for_nimbus": False,
                       "use_virtualenv": False}},
}
BUILTIN_SPOUTS = ("rate",)


def write_builtin_project(directory: Path) -> Path:
    """Write the built-in streamparse project (``rate`` -> ``work``) into ``directory``; return it."""
    package = directory / "src" / "profiling_topology"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "components.py").write_text(_COMPONENTS)
    (directory / "topologies").mkdir(exist_ok=True)
    (directory / "topologies" / "profiling.py").write_text(_TOPOLOGY)
    (directory / "config.json").write_text(json.dumps(_CONFIG, indent=2) + "\n")
    return directory


# -- the procedure on the cluster -----------------------------------------------------------------

@dataclass
class Settings:
    """How to run one profiling campaign."""

    rates: Sequence[float]
    check_rates: Sequence[float] = ()
    period_s: int = 3
    settle_windows: int = 2
    measure_windows: int = 3
    work_iterations: int = 2000
    spouts: Sequence[str] = BUILTIN_SPOUTS
    method: str = "affine"
    emulate: bool = True
    options: Mapping[str, object] = field(default_factory=dict)   # extra topology conf
    max_throttled: float = 0.05          # steps throttled more than this are left out of the fit


@dataclass(frozen=True)
class Step:
    """One input rate on one machine type: what was measured and how much the CPU quota throttled."""

    machine_type: str
    rate: float
    check: bool
    throttled: float                     # share of CFS periods throttled while measuring (0..1)
    measurements: tuple[Measurement, ...] | list[Measurement]

    def describe(self) -> str:
        figures = ", ".join(f"{m.component} {m.input_rate:.0f}/s cpu {m.cpu_percent:.1f}% exec {m.execute_ms:.2f} ms"
                            for m in self.measurements)
        return (f"rate {self.rate:g}/s{' (check)' if self.check else ''}: {figures}; "
                f"throttled {100 * self.throttled:.0f}% of periods")

    def to_dict(self) -> dict:
        return {"machine_type": self.machine_type, "rate": self.rate, "check": self.check,
                "throttled": self.throttled, "measurements": [dataclasses.asdict(m) for m in self.measurements]}


def throttled_share(before: Mapping[str, int], after: Mapping[str, int]) -> float:
    """Share of CFS periods throttled between two reads of a group's ``cpu.stat``."""
    periods = after.get("nr_periods", 0) - before.get("nr_periods", 0)
    throttled = after.get("nr_throttled", 0) - before.get("nr_throttled", 0)
    return throttled / periods if periods > 0 else 0.0


def fit_samples(steps: Sequence[Step], max_throttled: float) -> list[Measurement]:
    """The rising-rate samples to fit: a machine type's steps throttled more than ``max_throttled``
    ran at its capacity (eq. 7 does not hold there: queues fill, idle waiting vanishes) and are left
    out, except that each machine type keeps at least its least throttled step."""
    chosen: list[Measurement] = []
    for machine_type in dict.fromkeys(s.machine_type for s in steps):
        series = [s for s in steps if s.machine_type == machine_type and not s.check]
        kept = [s for s in series if s.throttled <= max_throttled] or sorted(series, key=lambda s: s.throttled)[:1]
        chosen.extend(m for s in kept for m in s.measurements)
    return chosen


@dataclass
class Result:
    """Everything one run produced: samples, the fitted profile, the check and how types were emulated."""

    steps: list["Step"] = field(default_factory=list)
    max_throttled: float = 0.05
    checks: list[Check] = field(default_factory=list)
    profile: Profile | None = None
    emulation: dict[str, str] = field(default_factory=dict)
    throttling: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def samples(self) -> list[Measurement]:
        """The fitting samples: rates of the rising series whose machine was not throttled."""
        return fit_samples(self.steps, self.max_throttled)

    @property
    def fits(self) -> list[SeriesFit]:
        """The least-squares fit of base and slope of every (component, machine type) series."""
        return fit_report(self.samples) if self.samples else []

    @property
    def check_samples(self) -> list[Measurement]:
        return [m for step in self.steps if step.check for m in step.measurements]

    def to_dict(self) -> dict:
        return {
            "steps": [step.to_dict() for step in self.steps],
            "max_throttled": self.max_throttled,
            "fit_samples": [dataclasses.asdict(s) for s in self.samples],
            "checks": [{**dataclasses.asdict(c), "accuracy": c.accuracy} for c in self.checks],
            "fit": [fit.to_dict() for fit in self.fits],
            "profile": self.profile.to_dict() if self.profile else None,
            "emulation": self.emulation,
            "throttling": self.throttling,
        }


def read_windows(zk, topology_id: str) -> list:
    """Every task's current window of ``topology_id``, read with the started kazoo client ``zk``."""
    from storm_planner.metrics.windows import DEFAULT_ROOT, CorruptWindow, parse_window

    path = f"{DEFAULT_ROOT}/{topology_id}"
    found = []
    for child in (zk.get_children(path) if zk.exists(path) else []):
        data, stat = zk.get(f"{path}/{child}")
        try:
            found.append(parse_window(data, znode_version=stat.version))
        except (CorruptWindow, ValueError):
            continue
    return found


def collect_windows(zookeeper: str, topology_id: str, count: int, period_s: float,
                    timeout_s: float) -> list[WindowFigures]:
    """The next ``count`` new windows of every task (polled; each (task, seq) once)."""
    import logging

    from kazoo.client import KazooClient

    logging.getLogger("kazoo").setLevel(logging.WARNING)
    zk = KazooClient(hosts=zookeeper, timeout=5)
    zk.start(timeout=10)
    try:
        return _poll_new_windows(zk, topology_id, count, period_s, timeout_s)
    finally:
        zk.stop()
        zk.close()


def _poll_new_windows(zk, topology_id: str, count: int, period_s: float, timeout_s: float) -> list[WindowFigures]:
    seen: dict[tuple[int, int], WindowFigures] = {}
    start_seq: dict[int, int] = {w.task: w.seq for w in read_windows(zk, topology_id)}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for window in read_windows(zk, topology_id):
            if window.seq > start_seq.get(window.task, -1) and window.cpu_known:
                seen.setdefault((window.task, window.seq), figures_from_window(window))
        if enough_windows(seen, set(start_seq), count):
            return list(seen.values())
        time.sleep(max(0.5, period_s / 3))
    raise ProfilingError(f"timed out after {timeout_s:.0f} s waiting for {count} windows of every task "
                         f"of {topology_id} (is the metrics hook jar built and bundled?)")


def enough_windows(seen: Mapping[tuple[int, int], object], known_tasks: set[int], count: int) -> bool:
    """True when every task known (at the start or since) has ``count`` new windows in ``seen``."""
    tasks = {task for task, _ in seen} | known_tasks
    return bool(tasks) and all(sum(1 for t, _ in seen if t == task) >= count for task in tasks)


def _supervisor_pid(cluster, supervisor_name: str) -> int:
    from storm_planner.cluster import daemons

    for record in daemons.records(cluster.run_dir):
        if record.name == f"supervisor-{supervisor_name}":
            return record.pid
    raise ProfilingError(f"no running supervisor {supervisor_name!r} in {cluster.run_dir}")


def profile_machine_type(project: Path, description, machine_type: str, supervisor, settings: Settings,
                         work_dir: Path, result: Result, progress: Progress) -> None:
    """Run the topology on a one-supervisor cluster of ``machine_type`` at every rate; add samples."""
    from storm_planner.cluster.launcher import running_cluster
    from storm_planner.submit.operations import kill_topology, submit_project

    single = dataclasses.replace(description, supervisors=(supervisor,))
    type_dir = work_dir / machine_type
    type_dir.mkdir(parents=True, exist_ok=True)
    rate_file = type_dir / "rate"
    rate_file.write_text("0")
    quota = CpuQuota(f"storm-planner-profile-{machine_type}-{os.getpid()}", supervisor.cpu)
    with running_cluster(type_dir, single, plugin=False, planner=False, ui=False, progress=progress) as cluster:
        with _maybe(quota, settings.emulate):
            if settings.emulate:
                quota.add(_supervisor_pid(cluster, supervisor.name))
                result.emulation[machine_type] = (
                    f"supervisor {supervisor.name} and its workers in cgroup {quota.path.name}: "
                    f"cfs quota {quota.quota} us per {CFS_PERIOD_US} us ({supervisor.cpu:g}% of a core)")
            else:
                result.emulation[machine_type] = f"supervisor {supervisor.name}: no emulation (label only)"
            progress(f"[{machine_type}] {result.emulation[machine_type]}")
            a = cluster.addresses
            options = {RATE_FILE_OPTION: str(rate_file), WORK_OPTION: settings.work_iterations,
                       "topology.workers": 1, "topology.acker.executors": 0,
                       "topology.stats.sample.rate": 1.0, "planner.metrics.period.secs": settings.period_s,
                       "planner.replan": False, **settings.options}
            row = submit_project(project, nimbus=a.nimbus, name=f"profile-{machine_type}", options=options,
                                 wait_active=180, progress=progress)
            try:
                for rate, checking in _steps(settings):
                    rate_file.write_text(f"{rate:g}")
                    collect_windows(a.zookeeper, row.id, settings.settle_windows, settings.period_s,
                                    timeout_s=30 + 10 * settings.period_s * settings.settle_windows)
                    before = quota.throttled() if settings.emulate else {}
                    windows = collect_windows(a.zookeeper, row.id, settings.measure_windows, settings.period_s,
                                              timeout_s=30 + 10 * settings.period_s * settings.measure_windows)
                    share = throttled_share(before, quota.throttled()) if settings.emulate else 0.0
                    step = Step(machine_type, rate, checking, share,
                                _measurements(windows, machine_type, settings.spouts))
                    result.steps.append(step)
                    progress(f"[{machine_type}] {step.describe()}")
            finally:
                if settings.emulate:
                    result.throttling[machine_type] = quota.throttled()
                kill_topology(a.nimbus, row.name, wait_secs=0, progress=progress)


def _steps(settings: Settings) -> Iterator[tuple[float, bool]]:
    for rate in settings.rates:
        yield rate, False
    for rate in settings.check_rates:
        yield rate, True


def _measurements(windows: list[WindowFigures], machine_type: str, spouts: Sequence[str]) -> list[Measurement]:
    components = sorted({w.component for w in windows if not w.component.startswith("__")})
    found = [measure_component(windows, c, machine_type, spout=c in spouts) for c in components]
    return [m for m in found if m is not None]


class _maybe:
    """``with _maybe(cm, flag):`` enters ``cm`` only when ``flag``."""

    def __init__(self, manager, flag: bool) -> None:
        self.manager, self.flag = manager, flag

    def __enter__(self):
        return self.manager.__enter__() if self.flag else None

    def __exit__(self, *exc):
        return self.manager.__exit__(*exc) if self.flag else None


def run_profiling(project: Path | None, description, settings: Settings, work_dir: Path,
                  progress: Progress = print) -> Result:
    """The whole procedure: every machine type of ``description``, every rate; fit; check."""
    support = detect_emulation()
    progress(f"emulation on this host: {support.detail}")
    if settings.emulate and not support.cgroup_quota:
        progress("no writable cgroup CPU quota: machine types differ only in their labels")
        settings = dataclasses.replace(settings, emulate=False)
    if project is None:
        project = write_builtin_project(work_dir / "project")
    result = Result(max_throttled=settings.max_throttled)
    for machine_type, supervisor in machine_types(description).items():
        profile_machine_type(project, description, machine_type, supervisor, settings, work_dir, result, progress)
    result.profile = profile_from_measurements(result.samples, method=settings.method, input_rate=settings.rates[0])
    result.checks = compare(result.profile, result.check_samples)
    return result


def format_checks(checks: Sequence[Check]) -> str:
    """A Markdown table of predicted vs measured CPU."""
    lines = ["| component | machine type | input rate (tuples/s) | predicted CPU % | measured CPU % | accuracy % |",
             "|---|---|---:|---:|---:|---:|"]
    for c in checks:
        lines.append(f"| {c.component} | {c.machine_type} | {c.input_rate:.1f} | {c.predicted_cpu:.2f} | "
                     f"{c.measured_cpu:.2f} | {c.accuracy:.1f} |")
    return "\n".join(lines)


def format_fits(fits: Sequence[SeriesFit]) -> str:
    """A Markdown table of the least-squares fits: base, slope, R² and the largest residual."""
    lines = ["| component | machine type | base CPU % | per tuple (ms) | R² | largest residual (CPU %) | rates | note |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for f in fits:
        worst = max((abs(r) for r in f.residuals), default=0.0)
        lines.append(f"| {f.component} | {f.machine_type} | {f.base:.2f} | {f.per_tuple_ms:.4f} | {f.r2:.3f} | "
                     f"{worst:.2f} | {len(f.rates)} | {f.note} |")
    return "\n".join(lines)


def format_steps(steps: Sequence[Step], max_throttled: float) -> str:
    """A Markdown table of every step: what was measured, how throttled, and whether it was fitted."""
    fitted = {id(m) for m in fit_samples(steps, max_throttled)}
    lines = ["| machine type | rate set (tuples/s) | component | measured rate (tuples/s) | CPU % | "
             "execute latency (ms) | throttled periods % | use |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for step in steps:
        for m in step.measurements:
            use = "check" if step.check else ("fit" if id(m) in fitted else "left out (throttled)")
            lines.append(f"| {step.machine_type} | {step.rate:g} | {m.component} | {m.input_rate:.1f} | "
                         f"{m.cpu_percent:.2f} | {m.execute_ms:.3f} | {100 * step.throttled:.0f} | {use} |")
    return "\n".join(lines)


__all__ = [
    "Check", "CpuQuota", "EmulationSupport", "ProfilingError", "Result", "Settings", "WindowFigures",
    "accuracy_percent", "collect_windows", "compare", "detect_emulation", "enough_windows", "figures_from_window",
    "Step", "fit_samples", "format_checks", "format_fits", "format_steps", "throttled_share", "machine_types", "measure_component", "parse_check_rates", "parse_options", "parse_rates",
    "predict_cpu_percent", "quota_us", "run_profiling", "write_builtin_project",
]


# -- storm-planner profile ------------------------------------------------------------------------

def add_profile_command(subparsers) -> None:
    """Register ``storm-planner profile``."""
    cmd = subparsers.add_parser(
        "profile", help="profile components on each machine type of a local cluster and fit ET/MET")
    cmd.add_argument("project", nargs="?", default=None,
                     help="streamparse project whose spout reads its rate from the file in the topology "
                          f"option {RATE_FILE_OPTION} (default: the built-in rate -> work topology)")
    cmd.add_argument("--cluster", help="cluster description YAML: one supervisor per machine type is used; "
                                       "its cpu becomes the CPU quota (default: the default cluster)")
    cmd.add_argument("--rates", default="50,100,200", help="rising input rates, tuples/s (default 50,100,200)")
    cmd.add_argument("--check-rates", default="150",
                     help="rates not used for the fit where predicted and measured CPU are compared "
                          "(comma-separated; empty: none)")
    cmd.add_argument("--spout", action="append", default=None, help="spout component name (default: rate)")
    cmd.add_argument("--period", type=int, default=3, help="metrics window length, s (default 3)")
    cmd.add_argument("--windows", type=int, default=3, help="windows measured per rate (default 3)")
    cmd.add_argument("--work", type=int, default=2000, help="sha256 rounds per tuple in the built-in bolt (2000: about 1 ms)")
    cmd.add_argument("--method", choices=METHODS, default="affine",
                     help="affine (default): base and slope by least squares over the rising rates; "
                          "max_point: the paper's eq. 7 at the highest rate; least_squares: eq. 7 through the origin")
    cmd.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                     help="extra topology conf (value parsed as JSON when it can be), repeatable")
    cmd.add_argument("--max-throttled", type=float, default=0.05,
                     help="leave steps whose CPU quota throttled more than this share of periods out of the fit")
    cmd.add_argument("--no-emulation", action="store_true", help="do not put supervisors into CPU quota groups")
    cmd.add_argument("--work-dir", help="state directory (default: a temporary one)")
    cmd.add_argument("--out", default="profile.json", help="profile file to write (default profile.json)")
    cmd.add_argument("--report", help="also write the samples, checks and emulation as JSON here")
    cmd.set_defaults(handler=profile_command)


def profile_command(args) -> int:
    """``storm-planner profile``: run :func:`run_profiling`, write the profile, print the check table."""
    import tempfile

    from storm_planner.cli import CommandError
    from storm_planner.cluster import default_description
    from storm_planner.cluster.description import DescriptionError, load_description
    from storm_planner.cluster.errors import ClusterError
    from storm_planner.submit.operations import SubmitError
    from storm_planner.submit.project import ProjectError

    try:
        settings = Settings(rates=parse_rates(args.rates), check_rates=parse_check_rates(args.check_rates),
                            period_s=args.period, measure_windows=args.windows, work_iterations=args.work,
                            spouts=tuple(args.spout or BUILTIN_SPOUTS), method=args.method,
                            emulate=not args.no_emulation, options=parse_options(args.option),
                            max_throttled=args.max_throttled)
        description = load_description(args.cluster) if args.cluster else default_description()
        project = Path(args.project).resolve() if args.project else None
        with tempfile.TemporaryDirectory(prefix="storm-planner-profile-") as tmp:
            work_dir = Path(args.work_dir).resolve() if args.work_dir else Path(tmp)
            result = run_profiling(project, description, settings, work_dir)
    except (ProfilingError, DescriptionError, ClusterError, SubmitError, ProjectError, OSError) as error:
        raise CommandError(str(error)) from None
    written = {**result.profile.to_dict(), "fit": [fit.to_dict() for fit in result.fits]}
    Path(args.out).write_text(json.dumps(written, indent=2) + "\n")
    print(f"profile written to {args.out}")
    if args.report:
        Path(args.report).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        print(f"report written to {args.report}")
    print(format_steps(result.steps, result.max_throttled))
    print("least-squares fit per series, CPU % = base + IR · per-tuple ms / 10:")
    print(format_fits(result.fits))
    if result.checks:
        print(f"prediction with the fitted profile (method {settings.method}) at the check rates:")
        print(format_checks(result.checks))
    return 0
