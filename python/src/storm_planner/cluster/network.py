"""The emulated network: each supervisor in its own network namespace, on a rate-limited link.

A cluster description with ``network: {emulated: true}`` runs its supervisors (and every worker
they start) behind real links of a chosen rate, so bandwidth-aware planners (``gma``) meet a
network that actually saturates. Layout, for a cluster whose state directory hashes to ``<t>``::

    this machine (root namespace): the master host     namespace spn-<t>-<i>: supervisor i
      bridge spn<t>br, 198.18.X.1/24  --- port spn<t>v<i> ====== eth0, 198.18.X.(i+2)/24
      ZooKeeper, Nimbus, planner, dashboard              the supervisor and its workers
      bind the bridge's address

Every link is shaped in both directions by a token bucket (``tc tbf``): the bridge port's queue is
the supervisor's download, ``eth0``'s queue its upload. Traffic between two supervisors crosses the
sender's upload and the receiver's download, as on a switch; the master's side is not shaped (a
switch with a fast uplink to the master). A namespace holds only loopback and ``eth0``, with no
default route: supervisors reach the master and each other, nothing else. Addresses come from
198.18.0.0/15 (RFC 2544's benchmarking block, never routed), so nothing can collide with a real
network; without ``network.subnet`` the first /24 not already on one of this machine's interfaces
is used, so several clusters can run side by side.

On a host with bridge netfilter and iptables' ``FORWARD`` policy ``DROP`` (any host running Docker)
the bridge would drop what one supervisor sends another; :func:`create` adds one iptables chain of the
cluster's own that lets the bridge forward between its ports (``netfilter.py``), and ``cluster up`` is
healthy only once every supervisor opened a TCP connection to every other (``reachability.py``).

Needs root and iproute2 (``ip``, ``tc``), util-linux's ``nsenter`` and, where bridge netfilter is on,
``iptables``. :func:`create` and :func:`destroy` run the commands; everything else is pure. The layout
is saved beside the cluster's state (``network.json``) so ``cluster down`` removes exactly what
``cluster up`` made. That file is read back from disk, so :func:`load` keeps only names `cluster up`
gives for that state directory (``spn`` and the directory's tag, as below) and checks every field;
anything else is refused with a warning naming it and left alone.
"""
from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import json
import math
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from storm_planner.progress import Progress, print_progress

from . import netfilter
from .description import EMULATED_RANGE, ClusterDescription
from .errors import ClusterError
from .syscmd import run as _run

NAME_PREFIX = "spn"                         # every bridge, port and namespace name starts with it
BANDWIDTH_META = "network.bandwidth.mbit"   # what the plugin reads as a node's link capacity
NAMESPACE_DIR = Path("/var/run/netns")
SYS_NET = Path("/sys/class/net")
_TOOLS = ("ip", "tc", "nsenter")


@dataclass(frozen=True)
class Link:
    """One supervisor's link: its namespace, the bridge port, its address and rate."""

    supervisor: str
    namespace: str
    port: str          # the veth end on the bridge, in the root namespace
    address: str
    mbit: float


@dataclass(frozen=True)
class NetworkLayout:
    subnet: str
    bridge: str
    master: str        # this machine's address on the bridge: ZooKeeper, Nimbus, planner bind it
    links: tuple[Link, ...]

    @property
    def prefix(self) -> int:
        return ipaddress.ip_network(self.subnet).prefixlen

    def link(self, supervisor: str) -> Link:
        for link in self.links:
            if link.supervisor == supervisor:
                return link
        raise KeyError(supervisor)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping) -> NetworkLayout:
        return cls(subnet=data["subnet"], bridge=data["bridge"], master=data["master"],
                   links=tuple(Link(**link) for link in data["links"]))


