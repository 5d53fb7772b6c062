"""Every ``planner.*`` configuration key in one catalogue: its type, default, range, who reads it, and how.

The Python counterpart of the Nimbus plugin's ``PlannerConfig`` and the metrics hook's ``MetricsConfig``
(Storm's own ``Config.java`` is the model: one constant per key, its type and default beside it). Each
:class:`Setting` says where it is set (a topology's conf, Nimbus' ``storm.yaml``, a component's conf) and
which part of the kit reads it (the plugin, the metrics hook, the planner service, a planner);
``planner.state.mb`` alone is not a conf key but executor data a component's code sets. The table
in ``docs/settings.md`` is written from this catalogue (``storm-planner settings``); a test keeps the two
equal, another checks that the Java sides declare the same keys and defaults, and another that no module
reads a ``planner.*`` key but through :meth:`Setting.read`.

Error policy of the Python side (the service and the planners): a topology's options arrive as text;
unset or empty means the default; a value that is not of the key's type or outside its range refuses the
topology with ``BAD_REQUEST`` and a message naming the key and the value (:class:`SettingError`). The
service checks every key it reads before it plans (:func:`check_service_options`), so nothing is planned
on a half-read conf and no reader falls back silently. The plugin then leaves that topology to Storm's
DefaultScheduler and plans the others. (The Java side has its own policy, stated in ``PlannerConfig``: a
bad ``storm.yaml`` key stops Nimbus at start-up, a bad topology key takes the default, so a scheduling
round never fails there; the hook takes the default and logs it once.)

Two keys with close names are different settings:

* ``planner.replan.interval.secs`` (the plugin) is how often Nimbus *offers* a running topology to the
  service;
* ``planner.replan.period.secs`` (the service) is the longest time between two re-plans of it (an offer
  after that long re-plans even if the metrics did not change) and the window of its migration budget
  (``planner.max.migrations`` moves per period).

Besides these keys, ``planner.<algorithm>.<parameter>`` sets a planner's parameter
(:mod:`storm_planner.planners._parameters` resolves and checks those). Any other ``planner.*`` key is
ignored, and the plan's notes say so (:func:`unknown_keys`).
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.core.fields import finite, parse_flag

PREFIX = "planner."

# Kinds of value.
FLAG, INTEGER, NUMBER, TEXT, CHOICE, JSON, HOSTS = "flag", "integer", "number", "text", "choice", "json", "hosts"
STREAM_IDS = "stream ids"   # comma-separated Storm stream ids, read as a tuple
STREAM_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.$-]*")
NAME = "name"   # a planner's registered name: lower-case letters, digits and dashes (the service checks it exists)
MOVES = "moves"  # executors or components, then a node: "[3-3],count@sup-slow" (a forced move, adaptation/forced.py)
MOVES_SYNTAX = re.compile(r"\s*[^\s,@]+(\s*,\s*[^\s,@]+)*\s*@\s*([A-Za-z0-9._-]+(:([0-9]+|new))?|\*)\s*")
# Where a key is set.
TOPOLOGY, STORM_YAML, TOPOLOGY_OR_YAML = "topology conf", "storm.yaml", "topology conf or storm.yaml"
EXECUTOR_DATA = "executor data"   # set by a component's code (TopologyContext.setExecutorData), not in a conf
# Who reads it.
PLUGIN, HOOK, SERVICE, PLANNER = "plugin", "hook", "service", "planner"


class SettingError(ProblemError):
    """A ``planner.*`` value of the wrong type or out of range; the message names the key and the value."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Setting:
    """One key: ``kind`` of value, ``default`` (None: unset), range (``minimum``, ``positive``, ``maximum``,
    ``choices``), where it is set, who reads it, and what it means. ``field`` names the
    :class:`~storm_planner.core.elements.Options` field it fills, when it fills one."""

    key: str
    kind: str
    default: Any
    where: str
    readers: tuple[str, ...]
    meaning: str
    minimum: float | None = None
    maximum: float | None = None
    positive: bool = False
    choices: tuple[str, ...] = ()
    field: str | None = None

    def read(self, options: Mapping[str, Any]) -> Any:
        """This key's value in ``options`` (a topology's conf, values as text or typed), or the default;
        :class:`SettingError` naming the key when the value is unusable."""
        raw = options.get(self.key)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return self.default
        return self.parse(raw)

    def is_set(self, options: Mapping[str, Any]) -> bool:
        """Whether ``options`` gives this key a value (an empty one counts as unset)."""
        raw = options.get(self.key)
        return raw is not None and not (isinstance(raw, str) and not raw.strip())

    def parse(self, raw: Any) -> Any:
        shown = f"topology option {self.key}"
        if self.kind == FLAG:
            flag = parse_flag(raw)
            if flag is None:
                raise SettingError(f"{shown}={raw!r} is not true or false", self.key)
            return flag
        if self.kind in (INTEGER, NUMBER):
            return self._number(raw, shown)
        if self.kind == CHOICE:
            word = str(raw).strip().lower()
            if word not in self.choices:
                raise SettingError(f"{shown}={raw!r} is not one of {', '.join(self.choices)}", self.key)
            return word
        if self.kind == TEXT:
            return str(raw).strip()
        if self.kind == STREAM_IDS:
            ids = tuple(part.strip() for part in str(raw).split(","))
            if not all(STREAM_ID.fullmatch(part) for part in ids):
                raise SettingError(f"{shown}={raw!r} is not a comma-separated list of stream ids", self.key)
            return ids
        if self.kind == NAME:
            name = str(raw).strip()
            if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
                raise SettingError(f"{shown}={raw!r} is not a planner's name (lower-case letters, digits, dashes)",
                                   self.key)
            return name
        if self.kind == MOVES:
            text = str(raw).strip()
            if not MOVES_SYNTAX.fullmatch(text):
                raise SettingError(f"{shown}={raw!r} is not executors or components, then a node: "
                                   f"[3-3],count@sup-slow (a port may follow the node: @sup-slow:6701; @* takes the "
                                   f"node holding fewest of the first item's component)", self.key)
            return text
        return raw  # JSON and host lists: the reader named in ``readers`` checks their shape

    def _number(self, raw: Any, shown: str) -> int | float:
        kind = int if self.kind == INTEGER else float
        if isinstance(raw, bool):
            raise SettingError(f"{shown}={raw!r} is not {'an integer' if kind is int else 'a number'}", self.key)
        try:
            value = kind(raw if isinstance(raw, (int, float)) and kind is float else str(raw).strip())
        except ValueError:
            raise SettingError(f"{shown}={raw!r} is not {'an integer' if kind is int else 'a number'}",
                               self.key) from None
        try:
            finite(value, shown, minimum=self.minimum, positive=self.positive, given=repr(raw))
        except ProblemError as error:
            raise SettingError(str(error), self.key) from None
        if self.maximum is not None and value > self.maximum:
            raise SettingError(f"{shown}={raw!r} must not be above {self.maximum:g}", self.key)
        return value

    @property
    def range(self) -> str:
        """The range as the table shows it."""
        if self.choices:
            return " or ".join(self.choices)
        if self.kind not in (INTEGER, NUMBER):
            return ""
        low = "> 0" if self.positive else (f">= {self.minimum:g}" if self.minimum is not None else "")
        high = f"<= {self.maximum:g}" if self.maximum is not None else ""
        return ", ".join(part for part in (low, high) if part)


