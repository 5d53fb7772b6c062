"""The emulated network (``network: {emulated: true}`` in a cluster description): the description's
keys, the layout, links that really carry their rate (measured with TCP between namespaces), and a
Storm cluster whose supervisors live behind those links: workers reach ZooKeeper and each other,
the hook reads each supervisor's own link, and the traffic it estimates is what crosses the links.

The parts that make namespaces need root and iproute2; they are skipped, saying so, without them.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from storm_planner.cluster import netfilter, network
from storm_planner.cluster.compose import ComposeError, compose_document
from storm_planner.cluster.description import DescriptionError, default_description, parse_description
from storm_planner.cluster.errors import ClusterError

PIPELINE = Path(__file__).resolve().parents[1] / "metrics" / "fixtures" / "pipeline"
CAN_EMULATE = os.geteuid() == 0 and all(shutil.which(tool) for tool in ("ip", "tc", "nsenter"))
_can_emulate = pytest.mark.skipif(not CAN_EMULATE, reason="the emulated network needs root, iproute2 and nsenter")


def needs_root(test):
    """Root, iproute2 and nsenter; marked ``host_network``: it makes bridges and namespaces on this host, so
    ``make test`` runs it in the cluster tests' lane, never beside a cluster making its own."""
    return pytest.mark.host_network(_can_emulate(test))


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


# -- network.json is read back from disk: only names `cluster up` gives are taken --------
def saved_layout(tmp_path):
    d = described(subnet="198.18.7.0/24")
    layout = network.plan_layout(d, tmp_path, d.network.subnet)
    network.save(layout, tmp_path / "network.json")
    return layout, json.loads((tmp_path / "network.json").read_text())


def load_tampered(tmp_path, data):
    (tmp_path / "network.json").write_text(json.dumps(data))
    warnings = []
    return network.load(tmp_path / "network.json", warnings.append), " ".join(warnings)


def test_a_saved_layout_reads_back_as_it_was(tmp_path):
    layout, _ = saved_layout(tmp_path)
    warnings = []
    assert network.load(tmp_path / "network.json", warnings.append) == layout and warnings == []
    assert network.load(tmp_path / "missing.json", warnings.append) is None and warnings == []


@pytest.mark.parametrize("field, value, named", [
    ("namespace", "docker-ns", "namespace 'docker-ns'"),         # not the project's prefix
    ("namespace", "spn-000000-1", "namespace 'spn-000000-1'"),   # another state directory's tag
    ("port", "eth0", "port 'eth0'"),
    ("port", "../../../etc", "port '../../../etc'"),              # would be a path under /sys/class/net
    ("address", "10.0.0.1", "address '10.0.0.1'"),
    ("mbit", -5, "mbit -5"),
    ("mbit", "fast", "mbit 'fast'"),
    ("supervisor", "", "supervisor ''"),
])
def test_a_link_with_a_field_cluster_up_never_writes_is_refused_and_named(tmp_path, field, value, named):
    layout, data = saved_layout(tmp_path)
    data["links"][1][field] = value
    loaded, warning = load_tampered(tmp_path, data)
    assert loaded.links == layout.links[:1]   # the other link is still removed by `down`
    assert f"links[1]: {named}" in warning and "left alone" in warning


def test_links_out_of_place_or_with_unknown_fields_are_refused(tmp_path):
    layout, data = saved_layout(tmp_path)
    data["links"].reverse()                      # index 0 named ...-1: not what `cluster up` gives
    data["links"][0]["ifname"] = "eth0"
    loaded, warning = load_tampered(tmp_path, data)
    assert loaded.links == ()
    assert "unknown field 'ifname'" in warning and f"namespace '{layout.links[0].namespace}'" in warning


@pytest.mark.parametrize("field, value, named", [
    ("bridge", "docker0", "bridge 'docker0'"),
    ("subnet", "10.0.0.0/8", "subnet '10.0.0.0/8'"),
    ("master", "198.18.9.1", "master '198.18.9.1'"),
    ("links", {"a": 1}, "links is not a list"),
])
def test_a_bad_bridge_subnet_or_master_refuses_the_whole_file(tmp_path, field, value, named):
    _, data = saved_layout(tmp_path)
    data[field] = value
    loaded, warning = load_tampered(tmp_path, data)
    assert loaded is None and named in warning and "nothing in it is removed" in warning


def test_a_file_that_is_not_a_layout_is_refused_not_fatal(tmp_path):
    (tmp_path / "network.json").write_text("{not json")
    warnings = []
    assert network.load(tmp_path / "network.json", warnings.append) is None
    assert "not a network layout" in warnings[0]
    _, warning = load_tampered(tmp_path, ["spn"])
    assert "not a JSON object" in warning


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
    chain = [netfilter.chain_for(layout.bridge)] if netfilter.iptables_available() else []
    assert set(removed) == {layout.bridge, *chain, *(link.namespace for link in layout.links)}
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


