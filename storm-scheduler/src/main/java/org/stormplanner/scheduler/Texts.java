package org.stormplanner.scheduler;

/**
 * Text from the planner service (error messages, notes, algorithm names) cut to a length before it reaches
 * a topology's status or Nimbus' log: the service is another process, and what it says can be of any length.
 */
final class Texts {

    private Texts() {
    }

    /**
     * {@code text} when it has at most {@code maxChars} characters; else its first {@code maxChars}, an
     * ellipsis and the original length, e.g. {@code "abc… (1048576 chars)"}. Never splits a surrogate pair.
     */
    static String cap(String text, int maxChars) {
        if (text == null || text.length() <= maxChars) {
            return text;
        }
        int end = maxChars;
        if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + "\u2026 (" + text.length() + " chars)";
    }

    /** {@link #cap} of {@code String.valueOf(value)}: for lists and other objects logged as text. */
    static String cap(Object value, int maxChars) {
        return cap(String.valueOf(value), maxChars);
    }
}
