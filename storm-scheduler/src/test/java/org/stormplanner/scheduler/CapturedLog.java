package org.stormplanner.scheduler;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/** Collects what one class logs at WARN and above (log4j2 is the binding on Nimbus' classpath). */
final class CapturedLog extends AbstractAppender implements AutoCloseable {

    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final Logger logger;

    CapturedLog(Class<?> source) {
        super("captured-" + source.getSimpleName(), null, null, true, Property.EMPTY_ARRAY);
        this.logger = (Logger) LogManager.getLogger(source);
        start();
        logger.addAppender(this);
    }

    @Override
    public void append(LogEvent event) {
        if (event.getLevel().isMoreSpecificThan(Level.WARN)) {
            warnings.add(event.getMessage().getFormattedMessage());
        }
    }

    List<String> warningsContaining(String text) {
        return warnings.stream().filter(w -> w.contains(text)).collect(Collectors.toList());
    }

    @Override
    public void close() {
        logger.removeAppender(this);
        stop();
    }
}