@needs_root
def test_down_removes_only_what_network_json_may_name(tmp_path):
    """The attack: network.json edited to name a namespace `cluster up` never made. `down` removes the
    cluster's own namespace and leaves the other one (and the link that named it) alone."""
    from storm_planner.cluster.launcher import ClusterOptions, LocalCluster

    d = described()
    state = tmp_path / "state"
    layout = network.plan_layout(d, state, network.free_subnet(network.addresses_in_use()))
    victim = f"netfix-victim-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", victim], check=True)
    network.create(layout)
    try:
        data = layout.to_json()
        data["links"][1]["namespace"] = victim
        state.mkdir(parents=True, exist_ok=True)
        (state / "network.json").write_text(json.dumps(data))
        said = []
        LocalCluster(d, state, ClusterOptions(), progress=said.append).down()
        assert (network.NAMESPACE_DIR / victim).exists()
        assert not (network.NAMESPACE_DIR / layout.links[0].namespace).exists()
        assert (network.NAMESPACE_DIR / layout.links[1].namespace).exists()   # its link was refused
        assert any(f"namespace '{victim}'" in line and "left alone" in line for line in said), said
        if netfilter.iptables_available():   # the bridge's own chain went with it, as after a crashed `up`
            assert subprocess.run(["iptables", "-w", "-S", netfilter.chain_for(layout.bridge)],
                                  capture_output=True).returncode != 0
    finally:
        network.destroy(layout)
        subprocess.run(["ip", "netns", "del", victim], check=False)


@needs_root
def test_a_daemon_started_inside_a_namespace_is_alive_to_another_process(tmp_path):
    """`cluster status` runs in another process than `up`: it reads /proc, where nsenter has exec'd."""
    from storm_planner.cluster import daemons

    d = parse_description({"network": {"emulated": True}, "supervisors": [{"name": "solo"}]})
    layout = network.plan_layout(d, tmp_path, network.free_subnet(network.addresses_in_use()))
    network.create(layout)
    try:
        record = daemons.start_daemon("inside", network.enter_command(layout.links[0]) + [
            sys.executable, "-c", "import time; time.sleep(60)"], run_dir=tmp_path / "run",
            out_file=tmp_path / "inside.out", cwd=tmp_path)
        until(lambda: Path(f"/proc/{record.pid}/cmdline").read_bytes().startswith(sys.executable.encode()),
              30, "nsenter to exec the daemon", every_s=0.1)
        check = ("import sys; from pathlib import Path; from storm_planner.cluster import daemons; "
                 "print(daemons.is_alive(daemons.DaemonRecord.load(Path(sys.argv[1]))))")
        alive = subprocess.run([sys.executable, "-c", check, str(tmp_path / "run" / "inside.json")],
                               capture_output=True, text=True, check=True).stdout.strip()
        assert alive == "True"
        daemons.stop_daemon(record, grace_s=5)
        assert subprocess.run([sys.executable, "-c", check, str(tmp_path / "run" / "inside.json")],
                              capture_output=True, text=True, check=True).stdout.strip() == "False"
    finally:
        network.destroy(layout)


# -- a host like Docker's: bridge netfilter on, iptables' FORWARD policy DROP ------------
PRIVATE_NET_ENV = "STORM_PLANNER_TEST_PRIVATE_NET"
CAN_ISOLATE = CAN_EMULATE and all(shutil.which(tool) for tool in ("iptables", "iptables-save", "unshare"))


@pytest.mark.skipif(not CAN_ISOLATE, reason="needs root, iptables and unshare (apt-get install iptables)")
def test_the_bridge_forwards_between_supervisors_where_forward_policy_is_drop(tmp_path):
    """Runs the check below in a private network namespace (``unshare --net``), so the FORWARD policy it
    sets to DROP and the bridge netfilter it relies on are that namespace's, never this machine's."""
    if os.environ.get(PRIVATE_NET_ENV):
        check_forwarding_under_a_drop_policy(tmp_path)
        return
    inner = subprocess.run(
        ["unshare", "--net", "--mount", "--propagation", "private", "sh", "-c",
         'mount -t sysfs sysfs /sys && ip link set lo up && exec "$@"', "sh",
         sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         f"{__file__}::test_the_bridge_forwards_between_supervisors_where_forward_policy_is_drop"],
        cwd=Path(__file__).resolve().parents[2], env={**os.environ, PRIVATE_NET_ENV: "1"},
        capture_output=True, text=True, timeout=600)
    print(inner.stdout[-3000:], inner.stderr[-3000:])
    assert inner.returncode == 0 and " passed" in inner.stdout


