"""Per-node network use from the hook's windows: flows that cross nodes load both links, a host's
interface counters give its whole link use, and the service adds what is already used on each link
(by other topologies, or by anything on the host) to the nodes a planner sees."""
from __future__ import annotations

import random
import time

import pytest
from metrics_docs import encode, window_doc

from storm_planner.core.errors import ProblemError
from storm_planner.metrics.network_use import (
    NodeTraffic,
    host_link_use,
    link_use_besides,
    network_use,
    topology_network_use,
)
from storm_planner.metrics.source import StoreMetricsSource
from storm_planner.metrics.store import MetricsStore
from storm_planner.metrics.windows import CorruptWindow, parse_window
from storm_planner.service.planning.convert import problem_from_thrift
from storm_planner.service.transport.contract import planner_thrift as T


def window(topology="t", component="c", task=1, *, node="sup-a", sent=(), host_net=None, **kw):
    doc = window_doc(topology, component, task, node=node, sent=sent, **kw)
    if host_net is not None:
        doc["host_net"] = {"received_bytes": host_net[0], "sent_bytes": host_net[1]}
    return parse_window(encode(doc))


def mbit(tuples, seconds=10.0, payload=10, overhead=0):
    return tuples * (payload + overhead) * 8 / 1e6 / seconds


def test_only_flows_between_nodes_load_links_both_ways():
    windows = {1: window(task=1, node="sup-a", sent=((2, 5000), (3, 7000), (9, 100))),
               2: window(task=2, node="sup-b", sent=((3, 1000),)),
               3: window(task=3, node="sup-a")}
    use = topology_network_use(windows, tuple_overhead_bytes=0)
    # 1 -> 3 stays on sup-a; task 9 has no window (not started): left out.
    assert use["sup-a"].sent_mbit == pytest.approx(mbit(5000))
    assert use["sup-b"].received_mbit == pytest.approx(mbit(5000))
    assert use["sup-b"].sent_mbit == pytest.approx(mbit(1000))
    assert use["sup-a"].received_mbit == pytest.approx(mbit(1000))
    assert use["sup-a"].total_mbit == pytest.approx(mbit(6000))
    with_overhead = topology_network_use(windows, tuple_overhead_bytes=30)
    assert with_overhead["sup-a"].sent_mbit == pytest.approx(mbit(5000, overhead=30))


def test_network_use_equals_summing_every_task_pair_on_random_topologies():
    rng = random.Random(7)
    for _ in range(20):
        topologies = []
        for t in range(3):
            tasks = range(1, rng.randint(2, 12))
            nodes = {task: f"n{rng.randrange(4)}" for task in tasks}
            sends = {task: tuple((other, rng.randint(1, 500)) for other in tasks
                                 if other != task and rng.random() < 0.4) for task in tasks}
            topologies.append({task: window(f"t{t}", "c", task, node=nodes[task], sent=sends[task]) for task in tasks})
        expected: dict[str, list[float]] = {}
        for windows in topologies:
            for src in windows.values():
                for dst in windows.values():
                    count = sum(f.tuples for f in src.sent if f.task == dst.task)
                    if count and src.node != dst.node:
                        expected.setdefault(src.node, [0.0, 0.0])[0] += mbit(count, overhead=20)
                        expected.setdefault(dst.node, [0.0, 0.0])[1] += mbit(count, overhead=20)
        use = network_use(topologies, tuple_overhead_bytes=20)
        assert set(use) == set(expected)
        for node, (sent, received) in expected.items():
            assert use[node].sent_mbit == pytest.approx(sent)
            assert use[node].received_mbit == pytest.approx(received)


def test_host_counters_give_the_whole_link_use_between_two_windows_of_one_worker():
    now = int(time.time() * 1000)
    history = {
        1: [window(task=1, node="sup-a", end_ms=now - 10_000, host_net=(1_000_000, 2_000_000)),
            window(task=1, node="sup-a", end_ms=now, host_net=(3_500_000, 2_250_000))],
        # A restarted worker (another pid) or a counter reset tells nothing.
        2: [window(task=2, node="sup-b", end_ms=now - 10_000, pid=1, host_net=(10, 10)),
            window(task=2, node="sup-b", end_ms=now, pid=2, host_net=(9_000_000, 10))],
        3: [window(task=3, node="sup-c", end_ms=now - 10_000, host_net=(9_000_000, 10)),
            window(task=3, node="sup-c", end_ms=now, host_net=(5, 10))],
        # Without host_net (an older hook, or not Linux): nothing either.
        4: [window(task=4, node="sup-d", end_ms=now - 10_000), window(task=4, node="sup-d", end_ms=now)],
    }
    use = host_link_use([history])
    assert set(use) == {"sup-a"}
    assert use["sup-a"].received_mbit == pytest.approx(2.0)   # 2.5 MB in 10 s
    assert use["sup-a"].sent_mbit == pytest.approx(0.2)


