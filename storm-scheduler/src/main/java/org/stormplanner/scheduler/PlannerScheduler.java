package org.stormplanner.scheduler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.thrift.TException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.stormplanner.thrift.ErrorKind;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.TopologyPlan;

/**
 * Nimbus' scheduler, with the placement decided by the storm-planner service.
 *
 * <p>Each round, the topologies that have executors without a slot (new, rebalanced, or which lost workers)
 * are sent to the planner in one request. Each returned plan is validated against the live cluster and
 * applied. Everything that cannot be planned (service unreachable or too slow, an error, an invalid plan, a
 * fault in this plugin) is scheduled by Storm's DefaultScheduler in the same round, with the reason in the
 * topology's status, a log line the first time that reason shows up, and a mark on a meter.
 *
 * <p>Topologies that have all their executors placed are left alone, even when they run fewer workers than
 * {@code topology.workers}: the planner may pack a topology into fewer slots on purpose. Every
 * {@code planner.replan.interval.secs} such a topology is offered to the planner again ({@link Replanning}):
 * the service answers with its current placement (nothing happens) or moves some executors, and only the
 * workers whose executors change restart; an answer may ask for the topology again sooner (a drain before a
 * move, {@link Replanning}). A re-planning offer that fails in any way leaves the topology as
 * it is: it is running, there is nothing to fall back from. Topologies with
 * {@code planner.enabled: false} are placed by DefaultScheduler only. See {@link PlannerConfig} for the keys.
 *
 * <p>{@link #schedule} never throws: an exception escaping it makes Nimbus exit.
 */
public class PlannerScheduler implements IScheduler {

    private static final Logger LOG = LoggerFactory.getLogger(PlannerScheduler.class);

    /** The subject under which {@link OutcomeLog} remembers the service's own state. */
    private static final String SERVICE = "planner service";

    private final PlanValidator validator = new PlanValidator();
    private final OutcomeLog outcomes = new OutcomeLog();
    private final AtomicLong requestCounter = new AtomicLong();
    private final Replanning replanning = new Replanning(System::currentTimeMillis);
    private final long startedAtMs = System.currentTimeMillis();

    private PlannerConfig config;
    private PlanRequestBuilder requests;
    private PlannerClient client;
    /** Replaced by one on Nimbus' registry in prepare(); this one only keeps an unprepared plugin safe. */
    private PlannerMetrics metrics = new PlannerMetrics(new StormMetricsRegistry());

    @Override
    public void prepare(Map<String, Object> conf, StormMetricsRegistry metricsRegistry) {
        config = PlannerConfig.fromStormConf(conf);
        requests = new PlanRequestBuilder(config);
        client = new PlannerClient(config.serviceHost(), config.servicePort(), config.timeoutMs(), config.token());
        metrics = new PlannerMetrics(metricsRegistry == null ? new StormMetricsRegistry() : metricsRegistry);
        LOG.info("storm-planner scheduler ready: {}", config);
    }

    @Override
    public Map<String, Map<String, Double>> config() {
        return new HashMap<>();
    }

    @Override
    public void schedule(Topologies topologies, Cluster cluster) {
        try {
            if (config == null) {
                throw new IllegalStateException("schedule() called before prepare()");
            }
            scheduleRound(topologies, cluster);
        } catch (Throwable fault) {
            scheduleAfterFault(topologies, cluster, fault);
        }
    }

    @Override
    public void cleanup() {
        outcomes.clear();
    }

