package org.stormplanner.metrics;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One task's window as the versioned JSON document stored at {@code <root>/<topology-id>/<task-id>}.
 * The layout is documented in docs/metrics.md; bump {@link #VERSION} on any incompatible change.
 */
final class WindowDocument {

    static final int VERSION = 1;

    private WindowDocument() {
    }

    /** The threads a task used in this window, with the CPU milliseconds each burned. */
    record ThreadUse(long id, String name, double cpuMs) {
    }

    static final class Builder {
        String topologyId;
        String component;
        int task;
        WorkerIdentity worker;
        long seq;
        long startMs;
        long endMs;
        double periodSecs;
        TaskCounters.Snapshot now = TaskCounters.Snapshot.ZERO;
        TaskCounters.Snapshot before = TaskCounters.Snapshot.ZERO;
        List<ThreadUse> threads = List.of();
        boolean threadCpuSupported = true;
        double subprocessCpuMs;
        int subprocesses;
        Double processCpuMs;  // the whole worker JVM's CPU this window; null when unknown or shared
        Double stateMb;
        HostNetwork.Counters hostNet;

        byte[] toBytes() {
            return Json.write(toMap()).getBytes(StandardCharsets.UTF_8);
        }

        Map<String, Object> toMap() {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("version", VERSION);
            doc.put("topology", topologyId);
            doc.put("component", component);
            doc.put("task", task);
            doc.put("worker", worker == null ? null : worker.toMap());

            Map<String, Object> window = new LinkedHashMap<>();
            window.put("seq", seq);
            window.put("start_ms", startMs);
            window.put("end_ms", endMs);
            window.put("period_s", periodSecs);
            doc.put("window", window);

            Map<String, Object> cpu = new LinkedHashMap<>();
            List<Object> threadList = new ArrayList<>();
            for (ThreadUse use : threads) {
                Map<String, Object> t = new LinkedHashMap<>();
                t.put("id", use.id());
                t.put("name", use.name());
                t.put("ms", round(use.cpuMs()));
                threadList.add(t);
            }
            cpu.put("threads", threadList);
            cpu.put("thread_cpu_supported", threadCpuSupported);
            cpu.put("subprocess_ms", round(subprocessCpuMs));
            cpu.put("subprocesses", subprocesses);
            if (processCpuMs != null) {
                cpu.put("process_ms", round(processCpuMs));
            }
            doc.put("cpu", cpu);

            doc.put("emitted", counts(now.emitted - before.emitted, now.emitted));
            Map<String, Object> executed = counts(now.executed - before.executed, now.executed);
            executed.put("latency_ms_sum", now.executeLatencyMs - before.executeLatencyMs);
            executed.put("latency_samples", now.executeSamples - before.executeSamples);
            doc.put("executed", executed);
            Map<String, Object> acked = counts(now.acked - before.acked, now.acked);
            acked.put("process_latency_ms_sum", now.processLatencyMs - before.processLatencyMs);
            acked.put("process_latency_samples", now.processSamples - before.processSamples);
            acked.put("complete_latency_ms_sum", now.completeLatencyMs - before.completeLatencyMs);
            acked.put("complete_latency_samples", now.completeSamples - before.completeSamples);
            if (now.completeSamples > before.completeSamples) {
                acked.put("complete_latency_buckets", latencyBuckets(now.completeBuckets, before.completeBuckets));
            }
            doc.put("acked", acked);
            doc.put("failed", counts(now.failed - before.failed, now.failed));

            List<Object> sent = new ArrayList<>();
            now.sent.entrySet().stream()
                .sorted(Map.Entry.comparingByKey(FLOW_ORDER))
                .forEach(e -> {
                    long[] total = e.getValue();
                    long[] earlier = before.sent.getOrDefault(e.getKey(), new long[2]);
                    Map<String, Object> flow = new LinkedHashMap<>();
                    flow.put("stream", e.getKey().stream());
                    flow.put("to", e.getKey().task());
                    flow.put("tuples", total[0] - earlier[0]);
                    flow.put("bytes", total[1] - earlier[1]);
                    flow.put("total", total[0]);
                    flow.put("bytes_total", total[1]);
                    sent.add(flow);
                });
            doc.put("sent", sent);

            List<Object> received = new ArrayList<>();
            now.received.entrySet().stream()
                .sorted(Map.Entry.comparingByKey(FLOW_ORDER))
                .forEach(e -> {
                    Map<String, Object> flow = new LinkedHashMap<>();
                    flow.put("stream", e.getKey().stream());
                    flow.put("from", e.getKey().task());
                    flow.put("tuples", e.getValue() - before.received.getOrDefault(e.getKey(), 0L));
                    flow.put("total", e.getValue());
                    received.add(flow);
                });
            doc.put("received", received);
            doc.put("state_mb", stateMb);
            if (hostNet != null) {
                Map<String, Object> net = new LinkedHashMap<>();
                net.put("received_bytes", hostNet.receivedBytes());
                net.put("sent_bytes", hostNet.sentBytes());
                doc.put("host_net", net);
            }
            return doc;
        }
    }

    private static final Comparator<TaskCounters.Flow> FLOW_ORDER =
        Comparator.comparing(TaskCounters.Flow::stream).thenComparingInt(TaskCounters.Flow::task);

    /** This window's complete latencies by bucket: upper bounds (ms) and counts, one more count for longer. */
    private static Map<String, Object> latencyBuckets(long[] now, long[] before) {
        List<Object> bounds = new ArrayList<>();
        for (long bound : TaskCounters.LATENCY_BUCKETS_MS) {
            bounds.add(bound);
        }
        List<Object> counts = new ArrayList<>();
        for (int i = 0; i < now.length; i++) {
            counts.add(now[i] - before[i]);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("le_ms", bounds);
        m.put("counts", counts);
        return m;
    }

    private static Map<String, Object> counts(long window, long total) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tuples", window);
        m.put("total", total);
        return m;
    }

    private static double round(double value) {
        return Math.round(value * 1000.0) / 1000.0;
    }
}
