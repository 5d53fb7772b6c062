package org.stormplanner.scheduler;

import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.shade.net.minidev.json.JSONValue;

/**
 * The plugin's settings, read from Nimbus' storm.yaml, and the per-topology switches read from each
 * topology's conf.
 *
 * <table>
 *   <caption>Configuration keys</caption>
 *   <tr><th>key</th><th>where</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code storm.scheduler}</td><td>storm.yaml</td><td>(Storm's DefaultScheduler)</td>
 *       <td>set to {@code org.stormplanner.scheduler.PlannerScheduler} to use the plugin</td></tr>
 *   <tr><td>{@value #SERVICE_HOST}</td><td>storm.yaml</td><td>{@value #DEFAULT_SERVICE_HOST}</td>
 *       <td>host of the planner service</td></tr>
 *   <tr><td>{@value #SERVICE_PORT}</td><td>storm.yaml</td><td>{@value #DEFAULT_SERVICE_PORT}</td>
 *       <td>port of the planner service (framed transport, binary protocol)</td></tr>
 *   <tr><td>{@value #SERVICE_TIMEOUT_MS}</td><td>storm.yaml</td><td>{@value #DEFAULT_SERVICE_TIMEOUT_MS}</td>
 *       <td>deadline of one planning call, connecting, sending and reading the answer together (a service
 *       that answers a byte at a time is cut off at it), and the {@code deadline_ms} sent in the request.
 *       Nimbus holds its scheduling lock while it waits.</td></tr>
 *   <tr><td>{@value #SERVICE_TOKEN}</td><td>storm.yaml</td><td>(none)</td>
 *       <td>the planner service's shared token ({@code storm-planner serve --token-file} or
 *       {@code STORM_PLANNER_TOKEN}), sent with every plan call; a service with a token refuses calls
 *       without it</td></tr>
 *   <tr><td>{@value #STATUS_MAX_CHARS}</td><td>storm.yaml</td><td>{@value #DEFAULT_STATUS_MAX_CHARS}</td>
 *       <td>a topology status longer than this is cut, with an ellipsis and its length (the service's
 *       messages can be of any length)</td></tr>
 *   <tr><td>{@value #LOG_MAX_CHARS}</td><td>storm.yaml</td><td>{@value #DEFAULT_LOG_MAX_CHARS}</td>
 *       <td>the same for text from the service in one line of Nimbus' log</td></tr>
 *   <tr><td>{@value #DEFAULT_ALGORITHM}</td><td>storm.yaml</td><td>{@value #DEFAULT_DEFAULT_ALGORITHM}</td>
 *       <td>algorithm for topologies that name none</td></tr>
 *   <tr><td>{@value #ALGORITHM}</td><td>topology conf</td><td>(empty: {@value #DEFAULT_ALGORITHM})</td>
 *       <td>algorithm that plans this topology</td></tr>
 *   <tr><td>{@value #ENABLED}</td><td>topology conf</td><td>{@code true}</td>
 *       <td>{@code false}: Storm's DefaultScheduler places this topology, the planner never sees it</td></tr>
 *   <tr><td>{@value #INFEASIBLE_FALLBACK}</td><td>topology conf or storm.yaml</td><td>{@code false}</td>
 *       <td>when the planner finds no placement within the supervisors' free declared CPU and memory
 *       (INFEASIBLE), the topology is left unscheduled with that status, as Storm's ResourceAwareScheduler
 *       does; {@code true}: DefaultScheduler places it anyway (resource-unaware, possibly overloading)</td></tr>
 *   <tr><td>{@value #REPLAN}</td><td>topology conf</td><td>{@code true}</td>
 *       <td>{@code false}: once placed, the topology is never offered to the planner again</td></tr>
 *   <tr><td>{@value #REPLAN_INTERVAL_SECS}</td><td>topology conf or storm.yaml</td>
 *       <td>{@value #DEFAULT_REPLAN_INTERVAL_SECS}</td>
 *       <td>how often a running topology is offered to the planner for re-planning (the service decides
 *       whether to move anything)</td></tr>
 *   <tr><td>{@code planner.*} (any other)</td><td>topology conf</td><td>-</td>
 *       <td>passed to the planner as the topology's options (values as strings)</td></tr>
 * </table>
 *
 * <p>A topology's conf as Nimbus hands it to schedulers is storm.yaml merged with what the topology
 * set, so the topology keys may also be given cluster-wide in storm.yaml.
 *
 * <p>Bad values of the storm.yaml keys fail {@link PlannerScheduler#prepare}, so Nimbus refuses to start
 * with a message naming the key; bad values of topology keys never fail a scheduling round: the default is
 * used instead.
 */
public final class PlannerConfig {

