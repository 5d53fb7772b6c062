package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.stormplanner.scheduler.TestClusters.assignment;
import static org.stormplanner.scheduler.TestClusters.cluster;
import static org.stormplanner.scheduler.TestClusters.supervisor;
import static org.stormplanner.scheduler.TestClusters.topologies;
import static org.stormplanner.scheduler.TestClusters.topology;

import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.testing.TestWordCounter;
import org.apache.storm.testing.TestWordSpout;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;
import org.stormplanner.thrift.Component;
import org.stormplanner.thrift.Node;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.TopologySpec;

class PlanRequestBuilderTest {

    private final PlannerConfig config = new PlannerConfig("127.0.0.1", 7627, 4000, "even");

    @Test
    void nodesCarryCapacityMetaAndFreeAndUsedPorts() {
        Topologies topologies = topologies(topology("words-1", 2), topology("other-1", 1));
        Cluster cluster = cluster(List.of(supervisor("sup-b", 6700, 6701, 6702), supervisor("sup-a", 6700)),
            List.of(assignment("other-1", "[1-1]", "sup-b:6701", "[2-2]", "sup-b:6701", "[3-3]", "sup-b:6701",
                "[4-4]", "sup-b:6701", "[5-5]", "sup-b:6701", "[6-6]", "sup-b:6701", "[7-7]", "sup-b:6701")),
            topologies);

        PlanRequest request = new PlanRequestBuilder(config)
            .build("r-1", List.of(topologies.getById("words-1")), cluster);

        assertEquals("r-1", request.getRequest_id());
        assertEquals(4000, request.getDeadline_ms());
        assertEquals("even", request.getDefault_algorithm());
        assertEquals(List.of("sup-a", "sup-b"), request.getNodes().stream().map(Node::getId).collect(Collectors.toList()));
        Node supB = request.getNodes().get(1);
        assertEquals("sup-b.host", supB.getHost());
        assertEquals(400.0, supB.getCpu_capacity());
        assertEquals(4096.0, supB.getMemory_mb());
        assertEquals(Map.of("machine.type", "i5", "speed", "1.6"), supB.getMeta());
        assertEquals(List.of(6700, 6702), supB.getFree_ports());
        assertEquals(List.of(6701), supB.getUsed_ports());
        assertEquals(1, request.getTopologies().size(), "only the topologies asked for");
    }

