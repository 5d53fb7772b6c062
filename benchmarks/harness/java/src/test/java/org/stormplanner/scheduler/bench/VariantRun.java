package org.stormplanner.scheduler.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.TopologyDetails;

/**
 * Runs one scheduler on one generated cluster, the way Nimbus would: round 1 with every topology unassigned;
 * then one topology (the median-sized, the same for every scheduler) is killed and resubmitted — its assignment
 * removed — and round 2 re-schedules it. Only {@code IScheduler.schedule} is timed: building the Cluster is
 * Nimbus' work, the same for every scheduler. Round 2 also retries whatever round 1 left unplaced, as Nimbus does.
 */
public final class VariantRun {

    private final ClusterShape shape;
    private final SchedulerVariant variant;

    public VariantRun(ClusterShape shape, SchedulerVariant variant) {
        this.shape = shape;
        this.variant = variant;
    }

    public VariantResult run() {
        GeneratedCluster generated = new GeneratedCluster(shape, variant.daemonConf(), variant.topologyConf());
        IScheduler scheduler = variant.factory().get();
        scheduler.prepare(generated.daemonConf(), new StormMetricsRegistry());
        try {
            Cluster first = generated.firstRound();
            TimedPlannerScheduler timed = scheduler instanceof TimedPlannerScheduler t ? t : null;
            resetTimes(timed);
            double firstMs = timeRound(scheduler, generated, first);
            PlacementFigures figures = PlacementFigures.of(first);
            Double callMs = timed == null ? null : timed.callMs();
            Double solveMs = timed == null ? null : timed.solveMs();
            Double beforeMs = timed == null ? null : timed.beforeCallMs();
            Double afterMs = timed == null ? null : timed.afterCallMs();

            TopologyDetails victim = generated.topology(medianIndex());
            Cluster second = generated.round(withoutTopology(first.getAssignments(), victim.getId()));
            double rescheduleMs = timeRound(scheduler, generated, second);
            boolean replaced = PlacementFigures.isFullyPlaced(second, victim);
            return new VariantResult(shape, variant, firstMs, rescheduleMs, replaced, figures,
                outcomes(first), callMs, solveMs, beforeMs, afterMs, null, List.of(firstMs));
        } finally {
            scheduler.cleanup();
        }
    }

    private static double timeRound(IScheduler scheduler, GeneratedCluster generated, Cluster cluster) {
        long start = System.nanoTime();
        scheduler.schedule(generated.topologies(), cluster);
        return (System.nanoTime() - start) / 1e6;
    }

    private static void resetTimes(TimedPlannerScheduler timed) {
        if (timed != null) {
            timed.resetTimes();
        }
    }

    /** The topology of median size (shapes are listed smallest first). */
    private int medianIndex() {
        return shape.topologies().size() / 2;
    }

    private static Map<String, SchedulerAssignment> withoutTopology(Map<String, SchedulerAssignment> assignments,
                                                                    String topologyId) {
        Map<String, SchedulerAssignment> rest = new HashMap<>(assignments);
        rest.remove(topologyId);
        return rest;
    }

    /**
     * The topologies' statuses in short, e.g. "40× Planned by storm-planner; 5× Not scheduled (INFEASIBLE)": each
     * status up to its first '(' and, when at least three words precede it, its first ':' (the part naming the
     * outcome, not the numbers), counted.
     */
    static String outcomes(Cluster cluster) {
        Map<String, Long> counts = new TreeMap<>(cluster.getTopologies().getTopologies().stream()
            .map(td -> shortStatus(cluster.getStatusMap().get(td.getId())))
            .collect(Collectors.groupingBy(s -> s, Collectors.counting())));
        return counts.entrySet().stream().map(e -> e.getValue() + "× " + e.getKey())
            .collect(Collectors.joining("; "));
    }

    static String shortStatus(String status) {
        if (status == null || status.isBlank()) {
            return "(no status)";
        }
        String text = status.trim();
        if (text.startsWith("Not scheduled (INFEASIBLE)") || text.startsWith("Fell back to DefaultScheduler (")) {
            return text.substring(0, text.indexOf(')') + 1);
        }
        int paren = text.indexOf('(');
        String head = paren > 0 ? text.substring(0, paren).trim() : text;
        int colon = head.indexOf(':');
        if (colon > 0 && head.substring(0, colon).trim().split("\\s+").length >= 3) {
            head = head.substring(0, colon).trim();
        }
        return head.length() > 80 ? head.substring(0, 80) + "…" : head;
    }
}
