package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.stormplanner.scheduler.TestClusters.assignment;
import static org.stormplanner.scheduler.TestClusters.cluster;
import static org.stormplanner.scheduler.TestClusters.supervisor;
import static org.stormplanner.scheduler.TestClusters.topologies;
import static org.stormplanner.scheduler.TestClusters.topology;

import com.codahale.metrics.Meter;
import com.codahale.metrics.Metric;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.storm.daemon.metrics.reporters.PreparableReporter;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.stormplanner.thrift.ErrorKind;

/**
 * The plugin's meters live in the registry {@code prepare} is given (Nimbus'), where Storm's daemon reporters
 * ({@code storm.daemon.metrics.reporter.plugins}: JMX, console, CSV) find them, and they count their events.
 * The names are the ones docs/monitoring.md lists.
 */
class PlannerMetricsTest {

    private static final String WORDS = "words-1";
    private static final String[] ON_TWO_SLOTS = {
        "[1-1]", "sup-b:6701", "[2-2]", "sup-a:6700", "[3-3]", "sup-b:6701", "[4-4]", "sup-a:6700",
        "[5-5]", "sup-b:6701", "[6-6]", "sup-b:6701", "[7-7]", "sup-a:6700"};

    /** The JMX domain of this test's reporter (Nimbus' default is "metrics"). */
    private static final String JMX_DOMAIN = "storm-planner-test";

    private final StormMetricsRegistry registry = new StormMetricsRegistry();
    private final List<SupervisorDetails> supervisors =
        List.of(supervisor("sup-a", 6700, 6701), supervisor("sup-b", 6700, 6701));
    private StandInPlanner planner;
    private PlannerScheduler scheduler;

    /** A daemon reporter, as Nimbus starts them: it is handed the registry's metrics, as JMX's is. */
    public static final class Capture implements PreparableReporter {
        static MetricRegistry seen;

        @Override
        public void prepare(MetricRegistry metricsRegistry, Map<String, Object> daemonConf) {
            seen = metricsRegistry;
        }

        @Override
        public void start() {
        }

        @Override
        public void stop() {
        }
    }

