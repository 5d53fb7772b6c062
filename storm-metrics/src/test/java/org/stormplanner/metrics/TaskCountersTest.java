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

    @Test
    void completeLatenciesAreBucketedAndAWindowCarriesOnlyItsOwn() {
        TaskCounters counters = new TaskCounters(1, "spout");
        counters.spoutAcked(4);      // bucket <= 5
        counters.spoutAcked(5);      // bucket <= 5 (bounds are inclusive)
        counters.spoutAcked(-1);     // not sampled: counted as acked, no latency
        TaskCounters.Snapshot first = counters.snapshot();
        counters.spoutAcked(120);    // bucket <= 150
        counters.spoutAcked(90_000); // longer than every bound: the last bucket
        WindowDocument.Builder doc = new WindowDocument.Builder();
        doc.before = first;
        doc.now = counters.snapshot();
        @SuppressWarnings("unchecked")
        Map<String, Object> acked = (Map<String, Object>) doc.toMap().get("acked");
        @SuppressWarnings("unchecked")
        Map<String, Object> buckets = (Map<String, Object>) acked.get("complete_latency_buckets");
        @SuppressWarnings("unchecked")
        List<Object> counts = (List<Object>) buckets.get("counts");
        @SuppressWarnings("unchecked")
        List<Object> bounds = (List<Object>) buckets.get("le_ms");
        assertEquals(bounds.size() + 1, counts.size());
        assertEquals(2L, acked.get("tuples"));
        assertEquals(1L, counts.get(bounds.indexOf(150L)), "120 ms in the bucket up to 150 ms");
        assertEquals(1L, counts.get(counts.size() - 1), "90 s beyond the last bound");
        assertEquals(0L, counts.get(bounds.indexOf(5L)), "the earlier window's latencies are not this one's");
        assertEquals(2L, counts.stream().mapToLong(c -> (Long) c).sum());
        assertEquals(TaskCounters.bucketOf(5), bounds.indexOf(5L));
    }
}
