package org.stormplanner.scheduler.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The clusters of issue #13, scaled by one knob: {@code scale} 1.0 is full size, 0.1 has a tenth of the
 * supervisors and of the executors (every topology keeps at least 3 executors).
 *
 * <ul>
 *   <li>{@link #productionLike}: about 1,900 supervisors of 4 hardware classes (12-48 slots, 1,100-4,700 % CPU,
 *       42-181 GB) and 45 topologies from 3 to 9,389 executors (36,086 in all), sizes following a power law,
 *       each declaring its own CPU and memory per executor;</li>
 *   <li>{@link #singleHugeTopology}: one 52,000-executor topology on 1,000 supervisors of the same classes.</li>
 * </ul>
 * Everything is derived from a seed, so equal arguments give equal clusters.
 */
public final class ClusterShapes {

    /** The production cluster's machine mix at full scale: 1,900 supervisors of 4 classes. */
    private static final List<HardwareClass> PRODUCTION_MACHINES = List.of(
        new HardwareClass("small", 608, 12, 1100, 42 * 1024),
        new HardwareClass("medium", 703, 24, 2300, 90 * 1024),
        new HardwareClass("large", 399, 32, 3100, 120 * 1024),
        new HardwareClass("xlarge", 190, 48, 4700, 181 * 1024));
    private static final int PRODUCTION_TOPOLOGIES = 45;
    private static final int PRODUCTION_EXECUTORS = 36_086;
    private static final int LARGEST_TOPOLOGY = 9_389;
    private static final int SMALLEST_TOPOLOGY = 3;
    private static final int HUGE_TOPOLOGY_EXECUTORS = 52_000;
    private static final int HUGE_TOPOLOGY_SUPERVISORS = 1_000;

    /** Declared CPU (% of a core) and on-heap memory (MB) per executor that topologies draw from. */
    private static final double[] CPU_LEVELS = {10, 20, 40, 60, 80, 120};
    private static final double[] MEMORY_LEVELS = {256, 512, 768, 1024, 1536, 2048};
    /** RAS may pack this many executors into one worker: topology.worker.max.heap.size.mb follows. */
    private static final int EXECUTORS_PER_WORKER = 8;
    /** topology.workers asks for one worker per this many executors (DefaultScheduler spreads over them). */
    private static final int EXECUTORS_PER_REQUESTED_WORKER = 4;

    private ClusterShapes() {
    }

    /** Issue #13's production-sized cluster at {@code scale}, with {@code topologies} topologies (45 in production). */
    public static ClusterShape productionLike(double scale, int topologies, long seed) {
        List<HardwareClass> machines = scaledMachines(PRODUCTION_MACHINES, scale);
        int total = Math.max(topologies * SMALLEST_TOPOLOGY, (int) Math.round(PRODUCTION_EXECUTORS * scale));
        int largest = Math.max(SMALLEST_TOPOLOGY, (int) Math.round(LARGEST_TOPOLOGY * scale));
        List<Integer> sizes = powerLawSizes(topologies, SMALLEST_TOPOLOGY, largest, total);
        Random random = new Random(seed);
        List<TopologyShape> shapes = new ArrayList<>();
        for (int i = 0; i < sizes.size(); i++) {
            double cpu = CPU_LEVELS[random.nextInt(CPU_LEVELS.length)];
            double memory = MEMORY_LEVELS[random.nextInt(MEMORY_LEVELS.length)];
            shapes.add(shapeOf(String.format("topo-%02d", i), sizes.get(i), cpu, memory));
        }
        return new ClusterShape("production", String.format(java.util.Locale.ROOT,
            "production-like (issue #13) at scale %s", scale), machines, shapes);
    }

    /** One 52,000-executor topology (10 components) on 1,000 supervisors of the production mix, at {@code scale}. */
    public static ClusterShape singleHugeTopology(double scale) {
        double supervisorsShare = HUGE_TOPOLOGY_SUPERVISORS / (double) totalCount(PRODUCTION_MACHINES);
        List<HardwareClass> machines = scaledMachines(PRODUCTION_MACHINES, scale * supervisorsShare);
        int executors = Math.max(10, (int) Math.round(HUGE_TOPOLOGY_EXECUTORS * scale));
        TopologyShape huge = new TopologyShape("huge", 2, 8, Math.max(1, executors / 10),
            Math.max(1, executors / (2 * EXECUTORS_PER_REQUESTED_WORKER)), 20, 512, 512 * EXECUTORS_PER_WORKER);
        return new ClusterShape("huge", String.format(java.util.Locale.ROOT,
            "one 52,000-executor topology on 1,000 supervisors at scale %s", scale), machines, List.of(huge));
    }

    /**
     * A topology of about {@code size} executors: about sqrt(size)/2 components (3 to 40), one in five a
     * spout, all with the same parallelism.
     */
    static TopologyShape shapeOf(String name, int size, double cpu, double memoryMb) {
        int components = Math.min(size, Math.max(3, Math.min(40, (int) Math.round(Math.sqrt(size) / 2))));
        int spouts = Math.max(1, components / 5);
        int parallelism = Math.max(1, (int) Math.round(size / (double) components));
        int workers = Math.max(1, (int) Math.ceil(components * parallelism / (double) EXECUTORS_PER_REQUESTED_WORKER));
        return new TopologyShape(name, spouts, components - spouts, parallelism, workers, cpu, memoryMb,
            memoryMb * EXECUTORS_PER_WORKER);
    }

    /**
     * {@code count} sizes from {@code smallest} to {@code largest} along smallest + (largest - smallest)·(i/(n-1))^p,
     * with the exponent p chosen (bisection) so the sizes add up to about {@code total}.
     */
    static List<Integer> powerLawSizes(int count, int smallest, int largest, int total) {
        double low = 0.01;
        double high = 500;
        for (int step = 0; step < 100; step++) {
            double exponent = (low + high) / 2;
            if (sum(sizes(count, smallest, largest, exponent)) > total) {
                low = exponent;
            } else {
                high = exponent;
            }
        }
        return sizes(count, smallest, largest, (low + high) / 2);
    }

    private static List<Integer> sizes(int count, int smallest, int largest, double exponent) {
        List<Integer> sizes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            double position = count == 1 ? 1.0 : i / (double) (count - 1);
            sizes.add((int) Math.round(smallest + (largest - smallest) * Math.pow(position, exponent)));
        }
        return sizes;
    }

    private static long sum(List<Integer> values) {
        return values.stream().mapToLong(Integer::longValue).sum();
    }

    private static List<HardwareClass> scaledMachines(List<HardwareClass> machines, double scale) {
        List<HardwareClass> scaled = new ArrayList<>();
        for (HardwareClass machine : machines) {
            scaled.add(machine.withCount(Math.max(1, (int) Math.round(machine.count() * scale))));
        }
        return scaled;
    }

    private static int totalCount(List<HardwareClass> machines) {
        return machines.stream().mapToInt(HardwareClass::count).sum();
    }
}
