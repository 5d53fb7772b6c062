package org.stormplanner.metrics;

/** Where window documents go: ZooKeeper in a worker, a list in tests. */
interface WindowSink extends AutoCloseable {

    /** Creates or replaces the znode at {@code path} (parents included) with {@code data}. */
    void write(String path, byte[] data) throws Exception;

    @Override
    void close();
}
