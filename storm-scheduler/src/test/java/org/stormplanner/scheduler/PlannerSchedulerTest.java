package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.stormplanner.scheduler.TestClusters.assignment;
import static org.stormplanner.scheduler.TestClusters.cluster;
import static org.stormplanner.scheduler.TestClusters.expected;
import static org.stormplanner.scheduler.TestClusters.nextRound;
import static org.stormplanner.scheduler.TestClusters.placement;
import static org.stormplanner.scheduler.TestClusters.supervisor;
import static org.stormplanner.scheduler.TestClusters.topologies;
import static org.stormplanner.scheduler.TestClusters.topology;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.ResourceMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.stormplanner.thrift.ErrorKind;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.PlannerError;
import org.stormplanner.thrift.TopologyPlan;

/**
 * PlannerScheduler on real Storm Cluster/Topologies objects, against a {@link StandInPlanner}.
 *
 * <p>The cluster: supervisors sup-a and sup-b with ports 6700 and 6701 each. The topology "words-1": 7
 * executors [1-1]..[7-7] (the last is the __acker), topology.workers 2.
 */
class PlannerSchedulerTest {

    private static final String WORDS = "words-1";

    /** A plan nothing like round robin, so only the planner could have produced it. */
    private static final String[] GOOD_PLAN = {
        "[1-1]", "sup-b:6701", "[2-2]", "sup-a:6700", "[3-3]", "sup-b:6701", "[4-4]", "sup-a:6700",
        "[5-5]", "sup-b:6701", "[6-6]", "sup-b:6701", "[7-7]", "sup-a:6700"};

    private final StormMetricsRegistry registry = new StormMetricsRegistry();
    private final List<SupervisorDetails> supervisors =
        List.of(supervisor("sup-a", 6700, 6701), supervisor("sup-b", 6700, 6701));
    private StandInPlanner planner;

