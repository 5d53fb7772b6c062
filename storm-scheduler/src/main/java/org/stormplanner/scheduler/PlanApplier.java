package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * Writes a validated plan into the {@link Cluster}.
 *
 * <p>A worker whose slot keeps exactly the same executors is left alone: freeing and re-assigning it would
 * make Nimbus restart a worker that has nothing to change. Every other slot of the topology is freed, then
 * the plan's slots are assigned. An executor that moves always changes the executor set of the slot it
 * leaves, so it is unassigned before it is assigned again, as {@code Cluster.assign} requires.
 */
final class PlanApplier {

    private PlanApplier() {
    }

    /**
     * Applies the plan and returns how many executors changed slot (newly placed ones included).
     * The plan must have passed {@link PlanValidator} against this same cluster.
     */
    static int apply(TopologyDetails td, Map<WorkerSlot, List<ExecutorDetails>> plan, Cluster cluster) {
        String topologyId = td.getId();
        SchedulerAssignment current = cluster.getAssignmentById(topologyId);
        // Copies: the assignment object is live and changes as slots are freed below.
        Map<WorkerSlot, Collection<ExecutorDetails>> now =
            current == null ? Map.of() : new HashMap<>(current.getSlotToExecutors());
        Map<ExecutorDetails, WorkerSlot> before =
            current == null ? Map.of() : new HashMap<>(current.getExecutorToSlot());

        List<WorkerSlot> toFree = new ArrayList<>();
        Set<WorkerSlot> unchanged = new HashSet<>();  // looked up once per planned slot
        for (Map.Entry<WorkerSlot, Collection<ExecutorDetails>> entry : now.entrySet()) {
            List<ExecutorDetails> planned = plan.get(entry.getKey());
            if (planned != null && new HashSet<>(planned).equals(new HashSet<>(entry.getValue()))) {
                unchanged.add(entry.getKey());
            } else {
                toFree.add(entry.getKey());
            }
        }
        cluster.freeSlots(toFree);

        int moved = 0;
        for (Map.Entry<WorkerSlot, List<ExecutorDetails>> entry : plan.entrySet()) {
            if (unchanged.contains(entry.getKey())) {
                continue;
            }
            cluster.assign(entry.getKey(), topologyId, entry.getValue());
            for (ExecutorDetails executor : entry.getValue()) {
                if (!entry.getKey().equals(before.get(executor))) {
                    moved++;
                }
            }
        }
        return moved;
    }
}
