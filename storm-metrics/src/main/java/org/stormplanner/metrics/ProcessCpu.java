package org.stormplanner.metrics;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.function.Supplier;

/**
 * CPU time of this whole worker process (every JVM thread: executors, netty, serialisation, timers, the
 * garbage collector, the JIT) between two calls, from {@link ProcessHandle.Info#totalCpuDuration()} (on
 * Linux utime + stime of {@code /proc/self/stat}, 10 ms resolution).
 *
 * <p>What the executor threads account is a fraction of it: the rest is the worker's own cost, which a
 * planner must see too (a node's CPU is what its workers use, not only what their executors do). The first
 * call only sets the baseline: the worker's start-up is not a window's work.
 */
final class ProcessCpu {

    private final Supplier<Optional<Duration>> total;
    private Double lastMs;

    ProcessCpu() {
        this(() -> ProcessHandle.current().info().totalCpuDuration());
    }

    ProcessCpu(Supplier<Optional<Duration>> total) {
        this.total = total;
    }

    /** Milliseconds of CPU the process used since the previous call; empty on the first call or if unknown. */
    OptionalDouble deltaMs() {
        Optional<Duration> now = total.get();
        if (now.isEmpty()) {
            lastMs = null;
            return OptionalDouble.empty();
        }
        double nowMs = now.get().toNanos() / 1e6;
        Double before = lastMs;
        lastMs = nowMs;
        return before == null ? OptionalDouble.empty() : OptionalDouble.of(Math.max(0.0, nowMs - before));
    }
}
