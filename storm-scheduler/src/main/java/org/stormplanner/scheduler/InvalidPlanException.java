package org.stormplanner.scheduler;

/** A plan that cannot be applied to the live cluster; the message says why, for the topology's status. */
final class InvalidPlanException extends Exception {

    private static final long serialVersionUID = 1L;

    InvalidPlanException(String reason) {
        super(reason);
    }
}