    public static final String SERVICE_HOST = "planner.service.host";
    public static final String SERVICE_PORT = "planner.service.port";
    public static final String SERVICE_TIMEOUT_MS = "planner.service.timeout.ms";
    public static final String SERVICE_TOKEN = "planner.service.token";
    public static final String STATUS_MAX_CHARS = "planner.service.status.max.chars";
    public static final String LOG_MAX_CHARS = "planner.service.log.max.chars";
    public static final String DEFAULT_ALGORITHM = "planner.default.algorithm";
    public static final String ALGORITHM = "planner.algorithm";
    public static final String ENABLED = "planner.enabled";
    public static final String REPLAN = "planner.replan";
    public static final String INFEASIBLE_FALLBACK = "planner.infeasible.fallback";
    public static final String REPLAN_INTERVAL_SECS = "planner.replan.interval.secs";

    public static final String DEFAULT_SERVICE_HOST = "127.0.0.1";
    public static final int DEFAULT_SERVICE_PORT = 7627;
    public static final int DEFAULT_SERVICE_TIMEOUT_MS = 5000;
    public static final String DEFAULT_DEFAULT_ALGORITHM = "auto";
    public static final int DEFAULT_STATUS_MAX_CHARS = 512;
    public static final int DEFAULT_LOG_MAX_CHARS = 4096;
    public static final double DEFAULT_REPLAN_INTERVAL_SECS = 10.0;

    /** Prefix of every key the plugin knows; topology keys under it travel to the planner as options. */
    static final String PREFIX = "planner.";
    /** Daemon-side keys: they configure the plugin itself and are not options of any topology. */
    private static final String SERVICE_PREFIX = "planner.service.";

    private final String serviceHost;
    private final int servicePort;
    private final int timeoutMs;
    private final String defaultAlgorithm;
    private final String token;
    private final int statusMaxChars;
    private final int logMaxChars;

    public PlannerConfig(String serviceHost, int servicePort, int timeoutMs, String defaultAlgorithm) {
        this(serviceHost, servicePort, timeoutMs, defaultAlgorithm, null, DEFAULT_STATUS_MAX_CHARS,
            DEFAULT_LOG_MAX_CHARS);
    }

    public PlannerConfig(String serviceHost, int servicePort, int timeoutMs, String defaultAlgorithm, String token,
                         int statusMaxChars, int logMaxChars) {
        if (serviceHost == null || serviceHost.isBlank()) {
            throw new IllegalArgumentException(SERVICE_HOST + " must not be empty");
        }
        if (servicePort < 1 || servicePort > 65535) {
            throw new IllegalArgumentException(SERVICE_PORT + " must be a TCP port, not " + servicePort);
        }
        if (timeoutMs < 1) {
            throw new IllegalArgumentException(SERVICE_TIMEOUT_MS + " must be positive, not " + timeoutMs);
        }
        if (defaultAlgorithm == null || defaultAlgorithm.isBlank()) {
            throw new IllegalArgumentException(DEFAULT_ALGORITHM + " must not be empty");
        }
        if (statusMaxChars < 1) {
            throw new IllegalArgumentException(STATUS_MAX_CHARS + " must be positive, not " + statusMaxChars);
        }
        if (logMaxChars < 1) {
            throw new IllegalArgumentException(LOG_MAX_CHARS + " must be positive, not " + logMaxChars);
        }
        this.serviceHost = serviceHost.trim();
        this.servicePort = servicePort;
        this.timeoutMs = timeoutMs;
        this.defaultAlgorithm = defaultAlgorithm.trim();
        this.token = token == null || token.isBlank() ? null : token.trim();
        this.statusMaxChars = statusMaxChars;
        this.logMaxChars = logMaxChars;
    }

    /** Reads the daemon keys; absent keys take their defaults. */
    public static PlannerConfig fromStormConf(Map<String, Object> conf) {
        Map<String, Object> c = conf == null ? Map.of() : conf;
        return new PlannerConfig(
            stringOf(c, SERVICE_HOST, DEFAULT_SERVICE_HOST),
            intOf(c, SERVICE_PORT, DEFAULT_SERVICE_PORT),
            intOf(c, SERVICE_TIMEOUT_MS, DEFAULT_SERVICE_TIMEOUT_MS),
            stringOf(c, DEFAULT_ALGORITHM, DEFAULT_DEFAULT_ALGORITHM),
            stringOf(c, SERVICE_TOKEN, null),
            intOf(c, STATUS_MAX_CHARS, DEFAULT_STATUS_MAX_CHARS),
            intOf(c, LOG_MAX_CHARS, DEFAULT_LOG_MAX_CHARS));
    }

    public String serviceHost() {
        return serviceHost;
    }

    public int servicePort() {
        return servicePort;
    }

    public int timeoutMs() {
        return timeoutMs;
    }

    public String defaultAlgorithm() {
        return defaultAlgorithm;
    }

    /** The service's shared token, or null when none is configured. */
    public String token() {
        return token;
    }

