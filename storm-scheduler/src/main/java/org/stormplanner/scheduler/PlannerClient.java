package org.stormplanner.scheduler;

import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
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
 */
public final class PlannerClient {

    private final String host;
    private final int port;
    private final int timeoutMs;

    /** {@code timeoutMs} bounds the connect and every read: a planner slower than that fails the call. */
    public PlannerClient(String host, int port, int timeoutMs) {
        this.host = host;
        this.port = port;
        this.timeoutMs = timeoutMs;
    }

    public PlanResponse plan(PlanRequest request) throws TException {
        return call(client -> client.plan(request));
    }

    public Health health() throws TException {
        return call(PlannerService.Client::health);
    }

    public String address() {
        return host + ":" + port;
    }

    private <T> T call(Call<T> call) throws TException {
        TTransport transport = new TFramedTransport(
            new TSocket(new TConfiguration(), host, port, timeoutMs, timeoutMs));
        try {
            transport.open();
            return call.on(new PlannerService.Client(new TBinaryProtocol(transport)));
        } finally {
            transport.close();
        }
    }

    @FunctionalInterface
    private interface Call<T> {
        T on(PlannerService.Client client) throws TException;
    }
}
