"""The cluster description: one YAML file that says what a Storm cluster is.

The format is documented in ``default-cluster.yaml`` (shipped with the
package, used when no ``--cluster FILE`` is given). Parsing resolves every
default, so a :class:`ClusterDescription` is complete: each supervisor knows
its slot ports and thrift port, and every port already includes the offset.
Renderers (storm.yaml for local processes, the docker-compose cluster) take this
object and never look at the YAML again.

Errors name the offending key by path (``supervisors[1].meta.speed``) so a
user can fix the file without reading this module.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from storm_planner.core.errors import StormPlannerError

from .storm_home import is_storm_version

DEFAULT_DESCRIPTION = "default-cluster.yaml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
# A host name (RFC 1123 labels; '_' tolerated) when not an IP address: it is written into zoo.cfg and
# command lines, so nothing else (no blank, newline, '=', '/').
_HOST_LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")
_TOP_KEYS = {"name", "storm_version", "host", "ports", "planner", "heap_mb", "storm", "supervisors", "network",
             "scheduler"}
# Nimbus' scheduler: the kit's plugin (asking the planner service), or one of Storm's own.
SCHEDULERS = ("planner", "default", "resource-aware")
_PORT_KEYS = {"offset", "zookeeper", "nimbus", "ui", "planner", "dashboard", "supervisor_thrift", "slots"}
_PLANNER_KEYS = {"algorithm", "timeout_ms"}
_HEAP_KEYS = {"zookeeper", "nimbus", "supervisor", "ui", "worker"}
_SUPERVISOR_KEYS = {"name", "cpu", "memory_mb", "meta", "slots", "thrift_port", "host", "storm", "link_mbit"}
_NETWORK_KEYS = {"emulated", "subnet", "link_mbit"}
# RFC 2544's benchmarking block: never routed on the internet, so emulated hosts cannot collide
# with a real network the machine is on.
EMULATED_RANGE = ipaddress.ip_network("198.18.0.0/15")


class DescriptionError(StormPlannerError, ValueError):
    """The cluster description is invalid; the message names the key."""


@dataclass(frozen=True)
class Supervisor:
    """One supervisor node, with every port resolved (offset included)."""

    name: str
    host: str
    cpu: float
    memory_mb: float
    meta: Mapping[str, str]
    slot_ports: tuple[int, ...]
    thrift_port: int
    storm: Mapping[str, Any] = field(default_factory=dict)
    link_mbit: float | None = None   # emulated network: this supervisor's link (None: the network's)
    # A bench's CPU quota when it differs from the declared ``cpu`` (topDown's capacity axis scales what a
    # node declares, not what it has): % of a core; None holds the node to what it declares.
    quota_cpu: float | None = None

    @property
    def held_cpu(self) -> float:
        """The CPU (% of a core) a quota holds this supervisor to: ``quota_cpu``, else its declared ``cpu``."""
        return self.cpu if self.quota_cpu is None else self.quota_cpu


@dataclass(frozen=True)
class Ports:
    """The cluster-wide ports, offset included."""

    zookeeper: int
    nimbus: int
    ui: int
    planner: int
    dashboard: int


@dataclass(frozen=True)
class Network:
    """The emulated network (``cluster/network.py``): off unless ``emulated``.

    When on, every supervisor runs in its own network namespace, joined to this machine by a veth
    link shaped to ``link_mbit`` in both directions; ``subnet`` (inside 198.18.0.0/15) gives the
    addresses, ``None`` picks a free /24 at ``cluster up``.
    """

    emulated: bool = False
    subnet: str | None = None
    link_mbit: float = 100.0


@dataclass(frozen=True)
class Heaps:
    """JVM maximum heaps in MB."""

    zookeeper: int = 256
    nimbus: int = 512
    supervisor: int = 256
    ui: int = 384
    worker: int = 256


@dataclass(frozen=True)
class ClusterDescription:
    """A complete, validated cluster description."""

    name: str
    storm_version: str
    host: str
    ports: Ports
    supervisors: tuple[Supervisor, ...]
    planner_algorithm: str = "even"
    planner_timeout_ms: int = 5000
    heap_mb: Heaps = field(default_factory=Heaps)
    storm: Mapping[str, Any] = field(default_factory=dict)
    offset: int = 0
    source: str = "<dict>"
    network: Network = field(default_factory=Network)
    scheduler: str = "planner"   # one of SCHEDULERS

    def port_list(self) -> list[int]:
        """Every port, one entry per port (for free-port checks)."""
        ports = [self.ports.zookeeper, self.ports.nimbus, self.ports.ui, self.ports.planner, self.ports.dashboard]
        for sup in self.supervisors:
            ports.append(sup.thrift_port)
            ports.extend(sup.slot_ports)
        return ports

    def supervisor(self, name: str) -> Supervisor:
        for sup in self.supervisors:
            if sup.name == name:
                return sup
        raise KeyError(name)

    def with_offset(self, extra: int) -> ClusterDescription:
        """The same cluster with every port moved by ``extra`` (and a distinct name)."""
        if extra == 0:
            return self
        ports = Ports(*(p + extra for p in dataclasses.astuple(self.ports)))
        sups = tuple(
            dataclasses.replace(
                s,
                slot_ports=tuple(p + extra for p in s.slot_ports),
                thrift_port=s.thrift_port + extra,
            )
            for s in self.supervisors
        )
        result = dataclasses.replace(self, ports=ports, supervisors=sups, offset=self.offset + extra)
        _check_ports(result)
        return result

    def with_scheduler(self, scheduler: str) -> ClusterDescription:
        """The same cluster with Nimbus running ``scheduler`` (one of :data:`SCHEDULERS`)."""
        return dataclasses.replace(self, scheduler=_scheduler(scheduler))

    def with_name(self, name: str) -> ClusterDescription:
        _check_name(name, "name")
        return dataclasses.replace(self, name=name)

    def with_storm_version(self, version: str) -> ClusterDescription:
        """The same cluster on another Storm line (``cluster up --storm-version``)."""
        return dataclasses.replace(self, storm_version=_storm_version(version))


def load_description(path: str | Path | None = None) -> ClusterDescription:
    """Load and validate a description file; ``None`` loads the packaged default."""
    if path is None:
        text = resources.files(__package__).joinpath(DEFAULT_DESCRIPTION).read_text()
        source = f"<default {DEFAULT_DESCRIPTION}>"
    else:
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as error:
            raise DescriptionError(f"cannot read cluster description {path}: {error.strerror}") from None
        source = str(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise DescriptionError(f"{source}: not valid YAML: {error}") from None
    return parse_description(data, source=source)


def default_description() -> ClusterDescription:
    return load_description(None)


def parse_description(data: Any, *, source: str = "<dict>") -> ClusterDescription:
    """Validate a parsed YAML document and resolve every default."""
    try:
        return _parse(data, source)
    except DescriptionError as error:
        raise DescriptionError(f"{source}: {error}") from None


def _parse(data: Any, source: str) -> ClusterDescription:
    if not isinstance(data, dict):
        raise DescriptionError("the description must be a mapping with a 'supervisors' list")
    _no_unknown(data, _TOP_KEYS, "")
    name = data.get("name", "storm-planner")
    _check_name(name, "name")
    version = _storm_version(data.get("storm_version", "2.8.3"))
    host = _host(data.get("host", "127.0.0.1"), "host")
    ports = _ports(data.get("ports", {}))
    algorithm, timeout_ms = _planner(data.get("planner", {}))
    heaps = _heaps(data.get("heap_mb", {}))
    storm = _storm_keys(data.get("storm", {}), "storm")
    network = _network(data.get("network", {}))
    supervisors = _supervisors(data.get("supervisors"), host, ports, network)
    description = ClusterDescription(
        name=name,
        storm_version=version,
        host=host,
        ports=ports.daemons,
        supervisors=supervisors,
        planner_algorithm=algorithm,
        planner_timeout_ms=timeout_ms,
        heap_mb=heaps,
        storm=storm,
        offset=ports.offset,
        source=source,
        network=network,
        scheduler=_scheduler(data.get("scheduler", "planner")),
    )
    _check_ports(description)
    return description


@dataclass(frozen=True)
class _PortSettings:
    """The ``ports`` section read: the daemons' ports and where supervisors' ports start (offset added)."""

    daemons: Ports
    offset: int
    supervisor_thrift: int   # the first supervisor's; the next ones count up
    first_slot: int          # the first slot port of supervisors that give a slot count


def _ports(value: Any) -> _PortSettings:
    raw = _mapping(value, "ports")
    _no_unknown(raw, _PORT_KEYS, "ports.")
    offset = _int(raw.get("offset", 0), "ports.offset", minimum=0)

    def port(key: str, default: int) -> int:
        return _int(raw.get(key, default), f"ports.{key}", minimum=1, maximum=65535) + offset

    daemons = Ports(
        zookeeper=port("zookeeper", 2181),
        nimbus=port("nimbus", 6627),
        ui=port("ui", 8080),
        planner=port("planner", 7627),
        dashboard=port("dashboard", 8090),
    )
    return _PortSettings(daemons=daemons, offset=offset, supervisor_thrift=port("supervisor_thrift", 6628),
                         first_slot=port("slots", 6700))


def _planner(value: Any) -> tuple[str, int]:
    """(algorithm, timeout in ms) of the ``planner`` section."""
    planner = _mapping(value, "planner")
    _no_unknown(planner, _PLANNER_KEYS, "planner.")
    algorithm = _string(planner.get("algorithm", "even"), "planner.algorithm")
    timeout_ms = _int(planner.get("timeout_ms", 5000), "planner.timeout_ms", minimum=1)
    return algorithm, timeout_ms


def _heaps(value: Any) -> Heaps:
    raw = _mapping(value, "heap_mb")
    _no_unknown(raw, _HEAP_KEYS, "heap_mb.")
    return Heaps(**{k: _int(v, f"heap_mb.{k}", minimum=32) for k, v in raw.items()})


def _supervisors(value: Any, host: str, ports: _PortSettings, network: Network) -> tuple[Supervisor, ...]:
    """The ``supervisors`` list; slot counts take consecutive ports from ``ports.slots`` in list order."""
    if not isinstance(value, list) or not value:
        raise DescriptionError("'supervisors' must be a non-empty list of nodes")
    supervisors = []
    seen: set[str] = set()
    next_slot = ports.first_slot
    for index, raw in enumerate(value):
        where = f"supervisors[{index}]"
        sup = _mapping(raw, where)
        _no_unknown(sup, _SUPERVISOR_KEYS, f"{where}.")
        sup_name = _supervisor_name(sup, where, seen)
        slot_ports, next_slot = _slot_ports(sup.get("slots", 1), where, ports.offset, next_slot)
        if "thrift_port" in sup:
            thrift = _int(sup["thrift_port"], f"{where}.thrift_port", minimum=1, maximum=65535) + ports.offset
        else:
            thrift = ports.supervisor_thrift + index
        supervisors.append(
            Supervisor(
                name=sup_name,
                host=_host(sup.get("host", host), f"{where}.host"),
                cpu=_number(sup.get("cpu", 100), f"{where}.cpu"),
                memory_mb=_number(sup.get("memory_mb", 2048), f"{where}.memory_mb"),
                meta=_meta(sup.get("meta", {}), f"{where}.meta"),
                slot_ports=slot_ports,
                thrift_port=thrift,
                storm=_storm_keys(sup.get("storm", {}), f"{where}.storm"),
                link_mbit=_number(sup["link_mbit"], f"{where}.link_mbit") if "link_mbit" in sup else None,
            )
        )
        if network.emulated and "host" in sup:
            raise DescriptionError(f"{where}.host: with network.emulated the supervisors' addresses come "
                                   f"from network.subnet; remove the key")
    if network.emulated and network.subnet:
        _check_subnet_size(network.subnet, len(supervisors))
    return tuple(supervisors)


def _supervisor_name(sup: Mapping[str, Any], where: str, seen: set[str]) -> str:
    """The supervisor's required, valid and unique name (added to ``seen``)."""
    if "name" not in sup:
        raise DescriptionError(f"{where}.name is required")
    name = sup["name"]
    _check_name(name, f"{where}.name")
    if name in seen:
        raise DescriptionError(f"{where}.name: duplicate supervisor name {name!r}")
    seen.add(name)
    return name


