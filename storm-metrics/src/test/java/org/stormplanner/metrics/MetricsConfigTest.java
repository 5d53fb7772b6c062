package org.stormplanner.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MetricsConfigTest {

    @Test
    void defaultsComeFromStormsOwnZooKeeperSettings() {
        MetricsConfig config = new MetricsConfig(Map.of(
            "storm.zookeeper.servers", List.of("zk1", "zk2"), "storm.zookeeper.port", 2182));
        assertTrue(config.enabled);
        assertEquals(MetricsConfig.DEFAULT_PERIOD_SECS, config.periodSecs);
        assertEquals("/storm-planner/metrics", config.root);
        assertEquals("zk1:2182,zk2:2182", config.connectString());
        assertTrue(config.problems.isEmpty());
    }

    @Test
    void plannerKeysOverrideAndBadValuesFallBackWithAReason() {
        Map<String, Object> conf = new HashMap<>();
        conf.put(MetricsConfig.PERIOD_SECS, "0.2");
        conf.put(MetricsConfig.ROOT, "relative/path");
        conf.put(MetricsConfig.SERVERS, "a:1111, b");
        conf.put(MetricsConfig.PORT, 3000);
        conf.put(MetricsConfig.MAX_WRITES_PER_SEC, "lots");
        conf.put(MetricsConfig.ENABLED, "False");
        MetricsConfig config = new MetricsConfig(conf);
        assertFalse(config.enabled);
        assertEquals(MetricsConfig.MIN_PERIOD_SECS, config.periodSecs, "the period has a floor");
        assertEquals(MetricsConfig.DEFAULT_ROOT, config.root);
        assertEquals("a:1111,b:3000", config.connectString());
        assertEquals(MetricsConfig.DEFAULT_MAX_WRITES_PER_SEC, config.maxWritesPerSec);
        assertEquals(2, config.problems.size(), config.problems.toString());
    }

    @Test
    void aWorkerWithManyTasksStretchesItsPeriodToBoundTheWriteRate() {
        MetricsConfig config = new MetricsConfig(Map.of(MetricsConfig.PERIOD_SECS, 2, MetricsConfig.MAX_WRITES_PER_SEC, 10));
        assertEquals(2.0, config.effectivePeriodSecs(5));
        assertEquals(6.0, config.effectivePeriodSecs(60));
    }

    @Test
    void theSupervisorIdComesFromTheWorkersCommandLine() {
        String[] args = {"-Xmx256m", "-cp", "x", WorkerIdentity.WORKER_MAIN, "pipe-1-17", "sup-fast", "6628", "6700", "w-1"};
        assertEquals("sup-fast", WorkerIdentity.supervisorIdFromArguments(args));
        assertEquals(null, WorkerIdentity.supervisorIdFromArguments(new String[] {"java", "Other"}));
    }

    @Test
    void theWorkerReportsHowItsIdleExecutorsWaitBySimpleClassName() {
        Map<String, Object> conf = Map.of(
            "topology.bolt.wait.strategy", "org.apache.storm.policy.WaitStrategyProgressive",
            "topology.spout.wait.strategy", "org.apache.storm.policy.WaitStrategyPark",
            "topology.backpressure.wait.strategy", "x." + "W".repeat(500));
        Map<String, String> waits = WorkerIdentity.waitsOf(conf);
        assertEquals("WaitStrategyProgressive", waits.get("bolt"));
        assertEquals("WaitStrategyPark", waits.get("spout"));
        assertEquals(WorkerIdentity.MAX_STRATEGY_CHARS, waits.get("backpressure").length());
        assertEquals(Map.of("bolt", "Park"), WorkerIdentity.waitsOf(Map.of("topology.bolt.wait.strategy", "Park")));
        assertEquals(Map.of(), WorkerIdentity.waitsOf(null));
        WorkerIdentity worker = WorkerIdentity.of(conf, "sup-fast", 6700);
        assertEquals(waits, worker.toMap().get("waits"));
    }
}
