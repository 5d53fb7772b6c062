package org.stormplanner.scheduler.bench;

import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.Topologies;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.thrift.TException;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.stormplanner.scheduler.PlannerScheduler;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.TopologyPlan;

/**
 * The real {@link PlannerScheduler}, timing the parts of a round: before the call to the service (choosing the
 * topologies, building the request), the call itself (Thrift serialisation both ways, loopback transport and
 * the service's work, of which the planners report their solve time), and after it (validating and applying
 * the plans, DefaultScheduler for the fallbacks, statuses and logging).
 *
 * <p>With {@code -Dbench.dump.requests=DIR} every request is also written to DIR ({@code request-N.thrift},
 * Thrift binary protocol): what {@code python -m storm_planner_bench.common.profile_request} replays in process.
 */
public class TimedPlannerScheduler extends PlannerScheduler {

    private long roundStart;
    private long callStart;
    private long lastCallNanos;
    private long beforeCallNanos;
    private long callNanos;
    private long afterCallNanos;
    private double solveMs;
    private static final AtomicInteger DUMPED = new AtomicInteger();

    @Override
    public void schedule(Topologies topologies, Cluster cluster) {
        roundStart = System.nanoTime();
        callStart = 0;
        try {
            super.schedule(topologies, cluster);
        } finally {
            long end = System.nanoTime();
            if (callStart == 0) {
                beforeCallNanos += end - roundStart;
            } else {
                afterCallNanos += end - (callStart + lastCallNanos);
            }
        }
    }

    @Override
    protected PlanResponse requestPlan(PlanRequest request) throws TException {
        long dumpStart = System.nanoTime();
        dump(request);
        roundStart += System.nanoTime() - dumpStart;  // writing the file is not the plugin's time
        callStart = System.nanoTime();
        beforeCallNanos += callStart - roundStart;
        try {
            PlanResponse response = super.requestPlan(request);
            if (response != null && response.getPlans() != null) {
                for (TopologyPlan plan : response.getPlans()) {
                    solveMs += plan.isSetSolve_ms() ? plan.getSolve_ms() : 0.0;
                }
            }
            return response;
        } finally {
            lastCallNanos = System.nanoTime() - callStart;
            callNanos += lastCallNanos;
        }
    }

    /** Forgets the times measured so far (call before a round). */
    public void resetTimes() {
        beforeCallNanos = 0;
        callNanos = 0;
        afterCallNanos = 0;
        solveMs = 0;
    }

    /** Time in the plugin before the call since the last reset (topology selection, request building), in ms. */
    public double beforeCallMs() {
        return beforeCallNanos / 1e6;
    }

    /** Time spent waiting for the service since the last reset, in ms. */
    public double callMs() {
        return callNanos / 1e6;
    }

    /** Time in the plugin after the call since the last reset (validation, application, fallbacks), in ms. */
    public double afterCallMs() {
        return afterCallNanos / 1e6;
    }

    /** Sum of the planners' solve times the service reported since the last reset, in ms. */
    public double solveMs() {
        return solveMs;
    }

    private void dump(PlanRequest request) throws TException {
        String dir = System.getProperty("bench.dump.requests");
        if (dir == null) {
            return;
        }
        try {
            Path file = Path.of(dir, "request-" + DUMPED.incrementAndGet() + ".thrift");
            Files.createDirectories(file.getParent());
            Files.write(file, new TSerializer(new TBinaryProtocol.Factory()).serialize(request));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
