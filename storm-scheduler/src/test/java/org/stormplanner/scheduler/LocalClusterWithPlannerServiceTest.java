package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import org.apache.storm.Config;
import org.apache.storm.DaemonConfig;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.Assignment;
import org.apache.storm.generated.NodeInfo;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.testing.TestGlobalCount;
import org.apache.storm.testing.TestWordCounter;
import org.apache.storm.testing.TestWordSpout;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.stormplanner.thrift.Health;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.TopologyPlan;

/**
 * Nimbus (in a LocalCluster) scheduling with the plugin, against the REAL Python planner service started
 * as a subprocess: {@code $PLANNER_PYTHON -m storm_planner serve --host 127.0.0.1 --port <free port>}.
 *
 * <p>Skipped (reported as skipped, with the reason) when PLANNER_PYTHON is unset. Set it to a Python with the storm_planner package installed,
 * e.g. {@code PLANNER_PYTHON=$PWD/.venv/bin/python mvn -B test}.
 *
 * <p>The plugin is configured as {@link ObservedPlannerScheduler}: the real PlannerScheduler that also keeps
 * a copy of the plans the service returned, so the test compares Nimbus' assignment with them.
 */
@EnabledIfEnvironmentVariable(named = "PLANNER_PYTHON", matches = ".*\\S.*",
    disabledReason = "PLANNER_PYTHON is not set: skipping the LocalCluster test against the real planner service "
        + "(set it to a Python with storm_planner installed, e.g. PLANNER_PYTHON=$PWD/.venv/bin/python)")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalClusterWithPlannerServiceTest {

    private static final Duration ASSIGNMENT = Duration.ofSeconds(90);

    private PlannerServiceProcess service;
    private int servicePort;
    private LocalCluster cluster;

    @BeforeAll
    void startServiceAndCluster() throws Exception {
        service = PlannerServiceProcess.start(System.getenv("PLANNER_PYTHON").trim());
        servicePort = service.port();

        Health health = new PlannerClient("127.0.0.1", servicePort, 5000).health();
        assertEquals("ok", health.getStatus());
        assertTrue(health.getAlgorithms().contains("even"), "service algorithms: " + health.getAlgorithms());

        Map<String, Object> daemonConf = new HashMap<>();
        daemonConf.put(DaemonConfig.STORM_SCHEDULER, ObservedPlannerScheduler.class.getName());
        daemonConf.put(PlannerConfig.SERVICE_HOST, "127.0.0.1");
        daemonConf.put(PlannerConfig.SERVICE_PORT, servicePort);
        daemonConf.put(PlannerConfig.SERVICE_TIMEOUT_MS, 5000);
        daemonConf.put(DaemonConfig.SUPERVISOR_SCHEDULER_META, Map.of("machine.type", "local", "speed", "1.0"));
        cluster = new LocalCluster.Builder()
            .withSupervisors(2)
            .withPortsPerSupervisor(2)
            .withDaemonConf(daemonConf)
            .build();
    }

    @AfterAll
    void stopEverything() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        service.close();
    }

    @Test
    @Order(1)
    void nimbusAppliesExactlyThePlanTheServiceReturned() throws Exception {
        String id = submit("planned", "even");

        String status = awaitStatus(id, "Planned by storm-planner");
        Map<String, String> applied = nimbusAssignment(id);
        TopologyPlan plan = ObservedPlannerScheduler.PLANS.get(id);

        assertNotNull(plan, "the service returned no plan for " + id);
        assertEquals(planAsMap(plan), applied, "Nimbus' assignment is the service's plan");
        assertEquals("even", plan.getAlgorithm());
        assertTrue(status.startsWith("Planned by storm-planner (algorithm even, " + applied.size() + " executors on "
            + new HashSet<>(applied.values()).size() + " slots"), status);
        assertEquals(2, new HashSet<>(applied.values()).size(), "even spreads over topology.workers slots");

        awaitWorkersRunning(id);

        // The service answers the same request with the same plan: it is the service's plan, not a coincidence.
        PlanRequest sent = ObservedPlannerScheduler.REQUESTS.stream()
            .filter(r -> r.getTopologies().stream().anyMatch(t -> t.getId().equals(id)))
            .findFirst().orElseThrow();
        TopologyPlan again = new PlannerClient("127.0.0.1", servicePort, 5000).plan(sent).getPlans().stream()
            .filter(p -> p.getTopology_id().equals(id)).findFirst().orElseThrow();
        assertEquals(planAsMap(plan), planAsMap(again));
    }

    @Test
    @Order(2)
    void withTheServiceStoppedNimbusStaysUpAndFallsBack() throws Exception {
        service.close();

        String id = submit("fallback", "even");

        String status = awaitStatus(id, "Fell back to DefaultScheduler");
        assertTrue(status.startsWith("Fell back to DefaultScheduler (unreachable): planner service at 127.0.0.1:"
            + servicePort + " unreachable"), status);
        Map<String, String> applied = nimbusAssignment(id);
        assertEquals(executorCount(id), applied.size(), "every executor placed by DefaultScheduler: " + applied);
        assertNotNull(cluster.getClusterInfo(), "Nimbus still answers");
        awaitWorkersRunning(id);
    }

    private String submit(String name, String algorithm) throws Exception {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("words", new TestWordSpout(), 2);
        builder.setBolt("count", new TestWordCounter(), 2).fieldsGrouping("words", new Fields("word"));
        builder.setBolt("total", new TestGlobalCount(), 1).globalGrouping("count");
        StormTopology topology = builder.createTopology();
        Map<String, Object> conf = new HashMap<>();
        conf.put(Config.TOPOLOGY_WORKERS, 2);
        conf.put(PlannerConfig.ALGORITHM, algorithm);
        cluster.submitTopology(name, conf, topology);
        return cluster.getTopologySummaryByName(name).get_id();
    }

    /** Waits until Nimbus' status for the topology starts with the prefix and it has an assignment. */
    private String awaitStatus(String id, String prefix) throws Exception {
        String[] status = new String[1];
        await(ASSIGNMENT, () -> {
            try {
                TopologyInfo info = cluster.getTopologyInfo(id);
                status[0] = info.get_sched_status();
                return status[0] != null && status[0].startsWith(prefix) && !nimbusAssignment(id).isEmpty();
            } catch (Exception notYet) {
                return false;
            }
        }, () -> "status of " + id + " is '" + status[0] + "', wanted '" + prefix + "...'");
        return status[0];
    }

    /**
     * Waits until every executor heartbeats, i.e. the workers run as assigned. Besides proving the topology
     * runs, this keeps LocalCluster.close() away from workers still being set up: a supervisor slot torn
     * down while it waits for its topology's files halts the JVM (Storm's Slot calls exitProcess).
     */
    private void awaitWorkersRunning(String id) throws Exception {
        await(ASSIGNMENT, () -> {
            try {
                TopologyInfo info = cluster.getTopologyInfo(id);
                return info.get_executors_size() > 0
                    && info.get_executors().stream().allMatch(e -> e.is_set_stats());
            } catch (Exception notYet) {
                return false;
            }
        }, () -> "the workers of " + id + " did not start: " + describeExecutors(id));
    }

    private String describeExecutors(String id) {
        try {
            return cluster.getTopologyInfo(id).get_executors().stream()
                .map(e -> e.get_component_id() + "@" + e.get_host() + ":" + e.get_port() + " up " + e.get_uptime_secs()
                    + "s stats " + e.is_set_stats())
                .collect(java.util.stream.Collectors.joining(", "));
        } catch (Exception e) {
            return e.toString();
        }
    }

    /** Nimbus' assignment as stored in ZooKeeper: "[start-end]" to "node:port". */
    private Map<String, String> nimbusAssignment(String id) throws Exception {
        Map<String, String> placement = new TreeMap<>();
        Assignment assignment = cluster.getClusterState().assignmentInfo(id, null);
        if (assignment == null) {
            return placement;
        }
        for (Map.Entry<List<Long>, NodeInfo> entry : assignment.get_executor_node_port().entrySet()) {
            NodeInfo node = entry.getValue();
            placement.put("[" + entry.getKey().get(0) + "-" + entry.getKey().get(1) + "]",
                node.get_node() + ":" + node.get_port().iterator().next());
        }
        return placement;
    }

    private int executorCount(String id) throws Exception {
        return cluster.getTopologyInfo(id).get_executors_size();
    }

    private static Map<String, String> planAsMap(TopologyPlan plan) {
        Map<String, String> map = new TreeMap<>();
        plan.getAssignments().forEach((executor, slot) -> map.put(executor, slot.getNode_id() + ":" + slot.getPort()));
        return map;
    }

    private static void await(Duration limit, BooleanSupplier done, java.util.function.Supplier<String> why)
        throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("gave up after " + limit.toSeconds() + " s: " + why.get());
            }
            Thread.sleep(200);
        }
    }
}