def check_forwarding_under_a_drop_policy(tmp_path):
    from storm_planner.cluster import reachability

    bridge_nf = netfilter.bridge_calls_iptables()
    print(f"\nnet.bridge.bridge-nf-call-iptables in this namespace: {bridge_nf}")
    saved_rules = subprocess.run(["iptables-save"], capture_output=True, text=True, check=True).stdout
    saved_policy = netfilter.forward_policy() or "ACCEPT"
    layout = network.plan_layout(described(link_mbit=10), tmp_path, "198.18.0.0/24")
    try:
        subprocess.run(["iptables", "-P", "FORWARD", "DROP"], check=True)
        network.create(layout)
        assert reachability.blocked_pairs(layout) == []
        assert netfilter.forwarding_allowed(layout.bridge)
        assert measure_mbit(layout, "slow", "fast", seconds=1.5) > 0.3 * 10
        if bridge_nf:   # without br_netfilter, FORWARD never sees bridged frames: nothing to block
            netfilter.remove_forwarding(layout.bridge)
            with pytest.raises(ClusterError) as blocked:
                reachability.check_reachable(layout, timeout_s=2)
            message = str(blocked.value)
            for link in layout.links:
                assert f"supervisor {link.supervisor} ({link.address}" in message
            assert "FORWARD policy DROP" in message and "bridge-nf-call-iptables = 1" in message
            assert f"accept rule in chain {netfilter.chain_for(layout.bridge)} is missing" in message
            netfilter.allow_forwarding(layout.bridge)
        removed = network.destroy(layout)
        assert netfilter.chain_for(layout.bridge) in removed
        assert netfilter.chain_for(layout.bridge) not in subprocess.run(
            ["iptables-save"], capture_output=True, text=True, check=True).stdout
    finally:
        network.destroy(layout)
        subprocess.run(["iptables-restore"], input=saved_rules, text=True, check=False)
        subprocess.run(["iptables", "-P", "FORWARD", saved_policy], check=True)


# -- a Storm cluster on the emulated network --------------------------------------
def until(condition, timeout_s: float, what: str, every_s: float = 1.0):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f} s waiting for {what}"
        time.sleep(every_s)
    return value


def link_rates(layout, seconds: float, during=None) -> dict[str, float]:
    """Mbit/s each supervisor's link sent over ``seconds``; ``during()`` is called about once a second."""
    start = {link.supervisor: network.link_bytes(link) for link in layout.links}
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if during is not None:
            during()
        time.sleep(min(1.0, max(0.0, seconds - (time.monotonic() - started))))
    elapsed = time.monotonic() - started
    return {link.supervisor: (network.link_bytes(link).sent - start[link.supervisor].sent) * 8 / 1e6 / elapsed
            for link in layout.links}


def mean_network_use(snapshots) -> dict[str, float]:
    """Each node's mean sent Mbit/s over the distinct sets of windows among ``snapshots``."""
    from storm_planner.metrics.network_use import network_use

    distinct = {tuple(sorted((task, w.end_ms) for task, w in windows.items())): windows
                for windows in snapshots if windows}
    uses = [network_use([windows]) for windows in distinct.values()]
    nodes = {node for use in uses for node in use}
    return {node: sum(use[node].sent_mbit for use in uses if node in use) / len(uses) for node in nodes}


@needs_root
@pytest.mark.cluster
def test_a_storm_cluster_runs_behind_rate_limited_links(tmp_path):
    from storm_planner.cluster import running_cluster
    from storm_planner.cluster.locations import default_plugin_jar
    from storm_planner.metrics.hookjar import default_hook_jar
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
        # `cluster status` from another process (as a user runs it) sees the supervisors in their
        # namespaces alive, and says so with exit status 0.
        shown = subprocess.run([sys.executable, "-m", "storm_planner", "cluster", "status", "--json",
                                "--state-dir", str(cluster.state_dir)], capture_output=True, text=True)
        alive = {d["name"]: d["alive"] for d in json.loads(shown.stdout)["daemons"]}
        assert shown.returncode == 0 and all(alive.values()) and len(alive) >= 4, (alive, shown.stderr[-2000:])
        # What the links carry with Storm idle (heartbeats): the topology's traffic must stand far above it.
        idle = link_rates(layout, seconds=5)
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

        # Over 15 s: the links' measured rates against what the hook's flows estimate, averaged over
        # the windows of those 15 s (a loaded machine's spout is uneven: one window is not the period).
        snapshots = []
        wire = link_rates(layout, seconds=15, during=lambda: snapshots.append(
            latest_windows(cluster.addresses.zookeeper, row.id)))
        estimated = mean_network_use(snapshots)
        for sup, mbit in wire.items():
            print(f"\n{sup}: link sent {mbit:.2f} Mbit/s (idle {idle[sup]:.3f}), hook estimate "
                  f"{estimated[sup]:.2f} (payload + 40 B/tuple), link {link:g}")
            assert mbit <= link * 1.1
        busiest = max(wire, key=wire.get)
        # The spout's ~6.4 Mbit/s when the machine keeps up; a loaded one sends less, never near idle.
        assert wire[busiest] > 10 * max(idle.values()) and wire[busiest] > 0.3
        assert 0.5 <= estimated[busiest] / wire[busiest] <= 1.5
        kill_topology(cluster.addresses.nimbus, "net", wait_secs=0)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(link.namespace in listed for link in layout.links)