def _slot_ports(slots: Any, where: str, offset: int, next_slot: int) -> tuple[tuple[int, ...], int]:
    """(the supervisor's slot ports, the next free slot port): a list of ports, or a count taken from ``next_slot``."""
    if isinstance(slots, list):
        if not slots:
            raise DescriptionError(f"{where}.slots: the list of slot ports is empty")
        ports = tuple(_int(p, f"{where}.slots[{i}]", minimum=1, maximum=65535) + offset for i, p in enumerate(slots))
        return ports, next_slot
    count = _int(slots, f"{where}.slots", minimum=1, maximum=64)
    return tuple(range(next_slot, next_slot + count)), next_slot + count


def _network(value: Any) -> Network:
    raw = _mapping(value, "network")
    _no_unknown(raw, _NETWORK_KEYS, "network.")
    emulated = raw.get("emulated", False)
    if not isinstance(emulated, bool):
        raise DescriptionError(f"network.emulated must be true or false, not {emulated!r}")
    subnet = raw.get("subnet")
    if subnet is not None:
        subnet = _string(subnet, "network.subnet")
        try:
            parsed = ipaddress.ip_network(subnet, strict=True)
        except ValueError as error:
            raise DescriptionError(f"network.subnet: {subnet!r} is not a network ({error})") from None
        if parsed.version != 4 or not parsed.subnet_of(EMULATED_RANGE):
            raise DescriptionError(f"network.subnet: {subnet} is outside {EMULATED_RANGE} (the benchmarking "
                                   f"block; emulated hosts stay inside it)")
        subnet = str(parsed)
    return Network(emulated=emulated, subnet=subnet,
                   link_mbit=_number(raw.get("link_mbit", 100.0), "network.link_mbit"))


