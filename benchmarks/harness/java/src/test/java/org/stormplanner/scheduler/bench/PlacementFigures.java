package org.stormplanner.scheduler.bench;

import java.util.Map;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.resource.TestUtilsForResourceAwareScheduler;

/**
 * What a scheduling round left on a cluster: topologies with every executor placed, supervisors whose placed
 * executors declare more CPU or memory than the supervisor's declared capacity (as Storm's RAS accounts it:
 * the sum of {@code getTotalCpuReqTask} / {@code getTotalMemReqTask} against {@code supervisor.cpu.capacity} /
 * {@code supervisor.memory.capacity.mb}), and the share of traffic crossing nodes ({@link CrossNodeTraffic}).
 */
public record PlacementFigures(int topologies, int fullyPlaced, int overCpu, int overMemory, int overEither,
                               double crossNodeShare) {

    /** Declared usage may exceed capacity by this much before it counts (floating-point sums). */
    private static final double TOLERANCE = 1e-6;

    public static PlacementFigures of(Cluster cluster) {
        int fullyPlaced = 0;
        for (TopologyDetails td : cluster.getTopologies().getTopologies()) {
            if (isFullyPlaced(cluster, td)) {
                fullyPlaced++;
            }
        }
        Map<SupervisorDetails, Double> cpu =
            TestUtilsForResourceAwareScheduler.getSupervisorToCpuUsage(cluster, cluster.getTopologies());
        Map<SupervisorDetails, Double> memory =
            TestUtilsForResourceAwareScheduler.getSupervisorToMemoryUsage(cluster, cluster.getTopologies());
        int overCpu = 0;
        int overMemory = 0;
        int overEither = 0;
        for (SupervisorDetails supervisor : cluster.getSupervisors().values()) {
            boolean cpuOver = cpu.getOrDefault(supervisor, 0.0) > supervisor.getTotalCpu() + TOLERANCE;
            boolean memoryOver = memory.getOrDefault(supervisor, 0.0) > supervisor.getTotalMemory() + TOLERANCE;
            overCpu += cpuOver ? 1 : 0;
            overMemory += memoryOver ? 1 : 0;
            overEither += cpuOver || memoryOver ? 1 : 0;
        }
        return new PlacementFigures(cluster.getTopologies().getTopologies().size(), fullyPlaced, overCpu, overMemory,
            overEither, CrossNodeTraffic.share(cluster));
    }

    /** Every executor of the topology has a slot. */
    public static boolean isFullyPlaced(Cluster cluster, TopologyDetails td) {
        return cluster.getAssignmentById(td.getId()) != null && cluster.getUnassignedExecutors(td).isEmpty();
    }
}
