package org.stormplanner.scheduler;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * When a running (fully placed) topology is offered to the planner again, so that the service can move it
 * when its measured traffic and loads say it should.
 *
 * <p>Offers are spaced by {@value PlannerConfig#REPLAN_INTERVAL_SECS} (per topology, default
 * {@value PlannerConfig#DEFAULT_REPLAN_INTERVAL_SECS} s) counted from the topology's last plan or offer, so
 * Nimbus does not call the service every round for nothing: the service decides whether anything changed
 * enough. A topology first seen already placed (e.g. after a Nimbus restart) starts its interval then.
 * {@value PlannerConfig#REPLAN}{@code : false} never offers it.
 *
 * <p>An answer may ask for the topology again sooner ({@code TopologyPlan.reoffer_ms}: the service drains the
 * topology before it moves executors, and answers each phase on an offer): the next offer is then due that
 * many milliseconds after the answer, once, whatever the interval (Nimbus' scheduling round,
 * {@code nimbus.monitor.freq.secs}, still spaces the offers). An answer without it (an older service) leaves
 * the interval as it was.
 */
final class Replanning {

    private final LongSupplier clockMs;
    private final Map<String, Long> lastMs = new HashMap<>();
    /** Topologies the service asked for again sooner: when their next offer is due. */
    private final Map<String, Long> earlyMs = new HashMap<>();

    Replanning(LongSupplier clockMs) {
        this.clockMs = clockMs;
    }

    /** Whether to offer this fully placed topology for re-planning this round. */
    boolean isDue(TopologyDetails td) {
        if (!PlannerConfig.isReplanEnabledFor(td.getConf())) {
            return false;
        }
        long now = clockMs.getAsLong();
        Long early = earlyMs.get(td.getId());
        if (early != null && now >= early) {
            return true;
        }
        Long last = lastMs.putIfAbsent(td.getId(), now);
        return last != null && now - last >= PlannerConfig.replanIntervalMsFor(td.getConf());
    }

    /** The topology was just planned or offered: its next offer is one interval away. */
    void touched(String topologyId) {
        lastMs.put(topologyId, clockMs.getAsLong());
        earlyMs.remove(topologyId);
    }

    /** The service asked for the topology again in {@code delayMs} (a drain under way): due then, once. */
    void reofferIn(String topologyId, long delayMs) {
        earlyMs.put(topologyId, clockMs.getAsLong() + Math.max(0, delayMs));
    }

    void retainOnly(Collection<String> topologyIds) {
        lastMs.keySet().retainAll(topologyIds);
        earlyMs.keySet().retainAll(topologyIds);
    }

    /** True when the plan puts every executor exactly where it runs now: applying it would change nothing. */
    static boolean keepsCurrentPlacement(TopologyDetails td, Map<WorkerSlot, List<ExecutorDetails>> plan,
                                         Cluster cluster) {
        SchedulerAssignment current = cluster.getAssignmentById(td.getId());
        if (current == null) {
            return false;
        }
        Map<ExecutorDetails, WorkerSlot> now = current.getExecutorToSlot();
        int planned = 0;
        for (Map.Entry<WorkerSlot, List<ExecutorDetails>> entry : plan.entrySet()) {
            for (ExecutorDetails executor : entry.getValue()) {
                if (!entry.getKey().equals(now.get(executor))) {
                    return false;
                }
                planned++;
            }
        }
        return planned == now.size();
    }
}
