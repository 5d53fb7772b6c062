package org.stormplanner.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SubprocessCpuTest {

    private static final List<SubprocessCpu.Signature> SIGNATURES = List.of(
        new SubprocessCpu.Signature("count", "trends.bolts.CountBolt"),
        new SubprocessCpu.Signature("rank", "trends.bolts.RankBolt"),
        new SubprocessCpu.Signature("any", "streamparse_run"));

    @Test
    void aProcessBelongsToTheComponentWhoseScriptIsAWordOfItsCommandLine() {
        assertEquals("count", SubprocessCpu.componentOf(
            "/venv/bin/python /venv/bin/streamparse_run trends.bolts.CountBolt", SIGNATURES));
        assertEquals("any", SubprocessCpu.componentOf("/venv/bin/streamparse_run other.Bolt", SIGNATURES));
        assertNull(SubprocessCpu.componentOf("/usr/bin/python trends.bolts.CountBoltX", SIGNATURES));
        assertNull(SubprocessCpu.componentOf("java -cp x Worker", SIGNATURES));
    }

    @Test
    void measuresTheCpuOfABusyChildProcessByComponent() throws Exception {
        SubprocessCpu cpu = new SubprocessCpu();
        cpu.sample(SIGNATURES);  // baseline: nothing started yet
        // A shell busy for a moment, then idle; its command line names the "count" component's script. It
        // says when its loop is over: on a loaded machine the loop can take longer than any fixed wait. It
        // waits with the builtin `read` (on its standard input, open until the test ends), never `sleep`:
        // the shell forks for `sleep`, and a sample between the fork and the exec sees two processes with
        // the script's command line.
        Process busy = new ProcessBuilder("sh", "-c",
            "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; echo looped; read -r line", "sh",
            "trends.bolts.CountBolt").start();
        try (BufferedReader out = new BufferedReader(
                new InputStreamReader(busy.getInputStream(), StandardCharsets.UTF_8))) {
            assertEquals("looped", out.readLine());
            Map<String, SubprocessCpu.Usage> usage = cpu.sample(SIGNATURES);
            assertTrue(usage.containsKey("count"), usage.toString());
            assertEquals(1, usage.get("count").processes());
            assertTrue(usage.get("count").cpuMs() >= 100, "busy loop used " + usage.get("count").cpuMs() + " ms");
            Thread.sleep(300);
            Map<String, SubprocessCpu.Usage> idle = cpu.sample(SIGNATURES);
            assertTrue(idle.get("count").cpuMs() < 100, "the sleeping child is idle: " + idle);
        } finally {
            busy.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
