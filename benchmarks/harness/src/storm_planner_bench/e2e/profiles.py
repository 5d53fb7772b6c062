"""The profiles ``planner:hetero`` and ``planner:hetero-optimal`` need in ``storm-planner bench e2e``.

Nasiri et al.'s planners place by eq. 7: the CPU an instance uses on a machine type is
``base + IR · (ET + MET) / 10``, from a profile per (component, machine type) and the tuple division
ratio α per component (:mod:`storm_planner.planners.hetero.profiles`). A cell of those planners submits
its workload with the profile's JSON in ``planner.hetero.profiles``; the service then runs the
planner in its fixed-graph mode (the topology runs: ``mode=auto`` places the submitted executors and
only advises a parallelism).

**Where the profile comes from.** §5.2 of the paper profiles as a *pre-process*: each task runs on
each machine type while its input rate rises, ET is Storm's execute latency, MET the rest of eq. 7's
per-tuple cost; the planner (and §6.3's simulations) then use these fixed times. The bench does that
on its own cluster, once per workload, before the workload's first hetero cell
(:func:`profile_workload`): the workload's topology runs alone in one worker (one acker) on one
supervisor — placed by the plugin's ``storm-default`` planner, so Nimbus keeps the scheduler a hetero
cell needs and no restart is spent — while the other supervisors idle; its spout reads its rate from
a file (``replay_rate_file``) that steps through ``PROFILE_SHARES`` of the highest rate the run's cells
offer the workload in one submission (profiled at the quick rate, Top-K's costs were extrapolated from
15-60 t/s to 400 and came out three times what the cells measured); at each rate the metrics hook's
windows become one measurement per component
(:func:`~storm_planner.profiling.measurements.measure_component`, as ``storm-planner profile``
does), what the supervisor used beyond those tasks (the worker JVM, the ackers: the same quota pays for
them) is shared out over the components by the tuples each handled (:func:`with_worker_overhead`), and
the kit's affine fit gives base, ET and MET
(:func:`~storm_planner.planners.hetero.profiles.profile_from_measurements`). Meanwhile that supervisor's
quota is raised to one core and restored after: a throttled task waits, which lengthens its execute
latency (ET) without changing the CPU a tuple costs; steps that were throttled all the same are left
out of the fit (:func:`~storm_planner.profiling.measurements.fit_samples`). About two minutes of
cluster time per workload.

The windows of an earlier cell of the same workload would cost no cluster time, but they are not
§5.2's: one rate only (no slope against a base), measured under another scheduler's placement where
links and queues saturate (latency and CPU then include waiting and contention), and a workload whose
first cell is a hetero one has none.

**Machine types.** The cluster's types differ in CPU quota only — slices of the same cores, speed 1.0
— and a quota caps capacity without changing what one tuple costs; profiling every type would
measure the same times again. So the times measured on the profiled supervisor are written for every
machine type of the cluster (``machine.type`` of its supervisors), as ``bench hetero-real`` does.

What the profile leaves out, as the paper's model does: the ackers (system components cost nothing in
eq. 7, so ``hetero`` places them anywhere) and what crossing workers costs (the profiled topology runs in
one worker, so its tuples are never serialised between workers).

**hetero-optimal** has no fixed-graph mode (it searches instance counts, which a running topology
cannot take without a rebalance) and handles split groupings only; every workload of the bench has a
``global`` or ``all`` stream, so the service refuses it and the cell runs on Storm's fallback
placement, which its status says (:func:`hetero_optimal_note` warns before the run).

**Cache.** A profile is written to ``<out>/profiles/<workload>.json`` and reused by later cells and
reruns with the same ``--out``; ``--profiles DIR`` gives saved ones (``DIR/<workload>.json``) instead.
Either is checked before use: a file that is not a profile, or lacks a component of the workload or
a machine type of the cluster, is refused, naming the file.
"""
from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.jsonfile import read_json
from storm_planner_bench.e2e.workloads import HeteroProfileError

PROFILE_SHARES = (0.25, 0.5, 1.0)   # the profiling rates, as shares of the highest rate its cells run at
PROFILE_CPU = 100.0                 # the profiled supervisor's quota while profiling (one core)
PERIOD_S = 3                        # metrics window while profiling
SETTLE_WINDOWS, MEASURE_WINDOWS = 2, 3
MAX_THROTTLED = 0.05                # steps throttled more often than this are left out of the fit


def hetero_optimal_note(workload) -> str | None:
    """Why ``planner:hetero-optimal`` will not place ``workload`` (None: nothing known against it)."""
    from storm_planner.profiling.project import load_project_topology

    topology = load_project_topology(workload.project, workload.topology)
    streams = sorted({f"{source}->{c.name} ({grouping})" for c in topology.components
                      for source, _, grouping in c.inputs if grouping in ("all", "global")})
    if not streams:
        return None
    return (f"planner:hetero-optimal handles split groupings only and {workload.name} has {', '.join(streams)}: "
            f"the service will refuse it and its cells run on Storm's fallback placement (their status says so)")


