package org.stormplanner.scheduler;

import java.util.Comparator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.storm.scheduler.ExecutorDetails;

/**
 * Executor names on the wire: {@code "[start-end]"}, the task range Storm prints in its UI and logs
 * (ExecutorDetails.toString() prints "[start, end]" instead, so it is not used).
 */
final class ExecutorIds {

    /**
     * Tolerates blanks inside the brackets, and negative tasks (Storm's per-worker system executor is
     * [-1 -1], though Nimbus never schedules it); anything else is not an executor name.
     */
    private static final Pattern ID = Pattern.compile("\\[\\s*(-?\\d+)\\s*-\\s*(-?\\d+)\\s*]");

    /** Orders executors by task range, the order Storm lists them in. */
    static final Comparator<ExecutorDetails> BY_TASKS =
        Comparator.comparingInt(ExecutorDetails::getStartTask).thenComparingInt(ExecutorDetails::getEndTask);

    private ExecutorIds() {
    }

    static String of(ExecutorDetails executor) {
        return "[" + executor.getStartTask() + "-" + executor.getEndTask() + "]";
    }

    /**
     * The executor an id names, or null when the id is not of the form "[start-end]". Distinct strings
     * may name the same executor ("[3-3]", "[ 3-3]"); callers compare parsed executors, not strings.
     */
    static ExecutorDetails parse(String id) {
        if (id == null) {
            return null;
        }
        Matcher m = ID.matcher(id.trim());
        if (!m.matches()) {
            return null;
        }
        try {
            return new ExecutorDetails(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        } catch (NumberFormatException tooLarge) {
            return null;
        }
    }
}
