package org.stormplanner.metrics;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * An estimate of a tuple's payload in bytes, cheap enough to run on every emit.
 *
 * <p>It is not Kryo's serialized size (that is only known inside the transfer path, which hooks do not see):
 * strings count their length (UTF-16 characters, so ASCII text is exact), byte arrays their length,
 * numbers 8, booleans and characters 1, collections and maps the sum of their elements, anything else 16.
 * Good enough to tell a heavy stream from a light one, which is what placement needs.
 */
final class TupleSizes {

    static final int OTHER = 16;
    private static final int MAX_DEPTH = 4;

    private TupleSizes() {
    }

    static long estimate(List<Object> values) {
        if (values == null) {
            return 0;
        }
        long total = 0;
        for (Object value : values) {
            total += sizeOf(value, 0);
        }
        return total;
    }

    private static long sizeOf(Object value, int depth) {
        if (value == null) {
            return 1;
        }
        if (value instanceof CharSequence) {
            return ((CharSequence) value).length();
        }
        if (value instanceof byte[]) {
            return ((byte[]) value).length;
        }
        if (value instanceof Number) {
            return 8;
        }
        if (value instanceof Boolean || value instanceof Character) {
            return 1;
        }
        if (depth >= MAX_DEPTH) {
            return OTHER;
        }
        if (value instanceof Collection) {
            long total = 0;
            for (Object item : (Collection<?>) value) {
                total += sizeOf(item, depth + 1);
            }
            return total;
        }
        if (value instanceof Map) {
            long total = 0;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                total += sizeOf(entry.getKey(), depth + 1) + sizeOf(entry.getValue(), depth + 1);
            }
            return total;
        }
        return OTHER;
    }
}
