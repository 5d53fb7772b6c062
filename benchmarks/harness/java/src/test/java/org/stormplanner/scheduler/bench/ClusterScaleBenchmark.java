package org.stormplanner.scheduler.bench;

import org.stormplanner.scheduler.PlannerServiceProcess;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Issue #13's benchmark: Storm's DefaultScheduler, Storm's ResourceAwareScheduler and the PlannerScheduler
 * plugin (against the real Python service, started from {@code $PLANNER_PYTHON}) with several algorithms, side
 * by side on identical generated production-sized clusters ({@link ClusterShapes}). Progress goes to stderr;
 * the report to {@code <out>/storm-scale.csv} and {@code storm-scale.md} ({@link BenchmarkReport}).
 *
 * <pre>
 * benchmarks/harness/scripts/bench-scale.sh [--scale 1.0] [--topologies 45] [--clusters production,huge]
 *     [--schedulers default,ras,even,topdown,milp] [--milp-time-limit-secs 2] [--deadline-ms 120000]
 *     [--seed 13] [--repeat 3] [--out benchmarks/results/scale]
 * </pre>
 *
 * Each scheduler runs {@code --repeat} times on each cluster (fresh copies, the same JVM and service; repetitions
 * interleaved across schedulers) and the run with the median first round is reported: the first run of each also
 * warms up the JIT and the service.
 */
public final class ClusterScaleBenchmark {

    private static final Map<String, String> DEFAULTS = Map.of(
        "--scale", "1.0",
        "--topologies", "45",
        "--clusters", "production,huge",
        "--schedulers", "default,ras,even,topdown,milp",
        "--milp-time-limit-secs", "2",
        "--deadline-ms", "120000",
        "--seed", "13",
        "--repeat", "3",
        "--out", "benchmarks/results/scale");