_CATALOGUE: dict[str, Setting] = {}


def _define(key: str, kind: str, default: Any, where: str, readers: str | tuple[str, ...], meaning: str,
            **bounds: Any) -> Setting:
    setting = Setting(key, kind, default, where, (readers,) if isinstance(readers, str) else readers, meaning,
                      **bounds)
    assert key.startswith(PREFIX) and key not in _CATALOGUE, key
    _CATALOGUE[key] = setting
    return setting


# -- the Nimbus plugin (storm-scheduler: PlannerConfig) --------------------------------------------------
SERVICE_HOST = _define("planner.service.host", TEXT, "127.0.0.1", STORM_YAML, PLUGIN,
                       "host of the planner service")
SERVICE_PORT = _define("planner.service.port", INTEGER, 7627, STORM_YAML, PLUGIN,
                       "port of the planner service (framed transport, binary protocol)", minimum=1, maximum=65535)
SERVICE_TIMEOUT_MS = _define("planner.service.timeout.ms", INTEGER, 5000, STORM_YAML, PLUGIN,
                             "deadline of one planning call (connect, send, read), also sent as the request's "
                             "deadline_ms; Nimbus holds its scheduling lock while it waits", minimum=1)
SERVICE_TOKEN = _define("planner.service.token", TEXT, None, STORM_YAML, PLUGIN,
                        "the service's shared token (serve --token-file or $STORM_PLANNER_TOKEN), sent with "
                        "every plan call")
