"""The workloads and schedulers of ``storm-planner bench e2e``.

A workload is a topology of ``topologies/`` with everything that decides how it runs made explicit:
its offered rate (and a lower one for ``--quick``), each component's declared CPU per executor
(Storm's ``topology.component.cpu.pcore.percent``, what the ResourceAwareScheduler and the planners
account), ``topology.workers`` and ``topology.acker.executors``. A scheduler is ``default`` (Storm's
DefaultScheduler), ``ras`` (Storm's ResourceAwareScheduler) or ``planner:NAME`` (the plugin asking the
planner service for the registered planner NAME). Any of them with ``+nohook`` runs the topology without
the kit's metrics hook (``planner.metrics.enabled: false``): set beside the same scheduler with the hook,
it measures what the hook costs a running topology. ``planner:NAME+noreplan`` places the topology once and
never re-plans it (``planner.replan: false``): the plan made at submission stays, whatever the rate does
(topDown §7.4's TD against TD-RC, ``storm-planner bench topdown-real``). ``planner:NAME+resumable`` marks
the topology ``planner.source.resumable``: the replay spouts resume from their checkpoints (every cell keeps
them), so a re-plan may restart a spout's worker to relieve a node short of CPU. Not the default: on trends
under ``topdown`` two such reliefs within 75 s each stopped the source for 30 s (``e2e/notes.md``).
``planner:NAME+remembered`` sets ``planner.loads.remembered``: the first plan takes the loads the service
measured for the workload (same topology name) in an earlier planner cell of the run, the highest of that
cell's measured plans (:mod:`storm_planner.service.planning.memory`); a cell with no such earlier cell plans on
estimates, as without the suffix. ``+remembered-traffic`` takes the remembered rates and tuple sizes only
and keeps the declared CPU (``planner.loads.remembered.cpu: false``). ``planner:NAME+rebalance`` sets
``planner.rebalance``: the service applies the plan's parallelism advice through Nimbus
(:mod:`storm_planner.service.planning.rebalance`), once per submission (its cooldown outlasts the cell);
Storm's schedulers run the submitted executors. ``planner:NAME+KEY=VALUE`` sets one
of the planner's parameters (``planner.NAME.KEY``): a variant under its own label, run beside the
planner's defaults.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from storm_planner.core.errors import StormPlannerError

WORLDCUP = Path("topologies/worldcup")
TRENDS = Path("topologies/trends")
BARGAINS = Path("topologies/bargains")
AIRLINE = Path("topologies/airline")
STORM_DEFAULT_CPU = 10.0    # topology.component.cpu.pcore.percent in Storm's defaults.yaml


@dataclass(frozen=True)
class Workload:
    name: str
    project: Path               # streamparse project, relative to the repository root
    topology: str               # its topology file
    prefix: str                 # the topology's conf prefix (the replay spout's options)
    rate: float                 # tuples/s the spout offers
    quick_rate: float
    workers: int                # topology.workers (the ResourceAwareScheduler picks its own count)
    ackers: int                 # topology.acker.executors
    cpu: dict[str, float] = field(default_factory=dict)   # declared CPU % per executor, per component
    about: str = ""
    feed_kind: str = "worldcup"  # the synthetic feeds it replays (storm_planner.feeds.build's kinds)
    # Option (after the prefix) -> path inside the built feeds ("" is the feeds' root itself).
    feed_paths: dict[str, str] = field(default_factory=lambda: {"feed": "requests", "catalogue": "catalogue.jsonl"})
    sources: int = 1            # spouts that each replay at the rate: the topology is offered rate x sources
    # Tasks per component where they exceed its executors (``<prefix>.tasks.<component>``): room for a
    # rebalance to add executors (parallelism advice); none by default.
    tasks: dict[str, int] = field(default_factory=dict)

    def offered(self, rate: float) -> float:
        """Tuples/s the topology is offered at ``rate`` (every source spout replays at it)."""
        return rate * self.sources

    def feed_options(self, root: Path) -> dict[str, str]:
        """The options that point the topology's spouts (and lookups) at the feeds built under ``root``."""
        return {f"{self.prefix}.{key}": str(root / path if path else root) for key, path in self.feed_paths.items()}

    def options(self, rate: float) -> dict:
        """Topology options that make the workload what it is (feeds and paths come from the cell)."""
        return {"topology.workers": self.workers, "topology.acker.executors": self.ackers,
                f"{self.prefix}.replay_rate": rate,
                **{f"{self.prefix}.cpu.{component}": cpu for component, cpu in self.cpu.items()},
                **{f"{self.prefix}.tasks.{component}": n for component, n in self.tasks.items()}}


