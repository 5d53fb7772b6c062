package org.stormplanner.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TaskCountersTest {

    @Test
    void countsEveryTuplePerDestinationTaskAcrossThreadsWithoutLoss() throws Exception {
        TaskCounters counters = new TaskCounters(3, "split");
        int threads = 4;
        int emitsPerThread = 20_000;
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                for (int i = 0; i < emitsPerThread; i++) {
                    counters.emitted("default", List.of(5, 6), 10);
                    counters.executed("default", 1, i % 20 == 0 ? 2 : -1);
                }
            }, "emitter-" + t);
            workers.add(worker);
        }
        // Snapshots taken while the threads count must never run ahead of the final totals.
        workers.forEach(Thread::start);
        long seen = 0;
        while (workers.stream().anyMatch(Thread::isAlive)) {
            long now = counters.snapshot().emitted;
            assertTrue(now >= seen, "cumulative counters only grow");
            seen = now;
        }
        for (Thread worker : workers) {
            worker.join();
        }

        TaskCounters.Snapshot s = counters.snapshot();
        long total = (long) threads * emitsPerThread;
        assertEquals(total, s.emitted);
        assertArrayEquals(new long[] {total, total * 10}, s.sent.get(new TaskCounters.Flow("default", 5)));
        assertArrayEquals(new long[] {total, total * 10}, s.sent.get(new TaskCounters.Flow("default", 6)));
        assertEquals(total, s.executed);
        assertEquals(total, s.received.get(new TaskCounters.Flow("default", 1)));
        assertEquals(total / 20, s.executeSamples, "only sampled executions carry a latency");
        assertEquals(2 * total / 20, s.executeLatencyMs);
        assertEquals(threads, counters.threads().size());
        assertTrue(counters.threads().values().stream().allMatch(name -> name.startsWith("emitter-")));
    }

    @Test
    void anEmitNobodySubscribesToCountsAsEmittedOnly() {
        TaskCounters counters = new TaskCounters(1, "spout");
        counters.emitted("unused", List.of(), 4);
        counters.emitted("unused", null, 4);
        TaskCounters.Snapshot s = counters.snapshot();
        assertEquals(2, s.emitted);
        assertEquals(Map.of(), s.sent);
    }

    @Test
    void remembersABoundedNumberOfThreads() throws Exception {
        TaskCounters counters = new TaskCounters(1, "spout");
        for (int i = 0; i < TaskCounters.MAX_THREADS + 5; i++) {
            Thread t = new Thread(() -> counters.spoutAcked(1));
            t.start();
            t.join();
        }
        assertEquals(TaskCounters.MAX_THREADS, counters.threads().size());
        assertEquals(TaskCounters.MAX_THREADS + 5, counters.snapshot().acked);
    }

    @Test
    void tupleSizesEstimateStringsNumbersAndNesting() {
        assertEquals(5 + 8 + 1, TupleSizes.estimate(List.of("storm", 42L, true)));
        assertEquals(3 + 4 + 8, TupleSizes.estimate(List.of(List.of("abc", Map.of("k", "vvv")), new byte[8])));
        assertEquals(0, TupleSizes.estimate(null));
        assertEquals(TupleSizes.OTHER, TupleSizes.estimate(List.of(new Object())));
    }
}