SERVICE_STATUS_MAX_CHARS = _define("planner.service.status.max.chars", INTEGER, 512, STORM_YAML, PLUGIN,
                                   "a topology status longer than this is cut", minimum=1)
SERVICE_LOG_MAX_CHARS = _define("planner.service.log.max.chars", INTEGER, 4096, STORM_YAML, PLUGIN,
                                "text from the service in one line of Nimbus' log is cut to this", minimum=1)
DEFAULT_ALGORITHM = _define("planner.default.algorithm", TEXT, "auto", STORM_YAML, PLUGIN,
                            "algorithm for topologies that name none")
ALGORITHM = _define("planner.algorithm", TEXT, None, TOPOLOGY, PLUGIN,
                    "algorithm that plans this topology (unset: planner.default.algorithm)")
ENABLED = _define("planner.enabled", FLAG, True, TOPOLOGY, PLUGIN,
                  "false: Storm's DefaultScheduler places this topology, the planner never sees it")
INFEASIBLE_FALLBACK = _define("planner.infeasible.fallback", FLAG, False, TOPOLOGY_OR_YAML, PLUGIN,
                              "true: a topology the planner finds INFEASIBLE is placed by DefaultScheduler "
                              "anyway (false: left unscheduled, as Storm's ResourceAwareScheduler does)")
REPLAN = _define("planner.replan", FLAG, True, TOPOLOGY, (PLUGIN, SERVICE),
                 "false: once placed, the topology is never offered for re-planning (plugin) nor moved (service)")
REPLAN_INTERVAL_SECS = _define("planner.replan.interval.secs", NUMBER, 10.0, TOPOLOGY_OR_YAML, PLUGIN,
                               "how often the plugin OFFERS a running topology to the service; not to be "
                               "confused with planner.replan.period.secs", minimum=0)

# -- the metrics hook (storm-metrics: MetricsConfig, WorkerMetricsPublisher) ------------------------------
METRICS_ENABLED = _define("planner.metrics.enabled", FLAG, True, TOPOLOGY, (HOOK, SERVICE),
                          "false: no metrics hook (submit), the hook publishes nothing, the service plans on "
                          "estimates")
METRICS_PERIOD_SECS = _define("planner.metrics.period.secs", NUMBER, 10.0, TOPOLOGY, (HOOK, SERVICE),
                              "statistics period: one window per task per period (at least 1 s)", minimum=0)
METRICS_ZOOKEEPER_ROOT = _define("planner.metrics.zookeeper.root", TEXT, "/storm-planner/metrics", TOPOLOGY, HOOK,
                                 "znode under which windows are written (the service: serve --metrics-root)")
METRICS_ZOOKEEPER_SERVERS = _define("planner.metrics.zookeeper.servers", HOSTS, None, TOPOLOGY, HOOK,
                                    "ZooKeeper hosts of the windows (unset: storm.zookeeper.servers)")
METRICS_ZOOKEEPER_PORT = _define("planner.metrics.zookeeper.port", INTEGER, None, TOPOLOGY, HOOK,
                                 "ZooKeeper port (unset: storm.zookeeper.port)", minimum=1, maximum=65535)
METRICS_MAX_WRITES_PER_SEC = _define("planner.metrics.max.writes.per.sec", NUMBER, 20.0, TOPOLOGY, HOOK,
                                     "ceiling on one worker's znode writes; a worker with more tasks stretches "
                                     "its period", positive=True)
STATE_MB = _define("planner.state.mb", NUMBER, None, EXECUTOR_DATA, HOOK,
                   "an executor's state size in MB (a Number or Supplier), published with its windows: what "
                   "moving it costs", minimum=0)

# -- the planner service: the problem (service/planning/convert.py) --------------------------------------
MAX_MIGRATIONS = _define("planner.max.migrations", INTEGER, None, TOPOLOGY, SERVICE,
                         "executor moves per planner.replan.period.secs (unset: no limit)", minimum=0,
                         field="max_migrations")