    /** A supervisor's advertised link capacity (meta network.bandwidth.mbit) travels as the node's bandwidth. */
    @Test
    void bandwidthComesFromTheSchedulerMetaWhenItIsANumber() {
        assertEquals(100.0, PlanRequestBuilder.bandwidthMbit(Map.of("network.bandwidth.mbit", " 100 ")));
        assertEquals(null, PlanRequestBuilder.bandwidthMbit(Map.of("network.bandwidth.mbit", "fast")));
        assertEquals(null, PlanRequestBuilder.bandwidthMbit(Map.of("network.bandwidth.mbit", "0")));
        assertEquals(null, PlanRequestBuilder.bandwidthMbit(Map.of("speed", "1.6")));
        Topologies topologies = topologies(topology("words-1", 2));
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700)), List.of(), topologies);
        Node node = new PlanRequestBuilder(config).build("r-1", List.of(topologies.getById("words-1")), cluster)
            .getNodes().get(0);
        assertFalse(node.isSetBandwidth_mbit(), "no meta, no bandwidth: unconstrained");
    }

    /**
     * Other tenants: what topologies outside the request hold on a node is their executors' declared CPU and
     * memory (Storm's defaults here: 10 % and 128 MB on heap each); the request's own executors carry theirs.
     */
    @Test
    void nodesCarryWhatOtherTopologiesDeclareAndExecutorsTheirOwnDeclarations() {
        Topologies topologies = topologies(topology("words-1", 2), topology("other-1", 1));
        TopologyDetails other = topologies.getById("other-1");
        Cluster cluster = cluster(List.of(supervisor("sup-b", 6700, 6701, 6702), supervisor("sup-a", 6700)),
            List.of(assignment("other-1", "[1-1]", "sup-b:6701", "[2-2]", "sup-b:6701", "[3-3]", "sup-b:6701")),
            topologies);

        PlanRequest request = new PlanRequestBuilder(config)
            .build("r-1", List.of(topologies.getById("words-1")), cluster);

        double cpu = 0;
        double memory = 0;
        for (ExecutorDetails executor : other.getExecutors()) {
            String id = ExecutorIds.of(executor);
            if (id.equals("[1-1]") || id.equals("[2-2]") || id.equals("[3-3]")) {
                cpu += other.getTotalCpuReqTask(executor);
                memory += other.getTotalMemReqTask(executor);
            }
        }
        Node supA = request.getNodes().get(0);
        Node supB = request.getNodes().get(1);
        assertEquals(0.0, supA.getUsed_cpu());
        assertEquals(cpu, supB.getUsed_cpu(), 1e-9);
        assertEquals(memory, supB.getUsed_memory_mb(), 1e-9);
        assertTrue(cpu > 0 && memory > 0, "Storm declares defaults for every executor");

        TopologySpec words = request.getTopologies().get(0);
        TopologyDetails wordsDetails = topologies.getById("words-1");
        assertEquals(wordsDetails.getTopologyWorkerMaxHeapSize(), words.getWorker_max_heap_mb(), 1e-9);
        for (org.stormplanner.thrift.Executor executor : words.getExecutors()) {
            ExecutorDetails details = wordsDetails.getExecutors().stream()
                .filter(e -> ExecutorIds.of(e).equals(executor.getId())).findFirst().orElseThrow();
            assertEquals(wordsDetails.getTotalCpuReqTask(details), executor.getCpu(), 1e-9);
            assertEquals(wordsDetails.getTotalMemReqTask(details), executor.getMemory_mb(), 1e-9);
        }
    }

    /** A topology in the request holds nothing as "used": the service re-plans it with its own figures. */
    @Test
    void topologiesInTheRequestAreNotCountedAsOtherTenants() {
        Topologies topologies = topologies(topology("words-1", 2));
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700, 6701)),
            List.of(assignment("words-1", "[1-1]", "sup-a:6700")), topologies);

        PlanRequest request = new PlanRequestBuilder(config)
            .build("r-1", List.of(topologies.getById("words-1")), cluster);

        assertEquals(0.0, request.getNodes().get(0).getUsed_cpu());
        assertEquals(0.0, request.getNodes().get(0).getUsed_memory_mb());
    }

    /** The service plans topologies in request order; Storm's schedulers go by the cluster's topology order. */
    @Test
    void topologiesGoInTheOrderStormsSchedulersVisitThem() {
        Topologies topologies = topologies(topology("zeta-1", 1), topology("alpha-1", 1), topology("mid-1", 1),
            topology("beta-1", 1), topology("omega-1", 1));
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700)), List.of(), topologies);
        List<String> stormOrder = cluster.needsSchedulingTopologies().stream()
            .map(TopologyDetails::getId).collect(Collectors.toList());
        List<TopologyDetails> byId = topologies.getTopologies().stream()
            .sorted(Comparator.comparing(TopologyDetails::getId)).collect(Collectors.toList());

        PlanRequest request = new PlanRequestBuilder(config).build("r-1", byId, cluster);

        assertEquals(stormOrder, request.getTopologies().stream().map(TopologySpec::getId)
            .collect(Collectors.toList()));
    }

    @Test
    void topologySpecHasGraphExecutorsWorkersAlgorithmAndOptions() {
        TopologyDetails words = topology("words-1", 3, PlannerConfig.ALGORITHM, "topdown",
            "planner.max.migrations", 13, PlannerConfig.SERVICE_PORT, 9999, PlannerConfig.DEFAULT_ALGORITHM, "even");
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700)),
            List.of(assignment("words-1", "[1-1]", "sup-a:6700")), topologies(words));

        TopologySpec spec = new PlanRequestBuilder(config).topologySpec(words, cluster);

        assertEquals("words-1", spec.getId());
        assertEquals("words", spec.getName());
        assertEquals(3, spec.getNum_workers());
        assertEquals("topdown", spec.getAlgorithm());
        assertEquals(Map.of("planner.algorithm", "topdown", "planner.max.migrations", "13"), spec.getOptions());
        assertEquals(List.of("__acker:bolt:1:true", "count:bolt:3:false", "total:bolt:1:false", "words:spout:2:false"),
            spec.getComponents().stream().map(PlanRequestBuilderTest::describe).collect(Collectors.toList()));
        assertEquals(List.of("count->total default global", "words->count default fields"),
            spec.getStreams().stream()
                .map(s -> s.getFrom_component() + "->" + s.getTo_component() + " " + s.getStream_id() + " " + s.getGrouping())
                .collect(Collectors.toList()));
        assertEquals(List.of("[1-1] words", "[2-2] words", "[3-3] count", "[4-4] count", "[5-5] count",
                "[6-6] total", "[7-7] __acker"),
            spec.getExecutors().stream().map(e -> e.getId() + " " + e.getComponent()).collect(Collectors.toList()));
        assertEquals(Map.of("[1-1]", Plans.slot("sup-a:6700")), spec.getCurrent());
        assertEquals(30, spec.getMessage_timeout_secs(), "Storm's default topology.message.timeout.secs");
        assertEquals(0, spec.getMax_spout_pending(), "Storm's default topology.max.spout.pending: unbounded");
    }

    @Test
    void theSpoutsPendingBoundTravelsWithTheSpec() {
        TopologyDetails words = topology("words-1", 3, "topology.max.spout.pending", 500);
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700)), List.of(), topologies(words));

        assertEquals(500, new PlanRequestBuilder(config).topologySpec(words, cluster).getMax_spout_pending());
    }

    @Test
    void aSpoutsOwnPendingBoundLeavesTheRoomUnknown() {
        TopologyDetails words = topology("words-1", 3, "topology.max.spout.pending", 500);
        words.getTopology().get_spouts().get("words").get_common().set_json_conf("{\"topology.max.spout.pending\": 7}");
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700)), List.of(), topologies(words));

        TopologySpec spec = new PlanRequestBuilder(config).topologySpec(words, cluster);

        assertFalse(spec.isSetMax_spout_pending(), "the service takes the room as unknown and drains");
    }

    @Test
    void theMessageTimeoutTravelsWhenItIsAPositiveWholeNumberOfSeconds() {
        assertEquals(45, PlanRequestBuilder.messageTimeoutSecs(Map.of("topology.message.timeout.secs", 45)));
        assertEquals(12, PlanRequestBuilder.messageTimeoutSecs(Map.of("topology.message.timeout.secs", " 12 ")));
        assertNull(PlanRequestBuilder.messageTimeoutSecs(Map.of("topology.message.timeout.secs", "soon")));
        assertNull(PlanRequestBuilder.messageTimeoutSecs(Map.of("topology.message.timeout.secs", -3)));
        assertNull(PlanRequestBuilder.messageTimeoutSecs(Map.of()));
        assertNull(PlanRequestBuilder.messageTimeoutSecs(Map.of("topology.message.timeout.secs", 0.3)));
        assertNull(PlanRequestBuilder.messageTimeoutSecs(null));
    }

    @Test
    void maxSpoutPendingTravelsWhenItIsAPositiveWholeNumber() {
        assertEquals(100000, PlanRequestBuilder.maxSpoutPending(Map.of("topology.max.spout.pending", 100000)));
        assertEquals(2000, PlanRequestBuilder.maxSpoutPending(Map.of("topology.max.spout.pending", 2000L)));
        assertEquals(0, PlanRequestBuilder.maxSpoutPending(Map.of("topology.max.spout.pending", 0)), "0: unbounded");
        assertNull(PlanRequestBuilder.maxSpoutPending(Map.of("topology.max.spout.pending", -1)), "unusable: unknown");
        assertNull(PlanRequestBuilder.maxSpoutPending(Map.of("topology.max.spout.pending", 0.4)), "no fraction");
        assertNull(PlanRequestBuilder.maxSpoutPending(Map.of("topology.max.spout.pending", "lots")));
        assertEquals(0, PlanRequestBuilder.maxSpoutPending(Map.of()), "unset: the spouts are unbounded");
        assertNull(PlanRequestBuilder.maxSpoutPending((Map<String, Object>) null), "no conf: unknown");
    }

    @Test
    void everyGroupingHasItsContractName() {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("src", new TestWordSpout(), 1);
        builder.setBolt("shuffled", new TestWordCounter(), 1).shuffleGrouping("src");
        builder.setBolt("fielded", new TestWordCounter(), 1).fieldsGrouping("src", new Fields("word"));
        builder.setBolt("global", new TestWordCounter(), 1).globalGrouping("src");
        builder.setBolt("all", new TestWordCounter(), 1).allGrouping("src");
        builder.setBolt("direct", new TestWordCounter(), 1).directGrouping("src");
        builder.setBolt("local", new TestWordCounter(), 1).localOrShuffleGrouping("src");
        builder.setBolt("none", new TestWordCounter(), 1).noneGrouping("src", "side");
        builder.setBolt("custom", new TestWordCounter(), 1)
            .customGrouping("src", new org.apache.storm.grouping.PartialKeyGrouping(new Fields("word")));
        StormTopology topology = builder.createTopology();
        Map<ExecutorDetails, String> executors = new LinkedHashMap<>();
        int task = 1;
        for (String component : List.of("src", "shuffled", "fielded", "global", "all", "direct", "local", "none",
            "custom")) {
            executors.put(new ExecutorDetails(task, task), component);
            task++;
        }
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put(Config.TOPOLOGY_NAME, "groupings");
        TopologyDetails td = new TopologyDetails("groupings-1", conf, topology, 1, executors, 0, "tester");

        Map<String, String> groupings = PlanRequestBuilder.streams(td,
                PlanRequestBuilder.components(td).stream().map(Component::getId).collect(Collectors.toSet()))
            .stream().collect(Collectors.toMap(s -> s.getTo_component(), s -> s.getGrouping()));

        assertEquals(Map.of("shuffled", "shuffle", "fielded", "fields", "global", "global", "all", "all",
            "direct", "direct", "local", "local_or_shuffle", "none", "none", "custom", "custom"), groupings);
    }

    @Test
    void blacklistedSupervisorsAreNotOffered() {
        Topologies topologies = topologies(topology("words-1", 1));
        Cluster cluster = cluster(List.of(supervisor("sup-a", 6700), supervisor("sup-b", 6700)), List.of(), topologies);
        cluster.blacklistHost("sup-b.host");

        List<Node> nodes = PlanRequestBuilder.nodes(cluster);

        assertEquals(1, nodes.size());
        assertFalse(nodes.stream().anyMatch(n -> n.getId().equals("sup-b")));
        assertTrue(nodes.get(0).getUsed_ports().isEmpty());
    }

    private static String describe(Component c) {
        return c.getId() + ":" + c.getType() + ":" + c.getParallelism() + ":" + c.isSystem();
    }
}