    /** The normal round: plan what needs it, apply what is valid, fall back for the rest. */
    private void scheduleRound(Topologies topologies, Cluster cluster) {
        TopologySelection selection = TopologySelection.of(topologies, cluster, replanning::isDue);
        Map<TopologyDetails, Fallback> fallbacks = new LinkedHashMap<>();
        if (!selection.toPlan.isEmpty() || !selection.toReplan.isEmpty()) {
            planAndApply(selection.toPlan, selection.toReplan, cluster, fallbacks);
        }

        List<TopologyDetails> forDefault = new ArrayList<>(selection.plannerDisabled);
        forDefault.addAll(fallbacks.keySet());
        DefaultFallback.schedule(forDefault, cluster);

        for (TopologyDetails td : selection.plannerDisabled) {
            setStatus(cluster, td.getId(),
                "Scheduled by DefaultScheduler (" + PlannerConfig.ENABLED + " is false for this topology)");
        }
        fallbacks.forEach((td, fallback) -> recordFallback(td, fallback, cluster));
        forgetTopologiesThatAreGone(topologies);
    }

    private void planAndApply(List<TopologyDetails> toPlan, List<TopologyDetails> toReplan, Cluster cluster,
                              Map<TopologyDetails, Fallback> fallbacks) {
        List<TopologyDetails> offered = new ArrayList<>(toPlan);
        offered.addAll(toReplan);
        toReplan.forEach(td -> replanning.touched(td.getId()));
        metrics.replansOffered(toReplan.size());
        // Built outside the call's try: a fault here is the plugin's, handled by schedule() as internal.
        PlanRequest request = requests.build(nextRequestId(), offered, cluster);
        PlanResponse response;
        long start = System.nanoTime();
        try {
            response = requestPlan(request);
        } catch (Throwable failure) {
            Fallback fallback = Fallback.ofCallFailure(failure, client.address(), config.timeoutMs());
            logServiceFailure(fallback, toPlan, failure);
            toPlan.forEach(td -> fallbacks.put(td, fallback.silently()));
            return;
        } finally {
            metrics.roundTrip(System.nanoTime() - start);
        }
        if (outcomes.changed(SERVICE, "ok")) {
            LOG.info("storm-planner: planner service at {} answers", client.address());
        }

        Map<String, TopologyPlan> plans = new HashMap<>();
        if (response != null && response.getPlans() != null) {
            for (TopologyPlan plan : response.getPlans()) {
                if (plan != null && plan.getTopology_id() != null) {
                    plans.put(plan.getTopology_id(), plan);
                    if (plan.isSetError()) {
                        metrics.planError(plan.getError().getKind());
                    }
                }
            }
        }
        for (TopologyDetails td : toPlan) {
            TopologyPlan plan = plans.get(td.getId());
            if (isInfeasible(plan) && !PlannerConfig.isInfeasibleFallbackFor(td.getConf())) {
                leaveUnscheduled(td, plan, cluster);
                continue;
            }
            Fallback fallback = applyOne(td, plan, cluster);
            if (fallback != null) {
                fallbacks.put(td, fallback);
            } else {
                replanning.touched(td.getId());
            }
        }
        for (TopologyDetails td : toReplan) {
            replanOne(td, plans.get(td.getId()), cluster);
        }
        for (TopologyDetails td : offered) {
            TopologyPlan plan = plans.get(td.getId());
            if (plan != null && plan.isSetReoffer_ms()) {
                replanning.reofferIn(td.getId(), plan.getReoffer_ms());
            }
        }
    }

