package org.stormplanner.metrics;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one task did since it started: cumulative, thread-safe counters.
 *
 * <p>The hook's callbacks run on the executor thread and, for shell bolts, on the thread that reads the
 * subprocess' answers; the publisher reads from its own thread. Counters only ever grow and windows are the
 * difference of two {@link Snapshot}s, so nothing is lost or counted twice at a window boundary (swapping
 * per-window maps would drop the increments that race with the swap).
 */
final class TaskCounters {

    /**
     * Upper bounds (ms, inclusive) of the complete-latency buckets, about two per doubling: a percentile read
     * from them is within a bucket's width (at most half its upper bound) of the true one.
     */
    static final long[] LATENCY_BUCKETS_MS = {1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700,
        1_000, 1_500, 2_000, 3_000, 5_000, 7_000, 10_000, 15_000, 20_000, 30_000, 60_000};

    /** Threads remembered per task: the executor thread plus a shell bolt's reader thread, with room to spare. */
    static final int MAX_THREADS = 8;

    /** A stream to (or from) one task. */
    record Flow(String stream, int task) {
    }

    private static final class Amount {
        final LongAdder tuples = new LongAdder();
        final LongAdder bytes = new LongAdder();
    }

    final int taskId;
    final String component;

    private final Map<Flow, Amount> sent = new ConcurrentHashMap<>();
    private final Map<Flow, LongAdder> received = new ConcurrentHashMap<>();
    private final LongAdder emitted = new LongAdder();
    private final LongAdder executed = new LongAdder();
    private final LongAdder executeLatencyMs = new LongAdder();
    private final LongAdder executeSamples = new LongAdder();
    private final LongAdder processLatencyMs = new LongAdder();
    private final LongAdder processSamples = new LongAdder();
    private final LongAdder acked = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder completeLatencyMs = new LongAdder();
    private final LongAdder completeSamples = new LongAdder();
    /** Complete latencies by bucket ({@link #LATENCY_BUCKETS_MS}, then one for longer): for percentiles. */
    private final LongAdder[] completeBuckets = newBuckets();
    private final Map<Long, String> threads = new ConcurrentHashMap<>();

    TaskCounters(int taskId, String component) {
        this.taskId = taskId;
        this.component = component;
    }

    /** One emit: the tuple goes to every task of {@code outTasks} (empty when nobody subscribes). */
    void emitted(String stream, Collection<Integer> outTasks, long bytes) {
        seenOnThisThread();
        emitted.increment();
        if (outTasks == null) {
            return;
        }
        for (Integer to : outTasks) {
            if (to == null) {
                continue;
            }
            Amount amount = sent.computeIfAbsent(new Flow(stream, to), f -> new Amount());
            amount.tuples.increment();
            amount.bytes.add(bytes);
        }
    }

    /** One tuple executed; {@code latencyMs} is negative when Storm did not sample this one. */
    void executed(String stream, int fromTask, long latencyMs) {
        seenOnThisThread();
        executed.increment();
        received.computeIfAbsent(new Flow(stream, fromTask), f -> new LongAdder()).increment();
        if (latencyMs >= 0) {
            executeLatencyMs.add(latencyMs);
            executeSamples.increment();
        }
    }

    void boltAcked(long processLatencyMs) {
        seenOnThisThread();
        acked.increment();
        if (processLatencyMs >= 0) {
            this.processLatencyMs.add(processLatencyMs);
            processSamples.increment();
        }
    }

    void boltFailed() {
        failed.increment();
    }

    void spoutAcked(long completeLatencyMs) {
        seenOnThisThread();
        acked.increment();
        if (completeLatencyMs >= 0) {
            this.completeLatencyMs.add(completeLatencyMs);
            completeSamples.increment();
            completeBuckets[bucketOf(completeLatencyMs)].increment();
        }
    }

    void spoutFailed() {
        seenOnThisThread();
        failed.increment();
    }

    /** The threads that did this task's work, by id: their CPU time is the task's (shared within an executor). */
    Map<Long, String> threads() {
        return Collections.unmodifiableMap(threads);
    }

    private void seenOnThisThread() {
        Thread current = Thread.currentThread();
        long id = current.getId();
        if (!threads.containsKey(id) && threads.size() < MAX_THREADS) {
            threads.put(id, current.getName());
        }
    }

    /** The bucket of a latency: the first whose upper bound holds it, else the last (longer than every bound). */
    static int bucketOf(long latencyMs) {
        for (int i = 0; i < LATENCY_BUCKETS_MS.length; i++) {
            if (latencyMs <= LATENCY_BUCKETS_MS[i]) {
                return i;
            }
        }
        return LATENCY_BUCKETS_MS.length;
    }

    private static LongAdder[] newBuckets() {
        LongAdder[] buckets = new LongAdder[LATENCY_BUCKETS_MS.length + 1];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = new LongAdder();
        }
        return buckets;
    }

    Snapshot snapshot() {
        Snapshot s = new Snapshot();
        sent.forEach((flow, amount) -> s.sent.put(flow, new long[] {amount.tuples.sum(), amount.bytes.sum()}));
        received.forEach((flow, count) -> s.received.put(flow, count.sum()));
        s.emitted = emitted.sum();
        s.executed = executed.sum();
        s.executeLatencyMs = executeLatencyMs.sum();
        s.executeSamples = executeSamples.sum();
        s.processLatencyMs = processLatencyMs.sum();
        s.processSamples = processSamples.sum();
        s.acked = acked.sum();
        s.failed = failed.sum();
        s.completeLatencyMs = completeLatencyMs.sum();
        s.completeSamples = completeSamples.sum();
        for (int i = 0; i < completeBuckets.length; i++) {
            s.completeBuckets[i] = completeBuckets[i].sum();
        }
        return s;
    }

    /** Cumulative values at one instant. */
    static final class Snapshot {
        static final Snapshot ZERO = new Snapshot();

        final Map<Flow, long[]> sent = new HashMap<>();
        final Map<Flow, Long> received = new HashMap<>();
        long emitted;
        long executed;
        long executeLatencyMs;
        long executeSamples;
        long processLatencyMs;
        long processSamples;
        long acked;
        long failed;
        long completeLatencyMs;
        long completeSamples;
        final long[] completeBuckets = new long[LATENCY_BUCKETS_MS.length + 1];
    }
}
