package org.stormplanner.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One per worker: every statistics period it turns each registered task's counters into a window document
 * and writes it to {@code <root>/<topology-id>/<task-id>}.
 *
 * <p>One thread per worker does all the work (CPU sampling, JSON, ZooKeeper), so the tasks' own threads
 * only ever bump counters. Writes are bounded: one znode per task per period, and a worker whose task count
 * exceeds {@code planner.metrics.max.writes.per.sec} x period stretches its period instead of writing more.
 * Nothing here ever throws into a task: failures are logged once per distinct message.
 */
final class WorkerMetricsPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(WorkerMetricsPublisher.class);

    /** By topology id and worker port: LocalCluster runs many workers in one JVM. */
    private static final Map<String, WorkerMetricsPublisher> PUBLISHERS = new HashMap<>();

    /** Executor data key a (Java) component may set to report its state size in MB: a Number or Supplier. */
    static final String STATE_SIZE_KEY = "planner.state.mb";

    private final String key;
    private final String topologyId;
    private final MetricsConfig config;
    private final WorkerIdentity worker;
    private final WindowSink sink;
    private final List<SubprocessCpu.Signature> signatures;
    private final ThreadCpu threadCpu = new ThreadCpu();
    private final SubprocessCpu subprocessCpu = new SubprocessCpu();
    private final ProcessCpu processCpu;
    private final Map<Integer, Registered> tasks = new ConcurrentHashMap<>();
    private final Map<String, String> lastProblem = new HashMap<>();
    private ScheduledExecutorService timer;
    private long seq;
    private long lastWindowEndMs;

    private static final class Registered {
        final TaskCounters counters;
        final Supplier<Object> stateSize;
        TaskCounters.Snapshot previous = TaskCounters.Snapshot.ZERO;
        long sinceMs;

        Registered(TaskCounters counters, Supplier<Object> stateSize, long sinceMs) {
            this.counters = counters;
            this.stateSize = stateSize;
            this.sinceMs = sinceMs;
        }
    }

    WorkerMetricsPublisher(String key, String topologyId, MetricsConfig config, WorkerIdentity worker,
                           WindowSink sink, List<SubprocessCpu.Signature> signatures) {
        this(key, topologyId, config, worker, sink, signatures, new ProcessCpu());
    }

    WorkerMetricsPublisher(String key, String topologyId, MetricsConfig config, WorkerIdentity worker,
                           WindowSink sink, List<SubprocessCpu.Signature> signatures, ProcessCpu processCpu) {
        this.processCpu = processCpu;
        this.key = key;
        this.topologyId = topologyId;
        this.config = config;
        this.worker = worker;
        this.sink = sink;
        this.signatures = signatures;
        this.lastWindowEndMs = System.currentTimeMillis();
    }

    /** The worker's publisher, created (and its thread started) by the first task that registers. */
    static synchronized WorkerMetricsPublisher forWorker(String topologyId, int port,
                                                         Supplier<WorkerMetricsPublisher> create) {
        String key = topologyId + ":" + port;
        WorkerMetricsPublisher publisher = PUBLISHERS.get(key);
        if (publisher == null) {
            publisher = create.get();
            PUBLISHERS.put(key, publisher);
            publisher.start();
        }
        return publisher;
    }

    /** True when this JVM runs the workers of more than one publisher (Storm's in-process LocalCluster). */
    static synchronized boolean sharesJvm() {
        return PUBLISHERS.size() > 1;
    }

    void register(TaskCounters counters, Supplier<Object> stateSize) {
        tasks.put(counters.taskId, new Registered(counters, stateSize, System.currentTimeMillis()));
    }

    /** A task shut down; the last one out stops the thread and closes the ZooKeeper client. */
    void unregister(int taskId) {
        synchronized (WorkerMetricsPublisher.class) {
            tasks.remove(taskId);
            if (tasks.isEmpty()) {
                PUBLISHERS.remove(key);
                stop();
            }
        }
    }

    private synchronized void start() {
        for (String problem : config.problems) {
            LOG.warn("storm-planner metrics: {}", problem);
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "storm-planner-metrics");
            t.setDaemon(true);
            return t;
        });
        LOG.info("storm-planner metrics: publishing windows of {} to {} ({})", topologyId, sink, config);
        scheduleNext();
    }

    private synchronized void stop() {
        if (timer != null) {
            timer.shutdownNow();
            timer = null;
        }
        sink.close();
    }

    private synchronized void scheduleNext() {
        if (timer == null) {
            return;
        }
        long delayMs = Math.round(config.effectivePeriodSecs(tasks.size()) * 1000);
        timer.schedule(this::tickSafely, delayMs, TimeUnit.MILLISECONDS);
    }

    private void tickSafely() {
        try {
            publishWindow();
        } catch (Throwable t) {
            problem("publish", "publishing a window failed: " + t, t);
        } finally {
            scheduleNext();
        }
    }

    /** Builds and writes one window for every registered task. Visible for tests. */
    void publishWindow() {
        long endMs = System.currentTimeMillis();
        seq++;
        List<Registered> registered = new ArrayList<>(tasks.values());
        Map<Registered, TaskCounters.Snapshot> snapshots = new HashMap<>();
        Set<Long> threadIds = new HashSet<>();
        for (Registered r : registered) {
            snapshots.put(r, r.counters.snapshot());
            threadIds.addAll(r.counters.threads().keySet());
        }
        Map<Long, Double> threadMs = threadCpu.deltasMs(threadIds);
        Map<String, SubprocessCpu.Usage> subprocesses = signatures.isEmpty()
            ? Map.of() : sampleSubprocesses();
        Map<Registered, Double> subprocessShare = shareSubprocessCpu(registered, snapshots, subprocesses);
        HostNetwork.Counters hostNet = HostNetwork.read().orElse(null);
        OptionalDouble processMs = processCpu.deltaMs();
        // Several workers in one JVM (Storm's LocalCluster) cannot tell whose the process' CPU is.
        Double workerMs = processMs.isPresent() && !sharesJvm() ? processMs.getAsDouble() : null;

        int written = 0;
        for (Registered r : registered) {
            TaskCounters.Snapshot now = snapshots.get(r);
            WindowDocument.Builder doc = new WindowDocument.Builder();
            doc.topologyId = topologyId;
            doc.component = r.counters.component;
            doc.task = r.counters.taskId;
            doc.worker = worker;
            doc.seq = seq;
            doc.startMs = Math.max(r.sinceMs, lastWindowEndMs);
            doc.endMs = endMs;
            doc.periodSecs = config.effectivePeriodSecs(registered.size());
            doc.now = now;
            doc.before = r.previous;
            List<WindowDocument.ThreadUse> uses = new ArrayList<>();
            r.counters.threads().forEach((id, name) ->
                uses.add(new WindowDocument.ThreadUse(id, name, threadMs.getOrDefault(id, 0.0))));
            doc.threads = uses;
            doc.threadCpuSupported = threadCpu.supported();
            doc.subprocessCpuMs = subprocessShare.getOrDefault(r, 0.0);
            SubprocessCpu.Usage usage = subprocesses.get(r.counters.component);
            doc.subprocesses = usage == null ? 0 : usage.processes();
            doc.stateMb = stateSizeOf(r);
            doc.hostNet = hostNet;
            doc.processCpuMs = workerMs;
            try {
                sink.write(config.root + "/" + topologyId + "/" + r.counters.taskId, doc.toBytes());
                r.previous = now;
                written++;
                // A failed write keeps the previous snapshot: the next window covers both periods.
            } catch (Exception e) {
                problem("write", "writing windows to " + sink + " failed (" + e + "); retrying next period",
                    null);
            }
        }
        lastWindowEndMs = endMs;
        if (written == registered.size() && !registered.isEmpty()) {
            cleared("write", "writing windows to " + sink + " works again");
        }
    }

    private Map<String, SubprocessCpu.Usage> sampleSubprocesses() {
        try {
            return subprocessCpu.sample(signatures);
        } catch (RuntimeException e) {
            problem("subprocess", "reading subprocess CPU failed: " + e, null);
            return Map.of();
        }
    }

    /**
     * A component's subprocess CPU, split over its tasks in this worker by the tuples each executed or
     * emitted in the window (equally when none did): one subprocess per task, but which is whose cannot be
     * seen from outside.
     */
    private static Map<Registered, Double> shareSubprocessCpu(List<Registered> registered,
                                                              Map<Registered, TaskCounters.Snapshot> now,
                                                              Map<String, SubprocessCpu.Usage> usage) {
        Map<Registered, Double> share = new HashMap<>();
        Map<String, List<Registered>> byComponent = new HashMap<>();
        for (Registered r : registered) {
            byComponent.computeIfAbsent(r.counters.component, c -> new ArrayList<>()).add(r);
        }
        usage.forEach((component, use) -> {
            List<Registered> members = byComponent.getOrDefault(component, List.of());
            if (members.isEmpty()) {
                return;
            }
            double totalWeight = 0;
            Map<Registered, Double> weight = new HashMap<>();
            for (Registered r : members) {
                TaskCounters.Snapshot s = now.get(r);
                double w = (s.executed - r.previous.executed) + (s.emitted - r.previous.emitted);
                weight.put(r, w);
                totalWeight += w;
            }
            for (Registered r : members) {
                double fraction = totalWeight > 0 ? weight.get(r) / totalWeight : 1.0 / members.size();
                share.put(r, use.cpuMs() * fraction);
            }
        });
        return share;
    }

    private static Double stateSizeOf(Registered r) {
        if (r.stateSize == null) {
            return null;
        }
        try {
            Object value = r.stateSize.get();
            if (value instanceof Supplier) {
                value = ((Supplier<?>) value).get();
            }
            return value instanceof Number ? ((Number) value).doubleValue() : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private void problem(String kind, String message, Throwable cause) {
        synchronized (lastProblem) {
            if (message.equals(lastProblem.get(kind))) {
                return;
            }
            lastProblem.put(kind, message);
        }
        if (cause != null) {
            LOG.warn("storm-planner metrics: {} (logged once until it changes)", message, cause);
        } else {
            LOG.warn("storm-planner metrics: {} (logged once until it changes)", message);
        }
    }

    private void cleared(String kind, String message) {
        synchronized (lastProblem) {
            if (lastProblem.remove(kind) == null) {
                return;
            }
        }
        LOG.info("storm-planner metrics: {}", message);
    }

    int taskCount() {
        return tasks.size();
    }
}
