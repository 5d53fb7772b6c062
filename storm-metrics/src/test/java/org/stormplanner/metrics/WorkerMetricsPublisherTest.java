package org.stormplanner.metrics;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.storm.shade.net.minidev.json.JSONValue;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryOneTime;
import org.apache.storm.testing.InProcessZookeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The publisher against a real (in-process) ZooKeeper server: what lands in the znodes. */
class WorkerMetricsPublisherTest {

    private static final String TOPOLOGY = "words-7-1700000000";

    private InProcessZookeeper zookeeper;
    private CuratorFramework reader;

    @BeforeEach
    void startZooKeeper() throws Exception {
        zookeeper = new InProcessZookeeper();
        reader = CuratorFrameworkFactory.newClient("127.0.0.1:" + zookeeper.getPort(), new RetryOneTime(100));
        reader.start();
    }

    @AfterEach
    void stopZooKeeper() throws Exception {
        reader.close();
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    private MetricsConfig config(String root) {
        return new MetricsConfig(Map.of("storm.zookeeper.servers", List.of("127.0.0.1"),
            "storm.zookeeper.port", zookeeper.getPort(), MetricsConfig.ROOT, root));
    }

    private WorkerMetricsPublisher publisher(MetricsConfig config) {
        WorkerIdentity worker = new WorkerIdentity("127.0.0.1", 6701, "sup-fast", 4242,
            Map.of("speed", "2.0", "machine.type", "i7"), Map.of());
        return new WorkerMetricsPublisher("test", TOPOLOGY, config, worker,
            new ZooKeeperSink(config, Map.of("storm.zookeeper.connection.timeout", 1000,
                "storm.zookeeper.session.timeout", 4000)), List.of());
    }

    private Map<String, Object> read(String path) throws Exception {
        byte[] data = reader.getData().forPath(path);
        return map(JSONValue.parse(new String(data, StandardCharsets.UTF_8)));
    }

    // The parsed JSON document's objects and arrays: the one unchecked cast each, in one place.
    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object json) {
        return (Map<String, Object>) json;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> listOfMaps(Object json) {
        return (List<Map<String, Object>>) json;
    }

    @Test
    void writesOneVersionedWindowPerTaskWithDeltasAndTotals() throws Exception {
        MetricsConfig config = config("/storm-planner/metrics");
        WorkerMetricsPublisher publisher = publisher(config);
        TaskCounters spout = new TaskCounters(1, "words");
        TaskCounters count = new TaskCounters(3, "count");
        publisher.register(spout, () -> null);
        publisher.register(count, () -> 12.5);

        for (int i = 0; i < 30; i++) {
            spout.emitted("default", List.of(3), 6);
            count.executed("default", 1, i == 0 ? 4 : -1);
        }
        publisher.publishWindow();

        Map<String, Object> doc = read("/storm-planner/metrics/" + TOPOLOGY + "/1");
        assertEquals(1, ((Number) doc.get("version")).intValue());
        assertEquals("words", doc.get("component"));
        assertEquals(TOPOLOGY, doc.get("topology"));
        Map<String, Object> worker = map(doc.get("worker"));
        assertEquals("sup-fast", worker.get("node"));
        assertEquals(Map.of("speed", "2.0", "machine.type", "i7"), worker.get("meta"));
        List<Map<String, Object>> sent = listOfMaps(doc.get("sent"));
        assertEquals(1, sent.size());
        assertEquals(3, ((Number) sent.get(0).get("to")).intValue());
        assertEquals(30, ((Number) sent.get(0).get("tuples")).intValue());
        assertEquals(180, ((Number) sent.get(0).get("bytes")).intValue());
        Map<String, Object> window = map(doc.get("window"));
        assertEquals(1, ((Number) window.get("seq")).intValue());
        assertTrue(((Number) window.get("end_ms")).longValue() >= ((Number) window.get("start_ms")).longValue());

        Map<String, Object> counted = read("/storm-planner/metrics/" + TOPOLOGY + "/3");
        List<Map<String, Object>> received = listOfMaps(counted.get("received"));
        assertEquals(30, ((Number) received.get(0).get("tuples")).intValue());
        assertEquals(1, ((Number) received.get(0).get("from")).intValue());
        Map<String, Object> executed = map(counted.get("executed"));
        assertEquals(4, ((Number) executed.get("latency_ms_sum")).intValue());
        assertEquals(1, ((Number) executed.get("latency_samples")).intValue());
        assertEquals(12.5, ((Number) counted.get("state_mb")).doubleValue());
        List<Map<String, Object>> threads = listOfMaps(map(counted.get("cpu")).get("threads"));
        assertEquals(Thread.currentThread().getName(), threads.get(0).get("name"));

        // Second window: the deltas since the first, the totals since the start.
        for (int i = 0; i < 5; i++) {
            spout.emitted("default", List.of(3), 6);
        }
        publisher.publishWindow();
        Map<String, Object> second = read("/storm-planner/metrics/" + TOPOLOGY + "/1");
        Map<String, Object> flow = listOfMaps(second.get("sent")).get(0);
        assertEquals(5, ((Number) flow.get("tuples")).intValue());
        assertEquals(35, ((Number) flow.get("total")).intValue());
        assertEquals(2, ((Number) map(second.get("window")).get("seq")).intValue());
        assertEquals(2, reader.checkExists().forPath("/storm-planner/metrics/" + TOPOLOGY + "/1").getVersion() + 1,
            "the znode is rewritten in place, one version per window");
        publisher.unregister(1);
        publisher.unregister(3);
    }

    @Test
    void recreatesADeletedRootAndSurvivesZooKeeperGoingAway() throws Exception {
        MetricsConfig config = config("/custom/root");
        WorkerMetricsPublisher publisher = publisher(config);
        TaskCounters spout = new TaskCounters(1, "words");
        publisher.register(spout, null);
        spout.emitted("default", List.of(2), 1);
        publisher.publishWindow();
        assertNotNull(reader.checkExists().forPath("/custom/root/" + TOPOLOGY + "/1"));

        reader.delete().deletingChildrenIfNeeded().forPath("/custom");
        spout.emitted("default", List.of(2), 1);
        publisher.publishWindow();
        assertNotNull(reader.checkExists().forPath("/custom/root/" + TOPOLOGY + "/1"), "written again");

        reader.close();
        zookeeper.close();
        zookeeper = null;
        spout.emitted("default", List.of(2), 1);
        long started = System.nanoTime();
        assertDoesNotThrow(publisher::publishWindow, "a lost ZooKeeper costs a window, nothing else");
        assertTrue((System.nanoTime() - started) / 1e9 < 60, "the write gives up in bounded time");
        reader = CuratorFrameworkFactory.newClient("127.0.0.1:1", new RetryOneTime(1));
        publisher.unregister(1);
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyWindowOfAWorkerCarriesTheWholeProcessCpuSinceTheLastOne() throws Exception {
        MetricsConfig config = config("/storm-planner/metrics");
        Iterator<Long> cpuMs = List.of(5_000L, 5_400L, 6_150L).iterator();
        WorkerMetricsPublisher publisher = new WorkerMetricsPublisher("test", TOPOLOGY, config,
            new WorkerIdentity("127.0.0.1", 6701, "sup-fast", 4242, Map.of(), Map.of()),
            new ZooKeeperSink(config, Map.of("storm.zookeeper.connection.timeout", 1000,
                "storm.zookeeper.session.timeout", 4000)), List.of(),
            new ProcessCpu(() -> Optional.of(Duration.ofMillis(cpuMs.next()))));
        publisher.register(new TaskCounters(1, "words"), () -> null);
        publisher.register(new TaskCounters(3, "count"), () -> null);
        try {
            publisher.publishWindow();  // the first sample is the baseline: no figure
            Map<String, Object> cpu = map(read("/storm-planner/metrics/" + TOPOLOGY + "/1").get("cpu"));
            assertTrue(!cpu.containsKey("process_ms"), "no process CPU before a baseline: " + cpu);

            publisher.publishWindow();
            for (int task : new int[] {1, 3}) {
                cpu = map(read("/storm-planner/metrics/" + TOPOLOGY + "/" + task).get("cpu"));
                assertEquals(400.0, ((Number) cpu.get("process_ms")).doubleValue(), 1e-9);
            }
            publisher.publishWindow();
            cpu = map(read("/storm-planner/metrics/" + TOPOLOGY + "/3").get("cpu"));
            assertEquals(750.0, ((Number) cpu.get("process_ms")).doubleValue(), 1e-9);
        } finally {
            publisher.unregister(1);
            publisher.unregister(3);
        }
    }

    @Test
    void processCpuIsADeltaAndUnknownIsEmpty() {
        Iterator<Optional<Duration>> totals = List.of(
            Optional.of(Duration.ofMillis(100)),
            Optional.of(Duration.ofMillis(130)),
            Optional.<Duration>empty(),
            Optional.of(Duration.ofMillis(200)),
            Optional.of(Duration.ofMillis(260))).iterator();
        ProcessCpu cpu = new ProcessCpu(totals::next);
        assertTrue(cpu.deltaMs().isEmpty(), "baseline");
        assertEquals(30.0, cpu.deltaMs().getAsDouble(), 1e-9);
        assertTrue(cpu.deltaMs().isEmpty(), "unknown");
        assertTrue(cpu.deltaMs().isEmpty(), "a new baseline after an unknown sample");
        assertEquals(60.0, cpu.deltaMs().getAsDouble(), 1e-9);
        assertTrue(new ProcessCpu().deltaMs().isEmpty());
    }
}
