package org.stormplanner.scheduler;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * A real TCP service that answers every connection with the header of a 1 MB frame and then one byte every
 * {@code dripMs}: each read of its answer is quick, the answer never completes. What a stuck or hostile
 * planner service looks like to the plugin.
 */
final class DrippingService implements AutoCloseable {

    private final ServerSocket server;
    private final Thread acceptor;
    private final long dripMs;

    DrippingService(long dripMs) throws IOException {
        this.dripMs = dripMs;
        this.server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::acceptAll, "dripping-service");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptAll() {
        while (!server.isClosed()) {
            try {
                Socket connection = server.accept();
                Thread dripper = new Thread(() -> drip(connection), "dripper");
                dripper.setDaemon(true);
                dripper.start();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void drip(Socket connection) {
        try (Socket socket = connection; InputStream in = socket.getInputStream();
             OutputStream out = socket.getOutputStream()) {
            in.read(new byte[65536]);                                   // the request (or its start)
            out.write(ByteBuffer.allocate(4).putInt(1 << 20).array());  // "a 1 MB answer follows"
            out.flush();
            for (int i = 0; i < (1 << 20); i++) {
                Thread.sleep(dripMs);
                out.write(0);
                out.flush();
            }
        } catch (IOException | InterruptedException gone) {
            // the client closed the connection: what the test waits for
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