# -- pure ---------------------------------------------------------------------
def plan_layout(description: ClusterDescription, state_dir: Path, subnet: str) -> NetworkLayout:
    """Names and addresses for the description's supervisors inside ``subnet``."""
    names = Names(state_tag(state_dir))
    hosts = ipaddress.ip_network(subnet).hosts()
    master = str(next(hosts))
    links = tuple(
        Link(supervisor=sup.name, namespace=names.namespace(index), port=names.port(index),
             address=str(next(hosts)), mbit=sup.link_mbit or description.network.link_mbit)
        for index, sup in enumerate(description.supervisors)
    )
    return NetworkLayout(subnet=subnet, bridge=names.bridge, master=master, links=links)


def state_tag(state_dir: Path) -> str:
    """Six hex digits naming one state directory's network (so two clusters never share a name)."""
    return hashlib.sha1(str(Path(state_dir).resolve()).encode()).hexdigest()[:6]


@dataclass(frozen=True)
class Names:
    """The only names `cluster up` gives: ``spn<tag>br``, ``spn-<tag>-<i>``, ``spn<tag>v<i>``."""

    tag: str

    @property
    def bridge(self) -> str:
        return f"{NAME_PREFIX}{self.tag}br"

    def namespace(self, index: int) -> str:
        return f"{NAME_PREFIX}-{self.tag}-{index}"

    def port(self, index: int) -> str:
        return f"{NAME_PREFIX}{self.tag}v{index}"


def free_subnet(in_use: Iterable[str], prefix: int = 24) -> str:
    """The first ``/prefix`` of 198.18.0.0/15 that overlaps none of the networks ``in_use``."""
    taken = [ipaddress.ip_network(n, strict=False) for n in in_use]
    for candidate in EMULATED_RANGE.subnets(new_prefix=prefix):
        if not any(candidate.overlaps(n) for n in taken):
            return str(candidate)
    raise ClusterError(f"no free /{prefix} left in {EMULATED_RANGE} for the emulated network")


def apply_layout(description: ClusterDescription, layout: NetworkLayout) -> ClusterDescription:
    """The description as the daemons must see it: the master daemons on the bridge's address, each
    supervisor on its namespace's address, advertising its link rate in ``network.bandwidth.mbit``."""
    supervisors = tuple(
        dataclasses.replace(
            sup, host=layout.link(sup.name).address,
            meta={**sup.meta, BANDWIDTH_META: sup.meta.get(BANDWIDTH_META, f"{layout.link(sup.name).mbit:g}")},
        )
        for sup in description.supervisors
    )
    return dataclasses.replace(description, host=layout.master, supervisors=supervisors)


def enter_command(link: Link) -> list[str]:
    """The prefix that runs a command inside the link's namespace (network only: same files, cgroups)."""
    return ["nsenter", f"--net={NAMESPACE_DIR / link.namespace}", "--"]


def token_bucket(mbit: float) -> list[str]:
    """``tc`` arguments for a token bucket of ``mbit``: a burst of 10 ms of traffic (at least 16 KiB,
    the kernel needs a bucket larger than one MTU-sized packet) and at most 100 ms of queue."""
    burst = max(16 * 1024, int(mbit * 1e6 / 8 / 100))
    return ["tbf", "rate", f"{mbit:g}mbit", "burst", str(burst), "latency", "100ms"]


def creation_commands(layout: NetworkLayout) -> list[list[str]]:
    commands = [
        ["ip", "link", "add", layout.bridge, "type", "bridge"],
        ["ip", "addr", "add", f"{layout.master}/{layout.prefix}", "dev", layout.bridge],
        ["ip", "link", "set", layout.bridge, "up"],
    ]
    for link in layout.links:
        ns = link.namespace
        commands += [
            ["ip", "netns", "add", ns],
            ["ip", "link", "add", link.port, "type", "veth", "peer", "name", "eth0", "netns", ns],
            ["ip", "link", "set", link.port, "master", layout.bridge],
            ["ip", "link", "set", link.port, "up"],
            ["ip", "-n", ns, "addr", "add", f"{link.address}/{layout.prefix}", "dev", "eth0"],
            ["ip", "-n", ns, "link", "set", "lo", "up"],
            ["ip", "-n", ns, "link", "set", "eth0", "up"],
            ["tc", "qdisc", "add", "dev", link.port, "root", *token_bucket(link.mbit)],            # download
            ["tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", *token_bucket(link.mbit)],     # upload
        ]
    return commands


