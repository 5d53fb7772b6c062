package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.Constants;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.INimbus;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SchedulerAssignmentImpl;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.ResourceMetrics;
import org.apache.storm.testing.TestGlobalCount;
import org.apache.storm.testing.TestWordCounter;
import org.apache.storm.testing.TestWordSpout;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.Utils;

/**
 * Real Storm scheduler objects (Cluster, Topologies, TopologyDetails, SupervisorDetails) built the way
 * Nimbus builds them each round, for the plugin's unit tests.
 */
final class TestClusters {

    private TestClusters() {
    }

    /** A supervisor "id" on host "id.host" with 4 cores, 4 GB and a machine type in its scheduler meta. */
    static SupervisorDetails supervisor(String id, Integer... ports) {
        Map<String, Double> resources = new HashMap<>();
        resources.put(Constants.COMMON_CPU_RESOURCE_NAME, 400.0);
        resources.put(Constants.COMMON_TOTAL_MEMORY_RESOURCE_NAME, 4096.0);
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("machine.type", "i5");
        meta.put("speed", 1.6);
        return new SupervisorDetails(id, id + ".host", meta, Arrays.asList(ports), resources);
    }

    /**
     * The test topology: spout "words" (2 executors) -fields-> bolt "count" (3) -global-> bolt "total" (1),
     * plus one __acker. Executors [1-1] .. [7-7], the acker last.
     */
    static TopologyDetails topology(String id, int numWorkers, Object... confKeysAndValues) {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("words", new TestWordSpout(), 2);
        builder.setBolt("count", new TestWordCounter(), 3).fieldsGrouping("words", new Fields("word"));
        builder.setBolt("total", new TestGlobalCount(), 1).globalGrouping("count");
        StormTopology topology = builder.createTopology();

        Map<ExecutorDetails, String> executors = new LinkedHashMap<>();
        int task = 1;
        for (String component : List.of("words", "words", "count", "count", "count", "total", "__acker")) {
            executors.put(new ExecutorDetails(task, task), component);
            task++;
        }
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put(Config.TOPOLOGY_NAME, id.replaceAll("-\\d+$", ""));
        conf.put(Config.TOPOLOGY_WORKERS, numWorkers);
        for (int i = 0; i < confKeysAndValues.length; i += 2) {
            conf.put((String) confKeysAndValues[i], confKeysAndValues[i + 1]);
        }
        return new TopologyDetails(id, conf, topology, numWorkers, executors, 0, "tester");
    }

    /** An assignment: "executor id" to "node:port" pairs, e.g. ("[1-1]", "sup-a:6700", ...). */
    static SchedulerAssignment assignment(String topologyId, String... executorsAndSlots) {
        Map<ExecutorDetails, WorkerSlot> executorToSlot = new HashMap<>();
        for (int i = 0; i < executorsAndSlots.length; i += 2) {
            executorToSlot.put(ExecutorIds.parse(executorsAndSlots[i]), slot(executorsAndSlots[i + 1]));
        }
        return new SchedulerAssignmentImpl(topologyId, executorToSlot, null, null);
    }

    static WorkerSlot slot(String nodeAndPort) {
        int colon = nodeAndPort.lastIndexOf(':');
        return new WorkerSlot(nodeAndPort.substring(0, colon), Integer.parseInt(nodeAndPort.substring(colon + 1)));
    }

    static Topologies topologies(TopologyDetails... topologies) {
        return new Topologies(topologies);
    }

    /** A Cluster as Nimbus makes it: live supervisors, current assignments, all topologies. */
    static Cluster cluster(Collection<SupervisorDetails> supervisors, Collection<SchedulerAssignment> assignments,
                           Topologies topologies) {
        Map<String, SupervisorDetails> byId = new HashMap<>();
        supervisors.forEach(s -> byId.put(s.getId(), s));
        Map<String, SchedulerAssignment> assignmentsById = new HashMap<>();
        assignments.forEach(a -> assignmentsById.put(a.getTopologyId(), a));
        return new Cluster(new StubNimbus(), new ResourceMetrics(new StormMetricsRegistry()), byId,
            assignmentsById, topologies, new HashMap<>(Utils.readDefaultConfig()));
    }

    /** The next round's cluster: same supervisors and topologies, the assignments this one ended with. */
    static Cluster nextRound(Cluster cluster, Topologies topologies) {
        return cluster(cluster.getSupervisors().values(), cluster.getAssignments().values(), topologies);
    }

    /** A topology's placement, executor id to "node:port", sorted; empty when unassigned. */
    static Map<String, String> placement(Cluster cluster, String topologyId) {
        Map<String, String> placement = new TreeMap<>();
        SchedulerAssignment assignment = cluster.getAssignmentById(topologyId);
        if (assignment != null) {
            assignment.getExecutorToSlot().forEach((executor, slot) ->
                placement.put(ExecutorIds.of(executor), slot.getNodeId() + ":" + slot.getPort()));
        }
        return placement;
    }

    /** Pairs to a sorted map: ("[1-1]", "sup-a:6700", ...). */
    static Map<String, String> expected(String... executorsAndSlots) {
        Map<String, String> map = new TreeMap<>();
        for (int i = 0; i < executorsAndSlots.length; i += 2) {
            map.put(executorsAndSlots[i], executorsAndSlots[i + 1]);
        }
        return map;
    }

    /** The INimbus Nimbus would pass to the Cluster; the plugin uses none of it. */
    static final class StubNimbus implements INimbus {
        @Override
        public void prepare(Map<String, Object> topoConf, String schedulerLocalDir) {
        }

        @Override
        public Collection<WorkerSlot> allSlotsAvailableForScheduling(Collection<SupervisorDetails> existingSupervisors,
                                                                     Topologies topologies,
                                                                     Set<String> topologiesMissingAssignments) {
            List<WorkerSlot> slots = new ArrayList<>();
            for (SupervisorDetails supervisor : existingSupervisors) {
                for (Integer port : supervisor.getAllPorts()) {
                    slots.add(new WorkerSlot(supervisor.getId(), port));
                }
            }
            return slots;
        }

        @Override
        public void assignSlots(Topologies topologies, Map<String, Collection<WorkerSlot>> newSlotsByTopologyId) {
        }

        @Override
        public String getHostName(Map<String, SupervisorDetails> existingSupervisors, String nodeId) {
            SupervisorDetails supervisor = existingSupervisors.get(nodeId);
            return supervisor == null ? null : supervisor.getHost();
        }

        @Override
        public IScheduler getForcedScheduler() {
            return null;
        }
    }
}