MAX_MIGRATION_COST = _define("planner.max.migration.cost", NUMBER, None, TOPOLOGY, SERVICE,
                             "migration cost (state moved) a plan may spend", minimum=0, field="max_migration_cost")
TIME_LIMIT_SECS = _define("planner.time.limit.secs", NUMBER, 5.0, TOPOLOGY, SERVICE,
                          "solver time limit (capped to the request's deadline)", positive=True, field="time_limit_s")
SEED = _define("planner.seed", INTEGER, 1, TOPOLOGY, SERVICE, "random seed of randomised planners", minimum=0,
               field="seed")
MAX_CPU_UTILISATION = _define("planner.max.cpu.utilisation", NUMBER, None, TOPOLOGY, SERVICE,
                              "share of a node's CPU that may be in use after placement (GMA's D_CPU; topdown, "
                              "tasklevel and topdown-ls fill nodes up to it; unset: all)", positive=True, field="max_cpu_utilisation")
MAX_BANDWIDTH_UTILISATION = _define("planner.max.bandwidth.utilisation", NUMBER, None, TOPOLOGY, SERVICE,
                                    "share of a node's link that may be in use after placement (GMA's D_BW; "
                                    "unset: all)", positive=True, field="max_bandwidth_utilisation")
EXECUTOR_COST = _define("planner.executor.cost", NUMBER, 10.0, TOPOLOGY, SERVICE,
                        "load (% of a core) of an executor nothing is measured about; when set it replaces the "
                        "executors' declared CPU", minimum=0)
LOADS_REMEMBERED = _define("planner.loads.remembered", FLAG, False, TOPOLOGY, SERVICE,
                           "a plan without metrics takes each component's load per executor and each "
                           "component pair's tuples/s (the highest of the last measured run of a topology of "
                           "the same name) and tuple size (the latest), kept in the service's memory, in "
                           "place of the declared CPU, the prior rates and planner.tuple.bytes")
LOADS_REMEMBERED_CPU = _define("planner.loads.remembered.cpu", FLAG, True, TOPOLOGY, SERVICE,
                               "with planner.loads.remembered, false keeps the declared CPU (Storm's RAS "
                               "accounting) and takes only the remembered rates and tuple sizes: loads measured "
                               "under one placement overstate a tighter one")
TUPLE_BYTES = _define("planner.tuple.bytes", NUMBER, 0.0, TOPOLOGY, SERVICE,
                      "bytes of one tuple of a stream nothing is measured about", minimum=0)
SYSTEM_STREAMS = _define("planner.system.streams", FLAG, True, TOPOLOGY, SERVICE,
                         "false: the acker's and metrics consumers' streams are not added to the declared ones")
TUPLE_OVERHEAD_BYTES = _define("planner.network.tuple.overhead.bytes", NUMBER, 40.0, TOPOLOGY, SERVICE,
                               "wire bytes per tuple beyond the hook's payload estimate", minimum=0)
WATERMARK_STREAMS = _define("planner.watermark.streams", STREAM_IDS, ("watermark",), TOPOLOGY, SERVICE,
                            "comma-separated stream ids that carry event-time watermarks (the kit's "
                            "streaming.watermarks): before metrics, one per spout record, passed on once per "
                            "task, unanchored; an id no stream has (none) turns this off")

# -- the planner service: metrics (metrics/source.py) ----------------------------------------------------
METRICS_WINDOWS = _define("planner.metrics.windows", INTEGER, 3, TOPOLOGY, SERVICE,
                          "latest windows per task averaged into loads and rates", positive=True)
METRICS_STALE_SECS = _define("planner.metrics.stale.secs", NUMBER, None, TOPOLOGY, SERVICE,
                             "a window older than this is stale (unset: 3 periods, at least 30 s)", positive=True)
METRICS_TRAFFIC_UNIT = _define("planner.metrics.traffic.unit", CHOICE, "tuples", TOPOLOGY, SERVICE,
                               "unit of measured traffic rates", choices=("tuples", "bytes"))
METRICS_MIN_COVERAGE = _define("planner.metrics.min.coverage", NUMBER, 0.5, TOPOLOGY, SERVICE,
                               "share of executors with a usable window before measured figures replace the "
                               "estimates", minimum=0, maximum=1)
