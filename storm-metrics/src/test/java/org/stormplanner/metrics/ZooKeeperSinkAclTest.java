package org.stormplanner.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryOneTime;
import org.apache.storm.shade.org.apache.zookeeper.KeeperException;
import org.apache.storm.shade.org.apache.zookeeper.ZooDefs;
import org.apache.storm.shade.org.apache.zookeeper.data.ACL;
import org.apache.storm.testing.InProcessZookeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sink's znode ACLs against a real (in-process) ZooKeeper: with topology authentication one
 * topology cannot forge another's windows; without it the znodes are open, as before. */
class ZooKeeperSinkAclTest {

    private static final String ROOT = "/storm-planner/metrics";
    private static final String TOPOLOGY_A = ROOT + "/words-1-1700000000";

    private InProcessZookeeper zookeeper;
    private final List<AutoCloseable> closing = new java.util.ArrayList<>();

    @BeforeEach
    void startZooKeeper() throws Exception {
        zookeeper = new InProcessZookeeper();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        zookeeper.close();
    }

    private ZooKeeperSink sink(Map<String, Object> auth) {
        MetricsConfig config = new MetricsConfig(Map.of("storm.zookeeper.servers", List.of("127.0.0.1"),
            "storm.zookeeper.port", zookeeper.getPort()));
        java.util.HashMap<String, Object> conf = new java.util.HashMap<>(auth);
        conf.put("storm.zookeeper.connection.timeout", 2000);
        conf.put("storm.zookeeper.session.timeout", 4000);
        ZooKeeperSink sink = new ZooKeeperSink(config, conf);
        closing.add(sink::close);
        return sink;
    }

    private CuratorFramework client(String digest) {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
            .connectString("127.0.0.1:" + zookeeper.getPort()).retryPolicy(new RetryOneTime(100));
        if (digest != null) {
            builder.authorization("digest", digest.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = builder.build();
        client.start();
        closing.add(client::close);
        return client;
    }

    private static Map<String, Object> auth(String payload) {
        return Map.of("storm.zookeeper.topology.auth.scheme", "digest",
            "storm.zookeeper.topology.auth.payload", payload);
    }

    @Test
    void withTopologyAuthenticationOnlyTheTopologyWritesItsWindowsAndEveryoneReadsThem() throws Exception {
        ZooKeeperSink owner = sink(auth("words-1:secret-a"));
        owner.write(TOPOLOGY_A + "/1", "{\"seq\": 1}".getBytes(StandardCharsets.UTF_8));
        owner.write(TOPOLOGY_A + "/2", "{\"seq\": 1}".getBytes(StandardCharsets.UTF_8));

        CuratorFramework anonymous = client(null);
        assertArrayEquals("{\"seq\": 1}".getBytes(StandardCharsets.UTF_8), anonymous.getData().forPath(TOPOLOGY_A + "/1"));
        CuratorFramework other = client("trends-2:secret-b");
        byte[] forged = "{\"seq\": 99}".getBytes(StandardCharsets.UTF_8);
        for (CuratorFramework attacker : List.of(anonymous, other)) {
            assertThrows(KeeperException.NoAuthException.class, () -> attacker.setData().forPath(TOPOLOGY_A + "/1", forged));
            assertThrows(KeeperException.NoAuthException.class, () -> attacker.create().forPath(TOPOLOGY_A + "/7", forged));
            assertThrows(KeeperException.NoAuthException.class, () -> attacker.delete().forPath(TOPOLOGY_A + "/2"));
        }
        // The topology itself goes on writing; another topology still creates its own znode under the root.
        owner.write(TOPOLOGY_A + "/1", "{\"seq\": 2}".getBytes(StandardCharsets.UTF_8));
        assertArrayEquals("{\"seq\": 2}".getBytes(StandardCharsets.UTF_8), anonymous.getData().forPath(TOPOLOGY_A + "/1"));
        sink(auth("trends-2:secret-b")).write(ROOT + "/trends-2-1700000001/5", forged);

        List<ACL> acl = anonymous.getACL().forPath(TOPOLOGY_A);
        assertTrue(acl.stream().anyMatch(a -> a.getId().getScheme().equals("digest")
            && a.getId().getId().startsWith("words-1:") && a.getPerms() == ZooDefs.Perms.ALL), acl.toString());
        assertTrue(acl.contains(ZooDefs.Ids.READ_ACL_UNSAFE.get(0)), acl.toString());
        assertEquals(acl, anonymous.getACL().forPath(TOPOLOGY_A + "/1"));
        assertEquals(ZooDefs.Ids.OPEN_ACL_UNSAFE, anonymous.getACL().forPath(ROOT));
    }

    @Test
    void theStormSuperUserKeepsEveryRight() {
        List<ACL> acl = ZooKeeperSink.aclFor("digest", "words-1:secret", "digest:storm:hash");
        assertTrue(acl.stream().anyMatch(a -> a.getId().getScheme().equals("digest")
            && a.getId().getId().equals("storm:hash") && a.getPerms() == ZooDefs.Perms.ALL), acl.toString());
        assertNull(ZooKeeperSink.aclFor(null, null, "digest:storm:hash"));
        assertNull(ZooKeeperSink.aclFor("", "x:y", null));
    }

    @Test
    void withoutAuthenticationTheZnodesAreOpenAsBefore() throws Exception {
        sink(Map.of()).write(TOPOLOGY_A + "/1", "{}".getBytes(StandardCharsets.UTF_8));
        CuratorFramework anyone = client(null);
        assertEquals(ZooDefs.Ids.OPEN_ACL_UNSAFE, anyone.getACL().forPath(TOPOLOGY_A + "/1"));
        anyone.setData().forPath(TOPOLOGY_A + "/1", "{\"seq\": 3}".getBytes(StandardCharsets.UTF_8));
    }
}
