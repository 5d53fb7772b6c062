package org.stormplanner.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Bytes this worker's host has received and sent on its network interfaces since they came up (loopback
 * excluded), from {@code /proc/net/dev}. Published with every window, so the planner can tell a node's
 * whole link use (what other processes send too) from what Storm's tuples account for.
 *
 * <p>{@code /proc/net/dev} shows the interfaces of the reading process' network namespace: on a real
 * host its NICs, on storm-planner's emulated network the supervisor's one link. Where it cannot be read
 * (not Linux) the window simply carries no {@code host_net}.
 */
final class HostNetwork {

    /** Cumulative counters, summed over the host's non-loopback interfaces. */
    record Counters(long receivedBytes, long sentBytes) {
    }

    private static final Path PROC_NET_DEV = Path.of("/proc/net/dev");

    private HostNetwork() {
    }

    static Optional<Counters> read() {
        try {
            return Optional.of(parse(Files.readAllLines(PROC_NET_DEV)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Parses {@code /proc/net/dev}: two header lines, then {@code "  eth0: rxBytes rxPackets ... (8 receive
     * fields) txBytes ..."}.
     */
    static Counters parse(List<String> lines) {
        long received = 0;
        long sent = 0;
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;  // the header lines
            }
            String name = line.substring(0, colon).trim();
            if (name.equals("lo")) {
                continue;
            }
            String[] fields = line.substring(colon + 1).trim().split("\\s+");
            received += Long.parseLong(fields[0]);
            sent += Long.parseLong(fields[8]);
        }
        return new Counters(received, sent);
    }
}