METRICS_WORKER_CPU = _define("planner.metrics.worker.cpu", FLAG, True, TOPOLOGY, SERVICE,
                             "a worker's CPU beyond its executors' threads counts in their loads (false: "
                             "executor threads and subprocesses only)")

# -- the planner service: rebalance (service/planning/rebalance.py) --------------------------------------
REBALANCE = _define("planner.rebalance", FLAG, False, TOPOLOGY, SERVICE,
                    "true: the service applies a plan's parallelism advice through Nimbus")
REBALANCE_MIN_GAIN = _define("planner.rebalance.min.gain", NUMBER, 0.10, TOPOLOGY, SERVICE,
                             "least relative gain of the predicted max input rate worth a rebalance", minimum=0)
REBALANCE_COOLDOWN_SECS = _define("planner.rebalance.cooldown.secs", NUMBER, 120.0, TOPOLOGY, SERVICE,
                                  "after a rebalance (applied or failed), none for this long", minimum=0)
REBALANCE_WAIT_SECS = _define("planner.rebalance.wait.secs", INTEGER, None, TOPOLOGY, SERVICE,
                              "how long Storm deactivates the topology before it redistributes the tasks "
                              "(unset: topology.message.timeout.secs)", minimum=0)

# -- the planner service: re-planning (adaptation/replan.py) ---------------------------------------------
REPLAN_THRESHOLD = _define("planner.replan.threshold", NUMBER, 0.25, TOPOLOGY, SERVICE,
                           "relative change of measured loads or traffic that triggers a re-plan", minimum=0)
REPLAN_PERIOD_SECS = _define("planner.replan.period.secs", NUMBER, 60.0, TOPOLOGY, SERVICE,
                             "longest time between two re-plans, and the window of the migration budget; not "
                             "to be confused with planner.replan.interval.secs", minimum=0)
REPLAN_MIN_GAIN = _define("planner.replan.min.gain", NUMBER, 0.10, TOPOLOGY, SERVICE,
                          "least relative improvement a new placement needs to be applied", minimum=0)
REPLAN_SETTLE_SECS = _define("planner.replan.settle.secs", NUMBER, 30.0, TOPOLOGY, SERVICE,
                             "after a re-plan moved executors, no re-plan for this long", minimum=0)
REPLAN_CAUTIOUS = _define("planner.replan.cautious", FLAG, True, TOPOLOGY, SERVICE,
                          "weigh the restarts a move causes: move a running topology only when it is short "
                          "of something (a node at 90 % of its CPU or more, a link at 50 % or more) and the "
                          "move relieves it, and restart a spout's worker only to relieve overload (or the CPU "
                          "pressure, with planner.source.resumable) (false: apply any placement better by "
                          "planner.replan.min.gain)")
REPLAN_TRUST = _define("planner.replan.trust", FLAG, False, TOPOLOGY, SERVICE,
                       "apply the planner's re-plan as it is, within planner.max.migrations: no gain gate, no "
                       "cut to the fewest moves that pay, no caution but that no spout's worker restarts; the "
                       "first re-plan waits for planner.replan.period.secs, not for the first metrics "
                       "(experiments on a planner's own adaptation, e.g. ALBIC's collocation period after period)")
SOURCE_RESUMABLE = _define("planner.source.resumable", FLAG, False, TOPOLOGY, SERVICE,
                           "the topology's spouts resume after a restart without loss (from a committed offset, "
                           "as Kafka's spout does, or the kit's replay spouts given a checkpoint_dir): "
                           "under planner.replan.cautious a move may then restart a spout's worker to relieve a "
                           "node short of CPU (when no relief spares it), not for traffic or balance")
REPLAN_FIRST_CORRECTION = _define(
    "planner.replan.first.correction", FLAG, False, TOPOLOGY, SERVICE,
    "the first re-plan on measured metrics of a placement made without them may move for traffic or balance "
    "alone, once, though the topology is short of nothing (under planner.replan.cautious), and restart a "
    "spout's worker when planner.source.resumable: the first plan is a guess on priors, and the gain gate "
    "still asks planner.replan.min.gain of the measured placement. Off: on the end-to-end bench's trends it traded "
    "link bytes for CPU pressure whose relief then restarted the spout (benchmarks/README.md, e2e-correct)")