def test_host_net_is_optional_and_checked():
    assert window(host_net=(5, 6)).host_received_bytes == 5
    assert window().host_received_bytes is None
    doc = window_doc("t", "c", 1)
    doc["host_net"] = {"received_bytes": -1, "sent_bytes": 0}
    with pytest.raises(CorruptWindow, match="host_net"):
        parse_window(encode(doc))


def test_what_is_already_used_on_a_link():
    own = {"a": NodeTraffic(1.0, 1.0)}
    others = {"a": NodeTraffic(0.5, 0.0), "b": NodeTraffic(2.0, 1.0)}
    hosts = {"a": NodeTraffic(3.0, 2.0), "c": NodeTraffic(0.1, 0.1)}
    used = link_use_besides(own, others, hosts)
    # a: its host carried 5, of which 2 are the topology's own; b: no counters, the others' flows.
    assert used == pytest.approx({"a": 3.0, "b": 3.0, "c": 0.2})
    # Counters below what the others' flows account for (payload estimates are not exact): the flows.
    assert link_use_besides({}, {"a": NodeTraffic(4.0, 0.0)}, {"a": NodeTraffic(1.0, 1.0)}) == {"a": 4.0}


def _publish(kazoo, root, docs):
    for doc in docs:
        path = f"{root}/{doc['topology']}/{doc['task']}"
        kazoo.create(path, encode(doc), makepath=True)


def test_the_service_sees_the_links_other_topologies_use(zookeeper, zk_paths, kazoo):
    """A real store on a real ZooKeeper: the planned topology's nodes carry the other topology's
    measured flows as used bandwidth; its own flows are not counted against it."""
    root, storm_root = zk_paths
    _publish(kazoo, root, [
        window_doc("other-1", "a", 1, node="sup-a", sent=((2, 50_000),)),
        window_doc("other-1", "b", 2, node="sup-b"),
        window_doc("mine-1", "x", 1, node="sup-a", sent=((2, 90_000),)),
        window_doc("mine-1", "y", 2, node="sup-b"),
    ])
    components = [T.Component(id="x", type="spout", parallelism=1), T.Component(id="y", type="bolt", parallelism=1)]
    spec = T.TopologySpec(id="mine-1", name="mine", components=components,
                          streams=[T.Stream(from_component="x", to_component="y", grouping="shuffle")],
                          executors=[T.Executor(id="[1-1]", component="x"), T.Executor(id="[2-2]", component="y")],
                          current={}, algorithm="gma", num_workers=1, options={})
    nodes = [T.Node(id=n, host="127.0.0.1", cpu_capacity=400.0, memory_mb=4096.0, meta={},
                    free_ports=[6700], used_ports=[], bandwidth_mbit=10.0) for n in ("sup-a", "sup-b", "sup-c")]
    with MetricsStore(zookeeper.hosts, root, storm_root=storm_root, timeout_s=2.0) as store:
        deadline = time.monotonic() + 10
        while len(store.topologies()) < 2 or len(store.view("other-1").windows) < 2:
            assert time.monotonic() < deadline, "windows did not reach the store"
            time.sleep(0.05)
        measured = StoreMetricsSource(store).measure(spec, nodes)
    expected = mbit(50_000, overhead=40)
    assert measured.node_bandwidth == pytest.approx({"sup-a": expected, "sup-b": expected})
    problem = problem_from_thrift(spec, nodes, measured)
    used = {node.id: node.used_bandwidth for node in problem.nodes}
    assert used == pytest.approx({"sup-a": expected, "sup-b": expected, "sup-c": 0.0})
    # Its own stream's tuple size is measured too: 10 payload bytes a tuple, plus the wire overhead.
    assert [s.tuple_bytes for s in problem.streams] == [50.0]


def test_without_metrics_a_stream_takes_the_declared_tuple_size():
    components = [T.Component(id="x", type="spout", parallelism=1), T.Component(id="y", type="bolt", parallelism=1)]

    def spec(options):
        return T.TopologySpec(id="t-1", name="t", components=components,
                              streams=[T.Stream(from_component="x", to_component="y", grouping="shuffle")],
                              executors=[T.Executor(id="[1-1]", component="x"), T.Executor(id="[2-2]", component="y")],
                              current={}, algorithm="gma", num_workers=1, options=options)
    nodes = [T.Node(id="a", host="h", cpu_capacity=400.0, memory_mb=4096.0, meta={}, free_ports=[6700], used_ports=[])]
    assert problem_from_thrift(spec({}), nodes).streams[0].tuple_bytes == 0.0   # unknown: no bandwidth counted
    assert problem_from_thrift(spec({"planner.tuple.bytes": "1000"}), nodes).streams[0].tuple_bytes == 1000.0
    with pytest.raises(ProblemError, match="planner.tuple.bytes"):
        problem_from_thrift(spec({"planner.tuple.bytes": "-5"}), nodes)
