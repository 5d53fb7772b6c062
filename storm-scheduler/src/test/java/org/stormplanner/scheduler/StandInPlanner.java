package org.stormplanner.scheduler;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.layered.TFramedTransport;
import org.stormplanner.thrift.Health;
import org.stormplanner.thrift.PlanRequest;
import org.stormplanner.thrift.PlanResponse;
import org.stormplanner.thrift.PlannerService;

/**
 * A TEST STAND-IN for the Python planner service: a Thrift server on a free loopback port, built from the
 * generated {@code PlannerService.Processor}, speaking the same framed transport and binary protocol. Each
 * test scripts its answer. It plans nothing by itself; the real service is exercised by
 * {@code LocalClusterWithPlannerServiceTest} and the cluster tests.
 */
final class StandInPlanner implements AutoCloseable {

    /** What the stand-in answers to one request. */
    @FunctionalInterface
    interface Answer {
        PlanResponse to(PlanRequest request) throws TException;
    }

    private final List<PlanRequest> requests = new CopyOnWriteArrayList<>();
    private final TServerSocket socket;
    private final TServer server;
    private final Thread thread;
    private volatile Answer answer;
    private volatile long delayMs;

    StandInPlanner(Answer answer) throws TTransportException {
        this.answer = answer;
        this.socket = new TServerSocket(new InetSocketAddress("127.0.0.1", 0));
        PlannerService.Iface handler = new PlannerService.Iface() {
            @Override
            public PlanResponse plan(PlanRequest request) throws TException {
                requests.add(request);
                sleep(delayMs);
                return StandInPlanner.this.answer.to(request);
            }

            @Override
            public Health health() {
                return new Health("ok", "stand-in", List.of("even"), 0L);
            }
        };
        this.server = new TThreadPoolServer(new TThreadPoolServer.Args(socket)
            .processor(new PlannerService.Processor<>(handler))
            .transportFactory(new TFramedTransport.Factory())
            .protocolFactory(new TBinaryProtocol.Factory())
            .minWorkerThreads(1)
            .maxWorkerThreads(4)
            .stopTimeoutVal(1)
            .stopTimeoutUnit(TimeUnit.SECONDS));
        this.thread = new Thread(server::serve, "stand-in-planner");
        this.thread.setDaemon(true);
        this.thread.start();
        // serve() resets the server's stop flag when it starts: a close() before that would be lost.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!server.isServing()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the stand-in planner did not start serving");
            }
            Thread.onSpinWait();
        }
    }

    int port() {
        return socket.getServerSocket().getLocalPort();
    }

    /** Every request received so far, in order. */
    List<PlanRequest> requests() {
        return requests;
    }

    PlanRequest lastRequest() {
        return requests.get(requests.size() - 1);
    }

    StandInPlanner answering(Answer next) {
        this.answer = next;
        return this;
    }

    /** Makes every answer late by this much. */
    StandInPlanner delayingBy(long millis) {
        this.delayMs = millis;
        return this;
    }

    @Override
    public void close() {
        server.stop();
        socket.close();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            // Keep the interrupt for the caller (try-with-resources would suppress the exception).
            Thread.currentThread().interrupt();
        }
    }

    private static void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
