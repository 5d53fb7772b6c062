"""The emulated network (``network: {emulated: true}`` in a cluster description): the description's
keys, the layout, links that really carry their rate (measured with TCP between namespaces), and a
Storm cluster whose supervisors live behind those links: workers reach ZooKeeper and each other,
the hook reads each supervisor's own link, and the traffic it estimates is what crosses the links.

The parts that make namespaces need root and iproute2; they are skipped, saying so, without them.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from storm_planner.cluster import network
from storm_planner.cluster.compose import ComposeError, compose_document
from storm_planner.cluster.description import DescriptionError, default_description, parse_description
from storm_planner.cluster.errors import ClusterError

PIPELINE = Path(__file__).resolve().parents[1] / "metrics" / "fixtures" / "pipeline"
CAN_EMULATE = os.geteuid() == 0 and all(shutil.which(tool) for tool in ("ip", "tc", "nsenter"))
needs_root = pytest.mark.skipif(not CAN_EMULATE, reason="the emulated network needs root, iproute2 and nsenter")


def described(**network_keys):
    return parse_description({"network": {"emulated": True, **network_keys},
                              "supervisors": [{"name": "fast", "link_mbit": 40}, {"name": "slow"}]})


# -- the description and the layout (no root needed) ----------------------------
def test_the_network_is_off_unless_asked_for():
    assert default_description().network.emulated is False
    d = described(link_mbit=10)
    assert d.network.emulated and d.network.link_mbit == 10 and d.network.subnet is None
    assert [s.link_mbit for s in d.supervisors] == [40, None]


@pytest.mark.parametrize("keys, message", [
    ({"emulated": "yes"}, "network.emulated must be true or false"),
    ({"subnet": "10.0.0.0/24"}, "outside 198.18.0.0/15"),
    ({"subnet": "198.18.0.0/30"}, "has 2 host addresses"),
    ({"subnet": "198.18.0.1/24"}, "not a network"),
    ({"link_mbit": 0}, "network.link_mbit must be a positive number"),
    ({"latency": 5}, "unknown key network.latency"),
])
def test_bad_network_keys_are_named(keys, message):
    with pytest.raises(DescriptionError, match=message):
        described(**keys)


def test_supervisor_addresses_come_from_the_subnet():
    with pytest.raises(DescriptionError, match=r"supervisors\[0\].host"):
        parse_description({"network": {"emulated": True}, "supervisors": [{"name": "a", "host": "10.1.1.1"}]})


def test_layout_names_fit_linux_interfaces_and_addresses_stay_in_the_subnet(tmp_path):
    d = described(subnet="198.18.4.0/29")
    layout = network.plan_layout(d, tmp_path, d.network.subnet)
    assert layout.master == "198.18.4.1"
    assert [(link.address, link.mbit) for link in layout.links] == [("198.18.4.2", 40), ("198.18.4.3", 100)]
    assert all(len(name) <= 15 for name in [layout.bridge, *(link.port for link in layout.links)])
    assert len({link.namespace for link in layout.links}) == 2
    # Another state directory (another cluster) gets other names.
    other = network.plan_layout(d, tmp_path / "other", d.network.subnet)
    assert other.bridge != layout.bridge
    applied = network.apply_layout(d, layout)
    assert applied.host == "198.18.4.1"
    assert [(s.host, s.meta["network.bandwidth.mbit"]) for s in applied.supervisors] == [
        ("198.18.4.2", "40"), ("198.18.4.3", "100")]


def test_a_free_subnet_avoids_the_ones_in_use():
    assert network.free_subnet(["127.0.0.1/8", "10.0.0.5/16"]) == "198.18.0.0/24"
    assert network.free_subnet(["198.18.0.1/24", "198.18.1.7/24"]) == "198.18.2.0/24"
    assert network.free_subnet(["198.18.0.0/16"]) == "198.19.0.0/24"
    with pytest.raises(ClusterError, match="no free /24"):
        network.free_subnet(["198.18.0.0/15"])


def test_docker_compose_refuses_the_emulated_network():
    with pytest.raises(ComposeError, match="network.emulated is for local process clusters"):
        compose_document(described())


# -- real namespaces, links and queues ------------------------------------------
_RECEIVER = textwrap.dedent("""
    import socket, sys, time
    server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((sys.argv[1], 5999)); server.listen(1); print("ready", flush=True)
    conn, _ = server.accept(); received, started = 0, time.monotonic()
    while (chunk := conn.recv(65536)):
        received += len(chunk)
    print(received * 8 / 1e6 / (time.monotonic() - started), flush=True)