    private ClusterScaleBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        List<ClusterShape> clusters = clusters(options);
        List<String> schedulers = List.of(options.get("--schedulers").split(","));
        List<VariantResult> results = new ArrayList<>();
        PlannerServiceProcess service = needsService(schedulers) ? startService(options) : null;
        try {
            clusters.forEach(shape -> progress("cluster %s: %s", shape.description(), shape.summary()));
            // Repetitions interleaved (every scheduler once, then again): the machine's speed drifts, and each
            // scheduler should meet the same drift. The solver planners keep their time limit and the service
            // kills one that overruns, so no scheduler delays the next.
            int repeat = Integer.parseInt(options.get("--repeat"));
            List<SchedulerVariant> variants = variants(schedulers, options, service);
            Map<String, List<VariantResult>> runs = new LinkedHashMap<>();
            for (int k = 0; k < repeat; k++) {
                for (ClusterShape shape : clusters) {
                    for (SchedulerVariant variant : variants) {
                        List<VariantResult> done = runs.computeIfAbsent(shape.name() + "/" + variant.label(),
                            key -> new ArrayList<>());
                        if (done.isEmpty() || done.get(done.size() - 1).error() == null) {
                            done.add(runOnce(shape, variant, k, repeat));
                        }
                    }
                }
            }
            runs.values().forEach(done -> results.add(median(done)));
        } finally {
            if (service != null) {
                service.close();
            }
        }
        String command = System.getProperty("bench.command", "benchmarks/harness/scripts/bench-scale.sh") + " " + String.join(" ", args);
        Path out = Path.of(options.get("--out"));
        new BenchmarkReport(results, command.trim(), Machine.describe()).write(out);
        progress("wrote %s and %s", out.resolve("storm-scale.csv"), out.resolve("storm-scale.md"));
    }

    private static VariantResult runOnce(ClusterShape shape, SchedulerVariant variant, int k, int repeat) {
        progress("%s on %s, run %d/%d ...", variant.label(), shape.name(), k + 1, repeat);
        VariantResult run;
        try {
            run = new VariantRun(shape, variant).run();
        } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
            run = VariantResult.failed(shape, variant, e);
        }
        if (run.error() != null) {
            progress("  failed: %s", run.error());
        } else {
            progress("  first round %.0f ms, reschedule %.0f ms, placed %d/%d, over capacity %d, cross-node %.1f %%; %s",
                run.firstRoundMs(), run.rescheduleMs(), run.figures().fullyPlaced(), run.figures().topologies(),
                run.figures().overEither(), 100 * run.figures().crossNodeShare(), run.outcomes());
        }
        return run;
    }

    /** The run with the median first round (a failed run, if any, stands for all), with every run's time. */
    private static VariantResult median(List<VariantResult> runs) {
        VariantResult last = runs.get(runs.size() - 1);
        if (last.error() != null) {
            return last;
        }
        List<VariantResult> sorted = new ArrayList<>(runs);
        sorted.sort(Comparator.comparingDouble(VariantResult::firstRoundMs));
        return sorted.get((sorted.size() - 1) / 2).withRuns(runs.stream().map(VariantResult::firstRoundMs).toList());
    }

    static List<ClusterShape> clusters(Map<String, String> options) {
        double scale = Double.parseDouble(options.get("--scale"));
        int topologies = Integer.parseInt(options.get("--topologies"));
        long seed = Long.parseLong(options.get("--seed"));
        List<ClusterShape> clusters = new ArrayList<>();
        for (String name : options.get("--clusters").split(",")) {
            switch (name.trim()) {
                case "production" -> clusters.add(ClusterShapes.productionLike(scale, topologies, seed));
                case "huge" -> clusters.add(ClusterShapes.singleHugeTopology(scale));
                default -> throw new IllegalArgumentException("unknown cluster '" + name + "' (production, huge)");
            }
        }
        return clusters;
    }

    static List<SchedulerVariant> variants(List<String> names, Map<String, String> options,
                                           PlannerServiceProcess service) {
        int deadlineMs = Integer.parseInt(options.get("--deadline-ms"));
        double milpLimit = Double.parseDouble(options.get("--milp-time-limit-secs"));
        List<SchedulerVariant> variants = new ArrayList<>();
        for (String name : names) {
            switch (name.trim()) {
                case "default" -> variants.add(SchedulerVariant.stormDefault());
                case "ras" -> variants.add(SchedulerVariant.resourceAware());
                case "milp" -> variants.add(SchedulerVariant.planner("milp", service.port(), deadlineMs, milpLimit));
                default -> variants.add(SchedulerVariant.planner(name.trim(), service.port(), deadlineMs, null));
            }
        }
        return variants;
    }

    private static boolean needsService(List<String> schedulers) {
        return schedulers.stream().map(String::trim).anyMatch(s -> !s.equals("default") && !s.equals("ras"));
    }

    private static PlannerServiceProcess startService(Map<String, String> options) throws Exception {
        String python = System.getenv("PLANNER_PYTHON");
        if (python == null || python.isBlank()) {
            throw new IllegalStateException("PLANNER_PYTHON is not set: it names the Python that runs the planner "
                + "service (e.g. PLANNER_PYTHON=$PWD/.venv/bin/python)");
        }
        Path log = Path.of(System.getProperty("bench.service.log", "target/bench-scale-service.log"));
        progress("starting the planner service: %s -m storm_planner serve (log %s)", python.trim(), log);
        PlannerServiceProcess service = PlannerServiceProcess.start(python.trim(), log);
        progress("planner service listening on %s:%d", PlannerServiceProcess.HOST, service.port());
        return service;
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>(DEFAULTS);
        for (int i = 0; i < args.length; i++) {
            if (!DEFAULTS.containsKey(args[i]) || i + 1 >= args.length) {
                throw new IllegalArgumentException("unknown option or missing value: " + args[i] + "; options: "
                    + String.join(" ", DEFAULTS.keySet().stream().sorted().toList()));
            }
            options.put(args[i], args[++i]);
        }
        return options;
    }

    static void progress(String format, Object... values) {
        System.err.printf(Locale.ROOT, "[bench-scale %tT] %s%n", System.currentTimeMillis(),
            String.format(Locale.ROOT, format, values));
        System.err.flush();
    }
}
