package org.stormplanner.scheduler;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.layered.TFramedTransport;
import org.stormplanner.thrift.Health;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.PlannerService;

/**
 * Calls the planner service: framed transport, binary protocol, the same as Nimbus' own Thrift port.
 *
 * <p>Each call opens its own connection. Nimbus plans at most once per monitor period (10 s by default), so
 * a connection costs nothing worth saving, and a fresh one never carries a half-read answer from a call
 * that timed out, nor outlives a planner restart.
 *
 * <p><b>The deadline holds for the whole call.</b> A socket timeout bounds each read alone: a service that
 * sends its answer a byte at a time, each within the timeout, would hold Nimbus' scheduling round for as
 * long as it likes, and a socket timeout does not bound writes at all (a service that stops reading leaves
 * the request's write blocked). So a watchdog closes the connection when the deadline is over, whatever
 * the call is doing (connecting, writing, reading); the call then fails with a {@code TIMED_OUT}
 * {@link TTransportException} (a timeout fallback). The call runs in the caller's thread, as before: only
 * the close runs in the watchdog's one daemon thread, shared by every client. The socket timeout stays, at
 * the same value, so a lost watchdog could not leave a call waiting forever.
 */
public final class PlannerClient {

    /** Closes the connections of calls past their deadline; one daemon thread for the whole JVM. */
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private final String host;
    private final int port;
    private final int timeoutMs;
    private final String token;

    /** {@code timeoutMs} bounds the whole call: a planner slower than that fails the call. */
    public PlannerClient(String host, int port, int timeoutMs) {
        this(host, port, timeoutMs, null);
    }

    /** With the service's shared {@code token} (null: none), sent with every plan call. */
    public PlannerClient(String host, int port, int timeoutMs, String token) {
        this.host = host;
        this.port = port;
        this.timeoutMs = timeoutMs;
        this.token = token;
    }

    public PlanResponse plan(PlanRequest request) throws TException {
        if (token != null) {
            request.setToken(token);
        }
        return call(client -> client.plan(request));
    }

    public Health health() throws TException {
        return call(PlannerService.Client::health);
    }

    public String address() {
        return host + ":" + port;
    }

    private <T> T call(Call<T> call) throws TException {
        TSocket socket = new TSocket(new TConfiguration(), host, port, timeoutMs, timeoutMs);
        TTransport transport = new TFramedTransport(socket);
        AtomicBoolean expired = new AtomicBoolean();
        ScheduledFuture<?> deadline = WATCHDOG.schedule(() -> {
            expired.set(true);
            socket.close();
        }, timeoutMs, TimeUnit.MILLISECONDS);
        try {
            transport.open();
            return call.on(new PlannerService.Client(new TBinaryProtocol(transport)));
        } catch (TException | RuntimeException failure) {
            if (expired.get()) {
                // Whatever the close caused (a closed socket, a null one), the cause is the deadline.
                throw new TTransportException(TTransportException.TIMED_OUT,
                    "no complete answer within " + timeoutMs + " ms", failure);
            }
            throw failure;
        } finally {
            deadline.cancel(false);
            transport.close();
        }
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "storm-planner-call-deadline");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);  // calls that end in time leave no task behind
        return executor;
    }

    @FunctionalInterface
    private interface Call<T> {
        T on(PlannerService.Client client) throws TException;
    }
}
