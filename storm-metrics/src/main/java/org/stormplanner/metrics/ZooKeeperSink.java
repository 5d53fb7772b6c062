package org.stormplanner.metrics;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.storm.shade.org.apache.zookeeper.KeeperException;
import org.apache.storm.shade.org.apache.zookeeper.ZooDefs;
import org.apache.storm.shade.org.apache.zookeeper.data.ACL;
import org.apache.storm.shade.org.apache.zookeeper.data.Id;

/**
 * Writes windows with Storm's own (shaded) Curator, which every worker has on its classpath.
 *
 * <p>Persistent znodes, not ephemeral ones: a window must outlive a worker that a re-plan restarts, so the
 * planner still sees the executor's traffic while its new worker starts. They are removed when the topology
 * is killed (by the planner service, which watches Storm's list of topologies).
 *
 * <p>The client is created on the publisher's thread at the first write, so a task's prepare never waits
 * for ZooKeeper. Curator reconnects by itself; a write while ZooKeeper is away fails after its bounded
 * retries, and that window is lost (the next one carries cumulative totals, so nothing is lost for good).
 *
 * <p>ACLs: where the cluster has ZooKeeper authentication for topologies ({@code
 * storm.zookeeper.topology.auth.scheme}/{@code payload}, which Nimbus sets per topology), the topology's znode
 * and its task znodes are created as Storm creates its workers' znodes ({@code Utils.getWorkerACL}): every
 * right for their creator (this topology's credentials), every right for {@code storm.zookeeper.superACL} when
 * set, and read for everyone, so the planner service reads them without credentials while no other topology
 * can forge or delete this one's windows. The root above them stays open: every topology creates its own
 * znode under it. Without authentication the znodes are open, as Storm's own are then.
 */
final class ZooKeeperSink implements WindowSink {

    private final String connectString;
    private final int sessionTimeoutMs;
    private final int connectionTimeoutMs;
    private final String authScheme;
    private final String authPayload;
    private final List<ACL> acl;   // null: the open default
    private CuratorFramework client;

    ZooKeeperSink(MetricsConfig config, Map<String, Object> conf) {
        this.connectString = config.connectString();
        this.sessionTimeoutMs = intOf(conf, "storm.zookeeper.session.timeout", 20000);
        this.connectionTimeoutMs = intOf(conf, "storm.zookeeper.connection.timeout", 15000);
        // Workers authenticate to ZooKeeper with the topology's credentials when the cluster sets them.
        Object scheme = conf == null ? null : conf.get("storm.zookeeper.topology.auth.scheme");
        Object payload = conf == null ? null : conf.get("storm.zookeeper.topology.auth.payload");
        this.authScheme = scheme == null ? null : scheme.toString();
        this.authPayload = payload == null ? null : payload.toString();
        this.acl = aclFor(authScheme, authPayload, conf == null ? null : conf.get("storm.zookeeper.superACL"));
    }

    /** The ACL of a topology's znodes: null (open) without topology authentication. */
    static List<ACL> aclFor(String scheme, String payload, Object superAcl) {
        if (scheme == null || scheme.isBlank() || payload == null) {
            return null;
        }
        List<ACL> acl = new ArrayList<>(ZooDefs.Ids.CREATOR_ALL_ACL);
        acl.addAll(ZooDefs.Ids.READ_ACL_UNSAFE);
        if (superAcl != null && superAcl.toString().contains(":")) {
            String[] id = superAcl.toString().split(":", 2);
            acl.add(new ACL(ZooDefs.Perms.ALL, new Id(id[0], id[1])));
        }
        return acl;
    }

    @Override
    public synchronized void write(String path, byte[] data) throws Exception {
        CuratorFramework zk = client();
        try {
            zk.setData().forPath(path, data);
        } catch (KeeperException.NoNodeException absent) {
            try {
                create(zk, path, data);
            } catch (KeeperException.NodeExistsException raced) {
                zk.setData().forPath(path, data);
            }
        }
    }

    private void create(CuratorFramework zk, String path, byte[] data) throws Exception {
        if (acl == null) {
            zk.create().creatingParentsIfNeeded().forPath(path, data);
            return;
        }
        // Curator gives parents it creates the open default ACL: the topology's znode is made here, with its own.
        String topology = path.substring(0, path.lastIndexOf('/'));
        try {
            zk.create().creatingParentsIfNeeded().withACL(acl).forPath(topology, new byte[0]);
        } catch (KeeperException.NodeExistsException already) {
            // made by another task of this topology
        }
        zk.create().withACL(acl).forPath(path, data);
    }

    private CuratorFramework client() {
        if (client == null) {
            CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(connectionTimeoutMs)
                .retryPolicy(new BoundedExponentialBackoffRetry(500, 5000, 3));
            if (authScheme != null && authPayload != null) {
                builder.authorization(authScheme, authPayload.getBytes(StandardCharsets.UTF_8));
            }
            client = builder.build();
            client.start();
        }
        return client;
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.close();
            client = null;
        }
    }

    @Override
    public String toString() {
        return "ZooKeeper " + connectString;
    }

    private static int intOf(Map<String, Object> conf, String key, int defaultValue) {
        Object value = conf == null ? null : conf.get(key);
        if (value instanceof Number) {
            return ((Number) value).intValue();
        }
        try {
            return value == null ? defaultValue : Integer.parseInt(value.toString().trim());
        } catch (NumberFormatException e) {
            return defaultValue;
        }
    }
}
