package io.pgsink.connector.standalone.logging;

import org.slf4j.Logger;
import org.slf4j.simple.SimpleLoggerFactory;

import java.io.PrintStream;

import static java.util.Objects.requireNonNull;

/** slf4j-simple's factory (its configuration, its levels), making {@link JsonLogger}s that write to one stream. */
final class JsonLoggerFactory
        extends SimpleLoggerFactory
{
    private final PrintStream out;

    JsonLoggerFactory(PrintStream out)
    {
        // reads slf4j-simple's configuration first
        super();
        this.out = requireNonNull(out, "out is null");
    }

    @Override
    protected Logger createLogger(String name)
    {
        return new JsonLogger(name, out);
    }
}
