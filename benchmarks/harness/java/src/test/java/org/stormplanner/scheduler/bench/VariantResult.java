package org.stormplanner.scheduler.bench;

import java.util.List;

/**
 * One scheduler's figures on one generated cluster: wall time of the first round (nothing assigned) and of
 * the round after one topology was unassigned, whether that topology was placed again, the placement figures
 * after the first round, the topologies' statuses in short, and for the plugin's first round the time spent
 * waiting for the service, the planners' solve time, and the plugin's own work before the call (selection,
 * request building) and after it (validation, application, fallbacks). {@code error} is
 * set (and the figures empty) when the run threw. {@code firstRoundRunsMs}: the first round's time in every
 * repetition when the benchmark repeated the run (this result is the median one).
 */
public record VariantResult(ClusterShape cluster, SchedulerVariant variant, double firstRoundMs,
                            double rescheduleMs, boolean rescheduledPlaced, PlacementFigures figures,
                            String outcomes, Double serviceCallMs, Double solveMs, Double beforeCallMs,
                            Double afterCallMs, String error, List<Double> firstRoundRunsMs) {

    public VariantResult withRuns(List<Double> runsMs) {
        return new VariantResult(cluster, variant, firstRoundMs, rescheduleMs, rescheduledPlaced, figures, outcomes,
            serviceCallMs, solveMs, beforeCallMs, afterCallMs, error, List.copyOf(runsMs));
    }

    public static VariantResult failed(ClusterShape cluster, SchedulerVariant variant, Throwable error) {
        return new VariantResult(cluster, variant, Double.NaN, Double.NaN, false, null, "", null, null, null, null,
            error.toString(), List.of());
    }
}