    /** A topology status cut to {@value #STATUS_MAX_CHARS}. */
    public String status(String text) {
        return Texts.cap(text, statusMaxChars);
    }

    /** Text from the service (a message, notes) cut to {@value #LOG_MAX_CHARS} for one log line. */
    public String forLog(Object text) {
        return Texts.cap(text, logMaxChars);
    }

    /** The topology's {@value #ALGORITHM}, or the cluster default when it names none. */
    public String algorithmFor(Map<String, Object> topologyConf) {
        Object value = topologyConf == null ? null : topologyConf.get(ALGORITHM);
        String algorithm = value == null ? "" : value.toString().trim();
        return algorithm.isEmpty() ? defaultAlgorithm : algorithm;
    }

    /**
     * Whether the planner places this topology ({@value #ENABLED}, default true). Accepts a boolean or the
     * strings "true"/"false" (what {@code storm jar -c planner.enabled=false} may leave); anything else
     * keeps the planner on, because a typo should not silently change who schedules.
     */
    public static boolean isEnabledFor(Map<String, Object> topologyConf) {
        Object value = topologyConf == null ? null : topologyConf.get(ENABLED);
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        return value == null || !"false".equalsIgnoreCase(value.toString().trim());
    }

    /**
     * Whether an INFEASIBLE topology goes to DefaultScheduler ({@value #INFEASIBLE_FALLBACK}, default false).
     * Only an explicit true (boolean or string) turns it on: a typo leaves the topology unscheduled, as RAS would.
     */
    public static boolean isInfeasibleFallbackFor(Map<String, Object> topologyConf) {
        Object value = topologyConf == null ? null : topologyConf.get(INFEASIBLE_FALLBACK);
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        return value != null && "true".equalsIgnoreCase(value.toString().trim());
    }

    /** Whether a running topology is offered for re-planning ({@value #REPLAN}, default true); read like {@link #isEnabledFor}. */
    public static boolean isReplanEnabledFor(Map<String, Object> topologyConf) {
        Object value = topologyConf == null ? null : topologyConf.get(REPLAN);
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        return value == null || !"false".equalsIgnoreCase(value.toString().trim());
    }

    /** {@value #REPLAN_INTERVAL_SECS} in ms; a missing, negative or unreadable value gives the default. */
    public static long replanIntervalMsFor(Map<String, Object> topologyConf) {
        Object value = topologyConf == null ? null : topologyConf.get(REPLAN_INTERVAL_SECS);
        double secs = DEFAULT_REPLAN_INTERVAL_SECS;
        if (value instanceof Number) {
            secs = ((Number) value).doubleValue();
        } else if (value != null) {
            try {
                secs = Double.parseDouble(value.toString().trim());
            } catch (NumberFormatException e) {
                secs = DEFAULT_REPLAN_INTERVAL_SECS;
            }
        }
        return Math.round((secs >= 0 ? secs : DEFAULT_REPLAN_INTERVAL_SECS) * 1000);
    }

    /**
     * The topology's {@code planner.*} keys as strings, sorted, minus the daemon keys (which reach every
     * topology conf through the storm.yaml merge and say nothing about the topology). Maps and lists
     * (e.g. a {@code planner.hetero.profiles} given as YAML) are sent as JSON, not as Java's
     * {@code {k=v}} text, which the service could not read.
     */
    public static Map<String, String> plannerOptionsOf(Map<String, Object> topologyConf) {
        Map<String, String> options = new TreeMap<>();
        if (topologyConf == null) {
            return options;
        }
        for (Map.Entry<String, Object> entry : topologyConf.entrySet()) {
            String key = entry.getKey();
            if (key != null && key.startsWith(PREFIX) && !key.startsWith(SERVICE_PREFIX)
                && !key.equals(DEFAULT_ALGORITHM) && entry.getValue() != null) {
                options.put(key, optionText(entry.getValue()));
            }
        }
        return options;
    }

    private static String optionText(Object value) {
        return value instanceof Map || value instanceof Collection ? JSONValue.toJSONString(value) : value.toString();
    }

    private static String stringOf(Map<String, Object> conf, String key, String defaultValue) {
        Object value = conf.get(key);
        return value == null ? defaultValue : value.toString();
    }

    private static int intOf(Map<String, Object> conf, String key, int defaultValue) {
        Object value = conf.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Number) {
            Number number = (Number) value;
            if (number.doubleValue() != number.intValue()) {
                throw new IllegalArgumentException(key + " must be an integer, not " + value);
            }
            return number.intValue();
        }
        try {
            return Integer.parseInt(value.toString().trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer, not '" + value + "'", e);
        }
    }

    @Override
    public String toString() {
        return "planner service " + serviceHost + ":" + servicePort + ", timeout " + timeoutMs
            + " ms, default algorithm " + defaultAlgorithm + (token == null ? ", no token" : ", token set");
    }
}
