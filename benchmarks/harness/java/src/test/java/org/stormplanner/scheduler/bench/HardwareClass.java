package org.stormplanner.scheduler.bench;

/**
 * One kind of supervisor machine in a generated cluster: how many of them, their worker slots and their
 * declared capacity ({@code supervisor.cpu.capacity} in percent of a core, {@code supervisor.memory.capacity.mb}).
 */
public record HardwareClass(String name, int count, int slots, double cpuPercent, double memoryMb) {

    public HardwareClass {
        if (count < 0 || slots < 1 || cpuPercent <= 0 || memoryMb <= 0) {
            throw new IllegalArgumentException("impossible hardware class " + name);
        }
    }

    /** The same machines, {@code count} of them. */
    public HardwareClass withCount(int newCount) {
        return new HardwareClass(name, newCount, slots, cpuPercent, memoryMb);
    }
}
