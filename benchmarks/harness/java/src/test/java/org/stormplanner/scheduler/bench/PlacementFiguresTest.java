package org.stormplanner.scheduler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's figures on a cluster small enough to work out by hand: 2 supervisors of 100 % CPU and 1,000 MB;
 * one topology, spout-0 (2 executors) → bolt-0 (2 executors), each executor declaring 30 % CPU and 100 MB.
 */
class PlacementFiguresTest {

    private static final String NODE_A = "r000s000";
    private static final String NODE_B = "r000s001";

    private final GeneratedCluster generated = new GeneratedCluster(new ClusterShape("tiny", "tiny",
        List.of(new HardwareClass("one-core", 2, 2, 100, 1000)),
        List.of(new TopologyShape("pair", 1, 1, 2, 2, 30, 100, 800))), Map.of(), Map.of());
    private final TopologyDetails topology = generated.topology(0);

    @Test
    void everythingOnOneNodeSendsNothingAcrossButOverloadsItsCpu() {
        Cluster cluster = generated.firstRound();
        place(cluster, NODE_A, "spout-0", "bolt-0");

        PlacementFigures figures = PlacementFigures.of(cluster);

        assertEquals(0.0, figures.crossNodeShare(), 1e-9);
        assertEquals(1, figures.fullyPlaced());
        assertEquals(1, figures.overCpu(), "4 × 30 % on a 100 % node");
        assertEquals(0, figures.overMemory(), "4 × 100 MB on a 1,000 MB node");
    }

    @Test
    void spoutsOnOneNodeAndBoltsOnTheOtherSendEverythingAcross() {
        Cluster cluster = generated.firstRound();
        place(cluster, NODE_A, "spout-0");
        place(cluster, NODE_B, "bolt-0");

        PlacementFigures figures = PlacementFigures.of(cluster);

        assertEquals(1.0, figures.crossNodeShare(), 1e-9);
        assertEquals(0, figures.overEither());
    }

    @Test
    void oneOfEachComponentPerNodeSendsHalfAcross() {
        Cluster cluster = generated.firstRound();
        List<ExecutorDetails> spouts = executorsOf("spout-0");
        List<ExecutorDetails> bolts = executorsOf("bolt-0");
        cluster.assign(new WorkerSlot(NODE_A, 0), topology.getId(), List.of(spouts.get(0), bolts.get(0)));
        cluster.assign(new WorkerSlot(NODE_B, 0), topology.getId(), List.of(spouts.get(1), bolts.get(1)));

        assertEquals(0.5, PlacementFigures.of(cluster).crossNodeShare(), 1e-9);
    }

    @Test
    void aTopologyWithAnExecutorLeftOutIsNotFullyPlaced() {
        Cluster cluster = generated.firstRound();
        place(cluster, NODE_A, "spout-0");

        assertEquals(0, PlacementFigures.of(cluster).fullyPlaced());
    }

    private void place(Cluster cluster, String node, String... components) {
        List<ExecutorDetails> executors = new ArrayList<>();
        for (String component : components) {
            executors.addAll(executorsOf(component));
        }
        cluster.assign(new WorkerSlot(node, 0), topology.getId(), executors);
    }

    private List<ExecutorDetails> executorsOf(String component) {
        return topology.getExecutorToComponent().entrySet().stream()
            .filter(e -> e.getValue().equals(component)).map(Map.Entry::getKey)
            .sorted((a, b) -> Integer.compare(a.getStartTask(), b.getStartTask())).toList();
    }
}
