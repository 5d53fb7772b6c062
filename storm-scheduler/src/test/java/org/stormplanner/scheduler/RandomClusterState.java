package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SchedulerAssignmentImpl;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.testing.TestWordCounter;
import org.apache.storm.testing.TestWordSpout;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;
import org.apache.storm.utils.Utils;

/**
 * A reproducible, random cluster state as Nimbus would hand it to a scheduler after some history: running
 * topologies placed anywhere (by any scheduler), then failures, then new topologies submitted.
 *
 * <p>The failures are those Nimbus reports to schedulers: a supervisor that stopped heart-beating is absent
 * from the cluster; a dead worker port is missing from its supervisor's ports; the executors that ran in a
 * vanished supervisor or dead port are missing from their topology's assignment (Nimbus only passes alive
 * executors); a host with failing slots is blacklisted, its running workers kept (as BlacklistScheduler
 * does). Each call of {@link #newCluster} builds fresh, identical objects, so two schedulers can run on two
 * equal clusters.
 */
final class RandomClusterState {

    private static final int FIRST_PORT = 6700;

    final long seed;
    private final Random random;
    private final Map<String, List<Integer>> supervisorPorts = new TreeMap<>();
    private final Set<String> blacklistedHosts = new TreeSet<>();
    private final Map<String, TopologyDetails> topologies = new LinkedHashMap<>();
    private final Map<String, Map<ExecutorDetails, WorkerSlot>> assignments = new TreeMap<>();
    private final List<String> story = new ArrayList<>();

    private RandomClusterState(long seed) {
        this.seed = seed;
        this.random = new Random(seed);
    }

    /** The state the seed makes: 3-6 supervisors of 1-4 ports, 1-3 running and 1-3 new topologies. */
    static RandomClusterState of(long seed) {
        RandomClusterState state = new RandomClusterState(seed);
        state.addSupervisors(3 + state.random.nextInt(4));
        int running = 1 + state.random.nextInt(3);
        for (int i = 0; i < running; i++) {
            state.placeRunningTopology(state.randomTopology("running" + i));
        }
        state.injectFailures();
        int submitted = 1 + state.random.nextInt(3);
        for (int i = 0; i < submitted; i++) {
            TopologyDetails td = state.randomTopology("new" + i);
            state.topologies.put(td.getId(), td);
            state.story.add("submitted " + describe(td));
        }
        return state;
    }

    /** A fresh Cluster of this state over the given Topologies (make them with {@link #newTopologies}). */
    Cluster newCluster(Topologies topologies) {
        List<SupervisorDetails> supervisors = new ArrayList<>();
        supervisorPorts.forEach((id, ports) ->
            supervisors.add(TestClusters.supervisor(id, ports.toArray(new Integer[0]))));
        List<SchedulerAssignment> current = new ArrayList<>();
        assignments.forEach((id, executorToSlot) ->
            current.add(new SchedulerAssignmentImpl(id, new HashMap<>(executorToSlot), null, null)));
        Cluster cluster = TestClusters.cluster(supervisors, current, topologies);
        cluster.setBlacklistedHosts(new HashSet<>(blacklistedHosts));
        return cluster;
    }

    Topologies newTopologies() {
        return new Topologies(new HashMap<>(topologies));
    }

    Set<String> topologyIds() {
        return Collections.unmodifiableSet(topologies.keySet());
    }

    TopologyDetails topology(String id) {
        return topologies.get(id);
    }

    boolean hasBlacklistedHost() {
        return !blacklistedHosts.isEmpty();
    }

    /** True when some topology that lost executors still runs others on a blacklisted host. */
    boolean keepsWorkersOnBlacklistedHostOfATopologyToPlace() {
        for (Map.Entry<String, Map<ExecutorDetails, WorkerSlot>> entry : assignments.entrySet()) {
            TopologyDetails td = topologies.get(entry.getKey());
            boolean lostSome = entry.getValue().size() < td.getExecutors().size();
            boolean onBlacklisted = entry.getValue().values().stream()
                .anyMatch(slot -> blacklistedHosts.contains(hostOf(slot.getNodeId())));
            if (lostSome && onBlacklisted) {
                return true;
            }
        }
        return false;
    }

    /** What happened to the cluster, for failure messages. */
    String story() {
        return "seed " + seed + ": " + String.join("; ", story);
    }

