package org.stormplanner.scheduler.bench;

import java.util.HashMap;
import java.util.Map;
import org.apache.storm.generated.Bolt;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * The share of all traffic that crosses nodes, under a simple traffic model: every placed executor of a stream's
 * source component sends one unit on that stream, and a stream's traffic is spread uniformly over the executor
 * pairs of its two components (what shuffle and fields grouping do on average). Then the local part of a stream
 * is Σ over nodes of a_n·b_n / (A·B), with a_n, b_n the source and destination executors on node n and A, B
 * their totals: computed from per-node counts, never over executor pairs. Unplaced executors send and receive
 * nothing.
 */
public final class CrossNodeTraffic {

    private double total;
    private double crossing;

    private CrossNodeTraffic() {
    }

    /** Traffic crossing nodes / all traffic, over every placed topology of the cluster; 0 when there is none. */
    public static double share(Cluster cluster) {
        CrossNodeTraffic traffic = new CrossNodeTraffic();
        for (TopologyDetails td : cluster.getTopologies().getTopologies()) {
            SchedulerAssignment assignment = cluster.getAssignmentById(td.getId());
            if (assignment != null) {
                traffic.add(td, assignment);
            }
        }
        return traffic.total == 0 ? 0.0 : traffic.crossing / traffic.total;
    }

    private void add(TopologyDetails td, SchedulerAssignment assignment) {
        Map<String, Map<String, Integer>> perComponentPerNode = executorsPerNode(td, assignment);
        for (Map.Entry<String, Bolt> bolt : td.getTopology().get_bolts().entrySet()) {
            for (GlobalStreamId input : bolt.getValue().get_common().get_inputs().keySet()) {
                addStream(perComponentPerNode.getOrDefault(input.get_componentId(), Map.of()),
                    perComponentPerNode.getOrDefault(bolt.getKey(), Map.of()));
            }
        }
    }

    private void addStream(Map<String, Integer> sources, Map<String, Integer> destinations) {
        long sourceCount = sum(sources);
        long destinationCount = sum(destinations);
        if (sourceCount == 0 || destinationCount == 0) {
            return;
        }
        double localPairs = 0;
        for (Map.Entry<String, Integer> source : sources.entrySet()) {
            localPairs += source.getValue() * (double) destinations.getOrDefault(source.getKey(), 0);
        }
        double rate = sourceCount;
        total += rate;
        crossing += rate * (1 - localPairs / (sourceCount * (double) destinationCount));
    }

    /** component → node → how many of its executors are placed there. */
    private static Map<String, Map<String, Integer>> executorsPerNode(TopologyDetails td,
                                                                      SchedulerAssignment assignment) {
        Map<ExecutorDetails, String> components = td.getExecutorToComponent();
        Map<String, Map<String, Integer>> counts = new HashMap<>();
        for (Map.Entry<ExecutorDetails, WorkerSlot> entry : assignment.getExecutorToSlot().entrySet()) {
            String component = components.get(entry.getKey());
            if (component != null) {
                counts.computeIfAbsent(component, c -> new HashMap<>())
                    .merge(entry.getValue().getNodeId(), 1, Integer::sum);
            }
        }
        return counts;
    }

    private static long sum(Map<String, Integer> counts) {
        return counts.values().stream().mapToLong(Integer::longValue).sum();
    }
}
