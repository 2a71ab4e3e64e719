package io.pgsink.connector.standalone.logging;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NormalizedParameters;
import org.slf4j.simple.SimpleLogger;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;

import static java.util.Objects.requireNonNull;

/**
 * A logger writing one JSON object per event and line: {@code time} (ISO-8601, UTC), {@code level},
 * {@code logger}, {@code thread}, {@code message} and, with a throwable, {@code exception} (its
 * stack trace). Which levels are enabled is slf4j-simple's business: the same
 * {@code org.slf4j.simpleLogger.*} properties as the text format. Lines are written whole, under the
 * stream's lock, so lines of two threads never interleave.
 */
final class JsonLogger
        extends SimpleLogger
{
    private static final JsonFactory JSON = new JsonFactory();

    private final transient PrintStream out;

    JsonLogger(String name, PrintStream out)
    {
        super(name);
        this.out = requireNonNull(out, "out is null");
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, @Nullable Marker marker, String messagePattern,
            @Nullable Object[] arguments, @Nullable Throwable throwable)
    {
        write(level, messagePattern, arguments, throwable);
    }

    @Override
    public void log(LoggingEvent event)
    {
        if (!isLevelEnabled(event.getLevel().toInt())) {
            return;
        }
        NormalizedParameters parameters = NormalizedParameters.normalize(event);
        write(event.getLevel(), parameters.getMessage(), parameters.getArguments(), event.getThrowable());
    }

    private void write(Level level, @Nullable String messagePattern, @Nullable Object[] arguments,
            @Nullable Throwable throwable)
    {
        String message = MessageFormatter.basicArrayFormat(messagePattern, arguments);
        String line = line(Instant.now(), level, getName(), Thread.currentThread().getName(), message, throwable);
        out.print(line);
        out.flush();
    }

    /** One event as a JSON object and a newline. */
    static String line(Instant time, Level level, String logger, String thread, @Nullable String message,
            @Nullable Throwable throwable)
    {
        StringWriter text = new StringWriter(256);
        try (JsonGenerator json = JSON.createGenerator(text)) {
            json.writeStartObject();
            json.writeStringField("time", time.toString());
            json.writeStringField("level", level.toString());
            json.writeStringField("logger", logger);
            json.writeStringField("thread", thread);
            json.writeStringField("message", message == null ? "" : message);
            if (throwable != null) {
                StringWriter trace = new StringWriter();
                try (PrintWriter writer = new PrintWriter(trace)) {
                    throwable.printStackTrace(writer);
                }
                json.writeStringField("exception", trace.toString());
            }
            json.writeEndObject();
        }
        catch (IOException e) {
            // a StringWriter does not fail
            throw new UncheckedIOException(e);
        }
        return text.append('\n').toString();
    }
}