REPLAN_DRAIN = _define("planner.replan.drain", FLAG, True, TOPOLOGY, SERVICE,
                       "before a re-plan moves executors of a running topology, pause its spouts (Nimbus "
                       "deactivate), wait for the tuples in flight to be acked, move, wait for the moved "
                       "workers' first metrics windows, and resume (activate); needs serve --nimbus and "
                       "--zookeeper (false: move at once, as Storm's rebalance would without its wait)")
REPLAN_DRAIN_ALWAYS = _define(
    "planner.replan.drain.always", FLAG, False, TOPOLOGY, SERVICE,
    "drain every move (with planner.replan.drain); false: a move that restarts no spout's worker, leaves "
    "every bolt and the ackers an executor that can take their tuples, and whose lost trees fit in the "
    "spouts' topology.max.spout.pending goes at once, the trees through its other workers still acked (on the quota "
    "cluster such a move kept Top-K acking in every 5 s interval, where the drain stood it still for "
    "33-40 s: benchmarks/reports/drain-4.md)")
REPLAN_DRAIN_SECS = _define("planner.replan.drain.secs", NUMBER, 30.0, TOPOLOGY, SERVICE,
                            "longest wait, spouts paused, for the tuples in flight to be acked before a move; "
                            "past it the move happens anyway and its note says how many were in flight "
                            "(Storm's default topology.message.timeout.secs: by then every tuple is acked or "
                            "failed)", minimum=0)
REPLAN_START_SECS = _define("planner.replan.start.secs", NUMBER, 60.0, TOPOLOGY, SERVICE,
                            "longest wait, after a drained move, for the restarted workers' first metrics "
                            "windows before the spouts resume (a worker JVM under a 25 % CPU quota took 18 s "
                            "to start)", minimum=0)
REPLAN_FORCE = _define("planner.replan.force", MOVES, None, TOPOLOGY, SERVICE,
                       "move these executors ([3-3]) or components (count: its first executor not on the node, outside the "
                       "spouts' workers first) "
                       "to this node (sup-slow, sup-slow:6701 for a slot, sup-slow:new for a worker of their own, "
                       "or * for the node holding fewest of the first item's component) on the first offer "
                       "planner.replan.force.after.secs after the topology's first plan, once, through the "
                       "drain and past every gate (benchmarks of a move with and without the drain)")
REPLAN_FORCE_AFTER_SECS = _define("planner.replan.force.after.secs", NUMBER, 0.0, TOPOLOGY, SERVICE,
                                  "how long after the topology's first plan the forced move "
                                  "(planner.replan.force) waits", minimum=0)
INITIAL_ALGORITHM = _define("planner.initial.algorithm", NAME, None, TOPOLOGY, SERVICE,
                            "algorithm of the topology's first placement only; re-plans use planner.algorithm "
                            "(unset: planner.algorithm for both)")

# -- planners --------------------------------------------------------------------------------------------
HETERO_PROFILES = _define("planner.hetero.profiles", JSON, None, TOPOLOGY, PLANNER,
                          "the hetero planners' profile (an object, or its JSON text): times per component "
                          "and machine type")

CATALOGUE: Mapping[str, Setting] = MappingProxyType(_CATALOGUE)
# The keys that fill Options fields, by field.
OPTION_FIELDS: Mapping[str, Setting] = MappingProxyType({s.field: s for s in CATALOGUE.values() if s.field})


def setting(key: str) -> Setting:
    """The catalogue's entry for ``key`` (KeyError for a key it does not know)."""
    return CATALOGUE[key]


def read_by(reader: str) -> tuple[Setting, ...]:
    return tuple(s for s in CATALOGUE.values() if reader in s.readers)


def check_service_options(options: Mapping[str, Any]) -> None:
    """Read every key the service reads: the first unusable value raises :class:`SettingError`."""
    for entry in read_by(SERVICE):
        entry.read(options)


