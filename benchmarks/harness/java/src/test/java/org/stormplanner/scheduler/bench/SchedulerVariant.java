package org.stormplanner.scheduler.bench;

import org.stormplanner.scheduler.PlannerServiceProcess;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.storm.scheduler.DefaultScheduler;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.resource.ResourceAwareScheduler;
import org.stormplanner.scheduler.PlannerConfig;

/**
 * One scheduler under comparison: how to make it, and what it needs in Nimbus' conf and in every topology's
 * conf. Storm's DefaultScheduler; Storm's ResourceAwareScheduler (with DefaultResourceAwareStrategy, which the
 * generated cluster conf names); the plugin with one algorithm, against a running planner service.
 */
public record SchedulerVariant(String scheduler, String algorithm, Supplier<IScheduler> factory,
                               Map<String, Object> daemonConf, Map<String, Object> topologyConf) {

    /** A running topology is offered for re-planning after this long: never within a benchmark. */
    private static final double NO_REPLANNING_SECS = 86_400;

    public static SchedulerVariant stormDefault() {
        return new SchedulerVariant("DefaultScheduler", "-", DefaultScheduler::new, Map.of(), Map.of());
    }

    public static SchedulerVariant resourceAware() {
        return new SchedulerVariant("ResourceAwareScheduler", "DefaultResourceAwareStrategy",
            ResourceAwareScheduler::new, Map.of(), Map.of());
    }

    /**
     * The plugin ({@link TimedPlannerScheduler}) with {@code algorithm} as the cluster default, the service at
     * {@code port} with a {@code deadlineMs} deadline, and {@code timeLimitSecs} as {@code planner.time.limit.secs}
     * (null: the planner's default).
     */
    public static SchedulerVariant planner(String algorithm, int port, int deadlineMs, Double timeLimitSecs) {
        Map<String, Object> daemon = new HashMap<>();
        daemon.put(PlannerConfig.SERVICE_HOST, PlannerServiceProcess.HOST);
        daemon.put(PlannerConfig.SERVICE_PORT, port);
        daemon.put(PlannerConfig.SERVICE_TIMEOUT_MS, deadlineMs);
        daemon.put(PlannerConfig.DEFAULT_ALGORITHM, algorithm);
        Map<String, Object> topology = new HashMap<>();
        topology.put(PlannerConfig.REPLAN_INTERVAL_SECS, NO_REPLANNING_SECS);
        String label = algorithm;
        if (timeLimitSecs != null) {
            topology.put("planner.time.limit.secs", timeLimitSecs);
            label = algorithm + " (limit " + trim(timeLimitSecs) + " s)";
        }
        return new SchedulerVariant("PlannerScheduler", label, TimedPlannerScheduler::new, daemon, topology);
    }

    public boolean isPlugin() {
        return scheduler.equals("PlannerScheduler");
    }

    public String label() {
        return scheduler + " / " + algorithm;
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
