package org.stormplanner.metrics;

import java.util.Map;
import org.apache.storm.hooks.ITaskHook;
import org.apache.storm.hooks.info.BoltAckInfo;
import org.apache.storm.hooks.info.BoltExecuteInfo;
import org.apache.storm.hooks.info.BoltFailInfo;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.hooks.info.SpoutAckInfo;
import org.apache.storm.hooks.info.SpoutFailInfo;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.tuple.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * storm-planner's task hook: counts what every task sends to which task, what it executes and how fast,
 * and lets the worker's {@link WorkerMetricsPublisher} write one window per task per statistics period to
 * ZooKeeper, where the planner service reads them.
 *
 * <p>Switched on per topology with {@code topology.auto.task.hooks: ["org.stormplanner.metrics.MetricsTaskHook"]}
 * ({@code storm-planner submit} does it and puts this class into the topology jar). Storm creates one
 * instance per task, Java and multilang components alike, system components (__acker) included; the system
 * task (-1) is skipped. Settings: {@link MetricsConfig}.
 *
 * <p>The callbacks only bump counters; they never block and never throw into the task: a fault switches the
 * hook off for that task (logged once) rather than failing the tuple or the worker.
 */
public class MetricsTaskHook implements ITaskHook {

    private static final Logger LOG = LoggerFactory.getLogger(MetricsTaskHook.class);

    // Volatile: a shell bolt calls the hook from its reader thread too; switchOff must be seen there.
    private volatile TaskCounters counters;
    private volatile WorkerMetricsPublisher publisher;

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context) {
        try {
            int taskId = context.getThisTaskId();
            MetricsConfig config = new MetricsConfig(conf);
            if (!config.enabled || taskId < 0) {
                return;
            }
            String topologyId = context.getStormId();
            Integer port = context.getThisWorkerPort();
            counters = new TaskCounters(taskId, context.getThisComponentId());
            publisher = WorkerMetricsPublisher.forWorker(topologyId, port == null ? -1 : port,
                () -> new WorkerMetricsPublisher(topologyId + ":" + port, topologyId, config,
                    WorkerIdentity.of(conf, context.getAssignmentId(), port), new ZooKeeperSink(config, conf),
                    SubprocessCpu.signaturesOf(context.getRawTopology())));
            publisher.register(counters, () -> context.getExecutorData(WorkerMetricsPublisher.STATE_SIZE_KEY));
        } catch (Throwable t) {
            // A broken hook must not take the task down: it just publishes nothing.
            LOG.warn("storm-planner metrics: hook disabled for task {}: {}", safeTaskId(context), t.toString(), t);
            counters = null;
            publisher = null;
        }
    }

    private static Object safeTaskId(TopologyContext context) {
        try {
            return context.getThisTaskId();
        } catch (RuntimeException e) {
            return "?";
        }
    }

    @Override
    public void cleanup() {
        if (publisher != null && counters != null) {
            publisher.unregister(counters.taskId);
        }
        publisher = null;
    }

    @Override
    public void emit(EmitInfo info) {
        TaskCounters c = counters;
        if (c != null && info != null) {
            try {
                c.emitted(info.stream, info.outTasks, TupleSizes.estimate(info.values));
            } catch (RuntimeException fault) {
                switchOff(c, fault);
            }
        }
    }

    @Override
    public void boltExecute(BoltExecuteInfo info) {
        TaskCounters c = counters;
        if (c != null && info != null && info.tuple != null) {
            try {
                Tuple tuple = info.tuple;
                long latency = info.executeLatencyMs == null ? -1 : info.executeLatencyMs;
                c.executed(tuple.getSourceStreamId(), tuple.getSourceTask(), latency);
            } catch (RuntimeException fault) {
                switchOff(c, fault);
            }
        }
    }

    @Override
    public void boltAck(BoltAckInfo info) {
        TaskCounters c = counters;
        if (c != null && info != null) {
            c.boltAcked(info.processLatencyMs == null ? -1 : info.processLatencyMs);
        }
    }

    @Override
    public void boltFail(BoltFailInfo info) {
        TaskCounters c = counters;
        if (c != null) {
            c.boltFailed();
        }
    }

    @Override
    public void spoutAck(SpoutAckInfo info) {
        TaskCounters c = counters;
        if (c != null && info != null) {
            c.spoutAcked(info.completeLatencyMs == null ? -1 : info.completeLatencyMs);
        }
    }

    @Override
    public void spoutFail(SpoutFailInfo info) {
        TaskCounters c = counters;
        if (c != null) {
            c.spoutFailed();
        }
    }

    /** Counting must never cost a tuple: on any fault this task stops counting (and publishing). */
    private void switchOff(TaskCounters c, RuntimeException fault) {
        counters = null;
        LOG.warn("storm-planner metrics: hook switched off for task {} after a fault", c.taskId, fault);
        if (publisher != null) {
            publisher.unregister(c.taskId);
            publisher = null;
        }
    }
}
