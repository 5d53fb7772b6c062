package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;

/**
 * Which topologies a scheduling round concerns: those the planner should place (planner enabled, some
 * executors without a slot), those that opted out and need scheduling, and fully placed planner topologies
 * offered for re-planning this round. Other fully placed planner topologies are in no list: they are left
 * alone, even with fewer workers than topology.workers.
 */
final class TopologySelection {

    /** Planner-enabled topologies with executors that have no slot. */
    final List<TopologyDetails> toPlan = new ArrayList<>();
    /** Topologies that opted out and need scheduling as DefaultScheduler sees it. */
    final List<TopologyDetails> plannerDisabled = new ArrayList<>();
    /** Fully placed planner topologies offered for re-planning: the planner may move some executors. */
    final List<TopologyDetails> toReplan = new ArrayList<>();

    private TopologySelection() {
    }

    static TopologySelection of(Topologies topologies, Cluster cluster) {
        return of(topologies, cluster, td -> false);
    }

    /** As above; {@code replanDue} says which fully placed planner topologies to offer for re-planning. */
    static TopologySelection of(Topologies topologies, Cluster cluster, Predicate<TopologyDetails> replanDue) {
        TopologySelection selection = new TopologySelection();
        List<TopologyDetails> all = new ArrayList<>(topologies.getTopologies());
        all.sort(Comparator.comparing(TopologyDetails::getId));
        for (TopologyDetails td : all) {
            if (!PlannerConfig.isEnabledFor(td.getConf())) {
                if (cluster.needsScheduling(td)) {
                    selection.plannerDisabled.add(td);
                }
            } else if (!cluster.getUnassignedExecutors(td).isEmpty()) {
                selection.toPlan.add(td);
            } else if (replanDue.test(td)) {
                selection.toReplan.add(td);
            }
        }
        return selection;
    }
}
