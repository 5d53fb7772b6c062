package org.stormplanner.scheduler.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** One paragraph on the machine a benchmark ran on: CPU model and count, memory, OS, Java, load when it started. */
final class Machine {

    private Machine() {
    }

    static String describe() {
        Runtime runtime = Runtime.getRuntime();
        return String.format(java.util.Locale.ROOT,
            "%s; %d logical CPUs; %s memory; %s %s; Java %s (max heap %d MB); load average at the end %s.",
            firstValue("/proc/cpuinfo", "model name"), runtime.availableProcessors(),
            firstValue("/proc/meminfo", "MemTotal"), System.getProperty("os.name"), System.getProperty("os.version"),
            System.getProperty("java.version"), runtime.maxMemory() / (1024 * 1024), loadAverage());
    }

    private static String firstValue(String file, String key) {
        try {
            List<String> lines = Files.readAllLines(Path.of(file));
            return lines.stream().filter(l -> l.startsWith(key)).map(l -> l.substring(l.indexOf(':') + 1).trim())
                .findFirst().orElse("unknown " + key);
        } catch (IOException e) {
            return "unknown " + key;
        }
    }

    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException e) {
            return "unknown";
        }
    }
}