    /**
     * Applies a re-plan of a running topology when it moves something. The current placement as answer (the
     * usual case) costs nothing: no slot is freed, no status or log line changes. Anything wrong with the
     * answer is logged once and the topology keeps running where it is.
     */
    private void replanOne(TopologyDetails td, TopologyPlan plan, Cluster cluster) {
        String subject = td.getId() + " re-plan";
        String problem = null;
        Map<WorkerSlot, List<ExecutorDetails>> slots = null;
        if (plan == null) {
            problem = "the planner returned no plan";
        } else if (plan.isSetError()) {
            problem = "the planner failed: " + plan.getError().getKind() + ": " + plan.getError().getMessage();
        } else {
            try {
                slots = validator.validate(td, plan, cluster);
            } catch (InvalidPlanException invalid) {
                problem = "invalid plan: " + invalid.getMessage();
                metrics.invalidPlan();
            }
        }
        if (problem != null) {
            metrics.replanFailed();
            if (outcomes.changed(subject, problem)) {
                LOG.warn("storm-planner: re-planning {} failed, it keeps its placement: {}", td.getId(),
                    logText(problem));
            }
            return;
        }
        outcomes.changed(subject, "ok");
        if (Replanning.keepsCurrentPlacement(td, slots, cluster)) {
            return;
        }
        int moved = PlanApplier.apply(td, slots, cluster);
        String algorithm = plan.getAlgorithm() != null ? plan.getAlgorithm() : config.algorithmFor(td.getConf());
        String status = "Re-planned by storm-planner (algorithm " + algorithm + ", " + moved
            + " executors moved, now on " + slots.size() + " slots)";
        setStatus(cluster, td.getId(), status);
        metrics.replanApplied(moved);
        LOG.info("storm-planner: {}: {}; notes: {}", td.getId(), logText(status), logText(plan.getNotes()));
    }

    private static boolean isInfeasible(TopologyPlan plan) {
        return plan != null && plan.isSetError() && plan.getError().getKind() == ErrorKind.INFEASIBLE;
    }

    /**
     * No placement fits the supervisors' free declared resources: as Storm's ResourceAwareScheduler does, the
     * topology stays unscheduled with a status saying why (it is offered again next round, when capacity
     * may have freed up), rather than overloading a supervisor.
     */
    private void leaveUnscheduled(TopologyDetails td, TopologyPlan plan, Cluster cluster) {
        String reason = plan.getError().getMessage();
        setStatus(cluster, td.getId(), "Not scheduled (INFEASIBLE): " + reason + "; set "
            + PlannerConfig.INFEASIBLE_FALLBACK + ": true to let DefaultScheduler place it anyway");
        metrics.infeasible();
        if (outcomes.changed(td.getId(), "infeasible: " + reason)) {
            LOG.warn("storm-planner: {} left unscheduled: {}", td.getId(), logText(reason));
        }
    }

    /** Validates and applies one topology's plan; returns why it could not, or null when it did. */
    private Fallback applyOne(TopologyDetails td, TopologyPlan plan, Cluster cluster) {
        if (plan == null) {
            return new Fallback(FallbackCause.PLANNER_ERROR, "the planner returned no plan for this topology");
        }
        if (plan.isSetError()) {
            return new Fallback(FallbackCause.PLANNER_ERROR, "the planner failed: "
                + plan.getError().getKind() + ": " + plan.getError().getMessage());
        }
        Map<WorkerSlot, List<ExecutorDetails>> slots;
        try {
            slots = validator.validate(td, plan, cluster);
        } catch (InvalidPlanException invalid) {
            metrics.invalidPlan();
            return new Fallback(FallbackCause.INVALID_PLAN, "invalid plan: " + invalid.getMessage());
        }
        try {
            int moved = PlanApplier.apply(td, slots, cluster);
            recordSuccess(td, plan, slots, moved, cluster);
            return null;
        } catch (RuntimeException e) {
            LOG.error("storm-planner: applying the plan of {} failed", td.getId(), e);
            return new Fallback(FallbackCause.INTERNAL, "applying the plan failed: " + e);
        }
    }

    /**
     * Something threw out of the round. Whatever is still unplaced goes to DefaultScheduler; if even that
     * throws, the round is given up (Nimbus tries again next round) rather than taking Nimbus down.
     */
    private void scheduleAfterFault(Topologies topologies, Cluster cluster, Throwable fault) {
        try {
            Fallback fallback = new Fallback(FallbackCause.INTERNAL, "internal error in storm-planner: " + fault);
            if (outcomes.changed(SERVICE, fallback.outcome())) {
                LOG.error("storm-planner: {}; falling back to DefaultScheduler", logText(fallback.reason), fault);
            }
            TopologySelection selection = TopologySelection.of(topologies, cluster);
            List<TopologyDetails> rest = new ArrayList<>(selection.plannerDisabled);
            rest.addAll(selection.toPlan);
            DefaultFallback.schedule(rest, cluster);
            for (TopologyDetails td : selection.toPlan) {
                recordFallback(td, fallback.silently(), cluster);
            }
        } catch (Throwable secondFault) {
            LOG.error("storm-planner: DefaultScheduler fallback failed too; nothing scheduled this round",
                secondFault);
        }
    }

