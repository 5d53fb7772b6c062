package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.storm.Config;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.Grouping;
import org.apache.storm.generated.SpoutSpec;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.utils.Utils;
import org.stormplanner.thrift.Component;
import org.stormplanner.thrift.Executor;
import org.stormplanner.thrift.Node;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.Stream;
import org.stormplanner.thrift.TopologySpec;

/**
 * Turns what Nimbus knows this round (the {@link Cluster} and the topologies to place) into the
 * {@link PlanRequest} the planner service answers. Everything is listed in a stable order (nodes by id,
 * components by id, executors by task) so equal clusters give equal requests.
 *
 * <p>Topologies go in the order Storm's own schedulers visit them, the cluster's topology order (see
 * {@link #inStormOrder}): the service plans them one after the other, each taking slots from those after
 * it, so with another order {@code even} would not be Storm's EvenScheduler when topologies compete for
 * slots.
 */
final class PlanRequestBuilder {

    private final PlannerConfig config;

    PlanRequestBuilder(PlannerConfig config) {
        this.config = config;
    }

    PlanRequest build(String requestId, Collection<TopologyDetails> topologies, Cluster cluster) {
        List<TopologySpec> specs = inStormOrder(topologies, cluster).stream()
            .map(td -> topologySpec(td, cluster))
            .collect(Collectors.toList());
        Set<String> planned = specs.stream().map(TopologySpec::getId).collect(Collectors.toSet());
        return new PlanRequest()
            .setRequest_id(requestId)
            .setNodes(nodes(cluster, planned))
            .setTopologies(specs)
            .setDeadline_ms(config.timeoutMs())
            .setDefault_algorithm(config.defaultAlgorithm());
    }

    /**
     * The topologies in the order of {@code cluster.getTopologies()}, the order in which EvenScheduler and
     * DefaultScheduler place them ({@code Cluster.needsSchedulingTopologies}); any the cluster does not list
     * come last, by id.
     */
    static List<TopologyDetails> inStormOrder(Collection<TopologyDetails> topologies, Cluster cluster) {
        Map<String, Integer> position = new HashMap<>();
        if (cluster.getTopologies() != null) {
            for (TopologyDetails td : cluster.getTopologies().getTopologies()) {
                position.putIfAbsent(td.getId(), position.size());
            }
        }
        List<TopologyDetails> ordered = new ArrayList<>(topologies);
        Comparator<TopologyDetails> byPosition =
            Comparator.comparingInt(td -> position.getOrDefault(td.getId(), Integer.MAX_VALUE));
        ordered.sort(byPosition.thenComparing(TopologyDetails::getId));
        return ordered;
    }

    /** Live supervisors; blacklisted ones are left out because nothing may be placed on them. */
    static List<Node> nodes(Cluster cluster) {
        return nodes(cluster, Set.of());
    }

    /**
     * Live supervisors with what the topologies outside this request hold on each: their executors'
     * declared CPU and memory, as Storm's ResourceAwareScheduler accounts them. The topologies in the
     * request are left out: the service knows their current placement and re-plans them.
     */
    static List<Node> nodes(Cluster cluster, Set<String> planned) {
        Map<String, double[]> held = heldByOthers(cluster, planned);
        List<Node> nodes = new ArrayList<>();
        for (SupervisorDetails supervisor : sortedSupervisors(cluster)) {
            if (cluster.isBlackListed(supervisor.getId())) {
                continue;
            }
            double[] used = held.getOrDefault(supervisor.getId(), new double[2]);
            Map<String, String> meta = schedulerMeta(supervisor);
            Node node = new Node()
                .setUsed_cpu(used[0])
                .setUsed_memory_mb(used[1])
                .setId(supervisor.getId())
                .setHost(supervisor.getHost() == null ? supervisor.getId() : supervisor.getHost())
                .setCpu_capacity(supervisor.getTotalCpu())
                .setMemory_mb(supervisor.getTotalMemory())
                .setMeta(meta)
                .setFree_ports(sorted(cluster.getAvailablePorts(supervisor)))
                .setUsed_ports(sorted(cluster.getUsedPorts(supervisor)));
            Double bandwidth = bandwidthMbit(meta);
            if (bandwidth != null) {
                node.setBandwidth_mbit(bandwidth);  // used_bandwidth_mbit: not measured by the plugin (yet)
            }
            nodes.add(node);
        }
        return nodes;
    }

    /** Node id → {declared CPU %, declared MB} of the executors of topologies not in {@code planned}. */
    static Map<String, double[]> heldByOthers(Cluster cluster, Set<String> planned) {
        Map<String, double[]> held = new TreeMap<>();
        for (SchedulerAssignment assignment : cluster.getAssignments().values()) {
            TopologyDetails owner = cluster.getTopologies().getById(assignment.getTopologyId());
            if (owner == null || planned.contains(owner.getId())) {
                continue;
            }
            for (Map.Entry<ExecutorDetails, WorkerSlot> entry : assignment.getExecutorToSlot().entrySet()) {
                double[] used = held.computeIfAbsent(entry.getValue().getNodeId(), node -> new double[2]);
                used[0] += orZero(owner.getTotalCpuReqTask(entry.getKey()));
                used[1] += orZero(owner.getTotalMemReqTask(entry.getKey()));
            }
        }
        return held;
    }

