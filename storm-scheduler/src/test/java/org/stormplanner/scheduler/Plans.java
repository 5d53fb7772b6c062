package org.stormplanner.scheduler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.stormplanner.thrift.ErrorKind;
import org.stormplanner.thrift.PlanError;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.TopologyPlan;
import org.stormplanner.thrift.WorkerSlot;

/** Planner answers, written the way a test reads them. */
final class Plans {

    private Plans() {
    }

    /** A plan: ("[1-1]", "sup-a:6700", ...). */
    static TopologyPlan plan(String topologyId, String algorithm, String... executorsAndSlots) {
        Map<String, WorkerSlot> assignments = new HashMap<>();
        for (int i = 0; i < executorsAndSlots.length; i += 2) {
            assignments.put(executorsAndSlots[i], slot(executorsAndSlots[i + 1]));
        }
        return new TopologyPlan(topologyId, algorithm, assignments);
    }

    static TopologyPlan failed(String topologyId, ErrorKind kind, String message) {
        return new TopologyPlan(topologyId, "even", new HashMap<>()).setError(new PlanError(kind, message));
    }

    static PlanResponse response(String requestId, TopologyPlan... plans) {
        return new PlanResponse(requestId, List.of(plans));
    }

    static WorkerSlot slot(String nodeAndPort) {
        int colon = nodeAndPort.lastIndexOf(':');
        return new WorkerSlot(nodeAndPort.substring(0, colon), Integer.parseInt(nodeAndPort.substring(colon + 1)));
    }
}