# Top-K at 400 t/s behind 2 Mbit/s links: the setting of issue #27, where where the tuples and the acker
# traffic cross links decides whether the topology keeps up. Every executor declares Storm's default CPU;
# four workers with one acker each (Storm's own default for four workers, made explicit).
TOPK_LINK = Workload(
    name="topk-link", project=WORLDCUP, topology="worldcup_topk", prefix="worldcup", rate=400.0, quick_rate=60.0,
    workers=4, ackers=4, cpu={c: STORM_DEFAULT_CPU for c in ("requests", "count", "top")},
    about="World Cup Top-K (requests -> count x2 -> top), acking on, link-bound: 2 Mbit/s links")
WORDCOUNT_LINK = Workload(
    name="wordcount-link", project=WORLDCUP, topology="worldcup_wordcount", prefix="worldcup", rate=200.0,
    quick_rate=40.0, workers=4, ackers=4,
    cpu={c: STORM_DEFAULT_CPU for c in ("requests", "tokenize", "words", "counts")},
    about="World Cup Word Count (a URL's words, fields-grouped), acking on, 2 Mbit/s links")
JOIN_LINK = Workload(
    name="join-link", project=WORLDCUP, topology="worldcup_join", prefix="worldcup", rate=300.0, quick_rate=50.0,
    workers=4, ackers=4, cpu={c: STORM_DEFAULT_CPU for c in ("requests", "join", "totals", "sections")},
    about="World Cup Join (requests with the catalogue, totals per section), acking on, 2 Mbit/s links")
# topDown's two jobs (§7.4): Twitter trending topics (tweets -> count x2 -> rank x2 -> total) and the
# stock bargains join (trades, quotes -> vwap x2, join x2 -> filter -> sink), at rates where the placement
# decides whether a 2 Mbit/s link saturates.
TRENDS_LINK = Workload(
    name="trends-link", project=TRENDS, topology="trends", prefix="trends", rate=400.0, quick_rate=60.0,
    workers=4, ackers=4, cpu={c: STORM_DEFAULT_CPU for c in ("tweets", "count", "rank", "total")},
    about="Twitter trends (topDown §7.4), acking on, 2 Mbit/s links", feed_kind="tweets", feed_paths={"feed": ""})
BARGAINS_LINK = Workload(
    name="bargains-link", project=BARGAINS, topology="bargains", prefix="bargains", rate=200.0, quick_rate=40.0,
    workers=4, ackers=4, cpu={c: STORM_DEFAULT_CPU for c in ("trades", "quotes", "vwap", "join", "filter", "sink")},
    about="stock bargains (topDown §7.4): trades and quotes at this rate each, acking on, 2 Mbit/s links",
    feed_kind="stocks", feed_paths={"trades_feed": "trades", "quotes_feed": "quotes"}, sources=2)
# ALBIC's Real Job 3 (§5.4): flights -> extract x2 -> plane delays x2 and route delays x2 (each fields-grouped
# on its own key) -> one store each. A flight tuple carries its whole record (2-3 kB between nodes), and
# each passes through several Python executors as JSON: on this cluster the CPU binds first. At 50 t/s
# the placement decides (the first quick check: DefaultScheduler fell behind, p99 29 s; topdown kept up).
AIRLINE_LINK = Workload(
    name="airline-link", project=AIRLINE, topology="airline_job3", prefix="airline", rate=50.0, quick_rate=20.0,
    workers=4, ackers=4,
    cpu={c: STORM_DEFAULT_CPU for c in ("flights", "extract", "plane_delays", "store_planes", "route_delays",
                                        "store_routes")},
    about="airline delays (ALBIC Real Job 3: sums by plane and by route), acking on, CPU-bound at 50 t/s",
    feed_kind="airline", feed_paths={"flights_feed": "flights"})
WORKLOADS = {w.name: w for w in (TOPK_LINK, WORDCOUNT_LINK, JOIN_LINK, TRENDS_LINK, BARGAINS_LINK, AIRLINE_LINK)}



def offered_rate(workload: str, rate: float) -> float:
    """Tuples/s the named workload's topology is offered at ``rate`` (``rate`` for a workload not known)."""
    known = WORKLOADS.get(workload)
    return known.offered(rate) if known else rate


def rate_heading(workload: str, rate: str) -> str:
    """``rate`` as a report's heading gives it: ``2 × 200`` where two spouts replay at 200 each."""
    known = WORKLOADS.get(workload)
    return f"{known.sources} × {rate}" if known and known.sources > 1 else rate