def cluster_machine_types(description) -> tuple[str, ...]:
    """The machine types of the description's supervisors (``machine.type``, else ``default``, as the
    service names an untyped supervisor's), in order."""
    return tuple(dict.fromkeys(str(s.meta.get("machine.type", "default")) for s in description.supervisors))


@dataclass
class HeteroProfiles:
    """The profile of each workload, as the JSON text a hetero cell submits: made once and cached."""

    cache: Path                          # <out>/profiles
    machine_types: tuple[str, ...]
    saved: Path | None = None            # --profiles DIR
    top_rates: dict[str, float] = field(default_factory=dict)   # workload -> the highest rate its cells run at
    texts: dict[str, str] = field(default_factory=dict)

    def path(self, workload) -> Path:
        return (self.saved or self.cache) / f"{workload.name}.json"

    def check(self, workloads: Iterable) -> None:
        """Refuse now, before the cluster starts, a saved profile that is missing or bad, or a bad cache."""
        for workload in workloads:
            path = self.path(workload)
            if self.saved is not None and not path.is_file():
                raise HeteroProfileError(f"--profiles {self.saved}: no profile {path.name} for workload "
                                         f"{workload.name} (planner:hetero needs one per workload)")
            if path.is_file():
                self.texts[workload.name] = submitted(load_checked(path, workload, self.machine_types))

    def text(self, bench, workload) -> str:
        """The workload's profile: saved, cached or profiled now on the bench's cluster (then cached)."""
        if workload.name not in self.texts:
            path = self.path(workload)
            if path.is_file() or self.saved is not None:
                self.check([workload])
                return self.texts[workload.name]
            profile = self._profile(bench, workload)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(profile, indent=2) + "\n")
            bench.progress(f"profile of {workload.name} written to {path}")
            self.texts[workload.name] = submitted(profile)
        return self.texts[workload.name]

    def _profile(self, bench, workload) -> dict[str, Any]:
        try:
            return profile_workload(bench, workload, self.machine_types,
                                    self.top_rates.get(workload.name, workload.quick_rate))
        except (StormPlannerError, OSError) as error:   # profiling, submission, the cluster, cgroups
            raise HeteroProfileError(f"planner:hetero needs a profile of {workload.name} and profiling it on "
                                     f"the cluster failed: {error} (give saved ones with --profiles DIR)") from None


def submitted(profile: Mapping[str, Any]) -> str:
    """The profile as the topology carries it: JSON without the profiling record (steps and fits, kept in
    the file), which the planner does not read."""
    return json.dumps({key: value for key, value in profile.items() if key != "profiling"})


def load_checked(path: Path, workload, machine_types: Sequence[str]) -> dict[str, Any]:
    """A saved profile, refused (naming ``path``) unless it is one that covers every component of the
    workload's topology on every machine type of the cluster."""
    from storm_planner.core.errors import ProblemError
    from storm_planner.planners.hetero.profiles import ProfileError, parse_profile

    try:
        data = read_json(path)
        profile = parse_profile(data, where=str(path))
    except (ProblemError, OSError) as error:   # not JSON (its error names the file), not a profile
        named = str(error) if str(path) in str(error) else f"{path}: {error}"
        raise HeteroProfileError(f"not a usable profile: {named}") from None
    profiled = (data.get("profiling") or {}).get("workload") if isinstance(data.get("profiling"), dict) else None
    if profiled is not None and profiled != workload.name:
        raise HeteroProfileError(f"{path}: a profile of {profiled}, not of {workload.name}")
    components = topology_components(workload)
    if extra := sorted(set(data.get("components") or {}) - set(components)):
        raise HeteroProfileError(f"{path}: components {', '.join(extra)} are not {workload.name}'s "
                                 f"({', '.join(components)}): a profile of another topology")
    for component in components:
        for machine_type in machine_types:
            try:
                profile.times(component, machine_type)
            except ProfileError as error:
                raise HeteroProfileError(f"{path}: {error} (workload {workload.name}; the cluster's machine "
                                         f"types: {', '.join(machine_types)})") from None
    return data


def topology_components(workload) -> dict[str, str]:
    """The workload topology's components: name -> ``spout`` or ``bolt`` (read from its project)."""
    from storm_planner.profiling.project import load_project_topology

    topology = load_project_topology(workload.project, workload.topology)
    return {c.name: c.kind for c in topology.components}


# -- the profile from measurements (no cluster) -------------------------------------------------------------

