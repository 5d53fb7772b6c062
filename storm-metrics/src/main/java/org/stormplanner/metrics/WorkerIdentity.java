package org.stormplanner.metrics;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a window was measured: the worker's host and port, the supervisor (node) id, the worker's pid, the
 * supervisor's {@code supervisor.scheduler.meta} (machine type, speed) when the worker's conf carries it,
 * and how the topology's idle executors wait ({@code waits}: the bolt, spout and backpressure wait
 * strategies, by simple class name). The planner needs the node to turn CPU percent into load (a percent of
 * a fast machine is worth more), and the wait strategies to know whether an idle executor's CPU is waiting:
 * Storm's default, {@code WaitStrategyProgressive}, spins an idle bolt through whatever CPU its quota leaves.
 */
record WorkerIdentity(String host, int port, String node, long pid, Map<String, String> meta,
                      Map<String, String> waits) {

    /** The worker's main class: its first two arguments are the topology id and the supervisor id. */
    static final String WORKER_MAIN = "org.apache.storm.daemon.worker.Worker";

    /** The wait strategies reported, by the name the window gives them and the conf key they come from. */
    static final Map<String, String> WAIT_KEYS = Map.of(
        "bolt", "topology.bolt.wait.strategy",
        "spout", "topology.spout.wait.strategy",
        "backpressure", "topology.backpressure.wait.strategy");

    /** A wait strategy's class name is cut to this many characters (the windows are bounded). */
    static final int MAX_STRATEGY_CHARS = 120;

    static WorkerIdentity of(Map<String, Object> conf, String assignmentId, Integer port) {
        if (assignmentId == null || assignmentId.isBlank()) {
            assignmentId = supervisorIdFromArguments(ProcessHandle.current().info().arguments().orElse(new String[0]));
        }
        Map<String, String> meta = new TreeMap<>();
        Object raw = conf == null ? null : conf.get("supervisor.scheduler.meta");
        if (raw instanceof Map) {
            ((Map<?, ?>) raw).forEach((k, v) -> {
                if (k != null && v != null) {
                    meta.put(k.toString(), v.toString());
                }
            });
        }
        return new WorkerIdentity(hostOf(conf), port == null ? -1 : port, assignmentId,
            ProcessHandle.current().pid(), meta, waitsOf(conf));
    }

    /** The conf's wait strategies by simple class name ({@code WaitStrategyPark}); absent keys are left out. */
    static Map<String, String> waitsOf(Map<String, Object> conf) {
        Map<String, String> waits = new TreeMap<>();
        if (conf == null) {
            return waits;
        }
        WAIT_KEYS.forEach((name, key) -> {
            Object value = conf.get(key);
            if (value != null) {
                String text = value.toString();
                String simple = text.substring(text.lastIndexOf('.') + 1);
                waits.put(name, simple.length() > MAX_STRATEGY_CHARS ? simple.substring(0, MAX_STRATEGY_CHARS) : simple);
            }
        });
        return waits;
    }

    /**
     * The supervisor id from a worker's command line ({@code ... Worker <topology-id> <supervisor-id> ...}):
     * the topology context does not always carry it (its assignment id is null in Storm 2.8 workers).
     */
    static String supervisorIdFromArguments(String[] arguments) {
        for (int i = 0; i + 2 < arguments.length; i++) {
            if (WORKER_MAIN.equals(arguments[i])) {
                return arguments[i + 2];
            }
        }
        return null;
    }

    private static String hostOf(Map<String, Object> conf) {
        Object configured = conf == null ? null : conf.get("storm.local.hostname");
        if (configured != null && !configured.toString().isBlank()) {
            return configured.toString();
        }
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (Exception e) {
            return "unknown";
        }
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("host", host);
        m.put("port", port);
        m.put("node", node);
        m.put("pid", pid);
        m.put("meta", meta);
        m.put("waits", waits);
        return m;
    }
}
