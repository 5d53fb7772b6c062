package org.stormplanner.scheduler.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the results as {@code storm-scale.csv} (one row per cluster and scheduler) and {@code storm-scale.md}
 * (a table per cluster, the command that reproduces it, the machine it ran on).
 */
public final class BenchmarkReport {

    private static final String[] CSV_COLUMNS = {
        "cluster", "supervisors", "topologies", "executors", "scheduler", "algorithm", "first_round_ms",
        "reschedule_ms", "rescheduled_placed", "fully_placed", "over_capacity", "over_cpu", "over_memory",
        "cross_node_share", "service_call_ms", "planner_solve_ms", "plugin_before_call_ms",
        "plugin_after_call_ms", "outcomes", "error", "first_round_runs_ms"};

    private final List<VariantResult> results;
    private final String command;
    private final String machine;

    public BenchmarkReport(List<VariantResult> results, String command, String machine) {
        this.results = results;
        this.command = command;
        this.machine = machine;
    }

    public void write(Path directory) throws IOException {
        Files.createDirectories(directory);
        Files.writeString(directory.resolve("storm-scale.csv"), csv(), StandardCharsets.UTF_8);
        Files.writeString(directory.resolve("storm-scale.md"), markdown(), StandardCharsets.UTF_8);
    }

    String csv() {
        StringBuilder out = new StringBuilder(String.join(",", CSV_COLUMNS)).append('\n');
        for (VariantResult r : results) {
            PlacementFigures f = r.figures();
            List<String> cells = List.of(r.cluster().name(), Integer.toString(r.cluster().supervisors()),
                Integer.toString(r.cluster().topologies().size()), Integer.toString(r.cluster().executors()),
                r.variant().scheduler(), r.variant().algorithm(), number(r.firstRoundMs()),
                number(r.rescheduleMs()), Boolean.toString(r.rescheduledPlaced()),
                f == null ? "" : Integer.toString(f.fullyPlaced()), f == null ? "" : Integer.toString(f.overEither()),
                f == null ? "" : Integer.toString(f.overCpu()), f == null ? "" : Integer.toString(f.overMemory()),
                f == null ? "" : String.format(Locale.ROOT, "%.4f", f.crossNodeShare()),
                number(r.serviceCallMs()), number(r.solveMs()), number(r.beforeCallMs()),
                number(r.afterCallMs()), r.outcomes(),
                r.error() == null ? "" : r.error(), runs(r, " "));
            out.append(String.join(",", cells.stream().map(BenchmarkReport::csvCell).toList())).append('\n');
        }
        return out.toString();
    }

    String markdown() {
        StringBuilder out = new StringBuilder("# Storm's schedulers and storm-planner on production-sized clusters\n\n");
        out.append("Storm's DefaultScheduler, Storm's ResourceAwareScheduler (DefaultResourceAwareStrategy) and the ")
            .append("PlannerScheduler plugin against the real Python planner service, side by side in one run on ")
            .append("identical generated clusters (issue #13). Generated with Storm's own scheduler test utilities ")
            .append("(`TestUtilsForResourceAwareScheduler`, storm-server 2.8.3 tests).\n\n")
            .append("- **first round**: wall time of `IScheduler.schedule` with every topology unassigned; each ")
            .append("scheduler ran the cluster several times (fresh copies, one JVM) and the run with the median ")
            .append("first round is shown, every run's first round in brackets;\n")
            .append("- **reschedule**: the next round after the median-sized topology was killed and resubmitted ")
            .append("(its assignment removed; the round also retries whatever round 1 left unplaced); ✓ = placed again;\n")
            .append("- **placed**: topologies with every executor placed after round 1;\n")
            .append("- **over capacity**: supervisors whose placed executors declare more CPU or memory than the ")
            .append("supervisor's `supervisor.cpu.capacity` / `supervisor.memory.capacity.mb` (CPU / memory counts);\n")
            .append("- **cross-node**: share of traffic between nodes, each stream carrying one unit per source ")
            .append("executor spread uniformly over its executor pairs (computed per component from per-node counts);\n")
            .append("- **service / solve**: for the plugin's first round, the time waiting for the service ")
            .append("(Thrift both ways and the service's work) and the planners' reported solve time within it;\n")
            .append("- **plugin before / after**: the plugin's own work in its first round, before the call (choosing ")
            .append("the topologies, building the request) and after it (validating and applying the plans, ")
            .append("DefaultScheduler for any fallback, statuses, logging).\n\n");
        for (Map.Entry<String, List<VariantResult>> cluster : byCluster().entrySet()) {
            ClusterShape shape = cluster.getValue().get(0).cluster();
            out.append("## ").append(shape.description()).append("\n\n").append(shape.summary()).append(".\n\n");
            out.append("| scheduler / algorithm | first round ms | reschedule ms | placed | over capacity (CPU / mem) ")
                .append("| cross-node traffic | service ms | solve ms | plugin before / after ms | outcomes |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
            for (VariantResult r : cluster.getValue()) {
                out.append(markdownRow(r)).append('\n');
            }
            out.append('\n');
        }
        out.append("## Reproduce\n\n```bash\n").append(command).append("\n```\n\n");
        out.append("## Machine\n\n").append(machine).append("\n");
        return out.toString();
    }

    private static String markdownRow(VariantResult r) {
        String name = r.variant().label();
        if (r.error() != null) {
            return "| " + name + " | failed: " + r.error().replace("|", "\\|") + " | | | | | | | | |";
        }
        PlacementFigures f = r.figures();
        return String.format(Locale.ROOT, "| %s | %s (%s) | %s %s | %d / %d | %d (%d / %d) | %.1f %% | %s | %s | %s | %s |",
            name, number(r.firstRoundMs()), runs(r, ", "), number(r.rescheduleMs()), r.rescheduledPlaced() ? "✓" : "✗",
            f.fullyPlaced(), f.topologies(), f.overEither(), f.overCpu(), f.overMemory(), 100 * f.crossNodeShare(),
            orDash(r.serviceCallMs()), orDash(r.solveMs()), pluginMs(r), r.outcomes().replace("|", "/"));
    }

    private static String runs(VariantResult r, String separator) {
        return String.join(separator, r.firstRoundRunsMs().stream().map(BenchmarkReport::number).toList());
    }

    private static String pluginMs(VariantResult r) {
        return r.beforeCallMs() == null ? "–" : number(r.beforeCallMs()) + " / " + number(r.afterCallMs());
    }

    private Map<String, List<VariantResult>> byCluster() {
        Map<String, List<VariantResult>> grouped = new LinkedHashMap<>();
        for (VariantResult r : results) {
            grouped.computeIfAbsent(r.cluster().name(), k -> new ArrayList<>()).add(r);
        }
        return grouped;
    }

    private static String orDash(Double value) {
        return value == null ? "–" : number(value);
    }

    private static String number(Double value) {
        return value == null || value.isNaN() ? "" : String.format(Locale.ROOT, "%.0f", value);
    }

    private static String csvCell(String text) {
        return text.contains(",") || text.contains("\"") ? '"' + text.replace("\"", "\"\"") + '"' : text;
    }
}