    private static double orZero(Double value) {
        return value == null ? 0.0 : value;
    }

    TopologySpec topologySpec(TopologyDetails td, Cluster cluster) {
        List<Component> components = components(td);
        Set<String> componentIds = components.stream().map(Component::getId).collect(Collectors.toSet());
        TopologySpec spec = new TopologySpec()
            .setId(td.getId())
            .setName(td.getName() == null ? td.getId() : td.getName())
            .setComponents(components)
            .setStreams(streams(td, componentIds))
            .setExecutors(executors(td))
            .setCurrent(currentAssignment(td, cluster))
            .setAlgorithm(config.algorithmFor(td.getConf()))
            .setNum_workers(td.getNumWorkers())
            .setWorker_max_heap_mb(td.getTopologyWorkerMaxHeapSize())
            .setOptions(PlannerConfig.plannerOptionsOf(td.getConf()));
        Integer timeout = messageTimeoutSecs(td.getConf());
        if (timeout != null) {
            spec.setMessage_timeout_secs(timeout);
        }
        Integer pending = maxSpoutPending(td);
        if (pending != null) {
            spec.setMax_spout_pending(pending);
        }
        return spec;
    }

    /** {@code topology.message.timeout.secs} as a whole number of seconds, or null when unset or unusable. */
    static Integer messageTimeoutSecs(Map<String, Object> conf) {
        Object value = conf == null ? null : conf.get(Config.TOPOLOGY_MESSAGE_TIMEOUT_SECS);
        if (value instanceof Number) {
            double secs = ((Number) value).doubleValue();
            long rounded = Math.round(secs);
            return secs > 0 && rounded >= 1 && rounded <= Integer.MAX_VALUE ? (int) rounded : null;
        }
        Integer secs = wholeNumber(value);
        return secs != null && secs > 0 ? secs : null;
    }

    /**
     * {@code topology.max.spout.pending} per spout task as the spouts run with it: 0 when nothing sets it
     * (Storm's default: unbounded), null when it cannot be told (a spout sets its own, a value that is not a
     * whole number, no conf). The service reads from it whether a move may go undrained, the spouts having
     * room for the trees its restarts lose; null makes it drain.
     */
    static Integer maxSpoutPending(TopologyDetails td) {
        StormTopology topology = td.getTopology();
        if (topology != null && topology.is_set_spouts()) {
            for (SpoutSpec spout : topology.get_spouts().values()) {
                String own = spout.is_set_common() ? spout.get_common().get_json_conf() : null;
                if (own != null && own.contains(Config.TOPOLOGY_MAX_SPOUT_PENDING)) {
                    return null;   // a spout's own bound overrides the topology's
                }
            }
        }
        return maxSpoutPending(td.getConf());
    }

    /** The topology-wide {@code topology.max.spout.pending} (see {@link #maxSpoutPending(TopologyDetails)}). */
    static Integer maxSpoutPending(Map<String, Object> conf) {
        if (conf == null) {
            return null;
        }
        Object value = conf.get(Config.TOPOLOGY_MAX_SPOUT_PENDING);
        if (value == null) {
            return 0;
        }
        Integer pending = wholeNumber(value);
        return pending != null && pending >= 0 ? pending : null;
    }