# -- with the system ----------------------------------------------------------
def check_available() -> None:
    """Raise a :class:`ClusterError` saying what is missing for an emulated network."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        raise ClusterError(f"network.emulated needs {', '.join(missing)} (apt-get install iproute2 util-linux)")
    if os.geteuid() != 0:
        raise ClusterError("network.emulated needs root: network namespaces, veth links and tc queues "
                           "are created and removed by `cluster up` / `cluster down`")


def addresses_in_use() -> list[str]:
    """The IPv4 networks on this machine's interfaces (root namespace)."""
    out = _run(["ip", "-j", "-4", "addr", "show"]).stdout
    return [f"{a['local']}/{a['prefixlen']}" for iface in json.loads(out or "[]") for a in iface.get("addr_info", ())]


def create(layout: NetworkLayout) -> None:
    """Make the bridge, namespaces, links and queues, and let the bridge forward between its ports
    (``netfilter.py``); on any failure remove what was made."""
    try:
        for command in creation_commands(layout):
            _run(command)
        netfilter.allow_forwarding(layout.bridge)
    except ClusterError:
        destroy(layout)
        raise


def destroy(layout: NetworkLayout) -> list[str]:
    """Remove the namespaces (killing what still runs inside), the bridge and its iptables chain; returns
    what was removed. Safe to run twice: what is already gone is skipped."""
    removed = []
    for link in layout.links:
        if (NAMESPACE_DIR / link.namespace).exists():
            _kill_inside(link.namespace)
            _run(["ip", "netns", "del", link.namespace], check=False)
            removed.append(link.namespace)
        if (SYS_NET / link.port).exists():   # a namespace someone still holds keeps its veth
            _run(["ip", "link", "del", link.port], check=False)
    if (SYS_NET / layout.bridge).exists():
        _run(["ip", "link", "del", layout.bridge], check=False)
        removed.append(layout.bridge)
    if netfilter.remove_forwarding(layout.bridge):
        removed.append(netfilter.chain_for(layout.bridge))
    return removed


@dataclass(frozen=True)
class LinkBytes:
    """Bytes through one supervisor's link since it was made (the bridge port's counters, turned
    round: what the port transmits the supervisor receives)."""

    received: int
    sent: int


def link_bytes(link: Link) -> LinkBytes:
    stats = SYS_NET / link.port / "statistics"
    try:
        return LinkBytes(received=int((stats / "tx_bytes").read_text()), sent=int((stats / "rx_bytes").read_text()))
    except OSError as error:
        raise ClusterError(f"link of supervisor {link.supervisor} ({link.port}) is gone: {error.strerror}") from None


def link_status(layout: NetworkLayout) -> dict:
    """For ``cluster status``: each link's address, rate and bytes so far."""
    links = []
    for link in layout.links:
        row = {"supervisor": link.supervisor, "address": link.address, "mbit": link.mbit,
               "namespace": link.namespace}
        try:
            counted = link_bytes(link)
            row.update(received_bytes=counted.received, sent_bytes=counted.sent)
        except ClusterError as error:
            row["error"] = str(error)
        links.append(row)
    return {"subnet": layout.subnet, "master": layout.master, "links": links}


def save(layout: NetworkLayout, path: Path) -> None:
    path.write_text(json.dumps(layout.to_json(), indent=2) + "\n")


