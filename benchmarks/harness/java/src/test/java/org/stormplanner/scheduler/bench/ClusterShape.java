package org.stormplanner.scheduler.bench;

import java.util.List;

/** What a generated cluster is made of: its supervisors by hardware class and its topologies. */
public record ClusterShape(String name, String description, List<HardwareClass> hardware,
                           List<TopologyShape> topologies) {

    public int supervisors() {
        return hardware.stream().mapToInt(HardwareClass::count).sum();
    }

    public int slots() {
        return hardware.stream().mapToInt(h -> h.count() * h.slots()).sum();
    }

    public int executors() {
        return topologies.stream().mapToInt(TopologyShape::executors).sum();
    }

    public double totalCpuPercent() {
        return hardware.stream().mapToDouble(h -> h.count() * h.cpuPercent()).sum();
    }

    public double declaredCpuPercent() {
        return topologies.stream().mapToDouble(t -> t.executors() * t.cpuPerExecutor()).sum();
    }

    public double totalMemoryMb() {
        return hardware.stream().mapToDouble(h -> h.count() * h.memoryMb()).sum();
    }

    public double declaredMemoryMb() {
        return topologies.stream().mapToDouble(t -> t.executors() * t.memoryPerExecutorMb()).sum();
    }

    /** One line: supervisors, slots, topologies, executors and how much of the capacity they declare. */
    public String summary() {
        return String.format(java.util.Locale.ROOT,
            "%d supervisors (%d slots), %d topologies, %d executors; declared CPU %.0f%% and memory %.0f%% of capacity",
            supervisors(), slots(), topologies.size(), executors(),
            100 * declaredCpuPercent() / totalCpuPercent(), 100 * declaredMemoryMb() / totalMemoryMb());
    }
}
