package org.stormplanner.metrics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The hook's settings, read from the topology conf a worker hands to its tasks (storm.yaml merged with the
 * topology's own conf). A bad value never stops a worker: it falls back to the default and says so once.
 *
 * <table>
 *   <caption>Configuration keys</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@value #ENABLED}</td><td>true</td><td>{@code false}: the hook counts and publishes nothing</td></tr>
 *   <tr><td>{@value #PERIOD_SECS}</td><td>{@value #DEFAULT_PERIOD_SECS}</td>
 *       <td>statistics period: one window per task per period</td></tr>
 *   <tr><td>{@value #ROOT}</td><td>{@value #DEFAULT_ROOT}</td><td>znode under which windows are written</td></tr>
 *   <tr><td>{@value #SERVERS}</td><td>storm.zookeeper.servers</td><td>ZooKeeper hosts</td></tr>
 *   <tr><td>{@value #PORT}</td><td>storm.zookeeper.port</td><td>ZooKeeper port</td></tr>
 *   <tr><td>{@value #MAX_WRITES_PER_SEC}</td><td>{@value #DEFAULT_MAX_WRITES_PER_SEC}</td>
 *       <td>ceiling on one worker's znode writes; a worker with more tasks than this allows per period
 *       stretches its period</td></tr>
 * </table>
 */
final class MetricsConfig {

    static final String ENABLED = "planner.metrics.enabled";
    static final String PERIOD_SECS = "planner.metrics.period.secs";
    static final String ROOT = "planner.metrics.zookeeper.root";
    static final String SERVERS = "planner.metrics.zookeeper.servers";
    static final String PORT = "planner.metrics.zookeeper.port";
    static final String MAX_WRITES_PER_SEC = "planner.metrics.max.writes.per.sec";

    static final double DEFAULT_PERIOD_SECS = 10.0;
    static final double MIN_PERIOD_SECS = 1.0;
    static final String DEFAULT_ROOT = "/storm-planner/metrics";
    static final double DEFAULT_MAX_WRITES_PER_SEC = 20.0;
    static final int DEFAULT_ZOOKEEPER_PORT = 2181;

    final boolean enabled;
    final double periodSecs;
    final String root;
    final List<String> servers;
    final int port;
    final double maxWritesPerSec;
    /** What was wrong with the conf (empty when nothing): logged once by the publisher. */
    final List<String> problems = new ArrayList<>();

    MetricsConfig(Map<String, Object> conf) {
        Map<String, Object> c = conf == null ? Map.of() : conf;
        enabled = !"false".equalsIgnoreCase(String.valueOf(c.getOrDefault(ENABLED, "true")).trim());
        periodSecs = Math.max(MIN_PERIOD_SECS, number(c, PERIOD_SECS, DEFAULT_PERIOD_SECS));
        maxWritesPerSec = positive(c, MAX_WRITES_PER_SEC, DEFAULT_MAX_WRITES_PER_SEC);
        root = rootOf(c.get(ROOT));
        Object hosts = c.containsKey(SERVERS) ? c.get(SERVERS) : c.get("storm.zookeeper.servers");
        servers = hostsOf(hosts);
        Object portValue = c.containsKey(PORT) ? c.get(PORT) : c.get("storm.zookeeper.port");
        port = (int) number(Map.of("port", portValue == null ? DEFAULT_ZOOKEEPER_PORT : portValue), "port",
            DEFAULT_ZOOKEEPER_PORT);
    }

    /** How long one window lasts for a worker that publishes {@code tasks} znodes per window. */
    double effectivePeriodSecs(int tasks) {
        return Math.max(periodSecs, tasks / maxWritesPerSec);
    }

    private String rootOf(Object value) {
        String text = value == null ? DEFAULT_ROOT : value.toString().trim();
        if (!text.startsWith("/") || text.length() < 2 || text.endsWith("/") || text.contains("//")) {
            problems.add(ROOT + " must be an absolute znode path like " + DEFAULT_ROOT + ", not '" + text + "'");
            return DEFAULT_ROOT;
        }
        return text;
    }

    private static List<String> hostsOf(Object value) {
        List<String> hosts = new ArrayList<>();
        if (value instanceof Collection) {
            for (Object host : (Collection<?>) value) {
                if (host != null && !host.toString().isBlank()) {
                    hosts.add(host.toString().trim());
                }
            }
        } else if (value != null) {
            Arrays.stream(value.toString().split(",")).map(String::trim).filter(s -> !s.isEmpty()).forEach(hosts::add);
        }
        if (hosts.isEmpty()) {
            hosts.add("localhost");
        }
        return hosts;
    }

    private double positive(Map<String, Object> conf, String key, double defaultValue) {
        double value = number(conf, key, defaultValue);
        if (value <= 0) {
            problems.add(key + " must be positive, not " + value + "; using " + defaultValue);
            return defaultValue;
        }
        return value;
    }

    private double number(Map<String, Object> conf, String key, double defaultValue) {
        Object value = conf.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (value instanceof Number) {
            return ((Number) value).doubleValue();
        }
        try {
            return Double.parseDouble(value.toString().trim());
        } catch (NumberFormatException e) {
            problems.add(key + " must be a number, not '" + value + "'; using " + defaultValue);
            return defaultValue;
        }
    }

    /** The ZooKeeper connect string the publisher uses: host:port,host:port. */
    String connectString() {
        StringBuilder s = new StringBuilder();
        for (String host : servers) {
            if (s.length() > 0) {
                s.append(',');
            }
            s.append(host.contains(":") ? host : host + ":" + port);
        }
        return s.toString();
    }

    @Override
    public String toString() {
        return "period " + periodSecs + " s, root " + root + ", zookeeper " + connectString()
            + ", at most " + maxWritesPerSec + " writes/s";
    }
}