def load(path: Path, warn: Progress = print_progress) -> NetworkLayout | None:
    """The layout `cluster up` saved at ``path`` (None: there is none), keeping only what `cluster up`
    could have made for the state directory ``path`` lies in.

    The file is read back from disk and says what `cluster down` deletes, so every field is checked: a
    name `cluster up` would not give here (another prefix, another state directory's tag, an index out of
    place) or a value out of range is refused and ``warn`` names it. A refused link is left alone; a
    refused subnet, master or bridge (or an unreadable file) refuses the whole file.
    """
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        warn(f"{path}: not a network layout ({error}); nothing in it is removed (see `ip netns list`)")
        return None
    names = Names(state_tag(path.parent))
    problems = _layout_problems(data, names)
    if problems:
        warn(f"{path}: {'; '.join(problems)}; nothing in it is removed (see `ip netns list`, `ip link`)")
        return None
    subnet = ipaddress.ip_network(data["subnet"])
    links = []
    for index, entry in enumerate(data["links"]):
        problems = _link_problems(entry, index, names, subnet)
        if problems:
            warn(f"{path}: links[{index}]: {'; '.join(problems)}; that link is left alone")
        else:
            links.append(Link(**entry))
    return NetworkLayout(subnet=data["subnet"], bridge=data["bridge"], master=data["master"], links=tuple(links))


_LAYOUT_FIELDS = ("subnet", "bridge", "master", "links")
_LINK_FIELDS = tuple(field.name for field in dataclasses.fields(Link))


def _layout_problems(data: object, names: Names) -> list[str]:
    problems = _field_problems(data, _LAYOUT_FIELDS)
    if problems:
        return problems
    subnet = _subnet_in_range(data["subnet"])
    if subnet is None:
        problems.append(f"subnet {data['subnet']!r} is not a network inside {EMULATED_RANGE}")
    elif not _address_in(data["master"], subnet):
        problems.append(f"master {data['master']!r} is not an address of {subnet}")
    if data["bridge"] != names.bridge:
        problems.append(f"bridge {data['bridge']!r} is not the name `cluster up` gives here ({names.bridge})")
    if not isinstance(data["links"], list):
        problems.append("links is not a list")
    return problems


def _link_problems(entry: object, index: int, names: Names, subnet: ipaddress.IPv4Network) -> list[str]:
    problems = _field_problems(entry, _LINK_FIELDS)
    if problems:
        return problems
    expected = {"namespace": names.namespace(index), "port": names.port(index)}
    problems = [f"{field} {entry[field]!r} is not the name `cluster up` gives here ({name})"
                for field, name in expected.items() if entry[field] != name]
    if not isinstance(entry["supervisor"], str) or not entry["supervisor"]:
        problems.append(f"supervisor {entry['supervisor']!r} is not a name")
    if not _address_in(entry["address"], subnet):
        problems.append(f"address {entry['address']!r} is not an address of {subnet}")
    mbit = entry["mbit"]
    if isinstance(mbit, bool) or not isinstance(mbit, (int, float)) or not 0 < mbit < math.inf:
        problems.append(f"mbit {mbit!r} is not a positive number")
    return problems


def _field_problems(data: object, fields: tuple[str, ...]) -> list[str]:
    if not isinstance(data, dict):
        return [f"not a JSON object: {data!r:.60}"]
    return ([f"missing field {name!r}" for name in fields if name not in data]
            + [f"unknown field {name!r}" for name in data if name not in fields])


def _subnet_in_range(value: object) -> ipaddress.IPv4Network | None:
    try:
        subnet = ipaddress.ip_network(value)
    except (TypeError, ValueError):
        return None
    return subnet if subnet.version == 4 and subnet.subnet_of(EMULATED_RANGE) else None


def _address_in(value: object, subnet: ipaddress.IPv4Network) -> bool:
    try:
        return ipaddress.ip_address(value) in subnet
    except (TypeError, ValueError):
        return False


def _kill_inside(namespace: str) -> None:
    pids = _run(["ip", "netns", "pids", namespace], check=False).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), 9)
        except (ProcessLookupError, ValueError):
            pass
