package io.pgsink.connector.standalone.logging;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * How the runnable jar logs: {@code text} (slf4j-simple's lines on standard error, the default) or
 * {@code json} (one JSON object per line on standard output, for log collectors). Chosen by the
 * system property {@value #PROPERTY} or else the environment variable {@value #VARIABLE}, before
 * anything logs: the binding is slf4j's choice at its first logger.
 */
public final class LogFormat
{
    public static final String PROPERTY = "pgsink.log.format";
    public static final String VARIABLE = "PGSINK_LOG_FORMAT";
    static final String SLF4J_PROVIDER = "slf4j.provider";
    /** slf4j's own messages: at INFO it says on standard error which provider {@link #SLF4J_PROVIDER} named. */
    static final String SLF4J_VERBOSITY = "slf4j.internal.verbosity";

    private LogFormat() {}

    /** Whether this JVM logs JSON lines (what {@link #select} bound slf4j to). */
    public static boolean json()
    {
        return JsonServiceProvider.class.getName().equals(System.getProperty(SLF4J_PROVIDER));
    }

    /**
     * Binds slf4j to the format {@code system} or {@code environment} asks for; what is wrong with
     * the value asked for, if anything (then nothing is changed).
     */
    public static Optional<String> select(Properties system, Map<String, String> environment)
    {
        String format = system.getProperty(PROPERTY, environment.getOrDefault(VARIABLE, "text"));
        switch (format.strip().toLowerCase(Locale.ROOT)) {
            case "text":
                return Optional.empty();
            case "json":
                system.setProperty(SLF4J_PROVIDER, JsonServiceProvider.class.getName());
                if (system.getProperty(SLF4J_VERBOSITY) == null) {
                    system.setProperty(SLF4J_VERBOSITY, "WARN");
                }
                return Optional.empty();
            default:
                String source = system.getProperty(PROPERTY) != null
                        ? "system property " + PROPERTY
                        : "environment variable " + VARIABLE;
                return Optional.of("Invalid value '" + format + "' for " + source + ": must be one of text, json");
        }
    }
}
