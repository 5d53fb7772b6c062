package org.stormplanner.scheduler.bench;

/**
 * One scheduler's figures on one generated cluster: wall time of the first round (nothing assigned) and of
 * the round after one topology was unassigned, whether that topology was placed again, the placement figures
 * after the first round, the topologies' statuses in short, and for the plugin's first round the time spent
 * waiting for the service, the planners' solve time, and the plugin's own work before the call (selection,
 * request building) and after it (validation, application, fallbacks). {@code error} is
 * set (and the figures empty) when the run threw.
 */
public record VariantResult(ClusterShape cluster, SchedulerVariant variant, double firstRoundMs,
                            double rescheduleMs, boolean rescheduledPlaced, PlacementFigures figures,
                            String outcomes, Double serviceCallMs, Double solveMs, Double beforeCallMs,
                            Double afterCallMs, String error) {

    public static VariantResult failed(ClusterShape cluster, SchedulerVariant variant, Throwable error) {
        return new VariantResult(cluster, variant, Double.NaN, Double.NaN, false, null, "", null, null, null, null,
            error.toString());
    }
}