""")
_SENDER = textwrap.dedent("""
    import socket, sys, time
    conn = socket.create_connection((sys.argv[1], 5999)); data = b"x" * 65536; started = time.monotonic()
    while time.monotonic() - started < float(sys.argv[2]):
        conn.sendall(data)
    conn.close()
""")


def _inside(layout, supervisor):
    return network.enter_command(layout.link(supervisor)) if supervisor else []


def measure_mbit(layout, sender, receiver, seconds=2.5) -> float:
    """TCP goodput from ``sender`` to ``receiver`` (supervisor names; None = this machine)."""
    address = layout.link(receiver).address if receiver else layout.master
    rx = subprocess.Popen(_inside(layout, receiver) + [sys.executable, "-c", _RECEIVER, address],
                          stdout=subprocess.PIPE, text=True)
    try:
        assert rx.stdout.readline().strip() == "ready"
        subprocess.run(_inside(layout, sender) + [sys.executable, "-c", _SENDER, address, str(seconds)],
                       check=True, timeout=30)
        return float(rx.communicate(timeout=30)[0])
    finally:
        rx.kill()


@needs_root
def test_links_carry_their_rate_and_down_leaves_nothing(tmp_path):
    d = described(link_mbit=10)
    layout = network.plan_layout(d, tmp_path, network.free_subnet(network.addresses_in_use()))
    network.create(layout)
    try:
        before = network.link_bytes(layout.link("slow"))
        slow_to_fast = measure_mbit(layout, "slow", "fast")       # slow's upload: 10 Mbit/s
        master_to_fast = measure_mbit(layout, None, "fast")       # fast's download: 40 Mbit/s
        fast_to_master = measure_mbit(layout, "fast", None)       # fast's upload: 40 Mbit/s
        counted = network.link_bytes(layout.link("slow"))
    finally:
        removed = network.destroy(layout)
    print(f"\nmeasured: slow->fast {slow_to_fast:.1f} Mbit/s (link 10), master->fast {master_to_fast:.1f} "
          f"(40), fast->master {fast_to_master:.1f} (40)")
    assert 0.6 * 10 <= slow_to_fast <= 1.15 * 10
    assert 0.6 * 40 <= master_to_fast <= 1.15 * 40
    assert 0.6 * 40 <= fast_to_master <= 1.15 * 40
    # The slow link's counters saw its 2.5 s upload (and the ACKs it received).
    assert counted.sent - before.sent >= 0.6 * 10e6 / 8 * 2.5
    assert set(removed) == {layout.bridge, *(link.namespace for link in layout.links)}
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(link.namespace in listed for link in layout.links)
    assert not (network.SYS_NET / layout.bridge).exists()
    assert network.destroy(layout) == []   # twice is harmless


@needs_root
def test_a_failed_creation_removes_what_it_made(tmp_path):
    d = described()
    layout = network.plan_layout(d, tmp_path, network.free_subnet(network.addresses_in_use()))
    broken = dataclasses.replace(layout, links=layout.links + (dataclasses.replace(
        layout.links[0], supervisor="dup", port=layout.links[0].port + "x"),))   # same namespace twice
    with pytest.raises(ClusterError, match="ip netns add"):
        network.create(broken)
    assert not (network.SYS_NET / layout.bridge).exists()
    assert not (network.NAMESPACE_DIR / layout.links[0].namespace).exists()


# -- a Storm cluster on the emulated network --------------------------------------
def until(condition, timeout_s: float, what: str, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f} s waiting for {what}"
        time.sleep(every_s)
    return value


@needs_root
@pytest.mark.cluster
def test_a_storm_cluster_runs_behind_rate_limited_links(tmp_path):
    from storm_planner.cluster import running_cluster
    from storm_planner.cluster.locations import default_plugin_jar
    from storm_planner.metrics.hookjar import default_hook_jar
    from storm_planner.metrics.network_use import network_use
    from storm_planner.metrics.windows import fetch_windows as latest_windows
    from storm_planner.submit.operations import kill_topology, submit_project

    if not (default_plugin_jar() and default_plugin_jar().is_file() and default_hook_jar().is_file()):
        pytest.skip("plugin or metrics jar not built (mvn package)")
    link = 8.0
    base = default_description()
    description = dataclasses.replace(base, network=dataclasses.replace(base.network, emulated=True, link_mbit=link))
    with running_cluster(tmp_path, description, ui=False, dashboard=False) as cluster:
        layout = cluster.network
        assert layout is not None and cluster.addresses.nimbus_host == layout.master
        status = cluster.status()
        assert {row["supervisor"] for row in status["network"]["links"]} == {s.name for s in description.supervisors}
        # 2,000 tuples/s of 400-byte payloads: ~6.4 Mbit/s from the spout to a relay on the other node.
        options = {"pipeline.dir": str(tmp_path), "pipeline.rate": 2000, "pipeline.payload_bytes": 400,
                   "topology.workers": 2, "planner.algorithm": "even", "planner.metrics.period.secs": 3,
                   "topology.max.spout.pending": 500, "planner.replan": False}
        row = submit_project(PIPELINE, nimbus=cluster.addresses.nimbus, name="net", options=options,
                             wait_active=120)
        windows = until(lambda: (w := latest_windows(cluster.addresses.zookeeper, row.id)) and len(w) == row.tasks
                        and w, 120, "a window of every task: workers on both links reach ZooKeeper")
        assert {w.node for w in windows.values()} == {s.name for s in description.supervisors}

        # The hook reads its supervisor's own link: between two reads of the link's counters from
        # this machine, a window's host_net lies between them.
        node = next(iter(layout.links))
        first, first_ms = network.link_bytes(node), time.time() * 1000
        newer = until(lambda: [w for w in latest_windows(cluster.addresses.zookeeper, row.id).values()
                               if w.node == node.supervisor and w.end_ms > first_ms], 30, "a fresh window",
                      every_s=0.2)
        second = network.link_bytes(node)
        assert first.received <= newer[0].host_received_bytes <= second.received
        assert first.sent <= newer[0].host_sent_bytes <= second.sent

        # Over 15 s: the links' measured rates against what the hook's flows estimate.
        start = {link.supervisor: network.link_bytes(link) for link in layout.links}
        started = time.monotonic()
        time.sleep(15)
        seconds = time.monotonic() - started
        wire = {link.supervisor: (network.link_bytes(link).sent - start[link.supervisor].sent) * 8 / 1e6 / seconds
                for link in layout.links}
        estimated = network_use([latest_windows(cluster.addresses.zookeeper, row.id)])
        for sup, mbit in wire.items():
            print(f"\n{sup}: link sent {mbit:.2f} Mbit/s, hook estimate {estimated[sup].sent_mbit:.2f} "
                  f"(payload + 40 B/tuple), link {link:g}")
            assert mbit <= link * 1.1
        busiest = max(wire, key=wire.get)
        assert wire[busiest] > 2.0
        assert 0.5 <= estimated[busiest].sent_mbit / wire[busiest] <= 1.5
        kill_topology(cluster.addresses.nimbus, "net", wait_secs=0)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(link.namespace in listed for link in layout.links)
