package org.stormplanner.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.List;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TProtocolException;
import org.apache.thrift.transport.TTransportException;
import org.junit.jupiter.api.Test;
import org.stormplanner.thrift.ErrorKind;
import org.stormplanner.thrift.PlannerError;

/** ExecutorIds, FallbackCause and OutcomeLog. */
class SmallPartsTest {

    @Test
    void executorIdsRoundTrip() {
        assertEquals("[3-5]", ExecutorIds.of(new ExecutorDetails(3, 5)));
        assertEquals(new ExecutorDetails(3, 5), ExecutorIds.parse("[3-5]"));
        assertEquals(new ExecutorDetails(3, 5), ExecutorIds.parse(" [ 3 - 5 ] "));
        assertNull(ExecutorIds.parse("[3, 5]"));
        assertNull(ExecutorIds.parse("3-5"));
        assertEquals(new ExecutorDetails(-1, -1), ExecutorIds.parse("[-1--1]"));
        assertNull(ExecutorIds.parse("[a-5]"));
        assertNull(ExecutorIds.parse("[99999999999-1]"));
        assertNull(ExecutorIds.parse(null));
    }

    @Test
    void callFailuresAreClassified() {
        assertEquals(FallbackCause.UNREACHABLE, FallbackCause.ofCallFailure(
            new TTransportException(TTransportException.NOT_OPEN, new ConnectException("Connection refused"))));
        assertEquals(FallbackCause.UNREACHABLE, FallbackCause.ofCallFailure(
            new TTransportException(TTransportException.END_OF_FILE, "closed")));
        assertEquals(FallbackCause.TIMEOUT, FallbackCause.ofCallFailure(
            new TTransportException(TTransportException.TIMED_OUT, new SocketTimeoutException("Read timed out"))));
        assertEquals(FallbackCause.TIMEOUT, FallbackCause.ofCallFailure(
            new TTransportException(TTransportException.NOT_OPEN, new SocketTimeoutException("connect timed out"))));
        assertEquals(FallbackCause.PLANNER_ERROR, FallbackCause.ofCallFailure(
            new PlannerError(ErrorKind.BAD_REQUEST, "no")));
        assertEquals(FallbackCause.PLANNER_ERROR, FallbackCause.ofCallFailure(new TProtocolException("junk")));
        assertEquals(FallbackCause.PLANNER_ERROR, FallbackCause.ofCallFailure(
            new TApplicationException(TApplicationException.INTERNAL_ERROR, "bug")));
        assertEquals(FallbackCause.PLANNER_ERROR, FallbackCause.ofCallFailure(
            new TTransportException(TTransportException.CORRUPTED_DATA, "frame too large")));
        assertEquals(FallbackCause.INTERNAL, FallbackCause.ofCallFailure(new NullPointerException()));
    }

    @Test
    void outcomeLogReportsOnlyChanges() {
        OutcomeLog log = new OutcomeLog();
        assertTrue(log.changed("t-1", "timeout"));
        assertFalse(log.changed("t-1", "timeout"));
        assertTrue(log.changed("t-1", "unreachable"));
        assertTrue(log.changed("t-2", "unreachable"));
        log.retainOnly(List.of("t-2"));
        assertNull(log.last("t-1"));
        assertTrue(log.changed("t-1", "unreachable"));
    }
}
