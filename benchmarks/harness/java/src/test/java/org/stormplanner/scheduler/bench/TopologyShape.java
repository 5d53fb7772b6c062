package org.stormplanner.scheduler.bench;

/**
 * One generated topology, in the terms of Storm's {@code TestUtilsForResourceAwareScheduler.buildTopology}:
 * {@code spouts} spouts and {@code bolts} bolts (each bolt reads one spout by shuffle grouping, spouts taken
 * round robin), every component with {@code parallelism} executors, each executor declaring
 * {@code cpuPerExecutor} ({@code topology.component.cpu.pcore.percent}) and {@code memoryPerExecutorMb}
 * ({@code topology.component.resources.onheap.memory.mb}); {@code workers} is {@code topology.workers} and
 * {@code maxHeapMb} is {@code topology.worker.max.heap.size.mb}.
 */
public record TopologyShape(String name, int spouts, int bolts, int parallelism, int workers,
                            double cpuPerExecutor, double memoryPerExecutorMb, double maxHeapMb) {

    public TopologyShape {
        if (spouts < 1 || bolts < 0 || parallelism < 1 || workers < 1) {
            throw new IllegalArgumentException("impossible topology shape " + name);
        }
    }

    public int components() {
        return spouts + bolts;
    }

    public int executors() {
        return components() * parallelism;
    }
}
