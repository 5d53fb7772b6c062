package org.stormplanner.scheduler.bench;

import org.apache.thrift.TException;
import org.stormplanner.scheduler.PlannerScheduler;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.TopologyPlan;

/**
 * The real {@link PlannerScheduler}, timing its calls to the service: how long the plugin waited for the
 * service (Thrift serialisation, loopback transport and the service's work) and the planners' own solve
 * times as the service reports them. A round's time minus the call time is what the plugin itself costs:
 * building the request, validating and applying the plans, falling back.
 */
public class TimedPlannerScheduler extends PlannerScheduler {

    private long callNanos;
    private double solveMs;
    private int calls;

    @Override
    protected PlanResponse requestPlan(PlanRequest request) throws TException {
        long start = System.nanoTime();
        try {
            PlanResponse response = super.requestPlan(request);
            if (response != null && response.getPlans() != null) {
                for (TopologyPlan plan : response.getPlans()) {
                    solveMs += plan.isSetSolve_ms() ? plan.getSolve_ms() : 0.0;
                }
            }
            return response;
        } finally {
            callNanos += System.nanoTime() - start;
            calls++;
        }
    }

    /** Forgets the times measured so far (call before a round). */
    public void resetTimes() {
        callNanos = 0;
        solveMs = 0;
        calls = 0;
    }

    /** Time spent waiting for the service since the last reset, in ms. */
    public double callMs() {
        return callNanos / 1e6;
    }

    /** Sum of the planners' solve times the service reported since the last reset, in ms. */
    public double solveMs() {
        return solveMs;
    }

    /** Planning calls since the last reset. */
    public int calls() {
        return calls;
    }
}
