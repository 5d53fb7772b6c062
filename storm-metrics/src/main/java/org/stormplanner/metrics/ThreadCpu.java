package org.stormplanner.metrics;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * CPU time of threads of this JVM between two calls, from {@link ThreadMXBean#getThreadCpuTime}
 * (user + system time of that thread, nanosecond resolution on Linux).
 */
final class ThreadCpu {

    private final ThreadMXBean bean;
    private final boolean supported;
    private final Map<Long, Long> lastNanos = new HashMap<>();

    ThreadCpu() {
        this(ManagementFactory.getThreadMXBean());
    }

    ThreadCpu(ThreadMXBean bean) {
        this.bean = bean;
        boolean ok = false;
        try {
            ok = bean.isThreadCpuTimeSupported();
            if (ok && !bean.isThreadCpuTimeEnabled()) {
                bean.setThreadCpuTimeEnabled(true);
            }
        } catch (UnsupportedOperationException | SecurityException e) {
            ok = false;
        }
        this.supported = ok;
    }

    boolean supported() {
        return supported;
    }

    /**
     * Milliseconds of CPU each thread used since the previous call; a thread seen for the first time counts
     * from its start (it started within the window, or it is the window in which we learnt of it). Threads
     * that died count nothing more and are forgotten.
     */
    Map<Long, Double> deltasMs(Set<Long> threadIds) {
        Map<Long, Double> deltas = new HashMap<>();
        if (!supported) {
            return deltas;
        }
        for (Long id : threadIds) {
            long now = bean.getThreadCpuTime(id);
            if (now < 0) {
                lastNanos.remove(id);
                continue;
            }
            Long before = lastNanos.put(id, now);
            long delta = before == null ? now : Math.max(0, now - before);
            deltas.put(id, delta / 1e6);
        }
        lastNanos.keySet().retainAll(threadIds);
        return deltas;
    }
}
