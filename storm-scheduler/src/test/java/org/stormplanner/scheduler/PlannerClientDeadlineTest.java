package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.stormplanner.scheduler.TestClusters.cluster;
import static org.stormplanner.scheduler.TestClusters.supervisor;
import static org.stormplanner.scheduler.TestClusters.topologies;
import static org.stormplanner.scheduler.TestClusters.topology;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.thrift.transport.TTransportException;
import org.junit.jupiter.api.Test;
import org.stormplanner.thrift.ErrorKind;

/**
 * The plugin against a service that drips its answer, and against one whose messages are huge: the call's
 * deadline holds for the whole call, and what reaches statuses and Nimbus' log is cut.
 */
class PlannerClientDeadlineTest {

    private static final String WORDS = "words-1";
    /** Scheduling and thread start-up on a loaded machine; the dripping answer would take 29 hours. */
    private static final long MARGIN_MS = 1500;

    private final List<SupervisorDetails> supervisors =
        List.of(supervisor("sup-a", 6700, 6701), supervisor("sup-b", 6700, 6701));

    @Test
    void aServiceDrippingItsAnswerFailsTheCallAtTheDeadline() throws Exception {
        try (DrippingService dripping = new DrippingService(100)) {
            PlannerClient client = new PlannerClient("127.0.0.1", dripping.port(), 500);
            long start = System.nanoTime();
            TTransportException timedOut = assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> assertThrows(TTransportException.class, client::health));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertEquals(TTransportException.TIMED_OUT, timedOut.getType());
            assertTrue(tookMs < 500 + MARGIN_MS, "the call took " + tookMs + " ms; its deadline is 500 ms");
        }
    }

    @Test
    void schedulingAgainstADrippingServiceFallsBackWithinTheDeadline() throws Exception {
        try (DrippingService dripping = new DrippingService(100)) {
            Topologies topologies = topologies(topology(WORDS, 2));
            Cluster cluster = cluster(supervisors, List.of(), topologies);
            PlannerScheduler scheduler = scheduler(dripping.port(), 500, Map.of());
            long start = System.nanoTime();
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> scheduler.schedule(topologies, cluster));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs < 500 + MARGIN_MS, "schedule() took " + tookMs + " ms; the deadline is 500 ms");
            assertEquals("Fell back to DefaultScheduler (timeout): planner service at 127.0.0.1:" + dripping.port()
                + " did not answer within 500 ms", cluster.getStatus(WORDS));
        }
    }

    @Test
    void aMegabyteErrorMessageIsCutInTheStatusAndTheLog() throws Exception {
        String huge = "x".repeat(1 << 20);
        try (StandInPlanner planner = new StandInPlanner(request -> Plans.response(request.getRequest_id(),
                Plans.failed(WORDS, ErrorKind.INTERNAL, huge)));
             CapturedLog log = new CapturedLog(PlannerScheduler.class)) {
            Topologies topologies = topologies(topology(WORDS, 2));
            Cluster cluster = cluster(supervisors, List.of(), topologies);
            scheduler(planner.port(), 5000, Map.of()).schedule(topologies, cluster);

            String reason = "the planner failed: INTERNAL: " + huge;
            String status = cluster.getStatus(WORDS);
            String full = "Fell back to DefaultScheduler (planner_error): " + reason;
            assertEquals(full.substring(0, 512) + "\u2026 (" + full.length() + " chars)", status);
            List<String> warnings = log.warningsContaining("fell back to DefaultScheduler");
            assertEquals(1, warnings.size());
            String line = warnings.get(0);
            assertTrue(line.endsWith(reason.substring(0, 4096) + "\u2026 (" + reason.length() + " chars)"),
                line.substring(line.length() - 60));
            assertTrue(line.length() < 4096 + 200, "log line of " + line.length() + " chars");
        }
    }

    @Test
    void theTokenIsSentWhenConfiguredAndNeverPrinted() throws Exception {
        try (StandInPlanner planner = new StandInPlanner(request -> Plans.response(request.getRequest_id()))) {
            Topologies topologies = topologies(topology(WORDS, 2));
            scheduler(planner.port(), 5000, Map.of()).schedule(topologies, cluster(supervisors, List.of(), topologies));
            assertNull(planner.lastRequest().getToken());

            PlannerScheduler withToken = scheduler(planner.port(), 5000, Map.of(PlannerConfig.SERVICE_TOKEN, "s3cret"));
            withToken.schedule(topologies, cluster(supervisors, List.of(), topologies));
            assertEquals("s3cret", planner.lastRequest().getToken());
            assertFalse(PlannerConfig.fromStormConf(Map.of(PlannerConfig.SERVICE_TOKEN, "s3cret")).toString()
                .contains("s3cret"));
            assertFalse(planner.lastRequest().getTopologies().get(0).getOptions().containsKey(PlannerConfig.SERVICE_TOKEN),
                "the token is no topology option");
        }
    }

    @Test
    void textsAreCutWithAnEllipsisAndTheirLength() {
        assertEquals("abc", Texts.cap("abc", 3));
        assertEquals("ab\u2026 (4 chars)", Texts.cap("abcd", 2));
        assertEquals("a\u2026 (3 chars)", Texts.cap("a\uD83D\uDE00", 2), "a surrogate pair is never split");
        assertNull(Texts.cap((String) null, 2));
        assertThrows(IllegalArgumentException.class,
            () -> PlannerConfig.fromStormConf(Map.of(PlannerConfig.STATUS_MAX_CHARS, 0)));
        assertEquals(512, PlannerConfig.DEFAULT_STATUS_MAX_CHARS);
        assertEquals(4096, PlannerConfig.DEFAULT_LOG_MAX_CHARS);
    }

    private static PlannerScheduler scheduler(int port, int timeoutMs, Map<String, Object> more) {
        Map<String, Object> conf = new HashMap<>(more);
        conf.put(PlannerConfig.SERVICE_HOST, "127.0.0.1");
        conf.put(PlannerConfig.SERVICE_PORT, port);
        conf.put(PlannerConfig.SERVICE_TIMEOUT_MS, timeoutMs);
        PlannerScheduler scheduler = new PlannerScheduler();
        scheduler.prepare(conf, new StormMetricsRegistry());
        return scheduler;
    }
}