def _scheduler(value: Any) -> str:
    if value not in SCHEDULERS:
        raise DescriptionError(f"scheduler: {value!r} is not one of {', '.join(SCHEDULERS)}")
    return value


def _check_subnet_size(subnet: str, supervisors: int) -> None:
    usable = ipaddress.ip_network(subnet).num_addresses - 2   # network and broadcast addresses
    if usable < supervisors + 1:
        raise DescriptionError(f"network.subnet: {subnet} has {max(usable, 0)} host addresses; this machine "
                               f"and {supervisors} supervisors need {supervisors + 1}")


def _check_ports(description: ClusterDescription) -> None:
    owners: dict[int, str] = {}
    named = [
        ("ports.zookeeper", description.ports.zookeeper),
        ("ports.nimbus", description.ports.nimbus),
        ("ports.ui", description.ports.ui),
        ("ports.planner", description.ports.planner),
        ("ports.dashboard", description.ports.dashboard),
    ]
    for sup in description.supervisors:
        named.append((f"supervisor {sup.name} thrift port", sup.thrift_port))
        named.extend((f"supervisor {sup.name} slot", p) for p in sup.slot_ports)
    for owner, port in named:
        if not 1 <= port <= 65535:
            raise DescriptionError(f"{owner}: port {port} is outside 1..65535 (check ports.offset)")
        if port in owners:
            raise DescriptionError(f"{owner}: port {port} is already used by {owners[port]}")
        owners[port] = owner


