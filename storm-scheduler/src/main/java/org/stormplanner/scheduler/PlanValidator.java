package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.stormplanner.thrift.TopologyPlan;

/**
 * Checks a planner's answer against the live cluster before anything is applied. The planner saw a
 * snapshot of the cluster and may be wrong or stale; Nimbus must never act on a plan that names executors
 * the topology does not have, leaves some out, or uses slots that do not exist or belong to others.
 *
 * <p>A valid plan: every executor of the topology exactly once; no other executor; every slot on a live,
 * not blacklisted supervisor that has that port; every slot free or already this topology's.
 */
final class PlanValidator {

    /** How many offenders a reason lists before it says "...". */
    private static final int LISTED = 5;

    static final Comparator<WorkerSlot> BY_NODE_AND_PORT =
        Comparator.comparing(WorkerSlot::getNodeId).thenComparingInt(WorkerSlot::getPort);

    /**
     * Returns the plan as slot to executors, ready for {@link PlanApplier}.
     *
     * @throws InvalidPlanException with a reason a person can act on
     */
    Map<WorkerSlot, List<ExecutorDetails>> validate(TopologyDetails td, TopologyPlan plan, Cluster cluster)
        throws InvalidPlanException {
        Map<ExecutorDetails, WorkerSlot> placement = executorsToSlots(td, plan);
        Set<WorkerSlot> slots = new TreeSet<>(BY_NODE_AND_PORT);
        slots.addAll(placement.values());
        for (WorkerSlot slot : slots) {
            checkSlot(td, slot, cluster);
        }
        Map<WorkerSlot, List<ExecutorDetails>> bySlot = new TreeMap<>(BY_NODE_AND_PORT);
        placement.forEach((executor, slot) -> bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(executor));
        bySlot.values().forEach(executors -> executors.sort(ExecutorIds.BY_TASKS));
        return bySlot;
    }

    /** Executor names parsed and checked: known, each once, none missing. */
    private static Map<ExecutorDetails, WorkerSlot> executorsToSlots(TopologyDetails td, TopologyPlan plan)
        throws InvalidPlanException {
        Map<String, org.stormplanner.thrift.WorkerSlot> assignments = plan.getAssignments();
        if (assignments == null || assignments.isEmpty()) {
            throw new InvalidPlanException("the plan assigns no executor");
        }
        Set<ExecutorDetails> known = td.getExecutors();
        Map<ExecutorDetails, WorkerSlot> placement = new HashMap<>();
        Map<ExecutorDetails, String> nameUsed = new HashMap<>();
        for (Map.Entry<String, org.stormplanner.thrift.WorkerSlot> entry : new TreeMap<>(assignments).entrySet()) {
            String name = entry.getKey();
            ExecutorDetails executor = ExecutorIds.parse(name);
            if (executor == null) {
                throw new InvalidPlanException("unknown executor '" + name + "' (not of the form [start-end])");
            }
            if (!known.contains(executor)) {
                throw new InvalidPlanException("unknown executor " + ExecutorIds.of(executor)
                    + " (the topology has no such task range)");
            }
            String earlier = nameUsed.putIfAbsent(executor, name);
            if (earlier != null) {
                throw new InvalidPlanException("executor " + ExecutorIds.of(executor) + " assigned twice (as '"
                    + earlier + "' and '" + name + "')");
            }
            org.stormplanner.thrift.WorkerSlot slot = entry.getValue();
            if (slot == null || slot.getNode_id() == null) {
                throw new InvalidPlanException("executor " + ExecutorIds.of(executor) + " has no slot");
            }
            placement.put(executor, new WorkerSlot(slot.getNode_id(), slot.getPort()));
        }
        List<ExecutorDetails> missing = known.stream()
            .filter(e -> !placement.containsKey(e))
            .sorted(ExecutorIds.BY_TASKS)
            .collect(Collectors.toList());
        if (!missing.isEmpty()) {
            throw new InvalidPlanException(missing.size() + " of " + known.size()
                + " executors missing from the plan: " + list(missing));
        }
        return placement;
    }

    private static void checkSlot(TopologyDetails td, WorkerSlot slot, Cluster cluster) throws InvalidPlanException {
        String where = slot.getNodeId() + ":" + slot.getPort();
        SupervisorDetails supervisor = cluster.getSupervisorById(slot.getNodeId());
        if (supervisor == null) {
            throw new InvalidPlanException("slot " + where + " is on node '" + slot.getNodeId()
                + "', which is not a live supervisor");
        }
        if (cluster.isBlackListed(supervisor.getId())) {
            throw new InvalidPlanException("slot " + where + " is on a blacklisted supervisor");
        }
        if (!supervisor.getAllPorts().contains(slot.getPort())) {
            throw new InvalidPlanException("slot " + where + " does not exist: the supervisor's ports are "
                + new TreeSet<>(supervisor.getAllPorts()));
        }
        for (SchedulerAssignment other : cluster.getAssignments().values()) {
            if (!other.getTopologyId().equals(td.getId()) && other.isSlotOccupied(slot)) {
                throw new InvalidPlanException("slot " + where + " is used by topology " + other.getTopologyId());
            }
        }
    }

    private static String list(List<ExecutorDetails> executors) {
        String shown = executors.stream().limit(LISTED).map(ExecutorIds::of).collect(Collectors.joining(", "));
        return executors.size() > LISTED ? shown + ", ..." : shown;
    }
}