    @BeforeEach
    void prepare() throws Exception {
        planner = new StandInPlanner(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "stand-in", ON_TWO_SLOTS)));
        Map<String, Object> conf = new HashMap<>();
        conf.put(PlannerConfig.SERVICE_PORT, planner.port());
        conf.put("storm.daemon.metrics.reporter.plugins",
            List.of(Capture.class.getName(), "org.apache.storm.daemon.metrics.reporters.JmxPreparableReporter"));
        conf.put("storm.daemon.metrics.reporter.plugin.domain", JMX_DOMAIN);
        scheduler = new PlannerScheduler();
        scheduler.prepare(conf, registry);
        registry.startMetricsReporters(conf);
    }

    @AfterEach
    void stop() throws Exception {
        registry.stopMetricsReporters();
        planner.close();
    }

    @Test
    void everyMeterIsInTheRegistryPrepareIsGivenAndStormsReportersSeeIt() {
        assertNotNull(Capture.seen, "the daemon reporter was not started on the registry");
        Map<String, Metric> metrics = new TreeMap<>(Capture.seen.getMetrics());
        List<String> meters = new ArrayList<>(List.of(PlannerMetrics.PLANS_APPLIED, PlannerMetrics.REPLANS_OFFERED,
            PlannerMetrics.REPLANS_APPLIED, PlannerMetrics.REPLANS_FAILED, PlannerMetrics.MIGRATIONS,
            PlannerMetrics.INVALID_PLANS, PlannerMetrics.INFEASIBLE));
        for (FallbackCause cause : FallbackCause.values()) {
            meters.add(PlannerMetrics.FALLBACKS + cause.metricName());
        }
        for (ErrorKind kind : ErrorKind.values()) {
            meters.add(PlannerMetrics.planErrorName(kind));
        }
        for (String name : meters) {
            assertInstanceOf(Meter.class, metrics.get(name), name + " in " + metrics.keySet());
        }
        assertInstanceOf(Timer.class, metrics.get(PlannerMetrics.ROUND_TRIP));
        assertEquals(meters.size() + 1, metrics.size(), "no metric beyond the documented ones: " + metrics.keySet());
    }

    @Test
    void aPlacementCountsItsPlanAndItsCall() {
        Topologies topologies = topologies(topology(WORDS, 2));
        scheduler.schedule(topologies, cluster(supervisors, List.of(), topologies));

        assertEquals(1, meter(PlannerMetrics.PLANS_APPLIED));
        assertEquals(1, Capture.seen.timer(PlannerMetrics.ROUND_TRIP).getCount());
        assertTrue(Capture.seen.timer(PlannerMetrics.ROUND_TRIP).getSnapshot().getMax() > 0);
    }

    @Test
    void aServiceErrorCountsByKindAndAsAFallback() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.failed(WORDS, ErrorKind.TIMEOUT, "over its share of the deadline")));
        Topologies topologies = topologies(topology(WORDS, 2));
        scheduler.schedule(topologies, cluster(supervisors, List.of(), topologies));

        assertEquals(1, meter(PlannerMetrics.planErrorName(ErrorKind.TIMEOUT)));
        assertEquals(1, meter(PlannerMetrics.FALLBACKS + FallbackCause.PLANNER_ERROR.metricName()));
        assertEquals(0, meter(PlannerMetrics.PLANS_APPLIED));
    }

    @Test
    void anInvalidPlanCountsAsInvalidAndAsAFallback() {
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.plan(WORDS, "stand-in", "[1-1]", "sup-gone:6700")));
        Topologies topologies = topologies(topology(WORDS, 2));
        scheduler.schedule(topologies, cluster(supervisors, List.of(), topologies));

        assertEquals(1, meter(PlannerMetrics.INVALID_PLANS));
        assertEquals(1, meter(PlannerMetrics.FALLBACKS + FallbackCause.INVALID_PLAN.metricName()));
    }

    @Test
    void replansCountTheirOffersMovesAndFailures() {
        String[] running = {"[1-1]", "sup-a:6700", "[2-2]", "sup-a:6700", "[3-3]", "sup-a:6701",
            "[4-4]", "sup-a:6701", "[5-5]", "sup-b:6700", "[6-6]", "sup-b:6700", "[7-7]", "sup-b:6700"};
        String[] moved = running.clone();
        moved[7] = "sup-b:6700";   // [4-4] moves
        TopologyDetails words = topology(WORDS, 3, PlannerConfig.REPLAN_INTERVAL_SECS, 0);
        Topologies topologies = topologies(words);
        scheduler.schedule(topologies, cluster(supervisors, List.of(assignment(WORDS, running)), topologies));
        planner.answering(request -> Plans.response(request.getRequest_id(), Plans.plan(WORDS, "stand-in", moved)));
        scheduler.schedule(topologies, cluster(supervisors, List.of(assignment(WORDS, running)), topologies));
        planner.answering(request -> Plans.response(request.getRequest_id(),
            Plans.failed(WORDS, ErrorKind.INTERNAL, "the planner crashed")));
        scheduler.schedule(topologies, cluster(supervisors, List.of(assignment(WORDS, running)), topologies));

        assertEquals(2, meter(PlannerMetrics.REPLANS_OFFERED));
        assertEquals(1, meter(PlannerMetrics.REPLANS_APPLIED));
        assertEquals(1, meter(PlannerMetrics.MIGRATIONS));
        assertEquals(1, meter(PlannerMetrics.REPLANS_FAILED));
        assertEquals(1, meter(PlannerMetrics.planErrorName(ErrorKind.INTERNAL)));
        assertEquals(0, meter(PlannerMetrics.FALLBACKS + FallbackCause.PLANNER_ERROR.metricName()),
            "a running topology keeps its placement: no fallback");
    }

    /** The names docs/monitoring.md gives for JMX, which the Prometheus JMX exporter's rules match. */
    @Test
    void stormsJmxReporterPublishesTheMetersUnderTheirNames() throws Exception {
        Topologies topologies = topologies(topology(WORDS, 2));
        scheduler.schedule(topologies, cluster(supervisors, List.of(), topologies));

        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        assertEquals(1L, server.getAttribute(jmxName(PlannerMetrics.PLANS_APPLIED, "meters"), "Count"));
        assertEquals(0L, server.getAttribute(jmxName(PlannerMetrics.FALLBACKS + "unreachable", "meters"), "Count"));
        assertEquals(1L, server.getAttribute(jmxName(PlannerMetrics.ROUND_TRIP, "timers"), "Count"));
        assertEquals("milliseconds", server.getAttribute(jmxName(PlannerMetrics.ROUND_TRIP, "timers"), "DurationUnit"));
    }

    private static ObjectName jmxName(String name, String type) throws Exception {
        Hashtable<String, String> properties = new Hashtable<>(Map.of("name", name, "type", type));
        return new ObjectName(JMX_DOMAIN, properties);
    }

    private long meter(String name) {
        return registry.getMeter(name).getCount();
    }
}