def unknown_keys(options: Mapping[str, Any], algorithms: Iterable[str], most: int = 10) -> list[str]:
    """Notes on the ``planner.*`` keys of ``options`` nothing reads: neither in the catalogue nor under
    ``planner.<algorithm>.`` of one of ``algorithms`` (a misspelling, most likely: the key is ignored).
    At most ``most`` notes, the closest catalogue key suggested."""
    namespaces = tuple(f"{PREFIX}{name}." for name in algorithms)
    unknown = sorted(key for key in options if isinstance(key, str) and key.startswith(PREFIX)
                     and key not in CATALOGUE and not key.startswith(namespaces))
    notes = []
    for key in unknown[:most]:
        # Compared without the common prefix, which would make every key look alike.
        close = difflib.get_close_matches(key[len(PREFIX):], [k[len(PREFIX):] for k in CATALOGUE], n=1, cutoff=0.75)
        notes.append(f"topology option {key[:200]} is not a storm-planner setting: ignored"
                     + (f" (did you mean {PREFIX}{close[0]}?)" if close else ""))
    if len(unknown) > most:
        notes.append(f"{len(unknown) - most} more unknown planner.* options ignored")
    return notes


def options_fields(options: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`~storm_planner.core.elements.Options` fields the topology's options set (unset ones left
    out, so the dataclass' defaults stand)."""
    values = {name: entry.read(options) for name, entry in OPTION_FIELDS.items() if entry.is_set(options)}
    return {name: value for name, value in values.items() if value is not None}


def without_fields(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` less the keys that became Options fields (the rest stays in ``Options.extra``)."""
    fields = {entry.key for entry in OPTION_FIELDS.values()}
    return {key: value for key, value in options.items() if key not in fields}


def markdown_table(settings: Iterable[Setting] | None = None) -> str:
    """The catalogue as the Markdown of ``docs/settings.md``."""
    rows = ["| key | type | default | range | set in | read by | meaning |",
            "|---|---|---|---|---|---|---|"]
    for entry in settings or CATALOGUE.values():
        default = "(unset)" if entry.default is None else f"`{_shown(entry.default)}`"
        rows.append(f"| `{entry.key}` | {entry.kind} | {default} | {entry.range} | {entry.where} | "
                    f"{', '.join(entry.readers)} | {entry.meaning.replace('|', '/')} |")
    return "\n".join(rows)


def settings_page() -> str:
    """``docs/settings.md``: the error policies, the two re-planning intervals, and the table."""
    return f"""# Settings: every `planner.*` key

Written by `storm-planner settings > docs/settings.md` from the catalogue in
`python/src/storm_planner/core/settings.py`; a test fails when this file is not what the command writes,
and another when the Java plugin (`PlannerConfig`) or the metrics hook (`MetricsConfig`) declares a key or
a default the catalogue does not.

A topology's `planner.*` keys reach the service as its options (text). Storm merges `storm.yaml` into every
topology's conf, so a topology key may also be set cluster-wide there. `planner.<algorithm>.<parameter>`
sets one planner's parameter (`storm-planner algorithms --params` lists them); a misspelled one is refused.
Any other `planner.*` key is ignored, and the plan's notes say so, naming the closest key of the table.

## What a bad value does

* **The planner service and the planners**: unset or empty means the default. A value that is not of the
  key's type or outside its range refuses the topology with `BAD_REQUEST` and a message naming the key
  and the value, before anything is measured or planned; the plugin leaves that topology to Storm's
  DefaultScheduler and applies the plans of the others. Flags take true/yes/on/1 or false/no/off/0.
* **The Nimbus plugin**: a bad `storm.yaml` key stops Nimbus at start-up with a message naming it; a bad
  topology key takes its default, so a scheduling round never fails. Its flags are off only for `false`
  (`planner.infeasible.fallback`: on only for `true`).
* **The metrics hook**: a bad value takes the default and is logged once by the worker.

## Two re-planning intervals

* `planner.replan.interval.secs` (the plugin): how often Nimbus offers a running topology to the service.
* `planner.replan.period.secs` (the service): the longest time between two re-plans of it (an offer after
  that long re-plans even when the metrics did not change), and the window of its migration budget
  (`planner.max.migrations` moves per period).

## The keys

{markdown_table()}
"""


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)


def as_json(settings: Iterable[Setting] | None = None) -> list[dict[str, Any]]:
    return [{"key": s.key, "type": s.kind, "default": s.default, "range": s.range, "set_in": s.where,
             "read_by": list(s.readers), "meaning": s.meaning} for s in (settings or CATALOGUE.values())]
