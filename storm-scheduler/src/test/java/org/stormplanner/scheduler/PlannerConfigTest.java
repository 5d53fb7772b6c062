package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlannerConfigTest {

    @Test
    void defaultsWhenNothingIsSet() {
        PlannerConfig config = PlannerConfig.fromStormConf(new HashMap<>());
        assertEquals("127.0.0.1", config.serviceHost());
        assertEquals(7627, config.servicePort());
        assertEquals(5000, config.timeoutMs());
        assertEquals("auto", config.defaultAlgorithm());
        assertEquals("auto", config.algorithmFor(Map.of()));
        assertTrue(PlannerConfig.isEnabledFor(Map.of()));
    }

    @Test
    void readsStormYamlValuesOfAnyNumericOrStringShape() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("planner.service.host", "planner.example");
        conf.put("planner.service.port", 9090L);
        conf.put("planner.service.timeout.ms", "2500");
        conf.put("planner.default.algorithm", "topdown");
        PlannerConfig config = PlannerConfig.fromStormConf(conf);
        assertEquals("planner.example", config.serviceHost());
        assertEquals(9090, config.servicePort());
        assertEquals(2500, config.timeoutMs());
        assertEquals("topdown", config.defaultAlgorithm());
    }

    @Test
    void badStormYamlValuesNameTheKey() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> PlannerConfig.fromStormConf(Map.of("planner.service.port", "seventy")));
        assertTrue(e.getMessage().contains("planner.service.port"));
        assertThrows(IllegalArgumentException.class,
            () -> PlannerConfig.fromStormConf(Map.of("planner.service.timeout.ms", 0)));
    }

    @Test
    void topologyAlgorithmOverridesTheDefaultUnlessEmpty() {
        PlannerConfig config = PlannerConfig.fromStormConf(Map.of());
        assertEquals("milp", config.algorithmFor(Map.of("planner.algorithm", "milp")));
        assertEquals("auto", config.algorithmFor(Map.of("planner.algorithm", "  ")));
    }

    @Test
    void plannerEnabledAcceptsBooleansAndStrings() {
        assertFalse(PlannerConfig.isEnabledFor(Map.of("planner.enabled", false)));
        assertFalse(PlannerConfig.isEnabledFor(Map.of("planner.enabled", "False")));
        assertTrue(PlannerConfig.isEnabledFor(Map.of("planner.enabled", "yes please")));
    }

    @Test
    void optionsAreTopologyPlannerKeysOnly() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("planner.algorithm", "milp");
        conf.put("planner.max.migrations", 13);
        conf.put("planner.service.host", "x");
        conf.put("planner.default.algorithm", "even");
        conf.put("topology.workers", 2);
        assertEquals(Map.of("planner.algorithm", "milp", "planner.max.migrations", "13"),
            PlannerConfig.plannerOptionsOf(conf));
    }

    @Test
    void mapAndListOptionsAreSentAsJson() {
        Map<String, Object> conf = new HashMap<>();
        conf.put("planner.hetero.profiles", Map.of("input_rate", 8));
        conf.put("planner.list", List.of("a", 1));
        assertEquals(Map.of("planner.hetero.profiles", "{\"input_rate\":8}", "planner.list", "[\"a\",1]"),
            PlannerConfig.plannerOptionsOf(conf));
    }
}