@dataclass(frozen=True)
class Scheduler:
    label: str          # as given: default, ras, planner:topdown, ras+nohook
    nimbus: str         # the cluster description's scheduler: default, resource-aware, planner
    algorithm: str | None = None
    hook: bool = True   # the kit's metrics hook in the topology
    replan: bool = True  # the plugin offers the running topology for re-planning (planner.replan)
    resumable: bool = False  # planner.source.resumable: a relief may restart the spout's worker
    correct: bool = False    # planner.replan.first.correction: the first measured re-plan may move for traffic
    remembered: bool = False  # planner.loads.remembered: the first plan on the loads an earlier cell measured
    remembered_cpu: bool = True  # planner.loads.remembered.cpu: false (+remembered-traffic) keeps declared CPU
    rebalance: bool = False  # planner.rebalance: the service applies the plan's parallelism advice, once
    params: tuple[tuple[str, str], ...] = ()  # +KEY=VALUE: planner.<algorithm>.KEY in the topology's conf

    @property
    def with_hook(self) -> str:
        """The label of the same scheduler with the hook on (itself when the hook is on)."""
        return self.label.removesuffix(NO_HOOK)


NO_HOOK = "+nohook"
NO_REPLAN = "+noreplan"
RESUMABLE = "+resumable"
CORRECT = "+correct"
REMEMBERED = "+remembered"
REMEMBERED_TRAFFIC = "+remembered-traffic"
REBALANCE = "+rebalance"
SUFFIXES = (NO_REPLAN, RESUMABLE, CORRECT, REMEMBERED, REMEMBERED_TRAFFIC, REBALANCE, NO_HOOK)   # in the order a label gives them


# The planners that need a profile (Nasiri et al.'s): the bench makes one per workload (storm_planner_bench.e2e.profiles).
HETERO_PLANNERS = frozenset({"hetero", "hetero-optimal"})


class HeteroProfileError(StormPlannerError, ValueError):
    """A hetero cell has no usable profile: a saved one is bad, or profiling it failed."""


class HookJarError(StormPlannerError, ValueError):
    """A run whose arms need the metrics hook, from a checkout where its jar is not built."""


def check_hook_jar(schedulers: Iterable[Scheduler], calibrates: bool = False) -> None:
    """Refuse, before anything starts, a run in which a planner arm (or a calibration, which reads the
    service's measured problems) would run without the metrics hook because its jar is not built: the
    topology would run unmeasured and every measured figure would be missing, not wrong."""
    from storm_planner.metrics.hookjar import JAR_ENV, default_hook_jar

    needing = sorted({s.label for s in schedulers if s.hook and s.algorithm})
    if not needing and not calibrates:
        return
    jar = default_hook_jar()
    if jar is None or not jar.is_file():
        who = ", ".join(needing) or "the calibration"
        raise HookJarError(f"the metrics hook jar is not built ({jar or 'not in a checkout'}), and {who} need(s) "
                           f"it: run `mvn -q -DskipTests package` in this checkout or set ${JAR_ENV}")


def needs_profile(scheduler: Scheduler) -> bool:
    """Does this scheduler need a profile?"""
    return scheduler.algorithm in HETERO_PLANNERS