    private void recordSuccess(TopologyDetails td, TopologyPlan plan, Map<WorkerSlot, List<ExecutorDetails>> slots,
                               int moved, Cluster cluster) {
        int executors = slots.values().stream().mapToInt(List::size).sum();
        String algorithm = plan.getAlgorithm() != null ? plan.getAlgorithm() : config.algorithmFor(td.getConf());
        String solve = plan.isSetSolve_ms() ? ", solve " + Math.round(plan.getSolve_ms()) + " ms" : "";
        String status = "Planned by storm-planner (algorithm " + algorithm + ", " + executors + " executors on "
            + slots.size() + " slots" + solve + ")";
        setStatus(cluster, td.getId(), status);
        metrics.planApplied();
        outcomes.changed(td.getId(), "planned");
        LOG.info("storm-planner: {}: {}; {} executors changed slot", td.getId(), logText(status), moved);
    }

    private void recordFallback(TopologyDetails td, Fallback fallback, Cluster cluster) {
        setStatus(cluster, td.getId(), "Fell back to DefaultScheduler (" + fallback.cause.metricName() + "): "
            + fallback.reason);
        metrics.fallback(fallback.cause);
        if (outcomes.changed(td.getId(), fallback.outcome()) && fallback.logged) {
            LOG.warn("storm-planner: {} fell back to DefaultScheduler ({}): {}", td.getId(),
                fallback.cause.metricName(), logText(fallback.reason));
        }
    }

    private void logServiceFailure(Fallback fallback, List<TopologyDetails> toPlan, Throwable failure) {
        if (outcomes.changed(SERVICE, fallback.outcome())) {
            String ids = toPlan.stream().map(TopologyDetails::getId).collect(Collectors.joining(", "));
            LOG.warn("storm-planner: {}; {} (logged once until the cause changes)", logText(fallback.reason),
                ids.isEmpty() ? "running topologies keep their placement" : "DefaultScheduler places " + ids);
            if (fallback.cause == FallbackCause.INTERNAL) {
                LOG.warn("storm-planner: cause of the failed call", failure);
            }
        }
    }

    private void forgetTopologiesThatAreGone(Topologies topologies) {
        Set<String> subjects = topologies.getTopologies().stream().map(TopologyDetails::getId)
            .collect(Collectors.toSet());
        replanning.retainOnly(subjects);
        Set<String> withReplans = subjects.stream().map(id -> id + " re-plan").collect(Collectors.toSet());
        withReplans.addAll(subjects);
        withReplans.add(SERVICE);
        outcomes.retainOnly(withReplans);
    }

    /** Every status this plugin sets goes through here: cut to {@value PlannerConfig#STATUS_MAX_CHARS}. */
    private void setStatus(Cluster cluster, String topologyId, String status) {
        cluster.setStatus(topologyId, config != null ? config.status(status)
            : Texts.cap(status, PlannerConfig.DEFAULT_STATUS_MAX_CHARS));
    }

    /** Text from the service for one log line: cut to {@value PlannerConfig#LOG_MAX_CHARS}. */
    private String logText(Object text) {
        return config != null ? config.forLog(text) : Texts.cap(text, PlannerConfig.DEFAULT_LOG_MAX_CHARS);
    }

    /** One call to the planner service. Protected so a test can watch the exchange; nothing else overrides it. */
    protected PlanResponse requestPlan(PlanRequest request) throws TException {
        return client.plan(request);
    }

    private String nextRequestId() {
        return "nimbus-" + startedAtMs + "-" + requestCounter.incrementAndGet();
    }
}
