package org.stormplanner.scheduler;

import java.net.SocketTimeoutException;
import org.apache.thrift.TException;
import org.apache.thrift.transport.TTransportException;
import org.stormplanner.thrift.PlannerError;

/**
 * Why a topology was handed to Storm's DefaultScheduler instead of the planner. Each cause has its own
 * meter, {@code planner.fallbacks.<name>}.
 */
enum FallbackCause {
    /** The service refused or dropped the connection (not running, wrong address, crashed mid-call). */
    UNREACHABLE("unreachable"),
    /** The service did not answer within planner.service.timeout.ms. */
    TIMEOUT("timeout"),
    /** The plan named unknown executors or slots, missed executors, or used slots it may not use. */
    INVALID_PLAN("invalid_plan"),
    /** The service answered with an error (for the request or for this topology) or with garbage. */
    PLANNER_ERROR("planner_error"),
    /** A fault in the plugin itself. */
    INTERNAL("internal");

    private final String metricName;

    FallbackCause(String metricName) {
        this.metricName = metricName;
    }

    String metricName() {
        return metricName;
    }

    /** Classifies a failed call to the planner service. */
    static FallbackCause ofCallFailure(Throwable failure) {
        if (failure instanceof PlannerError) {
            return PLANNER_ERROR;
        }
        if (hasCause(failure, SocketTimeoutException.class)) {
            return TIMEOUT;
        }
        if (failure instanceof TTransportException) {
            switch (((TTransportException) failure).getType()) {
                case TTransportException.TIMED_OUT:
                    return TIMEOUT;
                case TTransportException.CORRUPTED_DATA:
                    return PLANNER_ERROR;
                default:
                    return UNREACHABLE;
            }
        }
        if (failure instanceof TException) {
            // TProtocolException (an answer that does not parse), TApplicationException (the service failed).
            return PLANNER_ERROR;
        }
        return INTERNAL;
    }

    private static boolean hasCause(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }
}
