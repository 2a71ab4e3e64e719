package io.pgsink.connector.standalone.logging;

import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The slf4j binding of {@code log.format=json}: {@link JsonLogger}s on standard output. Not
 * registered as a service (slf4j-simple is the binding otherwise); {@link LogFormat#select} names
 * it in {@code slf4j.provider}.
 */
public final class JsonServiceProvider
        implements SLF4JServiceProvider
{
    private final IMarkerFactory markerFactory = new BasicMarkerFactory();
    private final MDCAdapter mdcAdapter = new NOPMDCAdapter();
    private ILoggerFactory loggerFactory;

    @Override
    public ILoggerFactory getLoggerFactory()
    {
        return loggerFactory;
    }

    @Override
    public IMarkerFactory getMarkerFactory()
    {
        return markerFactory;
    }

    @Override
    public MDCAdapter getMDCAdapter()
    {
        return mdcAdapter;
    }

    @Override
    public String getRequestedApiVersion()
    {
        return "2.0.99";
    }

    @Override
    public void initialize()
    {
        loggerFactory = new JsonLoggerFactory(System.out);
    }
}
