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
5. Fit with :func:`~storm_planner.planners.hetero.profiles.profile_from_measurements`
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
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from storm_planner.metrics.windows import read_windows
from storm_planner.planners.hetero.profiles import METHODS, Measurement, profile_from_measurements
from storm_planner.progress import Progress

from .builtin_project import BUILTIN_SPOUTS, RATE_FILE_OPTION, WORK_OPTION, write_builtin_project
from .cgroups import THROTTLE_JUDGED_PERIOD_US, CpuQuota, detect_emulation, throttled_share
from .errors import ProfilingError
from .measurements import (
    Result,
    Step,
    WindowFigures,
    compare,
    figures_from_window,
    format_checks,
    format_fits,
    format_steps,
    measure_component,
)

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


def machine_types(description) -> dict[str, object]:
    """One supervisor per machine type (``meta['machine.type']``), the first of each type."""
    chosen: dict[str, object] = {}
    for sup in description.supervisors:
        chosen.setdefault(str(sup.meta.get("machine.type", sup.name)), sup)
    return chosen


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


def supervisor_pid(cluster, supervisor_name: str) -> int:
    """The process id of the running supervisor ``supervisor_name`` of a local cluster."""
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
    quota = CpuQuota(f"storm-planner-profile-{machine_type}-{os.getpid()}", supervisor.held_cpu,
                     period=THROTTLE_JUDGED_PERIOD_US)   # max_throttled was set at this period
    with (running_cluster(type_dir, single, plugin=False, planner=False, ui=False, progress=progress) as cluster,
          _maybe(quota, settings.emulate)):
        if settings.emulate:
            quota.add(supervisor_pid(cluster, supervisor.name))
            result.emulation[machine_type] = (
                f"supervisor {supervisor.name} and its workers in cgroup {quota.path.name}: "
                f"cfs quota {quota.quota} us per {quota.period} us ({supervisor.held_cpu:g}% of a core)")
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


__all__ = [
    "ProfilingError", "Settings", "collect_windows", "enough_windows", "machine_types", "parse_check_rates",
    "parse_options", "parse_rates", "read_windows", "run_profiling",
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