def profile_document(steps: Sequence, alphas: Mapping[str, float], machine_types: Sequence[str],
                     input_rate: float, about: Mapping[str, Any],
                     instances: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The profile (file format of :mod:`storm_planner.planners.hetero.profiles`) from the steps measured
    on one machine type: the affine fit of the unthrottled steps, its times written for every machine
    type of the cluster, α per component, and ``about`` (how it was measured) in ``profiling``.

    A step measures a component's tasks together, so the fit's intercept (``base``, the CPU it uses with no
    tuple) is theirs together; the model charges ``base`` to every instance, so it is divided by the
    component's ``instances`` (its tasks while profiled; per-tuple times need no such division)."""
    from storm_planner.planners.hetero.profiles import fit_report, profile_from_measurements
    from storm_planner.profiling.measurements import fit_samples

    samples = fit_samples(steps, MAX_THROTTLED)
    if not samples:
        raise HeteroProfileError("profiling measured no component at any rate (no metrics-hook windows?)")
    fitted = profile_from_measurements(samples, alpha=alphas, input_rate=input_rate, method="affine").to_dict()
    for name, entry in fitted["components"].items():
        measured = entry["times"]
        if len(measured) != 1:
            raise HeteroProfileError(f"profiling measured on {', '.join(measured)}: one machine type expected")
        times = dict(next(iter(measured.values())))
        if instances and "base" in times:
            times["base"] = times["base"] / max(1, instances.get(name, 1))
        entry["times"] = {machine_type: dict(times) for machine_type in machine_types}
    fitted["source"] = (f"storm-planner bench e2e: measured on {about.get('supervisor', '?')} "
                        f"({steps[0].machine_type}); the same times on every machine type (a CPU quota "
                        f"caps capacity, not what one tuple costs)")
    fitted["profiling"] = {**about, "steps": [s.to_dict() for s in steps],
                           "fit": [f.to_dict() for f in fit_report(samples)]}
    return fitted


def with_worker_overhead(measured: Sequence, node_cpu: float) -> list:
    """``measured`` (one :class:`~storm_planner.planners.hetero.profiles.Measurement` per component) with
    what the node used beyond their tasks shared out over them by the tuples each handled: the worker JVM
    (transfer, serialisation, GC), the ackers' threads and the supervisor are paid from the same quota (the
    service measured Top-K's worker JVM beyond its executors at 20-50 % of a core), which a profile of the
    executors' threads alone leaves out."""
    overhead = node_cpu - sum(m.cpu_percent for m in measured)
    handled = sum(m.input_rate for m in measured)
    if overhead <= 0 or handled <= 0:
        return list(measured)
    return [dataclasses.replace(m, cpu_percent=m.cpu_percent + overhead * m.input_rate / handled) for m in measured]


def component_alphas(windows: Iterable, spouts: Iterable[str]) -> dict[str, float]:
    """α per bolt: tuples emitted per tuple executed over ``windows`` (a spout's is 1: its rate is what
    it emits); a bolt that executed nothing keeps α 1."""
    emitted: dict[str, int] = {}
    executed: dict[str, int] = {}
    for w in windows:
        if w.component.startswith("__"):
            continue
        emitted[w.component] = emitted.get(w.component, 0) + w.emitted
        executed[w.component] = executed.get(w.component, 0) + w.executed
    spouts = set(spouts)
    return {c: (1.0 if c in spouts or not executed[c] else round(emitted[c] / executed[c], 6)) for c in executed}


# -- the procedure on the bench's cluster ------------------------------------------------------------------

def profile_workload(bench, workload, machine_types: Sequence[str], top_rate: float | None = None) -> dict[str, Any]:
    """Profile ``workload`` on one supervisor of the running bench cluster (see the module's notes), at
    ``PROFILE_SHARES`` of ``top_rate`` (default: the workload's quick rate)."""
    from storm_planner.cluster.nimbus_restart import switch_scheduler
    from storm_planner_bench.common.cluster import kill_and_wait
    from storm_planner_bench.e2e.cells import submit_workload, wait_first_ack
    from storm_planner_bench.e2e.workloads import Scheduler

    kinds = topology_components(workload)
    rates = [round(share * (top_rate or workload.quick_rate), 3) for share in PROFILE_SHARES]
    scratch = bench.work / f"profile-{workload.name}"
    scratch.mkdir(parents=True, exist_ok=True)
    rate_file = scratch / "rate"
    rate_file.write_text(f"{rates[0]:g}")
    switch_scheduler(bench.cluster, "planner")
    job = f"e2e-profile-{workload.name}"
    bench.progress(f"profiling {workload.name} on one supervisor at {', '.join(f'{r:g}' for r in rates)} t/s")
    started = time.time()
    single = {"topology.workers": 1, "topology.acker.executors": 1, "planner.replan": False,
              "planner.metrics.period.secs": PERIOD_S, f"{workload.prefix}.replay_rate_file": str(rate_file)}
    row = submit_workload(bench, workload, rates[0], Scheduler("planner:storm-default", "planner", "storm-default"),
                          scratch, job, extra=single)
    try:
        if not wait_first_ack(scratch / "times", started + bench.timing.start_s):
            raise HeteroProfileError(f"profiling {workload.name}: no tuple acked within "
                                     f"{bench.timing.start_s:.0f} s of submission")
        supervisor = _one_supervisor(bench.cluster.assignment(row.id), workload)
        machine_type = _machine_type(bench, supervisor)
        steps, alphas, instances = _steps(bench, row.id, supervisor, machine_type, rates, rate_file,
                                          [c for c, kind in kinds.items() if kind == "spout"])
    finally:
        kill_and_wait(bench.nimbus, job, row.id)
    about = {"workload": workload.name, "supervisor": supervisor, "rates": rates, "period_s": PERIOD_S,
             "windows": MEASURE_WINDOWS, "quota_while_profiling": PROFILE_CPU,
             "seconds": round(time.time() - started, 1),
             "cluster": bench.cluster.description.name}
    return profile_document(steps, alphas, machine_types, rates[0], about, instances)


def _one_supervisor(assignment: list[dict], workload) -> str:
    nodes = sorted({e["node"] for e in assignment})
    if len(nodes) != 1:
        raise HeteroProfileError(f"profiling {workload.name}: the topology runs on {', '.join(nodes) or 'nothing'}, "
                                 f"not on one supervisor")
    return nodes[0]


def _machine_type(bench, supervisor: str) -> str:
    for sup in bench.cluster.description.supervisors:
        if sup.name == supervisor:
            return str(sup.meta.get("machine.type", "default"))   # the service's name for an untyped one
    raise HeteroProfileError(f"no supervisor {supervisor!r} in the cluster description")


def _steps(bench, topology_id: str, supervisor: str, machine_type: str, rates: Sequence[float], rate_file: Path,
           spouts: Sequence[str]) -> tuple[list, dict[str, float], dict[str, int]]:
    """Every rate in turn with the supervisor's quota at ``PROFILE_CPU``: (steps, α per component, tasks
    per component)."""
    from storm_planner.profiling.cgroups import THROTTLE_JUDGED_PERIOD_US, throttled_share
    from storm_planner.profiling.measurements import Step, measure_component
    from storm_planner.profiling.profiler import collect_windows

    quota = bench.quotas.get(supervisor)
    account = getattr(bench, "accounts", {}).get(supervisor)   # the supervisor's cgroup: all its processes' CPU
    held = next(s.held_cpu for s in bench.cluster.description.supervisors if s.name == supervisor)
    zookeeper = bench.cluster.addresses.zookeeper
    steps, measured = [], []
    if quota is not None:       # MAX_THROTTLED counts throttled periods of the length it was set at
        quota.set_capacity(PROFILE_CPU, period=THROTTLE_JUDGED_PERIOD_US)
    try:
        for rate in rates:
            rate_file.write_text(f"{rate:g}")
            collect_windows(zookeeper, topology_id, SETTLE_WINDOWS, PERIOD_S, timeout_s=30 + 10 * PERIOD_S * SETTLE_WINDOWS)
            before = quota.throttled() if quota is not None else {}
            used_before, clock = (account.usage_ns() if account is not None else 0), time.monotonic()
            windows = collect_windows(zookeeper, topology_id, MEASURE_WINDOWS, PERIOD_S,
                                      timeout_s=30 + 10 * PERIOD_S * MEASURE_WINDOWS)
            share = throttled_share(before, quota.throttled()) if quota is not None else 0.0
            components = sorted({w.component for w in windows if not w.component.startswith("__")})
            found = [m for m in (measure_component(windows, c, machine_type, spout=c in spouts) for c in components)
                     if m is not None]
            if account is not None:
                node_cpu = 100.0 * (account.usage_ns() - used_before) / 1e9 / (time.monotonic() - clock)
                found = with_worker_overhead(found, node_cpu)
            step = Step(machine_type, rate, False, share, found)
            steps.append(step)
            measured.extend(windows)
            bench.progress(f"  {step.describe()}")
    finally:
        if quota is not None:
            quota.set_capacity(held)   # what the node is held to, which a scaled declaration may exceed
    tasks: dict[str, set[int]] = {}
    for window in measured:
        tasks.setdefault(window.component, set()).add(window.task)
    return steps, component_alphas(measured, spouts), {c: len(t) for c, t in tasks.items()}