def _check_name(value: Any, where: str) -> None:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise DescriptionError(
            f"{where}: {value!r} is not a valid name (letters, digits, '.', '_', '-'; at most 63 characters)"
        )


def _storm_version(value: Any) -> str:
    # YAML reads 2.8 as a number: take its text; 2.8.3 is a string already.
    version = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if not is_storm_version(version):
        raise DescriptionError(f"storm_version: {value!r} is not a Storm version (digits and dots, then maybe a "
                               "qualifier of letters, digits, '.' and '-', e.g. 2.8.3 or 2.8.3-SNAPSHOT)")
    return version


def _host(value: Any, where: str) -> str:
    host = _string(value, where)
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    if len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in host.split(".")):
        raise DescriptionError(f"{where}: {host!r} is neither an IP address nor a host name (letters, digits, "
                               "'-' and '_' in dot-separated labels of at most 63 characters)")
    return host


def _no_unknown(mapping: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    unknown = sorted(str(k) for k in mapping if k not in allowed)
    if unknown:
        raise DescriptionError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(prefix + k for k in unknown)} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DescriptionError(f"{where} must be a mapping, not {type(value).__name__}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise DescriptionError(f"{where} must be a non-empty string, not {value!r}")
    return value


def _int(value: Any, where: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DescriptionError(f"{where} must be an integer, not {value!r}")
    if minimum is not None and value < minimum:
        raise DescriptionError(f"{where} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise DescriptionError(f"{where} must be at most {maximum}, not {value}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise DescriptionError(f"{where} must be a positive number, not {value!r}")
    return float(value)


def _meta(value: Any, where: str) -> dict[str, str]:
    meta = _mapping(value, where)
    for key, item in meta.items():
        if not isinstance(key, str):
            raise DescriptionError(f"{where}: key {key!r} must be a string")
        if not isinstance(item, str):
            # Storm validates supervisor.scheduler.meta as a map of strings at
            # daemon start; catching it here gives a message that says how to fix it.
            raise DescriptionError(
                f"{where}.{key} must be a string (Storm accepts only string meta values; "
                f"write it quoted, e.g. \"{item}\"), not {type(item).__name__} {item!r}"
            )
    return dict(meta)


def _storm_keys(value: Any, where: str) -> dict[str, Any]:
    keys = _mapping(value, where)
    for key in keys:
        if not isinstance(key, str) or not key:
            raise DescriptionError(f"{where}: key {key!r} must be a storm.yaml key string")
    return dict(keys)
