package org.stormplanner.grouping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.Thrift;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.JavaObject;
import org.apache.storm.generated.JavaObjectArg;
import org.apache.storm.task.WorkerTopologyContext;
import org.apache.storm.tuple.Fields;
import org.junit.jupiter.api.Test;

class PartialKeyFieldsGroupingTest {
    private static final List<Integer> TASKS = List.of(11, 12, 13, 14, 15, 16);

    private static PartialKeyFieldsGrouping prepared(String fields) {
        Map<String, Map<String, Fields>> outputs = new HashMap<>();
        outputs.put("extract", Map.of("default", new Fields("tail_num", "year", "delay", "origin", "dest")));
        WorkerTopologyContext context = new WorkerTopologyContext(null, Map.of(), Map.of(), Map.of(), outputs,
                "topology-1", null, null, 6700, List.of(), Map.of(), Map.of());
        PartialKeyFieldsGrouping grouping = new PartialKeyFieldsGrouping(fields);
        grouping.prepare(context, new GlobalStreamId("extract", "default"), TASKS);
        return grouping;
    }

    @Test
    void aKeyGoesToAtMostTwoTasksWhateverTheOtherFields() {
        PartialKeyFieldsGrouping grouping = prepared(" origin , dest ");
        Set<Integer> chosen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            List<Integer> tasks = grouping.chooseTasks(1, List.of("N" + i, 2004, 5.0, "AAB", "AAC"));
            assertEquals(1, tasks.size());
            chosen.addAll(tasks);
        }
        // Partial key grouping: the key's two candidates share its tuples (a fields grouping would use one).
        assertEquals(2, chosen.size(), "one route over " + chosen);
        assertTrue(TASKS.containsAll(chosen));
    }

    @Test
    void theKeyIsTheNamedFieldsNotTheFirstValue() {
        PartialKeyFieldsGrouping grouping = prepared("origin,dest");
        Set<Integer> chosen = new HashSet<>();
        for (int i = 0; i < 60; i++) {
            chosen.addAll(grouping.chooseTasks(1, List.of("N1", 2004, 5.0, "A" + i, "B")));
        }
        assertTrue(chosen.size() > 2, "sixty routes of one plane went to " + chosen);
    }

    @Test
    void stormBuildsItFromTheJavaObjectStreamparseDeclares() {
        // What a worker does with a custom_object grouping (GrouperFactory): the class by name, its String constructor.
        JavaObject declared = new JavaObject(PartialKeyFieldsGrouping.class.getName(),
                List.of(JavaObjectArg.string_arg("origin,dest")));
        Object grouping = Thrift.instantiateJavaObject(declared);
        assertTrue(grouping instanceof PartialKeyFieldsGrouping, String.valueOf(grouping));
    }

    @Test
    void anEmptyFieldListIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new PartialKeyFieldsGrouping(" "));
        assertThrows(IllegalArgumentException.class, () -> new PartialKeyFieldsGrouping("origin,,dest"));
    }
}
