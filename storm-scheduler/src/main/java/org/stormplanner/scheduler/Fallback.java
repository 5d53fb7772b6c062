package org.stormplanner.scheduler;

import org.stormplanner.thrift.PlannerError;

/** Why one topology goes to DefaultScheduler: the cause (for the meter) and a reason a person can act on. */
final class Fallback {

    final FallbackCause cause;
    final String reason;
    /** False when the cause was already logged for the whole request. */
    final boolean logged;

    Fallback(FallbackCause cause, String reason) {
        this(cause, reason, true);
    }

    private Fallback(FallbackCause cause, String reason, boolean logged) {
        this.cause = cause;
        this.reason = reason;
        this.logged = logged;
    }

    Fallback silently() {
        return new Fallback(cause, reason, false);
    }

    /** What OutcomeLog compares: a new cause or reason is logged, a repeated one is not. */
    String outcome() {
        return cause.metricName() + ": " + reason;
    }

    static Fallback ofCallFailure(Throwable failure, String address, int timeoutMs) {
        FallbackCause cause = FallbackCause.ofCallFailure(failure);
        switch (cause) {
            case UNREACHABLE:
                return new Fallback(cause, "planner service at " + address + " unreachable ("
                    + rootMessage(failure) + ")");
            case TIMEOUT:
                return new Fallback(cause, "planner service at " + address + " did not answer within "
                    + timeoutMs + " ms");
            case PLANNER_ERROR:
                if (failure instanceof PlannerError) {
                    PlannerError error = (PlannerError) failure;
                    return new Fallback(cause, "planner service at " + address + " rejected the request: "
                        + error.getKind() + ": " + error.getMessage());
                }
                return new Fallback(cause, "planner service at " + address + " answered with an error: "
                    + failure);
            default:
                return new Fallback(cause, "calling the planner service at " + address + " failed: " + failure);
        }
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    }
}
