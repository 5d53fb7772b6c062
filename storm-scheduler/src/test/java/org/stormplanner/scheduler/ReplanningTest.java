package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.stormplanner.scheduler.TestClusters.assignment;
import static org.stormplanner.scheduler.TestClusters.cluster;
import static org.stormplanner.scheduler.TestClusters.expected;
import static org.stormplanner.scheduler.TestClusters.placement;
import static org.stormplanner.scheduler.TestClusters.supervisor;
import static org.stormplanner.scheduler.TestClusters.topologies;
import static org.stormplanner.scheduler.TestClusters.topology;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.stormplanner.thrift.TopologySpec;

/**
 * Re-planning running topologies: offered every interval, an unchanged answer costs nothing, a changed one
 * frees and re-assigns only the slots whose executors change, and a failed offer never falls back.
 */
class ReplanningTest {

    private static final String WORDS = "words-1";
    /** Three workers: [1-2] on sup-a:6700, [3-4] on sup-a:6701, [5-7] on sup-b:6700. */
    private static final String[] RUNNING = {
        "[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700", "[3-3]", "sup-a:6701", "[4-4]", "sup-a:6701",
        "[5-5]", "sup-b:6700", "[6-6]", "sup-b:6700", "[7-7]", "sup-b:6700"};

    private final StormMetricsRegistry registry = new StormMetricsRegistry();
    private final List<SupervisorDetails> supervisors =
        List.of(supervisor("sup-a", 6700, 6701), supervisor("sup-b", 6700, 6701));
    private StandInPlanner planner;