    private void addSupervisors(int count) {
        // Ids shuffled against their slot counts, so node id order and free-slot order disagree.
        List<Character> letters = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            letters.add((char) ('a' + i));
        }
        Collections.shuffle(letters, random);
        for (char letter : letters) {
            List<Integer> ports = new ArrayList<>();
            int slots = 1 + random.nextInt(4);
            for (int p = 0; p < slots; p++) {
                ports.add(FIRST_PORT + p);
            }
            supervisorPorts.put("sup-" + letter, ports);
        }
        story.add("supervisors " + supervisorPorts);
    }

    /**
     * A topology with a spout, one or two bolts and an acker, 1-5 workers. Tasks are numbered by component
     * id, as Storm does, and some executors hold two tasks, so the executor order is by start task.
     */
    private TopologyDetails randomTopology(String label) {
        String id = label + "-" + seed + "-" + (1000 + random.nextInt(9000));
        Map<String, Integer> executorsPerComponent = new TreeMap<>();
        executorsPerComponent.put("__acker", 1);
        executorsPerComponent.put("words", 1 + random.nextInt(4));
        executorsPerComponent.put("count", 1 + random.nextInt(5));
        boolean withTotal = random.nextBoolean();
        if (withTotal) {
            executorsPerComponent.put("total", 1 + random.nextInt(3));
        }
        Map<ExecutorDetails, String> executors = new LinkedHashMap<>();
        int task = 1;
        for (Map.Entry<String, Integer> component : executorsPerComponent.entrySet()) {
            for (int e = 0; e < component.getValue(); e++) {
                int tasks = 1 + random.nextInt(2);
                executors.put(new ExecutorDetails(task, task + tasks - 1), component.getKey());
                task += tasks;
            }
        }
        int numWorkers = 1 + random.nextInt(5);
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.put(Config.TOPOLOGY_NAME, label);
        conf.put(Config.TOPOLOGY_WORKERS, numWorkers);
        return new TopologyDetails(id, conf, graph(executorsPerComponent, withTotal), numWorkers, executors, 0,
            "tester");
    }

    private static StormTopology graph(Map<String, Integer> executorsPerComponent, boolean withTotal) {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("words", new TestWordSpout(), executorsPerComponent.get("words"));
        builder.setBolt("count", new TestWordCounter(), executorsPerComponent.get("count"))
            .fieldsGrouping("words", new Fields("word"));
        if (withTotal) {
            builder.setBolt("total", new TestWordCounter(), executorsPerComponent.get("total"))
                .shuffleGrouping("count");
        }
        return builder.createTopology();
    }

    /** Places a topology on 1..topology.workers random free slots, executors dealt at random. */
    private void placeRunningTopology(TopologyDetails td) {
        topologies.put(td.getId(), td);
        List<WorkerSlot> free = freeSlots();
        if (free.isEmpty()) {
            story.add("no room for " + describe(td) + ", it waits unassigned");
            return;
        }
        Collections.shuffle(free, random);
        int workers = 1 + random.nextInt(Math.min(td.getNumWorkers(), free.size()));
        List<WorkerSlot> slots = free.subList(0, workers);
        List<ExecutorDetails> executors = new ArrayList<>(td.getExecutors());
        executors.sort(ExecutorIds.BY_TASKS);
        Collections.shuffle(executors, random);
        Map<ExecutorDetails, WorkerSlot> placement = new HashMap<>();
        for (int i = 0; i < executors.size(); i++) {
            // Every chosen slot gets one executor first, the rest go anywhere among them.
            WorkerSlot slot = i < workers ? slots.get(i) : slots.get(random.nextInt(workers));
            placement.put(executors.get(i), slot);
        }
        assignments.put(td.getId(), placement);
        story.add("running " + describe(td) + " on " + new TreeSet<>(slotNames(placement.values())));
    }

    private void injectFailures() {
        if (random.nextInt(10) < 4) {
            List<String> ids = new ArrayList<>(supervisorPorts.keySet());
            String gone = ids.get(random.nextInt(ids.size()));
            supervisorPorts.remove(gone);
            dropExecutorsWhere(slot -> slot.getNodeId().equals(gone));
            story.add(gone + " vanished");
        }
        for (Map.Entry<String, List<Integer>> supervisor : supervisorPorts.entrySet()) {
            List<Integer> ports = supervisor.getValue();
            if (ports.size() >= 2 && random.nextInt(10) < 3) {
                Integer dead = ports.remove(random.nextInt(ports.size()));
                String node = supervisor.getKey();
                dropExecutorsWhere(slot -> slot.getNodeId().equals(node) && slot.getPort() == dead);
                story.add(node + ":" + dead + " dead");
            }
        }
        if (random.nextInt(20) < 7 && !supervisorPorts.isEmpty()) {
            List<String> ids = new ArrayList<>(supervisorPorts.keySet());
            String blacklisted = ids.get(random.nextInt(ids.size()));
            blacklistedHosts.add(hostOf(blacklisted));
            story.add(blacklisted + " blacklisted");
        }
    }

    private void dropExecutorsWhere(java.util.function.Predicate<WorkerSlot> dead) {
        assignments.values().forEach(placement -> placement.values().removeIf(dead));
        assignments.values().removeIf(Map::isEmpty);
    }

    private List<WorkerSlot> freeSlots() {
        Set<WorkerSlot> used = new HashSet<>();
        assignments.values().forEach(placement -> used.addAll(placement.values()));
        List<WorkerSlot> free = new ArrayList<>();
        supervisorPorts.forEach((id, ports) -> ports.forEach(port -> {
            WorkerSlot slot = new WorkerSlot(id, port);
            if (!used.contains(slot)) {
                free.add(slot);
            }
        }));
        return free;
    }

    /** The host TestClusters gives a supervisor. */
    private static String hostOf(String supervisorId) {
        return supervisorId + ".host";
    }

    private static String describe(TopologyDetails td) {
        return td.getId() + " (" + td.getExecutors().size() + " executors, " + td.getNumWorkers() + " workers)";
    }

    private static List<String> slotNames(java.util.Collection<WorkerSlot> slots) {
        List<String> names = new ArrayList<>();
        slots.forEach(slot -> names.add(slot.getNodeId() + ":" + slot.getPort()));
        return names;
    }
}
