package org.stormplanner.scheduler;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * Remembers the last outcome of each subject (a topology, the planner service) so that a failure which
 * repeats every scheduling round is logged once, and again only when it changes or clears.
 */
final class OutcomeLog {

    /** Outcomes are kept cut to this length: they hold the service's messages, which can be of any length. */
    static final int MAX_OUTCOME_CHARS = PlannerConfig.DEFAULT_LOG_MAX_CHARS;

    private final Map<String, String> last = new HashMap<>();

    /** Records the outcome; true when it differs from the subject's previous one. */
    boolean changed(String subject, String outcome) {
        String kept = Texts.cap(outcome, MAX_OUTCOME_CHARS);
        return !kept.equals(last.put(subject, kept));
    }

    /** The subject's previous outcome, or null. */
    String last(String subject) {
        return last.get(subject);
    }

    /** Forgets every other subject (topologies that are gone), so the map does not grow forever. */
    void retainOnly(Collection<String> subjects) {
        last.keySet().retainAll(subjects);
    }

    void clear() {
        last.clear();
    }
}
