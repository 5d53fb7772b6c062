package org.stormplanner.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class HostNetworkTest {

    @Test
    void sumsEveryInterfaceButLoopback() {
        List<String> procNetDev = List.of(
            "Inter-|   Receive                                                |  Transmit",
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed",
            "    lo: 9999999     100    0    0    0     0          0         0  9999999     100    0    0    0     0       0          0",
            "  eth0: 1500        10    0    0    0     0          0         0     2500      20    0    0    0     0       0          0",
            "  eth1:   30         1    0    0    0     0          0         0       40       1    0    0    0     0       0          0");
        HostNetwork.Counters counters = HostNetwork.parse(procNetDev);
        assertEquals(1530, counters.receivedBytes());
        assertEquals(2540, counters.sentBytes());
    }

    @Test
    void readsThisMachinesCountersOnLinux() {
        assertTrue(HostNetwork.read().isPresent(), "/proc/net/dev should parse on a Linux test machine");
    }

    @Test
    void aMalformedLineIsAFailureNotAWrongFigure() {
        // read() turns this into "no host_net" rather than publishing a partial sum.
        org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
            () -> HostNetwork.parse(List.of("  eth0: 12 x")));
    }
}