    @BeforeEach
    void startStandIn() throws Exception {
        planner = new StandInPlanner(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "stand-in", GOOD_PLAN).setSolve_ms(7.4)));
    }

    @AfterEach
    void stopStandIn() throws Exception {
        planner.close();
    }

    @Test
    void validPlanIsAppliedExactly() {
        TopologyDetails words = topology(WORDS, 2);
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertEquals(expected(GOOD_PLAN), placement(cluster, WORDS));
        assertEquals("Planned by storm-planner (algorithm stand-in, 7 executors on 2 slots, solve 7 ms)",
            cluster.getStatus(WORDS));
        assertEquals(1, meter(PlannerMetrics.PLANS_APPLIED));
        assertEquals(1, planner.requests().size());
        assertEquals("auto", planner.lastRequest().getTopologies().get(0).getAlgorithm());
    }

    @Test
    void plannedTopologyWithFewerWorkersIsLeftAloneNextRound() {
        planner.answering(request -> Plans.response(request.getRequest_id(), Plans.plan(WORDS, "even",
            "[1-1]", "sup-b:6700", "[2-2]", "sup-b:6700", "[3-3]", "sup-b:6700", "[4-4]", "sup-b:6700",
            "[5-5]", "sup-b:6700", "[6-6]", "sup-b:6700", "[7-7]", "sup-b:6700")));
        Topologies topologies = topologies(topology(WORDS, 2));
        Cluster cluster = cluster(supervisors, List.of(), topologies);
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);

        scheduler.schedule(topologies, cluster);
        Map<String, String> planned = placement(cluster, WORDS);
        Cluster next = nextRound(cluster, topologies);
        scheduler.schedule(topologies, next);

        assertEquals(1, new HashSet<>(planned.values()).size());
        assertEquals(planned, placement(next, WORDS), "one worker of two wanted: still as planned");
        assertEquals(1, planner.requests().size(), "a fully placed topology is not sent again");
    }

    static Stream<Arguments> invalidPlans() {
        return Stream.of(
            Arguments.of("executor missing", (Consumer<Map<String, String>>) plan -> plan.remove("[5-5]"),
                "1 of 7 executors missing from the plan: [5-5]"),
            Arguments.of("executor twice", (Consumer<Map<String, String>>) plan -> plan.put("[ 3-3 ]", "sup-a:6701"),
                "executor [3-3] assigned twice"),
            Arguments.of("unknown executor", (Consumer<Map<String, String>>) plan -> plan.put("[8-8]", "sup-a:6700"),
                "unknown executor [8-8]"),
            Arguments.of("not an executor id", (Consumer<Map<String, String>>) plan -> plan.put("__acker", "sup-a:6700"),
                "unknown executor '__acker'"),
            Arguments.of("dead node", (Consumer<Map<String, String>>) plan -> plan.put("[1-1]", "sup-gone:6700"),
                "slot sup-gone:6700 is on node 'sup-gone', which is not a live supervisor"),
            Arguments.of("port that does not exist", (Consumer<Map<String, String>>) plan -> plan.put("[1-1]", "sup-a:6799"),
                "slot sup-a:6799 does not exist"),
            Arguments.of("slot of another topology", (Consumer<Map<String, String>>) plan -> plan.put("[1-1]", "sup-b:6700"),
                "slot sup-b:6700 is used by topology other-1"),
            Arguments.of("empty plan", (Consumer<Map<String, String>>) Map::clear,
                "the plan assigns no executor"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidPlans")
    void invalidPlanIsRejectedAndDefaultSchedulerPlacesTheTopology(String kind, Consumer<Map<String, String>> spoil,
                                                                   String reason) {
        Map<String, String> plan = expected(GOOD_PLAN);
        spoil.accept(plan);
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "even", plan.entrySet().stream()
                .flatMap(e -> Stream.of(e.getKey(), e.getValue())).toArray(String[]::new))));
        TopologyDetails words = topology(WORDS, 2);
        TopologyDetails other = topology("other-1", 1);
        Topologies topologies = topologies(words, other);
        SchedulerAssignment otherOnSupB = assignment("other-1", "[1-1]", "sup-b:6700", "[2-2]", "sup-b:6700",
            "[3-3]", "sup-b:6700", "[4-4]", "sup-b:6700", "[5-5]", "sup-b:6700", "[6-6]", "sup-b:6700",
            "[7-7]", "sup-b:6700");
        Cluster cluster = cluster(supervisors, List.of(otherOnSupB), topologies);
        Map<String, String> otherBefore = placement(cluster, "other-1");

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertTrue(cluster.getStatus(WORDS).startsWith("Fell back to DefaultScheduler (invalid_plan): invalid plan: " + reason),
            cluster.getStatus(WORDS));
        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertFalse(placement(cluster, WORDS).containsValue("sup-b:6700"));
        assertEquals(otherBefore, placement(cluster, "other-1"), "the other topology is untouched");
        assertEquals(1, meter("planner.fallbacks.invalid_plan"));
        assertEquals(0, meter(PlannerMetrics.PLANS_APPLIED));
    }

    @Test
    void unreachablePlannerFallsBack() throws IOException {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort();
        }
        TopologyDetails words = topology(WORDS, 2);
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(closedPort, 2000).schedule(topologies, cluster);

        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertTrue(cluster.getStatus(WORDS).startsWith("Fell back to DefaultScheduler (unreachable): planner service at 127.0.0.1:"
            + closedPort + " unreachable"), cluster.getStatus(WORDS));
        assertEquals(1, meter("planner.fallbacks.unreachable"));
    }

    @Test
    void plannerSlowerThanTheDeadlineFallsBack() {
        planner.delayingBy(3000);
        TopologyDetails words = topology(WORDS, 2);
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        long start = System.nanoTime();
        scheduler(planner.port(), 300).schedule(topologies, cluster);
        long tookMs = (System.nanoTime() - start) / 1_000_000;

        assertTrue(tookMs < 2500, "schedule() waited " + tookMs + " ms; the deadline is 300 ms");
        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertEquals("Fell back to DefaultScheduler (timeout): planner service at 127.0.0.1:" + planner.port()
            + " did not answer within 300 ms", cluster.getStatus(WORDS));
        assertEquals(1, meter("planner.fallbacks.timeout"));
    }

    @Test
    void plannerErrorForTheRequestFallsBack() {
        planner.answering(request -> {
            throw new PlannerError(ErrorKind.UNKNOWN_ALGORITHM, "no algorithm named 'magic'");
        });
        TopologyDetails words = topology(WORDS, 2, PlannerConfig.ALGORITHM, "magic");
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertTrue(cluster.getStatus(WORDS).endsWith("rejected the request: UNKNOWN_ALGORITHM: no algorithm named 'magic'"),
            cluster.getStatus(WORDS));
        assertEquals("magic", planner.lastRequest().getTopologies().get(0).getAlgorithm());
        assertEquals(1, meter("planner.fallbacks.planner_error"));
    }

    /**
     * One topology planned into fewer workers than it asks for, one that the planner could not place. The
     * fallback must place only the second: DefaultScheduler alone would respread the first.
     */
    @Test
    void fallbackOfOneTopologyLeavesThePlannedOneAsPlanned() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.plan("a-1", "even", "[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700", "[3-3]", "sup-a:6700",
                "[4-4]", "sup-a:6700", "[5-5]", "sup-a:6700", "[6-6]", "sup-a:6700", "[7-7]", "sup-a:6700"),
            Plans.failed("b-1", ErrorKind.INTERNAL, "the planner crashed")));
        TopologyDetails a = topology("a-1", 2);
        TopologyDetails b = topology("b-1", 2);
        Topologies topologies = topologies(a, b);
        Cluster cluster = cluster(supervisors, List.of(), topologies);
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);

        scheduler.schedule(topologies, cluster);

        assertEquals(Set.of("sup-a:6700"), new HashSet<>(placement(cluster, "a-1").values()));
        assertTrue(cluster.getStatus("a-1").startsWith("Planned by storm-planner"), cluster.getStatus("a-1"));
        assertPlacedByDefaultScheduler(cluster, b, 2);
        assertFalse(placement(cluster, "b-1").containsValue("sup-a:6700"));
        assertEquals("Fell back to DefaultScheduler (planner_error): the planner failed: INTERNAL: the planner crashed",
            cluster.getStatus("b-1"));

        Cluster next = nextRound(cluster, topologies);
        scheduler.schedule(topologies, next);
        assertEquals(placement(cluster, "a-1"), placement(next, "a-1"));
        assertEquals(placement(cluster, "b-1"), placement(next, "b-1"));
        assertEquals(1, planner.requests().size());
    }

    /** As Storm's ResourceAwareScheduler: no placement within the free declared resources, no placement at all. */
    @Test
    void infeasibleTopologyIsLeftUnscheduledWithItsReason() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.failed(WORDS, ErrorKind.INFEASIBLE, "no node has room for executor [7-7] (128 MB)")));
        Topologies topologies = topologies(topology(WORDS, 2));
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertTrue(placement(cluster, WORDS).isEmpty(), "nothing placed: " + placement(cluster, WORDS));
        assertEquals("Not scheduled (INFEASIBLE): no node has room for executor [7-7] (128 MB); set "
            + "planner.infeasible.fallback: true to let DefaultScheduler place it anyway", cluster.getStatus(WORDS));
        assertEquals(1, meter(PlannerMetrics.INFEASIBLE));
        assertEquals(0, meter("planner.fallbacks.planner_error"));
    }

    @Test
    void infeasibleTopologyGoesToDefaultSchedulerWhenItSaysSo() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.failed(WORDS, ErrorKind.INFEASIBLE, "no node has room")));
        TopologyDetails words = topology(WORDS, 2, PlannerConfig.INFEASIBLE_FALLBACK, "true");
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertEquals("Fell back to DefaultScheduler (planner_error): the planner failed: INFEASIBLE: no node has room",
            cluster.getStatus(WORDS));
        assertEquals(0, meter(PlannerMetrics.INFEASIBLE));
    }

    @Test
    void secondPlanClaimingASlotTheFirstTookFallsBack() {
        String[] allOnSupA6700 = {"[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700", "[3-3]", "sup-a:6700",
            "[4-4]", "sup-a:6700", "[5-5]", "sup-a:6700", "[6-6]", "sup-a:6700", "[7-7]", "sup-a:6700"};
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.plan("a-1", "even", allOnSupA6700), Plans.plan("b-1", "even", allOnSupA6700)));
        TopologyDetails b = topology("b-1", 1);
        Topologies topologies = topologies(topology("a-1", 1), b);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertEquals(expected(allOnSupA6700), placement(cluster, "a-1"));
        assertEquals("Fell back to DefaultScheduler (invalid_plan): invalid plan: slot sup-a:6700 is used by topology a-1",
            cluster.getStatus("b-1"));
        assertPlacedByDefaultScheduler(cluster, b, 1);
        assertFalse(placement(cluster, "b-1").containsValue("sup-a:6700"));
    }

    @Test
    void replanningFreesOnlyTheSlotsWhoseExecutorsChange() {
        // A worker on sup-b died: [5-5] and [6-6] lost their slot; the others keep running.
        planner.answering(request -> Plans.response(request.getRequest_id(), Plans.plan(WORDS, "even",
            "[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700", "[7-7]", "sup-a:6700",
            "[3-3]", "sup-a:6701", "[4-4]", "sup-a:6701", "[5-5]", "sup-a:6701",
            "[6-6]", "sup-b:6700")));
        Topologies topologies = topologies(topology(WORDS, 2));
        SchedulerAssignment current = assignment(WORDS, "[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700",
            "[7-7]", "sup-a:6700", "[3-3]", "sup-a:6701", "[4-4]", "sup-a:6701");
        RecordingCluster cluster = new RecordingCluster(supervisors, List.of(current), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertEquals(List.of(TestClusters.slot("sup-a:6701")), cluster.freed);
        assertEquals(expected("[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700", "[7-7]", "sup-a:6700",
            "[3-3]", "sup-a:6701", "[4-4]", "sup-a:6701", "[5-5]", "sup-a:6701", "[6-6]", "sup-b:6700"),
            placement(cluster, WORDS));
        Map<String, org.stormplanner.thrift.WorkerSlot> sentAsCurrent =
            planner.lastRequest().getTopologies().get(0).getCurrent();
        assertEquals(5, sentAsCurrent.size());
        assertEquals(Plans.slot("sup-a:6701"), sentAsCurrent.get("[4-4]"));
    }

    @Test
    void topologyWithPlannerDisabledGoesToDefaultSchedulerWithoutAsking() {
        TopologyDetails words = topology(WORDS, 2, PlannerConfig.ENABLED, false);
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertTrue(planner.requests().isEmpty());
        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertEquals("Scheduled by DefaultScheduler (planner.enabled is false for this topology)",
            cluster.getStatus(WORDS));
    }

    @Test
    void answerThatIsNotThriftFallsBackWithoutThrowing() throws Exception {
        try (JunkServer junk = new JunkServer()) {
            TopologyDetails words = topology(WORDS, 2);
            Topologies topologies = topologies(words);
            Cluster cluster = cluster(supervisors, List.of(), topologies);

            assertDoesNotThrow(() -> scheduler(junk.port(), 2000).schedule(topologies, cluster));

            assertPlacedByDefaultScheduler(cluster, words, 2);
            assertTrue(cluster.getStatus(WORDS).startsWith("Fell back to DefaultScheduler ("), cluster.getStatus(WORDS));
        }
    }

    @Test
    void garbagePlansFallBackWithoutThrowing() {
        List<PlanResponse> garbage = List.of(
            new PlanResponse("r", new ArrayList<>()),
            Plans.response("r", Plans.plan("some-other-topology", "even", GOOD_PLAN)),
            Plans.response("r", Plans.plan(WORDS, "even", "\u0000", ":0", "[7-3]", "sup-a:-1")),
            Plans.response("r", Plans.plan(WORDS, "even", "[99999999999-1]", "sup-a:6700")));
        for (PlanResponse answer : garbage) {
            planner.answering(request -> answer);
            TopologyDetails words = topology(WORDS, 2);
            Topologies topologies = topologies(words);
            Cluster cluster = cluster(supervisors, List.of(), topologies);

            assertDoesNotThrow(() -> scheduler(planner.port(), 5000).schedule(topologies, cluster));

            assertPlacedByDefaultScheduler(cluster, words, 2);
            assertTrue(cluster.getStatus(WORDS).startsWith("Fell back to DefaultScheduler ("), cluster.getStatus(WORDS));
        }
    }

    @Test
    void plannerThatFailsInsideFallsBack() {
        planner.answering(request -> {
            throw new IllegalStateException("bug in the planner");
        });
        TopologyDetails words = topology(WORDS, 2);
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        scheduler(planner.port(), 5000).schedule(topologies, cluster);

        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertTrue(cluster.getStatus(WORDS).startsWith("Fell back to DefaultScheduler (planner_error)"),
            cluster.getStatus(WORDS));
    }

    @Test
    void faultInsideThePluginFallsBackWithoutThrowing() {
        TopologyDetails words = topology(WORDS, 2);
        Topologies topologies = topologies(words);
        // A cluster that breaks the request builder: every supervisor lookup fails once.
        Cluster cluster = new RecordingCluster(supervisors, List.of(), topologies) {
            private boolean failed;

            @Override
            public Map<String, SupervisorDetails> getSupervisors() {
                if (!failed) {
                    failed = true;
                    throw new IllegalStateException("boom");
                }
                return super.getSupervisors();
            }
        };

        assertDoesNotThrow(() -> scheduler(planner.port(), 5000).schedule(topologies, cluster));

        assertPlacedByDefaultScheduler(cluster, words, 2);
        assertTrue(cluster.getStatus(WORDS).startsWith("Fell back to DefaultScheduler (internal)"),
            cluster.getStatus(WORDS));
        assertEquals(1, meter("planner.fallbacks.internal"));
    }

    @Test
    void unpreparedSchedulerDoesNotThrow() {
        TopologyDetails words = topology(WORDS, 2);
        Topologies topologies = topologies(words);
        Cluster cluster = cluster(supervisors, List.of(), topologies);

        assertDoesNotThrow(() -> new PlannerScheduler().schedule(topologies, cluster));

        assertPlacedByDefaultScheduler(cluster, words, 2);
    }

    @Test
    void repeatedFailureIsLoggedOnceAndAgainWhenTheCauseChanges() throws IOException {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort();
        }
        PlannerScheduler scheduler = scheduler(closedPort, 1000);
        try (CapturedLog log = new CapturedLog(PlannerScheduler.class)) {
            for (int round = 0; round < 3; round++) {
                Topologies topologies = topologies(topology(WORDS, 2));
                scheduler.schedule(topologies, cluster(supervisors, List.of(), topologies));
            }
            assertEquals(1, log.warningsContaining("unreachable").size(), log.warningsContaining("").toString());
            assertEquals(3, meter("planner.fallbacks.unreachable"), "every fallback is counted");

            Topologies topologies = topologies(topology(WORDS, 2), topology("b-1", 1, PlannerConfig.ALGORITHM, "x"));
            PlannerScheduler other = scheduler(planner.port(), 1000);
            planner.answering(request -> Plans.response(request.getRequest_id(),
                Plans.plan(WORDS, "even", GOOD_PLAN), Plans.plan("b-1", "even", "[1-1]", "sup-a:6701")));
            for (int round = 0; round < 2; round++) {
                other.schedule(topologies, cluster(supervisors, List.of(), topologies));
            }
            assertEquals(1, log.warningsContaining("b-1 fell back").size(), log.warningsContaining("").toString());
        }
    }

    @Test
    void configIsNeverNull() {
        PlannerScheduler scheduler = new PlannerScheduler();
        assertTrue(scheduler.config() != null);
        scheduler.prepare(new HashMap<>(), registry);
        assertTrue(scheduler.config() != null);
        scheduler.cleanup();
    }

    private PlannerScheduler scheduler(int port, int timeoutMs) {
        Map<String, Object> conf = new HashMap<>();
        conf.put(PlannerConfig.SERVICE_HOST, "127.0.0.1");
        conf.put(PlannerConfig.SERVICE_PORT, port);
        conf.put(PlannerConfig.SERVICE_TIMEOUT_MS, timeoutMs);
        PlannerScheduler scheduler = new PlannerScheduler();
        scheduler.prepare(conf, registry);
        return scheduler;
    }

    private long meter(String name) {
        return registry.getMeter(name).getCount();
    }

    /** Every executor placed, on as many distinct slots as DefaultScheduler's even spread gives. */
    private static void assertPlacedByDefaultScheduler(Cluster cluster, TopologyDetails td, int workers) {
        Map<String, String> placement = placement(cluster, td.getId());
        assertEquals(td.getExecutors().size(), placement.size(), "all executors placed: " + placement);
        assertEquals(workers, new HashSet<>(placement.values()).size(), "spread over " + workers + ": " + placement);
    }

    /** A real Cluster that remembers which slots were freed. */
    static class RecordingCluster extends Cluster {
        final List<WorkerSlot> freed = new ArrayList<>();

        RecordingCluster(Collection<SupervisorDetails> supervisors, Collection<SchedulerAssignment> assignments,
                         Topologies topologies) {
            super(new TestClusters.StubNimbus(), new ResourceMetrics(new StormMetricsRegistry()),
                byId(supervisors), byTopology(assignments), topologies,
                new HashMap<>(org.apache.storm.utils.Utils.readDefaultConfig()));
        }

        @Override
        public void freeSlot(WorkerSlot slot) {
            freed.add(slot);
            super.freeSlot(slot);
        }

        private static Map<String, SupervisorDetails> byId(Collection<SupervisorDetails> supervisors) {
            Map<String, SupervisorDetails> map = new HashMap<>();
            supervisors.forEach(s -> map.put(s.getId(), s));
            return map;
        }

        private static Map<String, SchedulerAssignment> byTopology(Collection<SchedulerAssignment> assignments) {
            Map<String, SchedulerAssignment> map = new HashMap<>();
            assignments.forEach(a -> map.put(a.getTopologyId(), a));
            return map;
        }
    }

    /** Accepts connections and answers them with bytes that are not a Thrift frame. */
    private static final class JunkServer implements AutoCloseable {
        private final ServerSocket socket = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
        private final Thread thread = new Thread(this::serve, "junk-server");

        JunkServer() throws IOException {
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        private void serve() {
            while (!socket.isClosed()) {
                try (Socket client = socket.accept()) {
                    InputStream in = client.getInputStream();
                    in.read(new byte[4096]);
                    OutputStream out = client.getOutputStream();
                    out.write("HTTP/1.1 400 Bad Request\r\n\r\nnot thrift".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                } catch (IOException closed) {
                    // socket closed by close(), or the client went away
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                // Keep the interrupt for the caller (try-with-resources would suppress the exception).
                Thread.currentThread().interrupt();
            }
        }
    }
}
