package org.stormplanner.scheduler;

import com.codahale.metrics.Meter;
import com.codahale.metrics.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.storm.metric.StormMetricsRegistry;
import org.stormplanner.thrift.ErrorKind;

/**
 * The plugin's metrics in the registry Nimbus gives {@code IScheduler.prepare} (Nimbus' own; reported by the
 * reporters of {@code storm.daemon.metrics.reporter.plugins}: JMX by default, console, CSV). Every name, type
 * and unit is listed in docs/monitoring.md:
 * <ul>
 *   <li>{@value #PLANS_APPLIED}: meter, one mark per topology placed by the planner;</li>
 *   <li>{@value #REPLANS_OFFERED}: meter, one mark per running topology offered for re-planning;</li>
 *   <li>{@value #REPLANS_APPLIED}: meter, one mark per re-plan that moved executors of a running topology;</li>
 *   <li>{@value #REPLANS_FAILED}: meter, one mark per re-plan offer answered with no usable plan (the topology
 *       keeps its placement);</li>
 *   <li>{@value #MIGRATIONS}: meter, one mark per executor moved by an applied re-plan;</li>
 *   <li>{@value #FALLBACKS}{@code <cause>}: meter per {@link FallbackCause}, one mark per topology handed to
 *       DefaultScheduler because of it;</li>
 *   <li>{@value #PLAN_ERRORS}{@code <kind>}: meter per {@link ErrorKind} (in lower case), one mark per topology
 *       the service answered with that error, placement or re-plan;</li>
 *   <li>{@value #INVALID_PLANS}: meter, one mark per plan the plugin refused as invalid, placement or re-plan;</li>
 *   <li>{@value #INFEASIBLE}: meter, one mark per topology left unscheduled because no placement fits
 *       the supervisors' free declared resources;</li>
 *   <li>{@value #ROUND_TRIP}: timer of planning calls, answered or failed (nanosecond clock; reporters convert
 *       it to their duration unit, milliseconds by default).</li>
 * </ul>
 */
final class PlannerMetrics {

    static final String PLANS_APPLIED = "planner.plans.applied";
    static final String REPLANS_OFFERED = "planner.replans.offered";
    static final String REPLANS_APPLIED = "planner.replans.applied";
    static final String REPLANS_FAILED = "planner.replans.failed";
    static final String MIGRATIONS = "planner.migrations";
    static final String FALLBACKS = "planner.fallbacks.";
    static final String PLAN_ERRORS = "planner.plan.errors.";
    static final String INVALID_PLANS = "planner.plans.invalid";
    static final String ROUND_TRIP = "planner.roundtrip";
    static final String INFEASIBLE = "planner.infeasible";

    private final Meter plansApplied;
    private final Meter replansOffered;
    private final Meter replansApplied;
    private final Meter replansFailed;
    private final Meter migrations;
    private final Meter invalidPlans;
    private final Meter infeasible;
    private final Map<FallbackCause, Meter> fallbacks = new EnumMap<>(FallbackCause.class);
    private final Map<ErrorKind, Meter> planErrors = new EnumMap<>(ErrorKind.class);
    private final Timer roundTrip;

    PlannerMetrics(StormMetricsRegistry registry) {
        plansApplied = registry.registerMeter(PLANS_APPLIED);
        replansOffered = registry.registerMeter(REPLANS_OFFERED);
        replansApplied = registry.registerMeter(REPLANS_APPLIED);
        replansFailed = registry.registerMeter(REPLANS_FAILED);
        migrations = registry.registerMeter(MIGRATIONS);
        invalidPlans = registry.registerMeter(INVALID_PLANS);
        infeasible = registry.registerMeter(INFEASIBLE);
        for (FallbackCause cause : FallbackCause.values()) {
            fallbacks.put(cause, registry.registerMeter(FALLBACKS + cause.metricName()));
        }
        for (ErrorKind kind : ErrorKind.values()) {
            planErrors.put(kind, registry.registerMeter(planErrorName(kind)));
        }
        roundTrip = registry.registerTimer(ROUND_TRIP);
    }

    /** The meter of the service's answers with this error kind: {@value #PLAN_ERRORS} and the kind in lower case. */
    static String planErrorName(ErrorKind kind) {
        return PLAN_ERRORS + kind.name().toLowerCase(Locale.ROOT);
    }

    void planApplied() {
        plansApplied.mark();
    }

    void replansOffered(int topologies) {
        replansOffered.mark(topologies);
    }

    void replanApplied(int executorsMoved) {
        replansApplied.mark();
        migrations.mark(executorsMoved);
    }

    void replanFailed() {
        replansFailed.mark();
    }

    void planError(ErrorKind kind) {
        Meter meter = kind == null ? null : planErrors.get(kind);
        if (meter != null) {
            meter.mark();
        }
    }

    void invalidPlan() {
        invalidPlans.mark();
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
