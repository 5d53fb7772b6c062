package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.DefaultScheduler;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * Storm's DefaultScheduler, run for the given topologies and no others.
 *
 * <p>{@code DefaultScheduler.defaultSchedule} ignores its {@code Topologies} argument: it schedules every
 * topology of the cluster that {@code needsScheduling}, and that stays true while a topology has fewer
 * workers than {@code topology.workers}. A plan that packs a topology into fewer slots would be undone by
 * it every round. So it runs on a copy of the cluster in which only the fallback topologies need
 * scheduling, and only their assignments are copied back.
 */
final class DefaultFallback {

    private DefaultFallback() {
    }

    static void schedule(Collection<TopologyDetails> topologies, Cluster cluster) {
        if (topologies.isEmpty()) {
            return;
        }
        Set<String> ids = topologies.stream().map(TopologyDetails::getId).collect(Collectors.toSet());
        Cluster view = new OnlyTheseNeedScheduling(cluster, ids);
        Map<String, TopologyDetails> byId = new TreeMap<>();
        topologies.forEach(td -> byId.put(td.getId(), td));
        DefaultScheduler.defaultSchedule(new Topologies(byId), view);

        for (TopologyDetails td : byId.values()) {
            PlanApplier.apply(td, slotsOf(view.getAssignmentById(td.getId())), cluster);
        }
    }

    private static Map<WorkerSlot, List<ExecutorDetails>> slotsOf(SchedulerAssignment assignment) {
        Map<WorkerSlot, List<ExecutorDetails>> slots = new TreeMap<>(PlanValidator.BY_NODE_AND_PORT);
        if (assignment != null) {
            assignment.getSlotToExecutors().forEach((slot, executors) -> slots.put(slot, new ArrayList<>(executors)));
        }
        return slots;
    }

    /** A copy of a cluster in which only some topologies count as needing scheduling. */
    private static final class OnlyTheseNeedScheduling extends Cluster {

        private final Set<String> topologyIds;

        OnlyTheseNeedScheduling(Cluster src, Set<String> topologyIds) {
            super(src);
            this.topologyIds = topologyIds;
        }

        @Override
        public List<TopologyDetails> needsSchedulingTopologies() {
            return super.needsSchedulingTopologies().stream()
                .filter(td -> topologyIds.contains(td.getId()))
                .collect(Collectors.toList());
        }
    }
}
