package org.stormplanner.metrics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * CPU time of the worker's child processes, by component: for multilang (shell) components most of the
 * work happens in the subprocess (e.g. Python), not in the executor thread.
 *
 * <p>Each shell task runs its own subprocess, started with the component's {@code execution_command} and
 * {@code script} (e.g. {@code streamparse_run trends.bolts.CountBolt}). A descendant of the worker whose
 * command line holds the component's script (else its command) belongs to that component. Which task of the
 * component a process serves cannot be seen from outside, so the publisher splits a component's subprocess
 * CPU over that component's tasks in this worker by the tuples each handled.
 *
 * <p>CPU time is {@link ProcessHandle.Info#totalCpuDuration()} (on Linux: utime + stime of
 * {@code /proc/<pid>/stat}, USER_HZ resolution, i.e. 10 ms). A process seen for the first time counts its
 * whole CPU time only if it started after the previous sample; otherwise that sample is its baseline.
 */
final class SubprocessCpu {

    /** How one component's subprocesses look: the script (preferred) or command on their command line. */
    record Signature(String component, String token) {
    }

    /** One window's result for a component. */
    record Usage(double cpuMs, int processes) {
    }

    private static final Duration START_TOLERANCE = Duration.ofSeconds(1);

    private final Map<Long, Long> lastCpuMs = new HashMap<>();
    private Instant lastSample;

    /** CPU ms per component since the previous call, over the descendants matching each signature. */
    Map<String, Usage> sample(List<Signature> signatures) {
        return sample(signatures, ProcessHandle.current().descendants().collect(Collectors.toList()));
    }

    Map<String, Usage> sample(List<Signature> signatures, List<ProcessHandle> processes) {
        Instant previous = lastSample;
        lastSample = Instant.now();
        Map<String, double[]> totals = new HashMap<>();
        Map<Long, Long> seen = new HashMap<>();
        for (ProcessHandle process : processes) {
            ProcessHandle.Info info = process.info();
            Optional<String> commandLine = info.commandLine();
            Optional<Duration> cpu = info.totalCpuDuration();
            if (commandLine.isEmpty() || cpu.isEmpty()) {
                continue;
            }
            String component = componentOf(commandLine.get(), signatures);
            if (component == null) {
                continue;
            }
            long cpuMs = cpu.get().toMillis();
            seen.put(process.pid(), cpuMs);
            Long before = lastCpuMs.get(process.pid());
            long delta;
            if (before != null) {
                delta = Math.max(0, cpuMs - before);
            } else {
                // Start instants come from clock ticks since boot (10 ms steps, rounded down): a process
                // that started just after the previous sample may look a little older than it is.
                boolean startedSince = previous == null || info.startInstant()
                    .map(start -> start.isAfter(previous.minus(START_TOLERANCE))).orElse(false);
                delta = startedSince ? cpuMs : 0;
            }
            double[] total = totals.computeIfAbsent(component, c -> new double[2]);
            total[0] += delta;
            total[1] += 1;
        }
        lastCpuMs.clear();
        lastCpuMs.putAll(seen);
        Map<String, Usage> usage = new HashMap<>();
        totals.forEach((component, t) -> usage.put(component, new Usage(t[0], (int) t[1])));
        return usage;
    }

    /**
     * The component whose token appears as consecutive whole words of the command line (a word may be a
     * path ending in the token's word: {@code streamparse_run} matches {@code /venv/bin/streamparse_run});
     * the longest token wins.
     */
    static String componentOf(String commandLine, List<Signature> signatures) {
        String[] words = commandLine.trim().split("\\s+");
        String best = null;
        int bestLength = -1;
        for (Signature signature : signatures) {
            String token = signature.token().trim();
            if (!token.isEmpty() && token.length() > bestLength && containsWords(words, token.split("\\s+"))) {
                best = signature.component();
                bestLength = token.length();
            }
        }
        return best;
    }

    private static boolean containsWords(String[] words, String[] wanted) {
        for (int start = 0; start + wanted.length <= words.length; start++) {
            boolean all = true;
            for (int i = 0; i < wanted.length && all; i++) {
                String word = words[start + i];
                all = word.equals(wanted[i]) || word.endsWith("/" + wanted[i]);
            }
            if (all) {
                return true;
            }
        }
        return false;
    }

    /** Signatures of every shell component of a topology, from its Thrift structure. */
    static List<Signature> signaturesOf(org.apache.storm.generated.StormTopology topology) {
        List<Signature> signatures = new ArrayList<>();
        if (topology == null) {
            return signatures;
        }
        if (topology.get_bolts() != null) {
            topology.get_bolts().forEach((id, bolt) -> add(signatures, id, bolt.get_bolt_object()));
        }
        if (topology.get_spouts() != null) {
            topology.get_spouts().forEach((id, spout) -> add(signatures, id, spout.get_spout_object()));
        }
        return signatures;
    }

    private static void add(List<Signature> signatures, String component,
                            org.apache.storm.generated.ComponentObject object) {
        if (object == null || !object.is_set_shell()) {
            return;
        }
        org.apache.storm.generated.ShellComponent shell = object.get_shell();
        String script = shell.get_script();
        String token = script != null && !script.isBlank() ? script : shell.get_execution_command();
        if (token != null && !token.isBlank()) {
            signatures.add(new Signature(component, token));
        }
    }
}