def parse_scheduler(text: str) -> Scheduler:
    """``default``, ``ras`` (or ``resource-aware``), ``planner:NAME``, each optionally with ``+nohook``,
    ``planner:NAME`` also with ``+noreplan``, ``+resumable``, ``+correct``, ``+remembered`` or
    ``+remembered-traffic``, ``+rebalance``, and with ``+KEY=VALUE`` for any of the planner's parameters (a named variant
    beside the faithful planner: ``planner:albic+max_pl=50`` runs with ``planner.albic.max_pl: 50``). In any
    order; the label puts the parameters first, sorted, then the suffixes in the order of SUFFIXES. A clear
    error for anything else."""
    from storm_planner.planners import available

    text = text.strip()
    base, found, params = _split_scheduler(text)
    label_suffix = "".join(s for s in SUFFIXES if s in found)
    hook, replan = NO_HOOK not in found, NO_REPLAN not in found
    if base in ("default", "ras", "resource-aware") and (found - {NO_HOOK} or params):
        raise ValueError(f"--schedulers: {text!r}: {NO_REPLAN}, {RESUMABLE}, {CORRECT}, {REMEMBERED}, "
                         f"{REMEMBERED_TRAFFIC}, {REBALANCE} and +KEY=VALUE are for planner:NAME alone "
                         "(Storm's own schedulers never re-plan a running topology)")
    if base == "default":
        return Scheduler(base + label_suffix, "default", hook=hook)
    if base in ("ras", "resource-aware"):
        return Scheduler("ras" + label_suffix, "resource-aware", hook=hook)
    kind, _, algorithm = base.partition(":")
    if kind == "planner" and algorithm:
        if algorithm not in available():
            raise ValueError(f"--schedulers: {text!r}: no planner {algorithm!r} (registered: "
                             f"{', '.join(sorted(available()))})")
        if {REMEMBERED, REMEMBERED_TRAFFIC} <= found:
            raise ValueError(f"--schedulers: {text!r}: {REMEMBERED} or {REMEMBERED_TRAFFIC}, not both")
        checked = _checked_params(algorithm, params, text)
        variant = "".join(f"+{key}={value}" for key, value in checked)
        return Scheduler(base + variant + label_suffix, "planner", algorithm, hook=hook, replan=replan,
                         resumable=RESUMABLE in found, correct=CORRECT in found,
                         remembered=bool({REMEMBERED, REMEMBERED_TRAFFIC} & found),
                         remembered_cpu=REMEMBERED_TRAFFIC not in found, rebalance=REBALANCE in found,
                         params=checked)
    raise ValueError(f"--schedulers: {text!r} is not default, ras or planner:NAME (each may end in {NO_HOOK}; "
                     f"planner:NAME in {NO_REPLAN}, {RESUMABLE}, {CORRECT}, {REMEMBERED}, {REMEMBERED_TRAFFIC}, "
                     f"{REBALANCE} "
                     "or +KEY=VALUE)")


def _split_scheduler(text: str) -> tuple[str, set[str], tuple[tuple[str, str], ...]]:
    """(base, the suffixes found, the sorted KEY=VALUE parameters); an unknown suffix is an error."""
    base, *parts = text.split("+")
    found: set[str] = set()
    params: dict[str, str] = {}
    for part in parts:
        key, equals, value = part.partition("=")
        if equals:
            if not key.strip() or not value.strip() or key.strip() in params:
                raise ValueError(f"--schedulers: {text!r}: {'+' + part!r} is not one KEY=VALUE of its own")
            params[key.strip()] = value.strip()
        elif f"+{part}" in SUFFIXES:
            found.add(f"+{part}")
        else:
            raise ValueError(f"--schedulers: {text!r}: unknown suffix {'+' + part!r} (known: "
                             f"{', '.join(SUFFIXES)} and +KEY=VALUE; a value may not hold '+' or ',')")
    return base, found, tuple(sorted(params.items()))


def _checked_params(algorithm: str, params: tuple[tuple[str, str], ...], text: str) -> tuple[tuple[str, str], ...]:
    """The parameters as the service will read them from the topology's conf (strings converted to the
    defaults' types, then the planner's own checks), checked now: a typo fails the bench at its start, not
    every cell of that scheduler at its submission. Each value comes back in one spelling (``50``, ``5e1``
    and ``50.0`` are one variant, one label); a planner's inputs (``hetero``'s ``profiles``: the bench
    makes them) are not parameters."""
    from storm_planner.core.errors import StormPlannerError
    from storm_planner.planners._parameters import option_prefix, parameters_from_options
    from storm_planner.planners.base import planner_class

    cls = planner_class(algorithm)
    inputs = [key for key, _ in params if key in cls.option_inputs]
    if inputs:
        raise ValueError(f"--schedulers: {text!r}: {inputs[0]!r} is an input, not a parameter of {algorithm}")
    try:
        converted = parameters_from_options(cls, {option_prefix(algorithm) + key: value for key, value in params})
        cls(**converted)
    except (StormPlannerError, ValueError, TypeError) as error:
        raise ValueError(f"--schedulers: {text!r}: {error}") from None
    return tuple((key, _spelling(converted[key], value)) for key, value in params)


def _spelling(value: object, given: str) -> str:
    """One text per value, which the service converts back to it: ``50.0`` is ``50``; true/false for a flag."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value) if isinstance(value, (int, str)) else given


def parse_workloads(text: str, known: dict[str, Workload] | None = None) -> list[Workload]:
    """The comma-separated workloads of ``known`` (default: this bench's) that ``text`` names."""
    known = WORKLOADS if known is None else known
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"--workloads: unknown {', '.join(unknown) or '(none given)'} "
                         f"(known: {', '.join(known)})")
    return [known[n] for n in names]
