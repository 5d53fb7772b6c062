package org.stormplanner.scheduler;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The real Python planner service as a subprocess: {@code <python> -m storm_planner serve --host 127.0.0.1
 * --port <free port>}, its output in a log file. {@link #close()} stops it, and so does the JVM's exit.
 */
public final class PlannerServiceProcess implements AutoCloseable {

    public static final String HOST = "127.0.0.1";
    private static final Duration START_LIMIT = Duration.ofSeconds(60);

    private final Process process;
    private final int port;
    private final Path log;

    private PlannerServiceProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Starts the service with its output in {@code target/planner-service-<port>.log}. */
    public static PlannerServiceProcess start(String python) throws IOException, InterruptedException {
        return start(python, null);
    }

    /**
     * Starts the service and waits until it listens (at most a minute); fails with its log if it exits.
     * {@code log} null: {@code target/planner-service-<port>.log}.
     */
    public static PlannerServiceProcess start(String python, Path log) throws IOException, InterruptedException {
        int port = freePort();
        if (log == null) {
            log = Path.of("target", "planner-service-" + port + ".log");
        }
        Files.createDirectories(log.toAbsolutePath().getParent());
        Process process = new ProcessBuilder(python, "-m", "storm_planner", "serve", "--host", HOST,
            "--port", Integer.toString(port))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
        PlannerServiceProcess service = new PlannerServiceProcess(process, port, log);
        // A benchmark interrupted with Ctrl-C or kill must not leave the service running.
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroy, "stop-planner-service"));
        service.awaitListening();
        return service;
    }

    public int port() {
        return port;
    }

    public Path log() {
        return log;
    }

    /** What the service printed so far, for failure messages. */
    public String output() {
        return readLog();
    }

    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            // Closing must not leave the service running, nor swallow the interrupt (try-with-resources would).
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private void awaitListening() throws InterruptedException {
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (!accepts(port)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the planner service exited with " + process.exitValue() + ": "
                    + readLog());
            }
            if (System.nanoTime() > deadline) {
                close();
                throw new IllegalStateException("the planner service did not listen on port " + port + " within "
                    + START_LIMIT.toSeconds() + " s: " + readLog());
            }
            Thread.sleep(100);
        }
    }

    private String readLog() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        } catch (IOException notYet) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return probe.getLocalPort();
        }
    }
}