    @BeforeEach
    void startStandIn() throws Exception {
        planner = new StandInPlanner(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "stand-in", RUNNING)));
    }

    @AfterEach
    void stopStandIn() throws Exception {
        planner.close();
    }

    /** The running topology, offered every round (interval 0) unless the conf says otherwise. */
    private static TopologyDetails running(Object... conf) {
        List<Object> keys = new ArrayList<>(List.of(PlannerConfig.REPLAN_INTERVAL_SECS, 0));
        keys.addAll(List.of(conf));
        return topology(WORDS, 3, keys.toArray());
    }

    private RecordingCluster runningCluster(Topologies topologies) {
        return new RecordingCluster(cluster(supervisors, List.of(assignment(WORDS, RUNNING)), topologies));
    }

    @Test
    void aRunningTopologyIsOfferedWithItsPlacementAndAnUnchangedAnswerCostsNothing() {
        Topologies topologies = topologies(running());
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);

        scheduler.schedule(topologies, runningCluster(topologies));
        assertEquals(0, planner.requests().size(), "first seen: its interval starts now");
        RecordingCluster cluster = runningCluster(topologies);
        scheduler.schedule(topologies, cluster);

        assertEquals(1, planner.requests().size());
        TopologySpec offered = planner.lastRequest().getTopologies().get(0);
        assertEquals(WORDS, offered.getId());
        assertEquals(7, offered.getCurrent().size(), "the offer carries where every executor runs");
        assertEquals(expected(RUNNING), placement(cluster, WORDS));
        assertEquals(List.of(), cluster.freed, "no worker is touched");
        assertNull(cluster.getStatus(WORDS));
        assertEquals(0, meter(PlannerMetrics.REPLANS_APPLIED));
        assertEquals(0, meter(PlannerMetrics.PLANS_APPLIED));
    }

    @Test
    void aChangedAnswerMovesOnlyTheWorkersWhoseExecutorsChange() {
        Map<String, String> moved = expected(RUNNING);
        moved.put("[4-4]", "sup-b:6700");
        planner.answering(request -> Plans.response(request.getRequest_id(), Plans.plan(WORDS, "stand-in",
            moved.entrySet().stream().flatMap(e -> Stream.of(e.getKey(), e.getValue())).toArray(String[]::new))));
        Topologies topologies = topologies(running());
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);
        scheduler.schedule(topologies, runningCluster(topologies));

        RecordingCluster cluster = runningCluster(topologies);
        scheduler.schedule(topologies, cluster);

        assertEquals(moved, placement(cluster, WORDS));
        assertEquals(List.of(TestClusters.slot("sup-a:6701"), TestClusters.slot("sup-b:6700")),
            cluster.freed.stream().sorted(PlanValidator.BY_NODE_AND_PORT).toList(),
            "sup-a:6700 keeps exactly its executors: its worker is left alone");
        assertEquals("Re-planned by storm-planner (algorithm stand-in, 1 executors moved, now on 3 slots)",
            cluster.getStatus(WORDS));
        assertEquals(1, meter(PlannerMetrics.REPLANS_APPLIED));
    }

    @Test
    void replanFalseIsNeverOffered() {
        Topologies topologies = topologies(running(PlannerConfig.REPLAN, "false"));
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);
        for (int round = 0; round < 3; round++) {
            scheduler.schedule(topologies, runningCluster(topologies));
        }
        assertEquals(0, planner.requests().size());
    }

    @Test
    void aFailedOfferLeavesTheTopologyRunningAsItIsWithoutFallback() throws Exception {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = probe.getLocalPort();
        }
        Topologies topologies = topologies(running());
        PlannerScheduler scheduler = scheduler(closedPort, 1000);
        scheduler.schedule(topologies, runningCluster(topologies));
        RecordingCluster cluster = runningCluster(topologies);

        scheduler.schedule(topologies, cluster);

        assertEquals(expected(RUNNING), placement(cluster, WORDS));
        assertEquals(List.of(), cluster.freed);
        assertNull(cluster.getStatus(WORDS));
        assertEquals(0, meter("planner.fallbacks.unreachable"), "a running topology has nothing to fall back from");
    }

    @Test
    void anInvalidReplanIsIgnored() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "stand-in", "[1-1]", "sup-a:6700")));
        Topologies topologies = topologies(running());
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);
        scheduler.schedule(topologies, runningCluster(topologies));
        RecordingCluster cluster = runningCluster(topologies);

        scheduler.schedule(topologies, cluster);

        assertEquals(expected(RUNNING), placement(cluster, WORDS));
        assertEquals(List.of(), cluster.freed);
        assertEquals(0, meter("planner.fallbacks.invalid_plan"));
    }

    @Test
    void offersAreSpacedByTheIntervalFromTheLastPlanOrOffer() {
        AtomicLong now = new AtomicLong(1_000_000);
        Replanning replanning = new Replanning(now::get);
        TopologyDetails td = topology(WORDS, 2, PlannerConfig.REPLAN_INTERVAL_SECS, "10");

        assertFalse(replanning.isDue(td), "first seen placed: wait one interval");
        now.addAndGet(9_999);
        assertFalse(replanning.isDue(td));
        now.addAndGet(1);
        assertTrue(replanning.isDue(td));
        replanning.touched(WORDS);
        now.addAndGet(5_000);
        assertFalse(replanning.isDue(td));
        assertEquals(10_000, PlannerConfig.replanIntervalMsFor(Map.of()), "default 10 s");
        assertEquals(10_000, PlannerConfig.replanIntervalMsFor(Map.of(PlannerConfig.REPLAN_INTERVAL_SECS, "soon")));
        assertEquals(2_500, PlannerConfig.replanIntervalMsFor(Map.of(PlannerConfig.REPLAN_INTERVAL_SECS, 2.5)));
    }

    @Test
    void anAnswerAskingForTheTopologyAgainSoonerIsOfferedThenOnce() {
        AtomicLong now = new AtomicLong(1_000_000);
        Replanning replanning = new Replanning(now::get);
        TopologyDetails td = topology(WORDS, 2, PlannerConfig.REPLAN_INTERVAL_SECS, "10");
        assertFalse(replanning.isDue(td));
        replanning.touched(WORDS);
        replanning.reofferIn(WORDS, 1_000);
        now.addAndGet(999);
        assertFalse(replanning.isDue(td));
        now.addAndGet(1);
        assertTrue(replanning.isDue(td), "asked again in 1 s: due then, not after the 10 s interval");
        replanning.touched(WORDS);
        now.addAndGet(5_000);
        assertFalse(replanning.isDue(td), "once: the next offer is an interval away again");
        now.addAndGet(5_000);
        assertTrue(replanning.isDue(td));
    }

    @Test
    void theSchedulerHonoursReofferMsAndAnAnswerWithoutItKeepsTheInterval() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "stand-in", RUNNING).setReoffer_ms(0)));
        Topologies topologies = topologies(running(PlannerConfig.REPLAN_INTERVAL_SECS, "3600"));
        PlannerScheduler scheduler = scheduler(planner.port(), 5000);
        scheduler.schedule(topologies, runningCluster(topologies));
        assertEquals(0, planner.requests().size(), "first seen: its interval starts now");

        Topologies soon = topologies(running(PlannerConfig.REPLAN_INTERVAL_SECS, "0"));
        scheduler.schedule(soon, runningCluster(soon));
        assertEquals(1, planner.requests().size());
        scheduler.schedule(topologies, runningCluster(topologies));
        assertEquals(2, planner.requests().size(), "the answer asked for it again at once: offered within the hour");

        planner.answering(request -> Plans.response(request.getRequest_id(), Plans.plan(WORDS, "stand-in", RUNNING)));
        scheduler.schedule(topologies, runningCluster(topologies));
        assertEquals(3, planner.requests().size(), "the re-offer asked for in the last answer");
        scheduler.schedule(topologies, runningCluster(topologies));
        assertEquals(3, planner.requests().size(), "an answer without reoffer_ms: the hour's interval again");
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

    /** A Cluster that remembers which slots were freed. */
    private static final class RecordingCluster extends Cluster {
        final List<WorkerSlot> freed = new ArrayList<>();

        RecordingCluster(Cluster src) {
            super(src);
        }

        @Override
        public void freeSlot(WorkerSlot slot) {
            freed.add(slot);
            super.freeSlot(slot);
        }
    }
}
