package org.stormplanner.scheduler.bench;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.resource.TestUtilsForResourceAwareScheduler;
import org.apache.storm.scheduler.resource.normalization.ResourceMetrics;

/**
 * A {@link ClusterShape} made into Storm's scheduler objects with Storm's own test utilities
 * ({@code TestUtilsForResourceAwareScheduler}: genSupervisors, buildTopology, genExecsAndComps,
 * createClusterConfig, INimbusTest): the supervisors, the topologies, and a {@link Cluster} per round as Nimbus
 * builds it from the assignments the previous round left.
 *
 * <p>{@code extraTopologyConf} is added to every topology's conf (e.g. the plugin's {@code planner.*} keys); the
 * topologies are otherwise identical for every scheduler compared.
 */
public final class GeneratedCluster {

    private static final String USER = "bench";
    /** Storm's defaults for components that declare nothing (every generated topology declares its own). */
    private static final double DEFAULT_CPU = 10;
    private static final double DEFAULT_ONHEAP_MB = 128;

    private final ClusterShape shape;
    private final Map<String, Object> daemonConf;
    private final Map<String, SupervisorDetails> supervisors;
    private final Topologies topologies;

    public GeneratedCluster(ClusterShape shape, Map<String, Object> extraDaemonConf,
                            Map<String, Object> extraTopologyConf) {
        this.shape = shape;
        this.daemonConf = new HashMap<>(
            TestUtilsForResourceAwareScheduler.createClusterConfig(DEFAULT_CPU, DEFAULT_ONHEAP_MB, 0, null));
        this.daemonConf.putAll(extraDaemonConf);
        this.supervisors = supervisorsOf(shape.hardware());
        Map<String, TopologyDetails> byId = new LinkedHashMap<>();
        int launchTime = 1;
        for (TopologyShape topology : shape.topologies()) {
            TopologyDetails td = topologyOf(topology, launchTime++, extraTopologyConf);
            byId.put(td.getId(), td);
        }
        this.topologies = new Topologies(byId);
    }

    public ClusterShape shape() {
        return shape;
    }

    /** The conf Nimbus (and so every scheduler's prepare) would read: Storm's defaults plus the extra keys. */
    public Map<String, Object> daemonConf() {
        return new HashMap<>(daemonConf);
    }

    public Map<String, SupervisorDetails> supervisors() {
        return supervisors;
    }

    public Topologies topologies() {
        return topologies;
    }

    /** The topology built from the shape at {@code index} (ids are {@code <name>-<index + 1>}). */
    public TopologyDetails topology(int index) {
        return topologies.getById(shape.topologies().get(index).name() + "-" + (index + 1));
    }

    /** A round's Cluster: every supervisor alive, the given assignments, every topology submitted. */
    public Cluster round(Map<String, ? extends SchedulerAssignment> assignments) {
        return new Cluster(new TestUtilsForResourceAwareScheduler.INimbusTest(),
            new ResourceMetrics(new StormMetricsRegistry()), supervisors, assignments, topologies, daemonConf());
    }

    /** The first round: nothing assigned yet. */
    public Cluster firstRound() {
        return round(Map.of());
    }

    /** Supervisors of every class; each class numbered on from the previous one so ids stay distinct. */
    private static Map<String, SupervisorDetails> supervisorsOf(List<HardwareClass> hardware) {
        Map<String, SupervisorDetails> all = new HashMap<>();
        int first = 0;
        for (HardwareClass machine : hardware) {
            all.putAll(TestUtilsForResourceAwareScheduler.genSupervisors(machine.count(), machine.slots(), first,
                machine.cpuPercent(), machine.memoryMb()));
            first += machine.count();
        }
        return all;
    }

    private TopologyDetails topologyOf(TopologyShape shape, int launchTime, Map<String, Object> extraConf) {
        StormTopology topology = TestUtilsForResourceAwareScheduler.buildTopology(shape.spouts(), shape.bolts(),
            shape.parallelism(), shape.parallelism());
        Map<ExecutorDetails, String> executors = TestUtilsForResourceAwareScheduler.genExecsAndComps(topology);
        Map<String, Object> conf = new HashMap<>(daemonConf);
        conf.put(Config.TOPOLOGY_NAME, shape.name());
        conf.put(Config.TOPOLOGY_SUBMITTER_USER, USER);
        conf.put(Config.TOPOLOGY_WORKERS, shape.workers());
        conf.put(Config.TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT, shape.cpuPerExecutor());
        conf.put(Config.TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB, shape.memoryPerExecutorMb());
        conf.put(Config.TOPOLOGY_COMPONENT_RESOURCES_OFFHEAP_MEMORY_MB, 0.0);
        conf.put(Config.TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB, shape.maxHeapMb());
        conf.putAll(extraConf);
        return new TopologyDetails(shape.name() + "-" + launchTime, conf, topology, shape.workers(), executors,
            launchTime, USER);
    }
}
