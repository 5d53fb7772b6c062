package org.stormplanner.scheduler;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.thrift.TException;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.TopologyPlan;

/**
 * The real PlannerScheduler, plus a record of what it asked the planner service and what the service
 * answered, so a LocalCluster test can compare Nimbus' assignment with the plan. Nimbus creates the
 * scheduler by class name inside the test JVM, hence the static record.
 */
public class ObservedPlannerScheduler extends PlannerScheduler {

    static final List<PlanRequest> REQUESTS = new CopyOnWriteArrayList<>();
    static final Map<String, TopologyPlan> PLANS = new ConcurrentHashMap<>();

    @Override
    protected PlanResponse requestPlan(PlanRequest request) throws TException {
        REQUESTS.add(request.deepCopy());
        PlanResponse response = super.requestPlan(request);
        if (response != null && response.getPlans() != null) {
            for (TopologyPlan plan : response.getPlans()) {
                PLANS.put(plan.getTopology_id(), plan.deepCopy());
            }
        }
        return response;
    }
}
