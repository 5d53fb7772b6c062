package org.stormplanner.grouping;

import org.apache.storm.grouping.PartialKeyGrouping;
import org.apache.storm.tuple.Fields;

/**
 * Storm's {@link PartialKeyGrouping} (the "power of both choices", PoTC) on named fields, built from one string.
 *
 * <p>A topology declared outside Java (streamparse's Thrift DSL) can name a custom grouping only as a class
 * with constructor arguments of primitive types ({@code JavaObject}); {@code PartialKeyGrouping}'s own
 * constructor takes a {@link Fields}, and its no-argument form hashes the tuple's first value. This class
 * takes the key fields as one comma-separated string ({@code "origin,dest"}) and is otherwise
 * {@code PartialKeyGrouping}: each key goes to the less loaded of its two candidate tasks.
 *
 * <p>{@code storm-planner submit} bundles this package into the topology jar beside the metrics hook, so the
 * workers load it from there.
 */
public class PartialKeyFieldsGrouping extends PartialKeyGrouping {
    private static final long serialVersionUID = 1L;

    public PartialKeyFieldsGrouping(String fields) {
        super(parse(fields));
    }

    static Fields parse(String fields) {
        if (fields == null || fields.isBlank()) {
            throw new IllegalArgumentException("PartialKeyFieldsGrouping: no key fields given (expected \"a,b\")");
        }
        String[] names = fields.split(",");
        for (int i = 0; i < names.length; i++) {
            names[i] = names[i].trim();
            if (names[i].isEmpty()) {
                throw new IllegalArgumentException("PartialKeyFieldsGrouping: an empty field name in \"" + fields + "\"");
            }
        }
        return new Fields(names);
    }
}
