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
 * The real Python planner service as a subprocess on a free loopback port:
 * {@code $PLANNER_PYTHON -m storm_planner serve --host 127.0.0.1 --port <port>}, its output in
 * {@code target/planner-service-<port>.log}. Closing it stops the process.
 */
final class PlannerServiceProcess implements AutoCloseable {

    static final String HOST = "127.0.0.1";
    private static final Duration START_LIMIT = Duration.ofSeconds(60);

    final int port;
    private final Path log;
    private final Process process;

    private PlannerServiceProcess(int port, Path log, Process process) {
        this.port = port;
        this.log = log;
        this.process = process;
    }

    /** Starts the service with the given Python and waits until it accepts connections. */
    static PlannerServiceProcess start(String python) throws IOException, InterruptedException {
        int port = freePort();
        Path log = Path.of("target", "planner-service-" + port + ".log");
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(python, "-m", "storm_planner", "serve", "--host", HOST,
            "--port", Integer.toString(port))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
        PlannerServiceProcess service = new PlannerServiceProcess(port, log, process);
        service.awaitListening();
        return service;
    }

    /** What the service printed so far, for failure messages. */
    String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    private void awaitListening() throws InterruptedException {
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (!accepts(port)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the planner service exited with " + process.exitValue() + ": "
                    + output());
            }
            if (System.nanoTime() > deadline) {
                close();
                throw new IllegalStateException("the planner service did not listen on port " + port + " within "
                    + START_LIMIT.toSeconds() + " s: " + output());
            }
            Thread.sleep(200);
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
