package org.stormplanner.scheduler;

import com.codahale.metrics.Meter;
import com.codahale.metrics.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.storm.metric.StormMetricsRegistry;

/**
 * The plugin's metrics in Nimbus' registry (reported wherever Nimbus reports its own):
 * <ul>
 *   <li>{@value #PLANS_APPLIED}: meter, one mark per topology placed by the planner;</li>
 *   <li>{@value #REPLANS_APPLIED}: meter, one mark per re-plan that moved executors of a running topology;</li>
 *   <li>{@value #FALLBACKS}{@code <cause>}: meter per {@link FallbackCause}, one mark per topology handed to
 *       DefaultScheduler because of it;</li>
 *   <li>{@value #INFEASIBLE}: meter, one mark per topology left unscheduled because no placement fits
 *       the supervisors' free declared resources;</li>
 *   <li>{@value #ROUND_TRIP}: timer of planning calls, answered or failed.</li>
 * </ul>
 */
final class PlannerMetrics {

    static final String PLANS_APPLIED = "planner.plans.applied";
    static final String REPLANS_APPLIED = "planner.replans.applied";
    static final String FALLBACKS = "planner.fallbacks.";
    static final String ROUND_TRIP = "planner.roundtrip";
    static final String INFEASIBLE = "planner.infeasible";

    private final Meter plansApplied;
    private final Meter replansApplied;
    private final Meter infeasible;
    private final Map<FallbackCause, Meter> fallbacks = new EnumMap<>(FallbackCause.class);
    private final Timer roundTrip;

    PlannerMetrics(StormMetricsRegistry registry) {
        plansApplied = registry.registerMeter(PLANS_APPLIED);
        replansApplied = registry.registerMeter(REPLANS_APPLIED);
        infeasible = registry.registerMeter(INFEASIBLE);
        for (FallbackCause cause : FallbackCause.values()) {
            fallbacks.put(cause, registry.registerMeter(FALLBACKS + cause.metricName()));
        }
        roundTrip = registry.registerTimer(ROUND_TRIP);
    }

    void planApplied() {
        plansApplied.mark();
    }

    void replanApplied() {
        replansApplied.mark();
    }

    void infeasible() {
        infeasible.mark();
    }

    void fallback(FallbackCause cause) {
        fallbacks.get(cause).mark();
    }

    void roundTrip(long nanos) {
        roundTrip.update(nanos, TimeUnit.NANOSECONDS);
    }
}