    /** A whole number that fits an int (a Number without a fraction, or its text), else null. */
    private static Integer wholeNumber(Object value) {
        if (value instanceof Number) {
            double number = ((Number) value).doubleValue();
            boolean whole = number == Math.rint(number) && Math.abs(number) <= Integer.MAX_VALUE;
            return whole ? (int) number : null;
        }
        if (value != null) {
            try {
                return Integer.parseInt(value.toString().trim());
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    /**
     * User components come from the topology graph; system components (__acker, __system,
     * __metrics...) exist only as executors, so they are found there and listed as system bolts.
     */
    static List<Component> components(TopologyDetails td) {
        Map<String, Component> byId = new TreeMap<>();
        if (td.getTopology() != null) {
            for (org.apache.storm.scheduler.Component user : td.getUserTopolgyComponents().values()) {
                byId.put(user.getId(), new Component()
                    .setId(user.getId())
                    .setType(user.getType().name().toLowerCase(Locale.ROOT))
                    .setParallelism(user.getExecs().size())
                    .setSystem(false));
            }
        }
        Map<String, Integer> executorsPerComponent = new TreeMap<>();
        for (String component : td.getExecutorToComponent().values()) {
            executorsPerComponent.merge(component, 1, Integer::sum);
        }
        for (Map.Entry<String, Integer> entry : executorsPerComponent.entrySet()) {
            String id = entry.getKey();
            if (!byId.containsKey(id)) {
                byId.put(id, new Component()
                    .setId(id)
                    .setType("bolt")
                    .setParallelism(entry.getValue())
                    .setSystem(Utils.isSystemId(id)));
            }
        }
        return new ArrayList<>(byId.values());
    }

    /** One stream per (source component, stream id, consumer), with the consumer's grouping. */
    static List<Stream> streams(TopologyDetails td, Set<String> componentIds) {
        List<Stream> streams = new ArrayList<>();
        if (td.getTopology() == null) {
            return streams;
        }
        for (org.apache.storm.scheduler.Component consumer : td.getUserTopolgyComponents().values()) {
            for (Map.Entry<GlobalStreamId, Grouping> input : consumer.getInputs().entrySet()) {
                String source = input.getKey().get_componentId();
                if (!componentIds.contains(source)) {
                    continue;
                }
                streams.add(new Stream()
                    .setFrom_component(source)
                    .setTo_component(consumer.getId())
                    .setStream_id(input.getKey().get_streamId())
                    .setGrouping(groupingName(input.getValue())));
            }
        }
        streams.sort(Comparator.comparing(Stream::getFrom_component)
            .thenComparing(Stream::getTo_component)
            .thenComparing(Stream::getStream_id));
        return streams;
    }

    /** The grouping as the contract names it. Storm encodes a global grouping as fields grouping on no field. */
    static String groupingName(Grouping grouping) {
        if (grouping == null || grouping.getSetField() == null) {
            return "shuffle";
        }
        switch (grouping.getSetField()) {
            case FIELDS:
                return grouping.get_fields().isEmpty() ? "global" : "fields";
            case SHUFFLE:
                return "shuffle";
            case ALL:
                return "all";
            case NONE:
                return "none";
            case DIRECT:
                return "direct";
            case LOCAL_OR_SHUFFLE:
                return "local_or_shuffle";
            case CUSTOM_OBJECT:
            case CUSTOM_SERIALIZED:
                return "custom";
            default:
                return grouping.getSetField().getFieldName().toLowerCase(Locale.ROOT);
        }
    }

    /** Every executor with its declared resources (Storm's defaults where the topology declares none). */
    static List<Executor> executors(TopologyDetails td) {
        return td.getExecutorToComponent().entrySet().stream()
            .sorted(Map.Entry.comparingByKey(ExecutorIds.BY_TASKS))
            .map(e -> new Executor()
                .setId(ExecutorIds.of(e.getKey()))
                .setComponent(e.getValue())
                .setCpu(orZero(td.getTotalCpuReqTask(e.getKey())))
                .setMemory_mb(orZero(td.getTotalMemReqTask(e.getKey()))))
            .collect(Collectors.toList());
    }

    static Map<String, org.stormplanner.thrift.WorkerSlot> currentAssignment(TopologyDetails td, Cluster cluster) {
        Map<String, org.stormplanner.thrift.WorkerSlot> current = new TreeMap<>();
        SchedulerAssignment assignment = cluster.getAssignmentById(td.getId());
        if (assignment == null) {
            return current;
        }
        for (Map.Entry<ExecutorDetails, WorkerSlot> entry : assignment.getExecutorToSlot().entrySet()) {
            current.put(ExecutorIds.of(entry.getKey()), toThrift(entry.getValue()));
        }
        return current;
    }

    static org.stormplanner.thrift.WorkerSlot toThrift(WorkerSlot slot) {
        return new org.stormplanner.thrift.WorkerSlot().setNode_id(slot.getNodeId()).setPort(slot.getPort());
    }

    /** supervisor.scheduler.meta is a map in storm.yaml; its values travel as strings. */
    private static Map<String, String> schedulerMeta(SupervisorDetails supervisor) {
        Map<String, String> meta = new TreeMap<>();
        Object raw = supervisor.getSchedulerMeta();
        if (raw instanceof Map) {
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) raw).entrySet()) {
                if (entry.getKey() != null && entry.getValue() != null) {
                    meta.put(entry.getKey().toString(), entry.getValue().toString());
                }
            }
        }
        return meta;
    }

    /** The link capacity a supervisor advertises ({@code network.bandwidth.mbit} in its meta), if any. */
    static Double bandwidthMbit(Map<String, String> meta) {
        String raw = meta.get("network.bandwidth.mbit");
        if (raw == null) {
            return null;
        }
        try {
            double value = Double.parseDouble(raw.trim());
            return value > 0 && Double.isFinite(value) ? value : null;
        } catch (NumberFormatException e) {
            return null;  // the planner reads the meta too and names the bad value
        }
    }

    private static List<SupervisorDetails> sortedSupervisors(Cluster cluster) {
        List<SupervisorDetails> supervisors = new ArrayList<>(cluster.getSupervisors().values());
        supervisors.sort(Comparator.comparing(SupervisorDetails::getId));
        return supervisors;
    }

    private static List<Integer> sorted(Collection<Integer> ports) {
        return ports.stream().sorted().collect(Collectors.toList());
    }
}
