package io.pgsink.connector.standalone.service;

import io.pgsink.core.change.SourcePosition;

import java.util.Locale;

/**
 * A Debezium PostgreSQL position as {@code metadata.source.position.column} shows it: the change's
 * LSN in PostgreSQL's text form ({@code 0/16B3748}, which casts to {@code pg_lsn} to order by it),
 * read from the offset's {@code lsn} without parsing the whole JSON (it runs once per row). An
 * offset without one is shown whole.
 *
 * <p>Thread-safe.
 */
public final class LsnText
{
    private static final String FIELD = "\"lsn\":";

    private LsnText() {}

    public static String of(SourcePosition position)
    {
        String offset = position.offset();
        int start = offset.indexOf(FIELD);
        if (start < 0) {
            return offset;
        }
        int index = start + FIELD.length();
        long lsn = 0;
        int digits = 0;
        while (index < offset.length() && offset.charAt(index) >= '0' && offset.charAt(index) <= '9') {
            lsn = lsn * 10 + (offset.charAt(index) - '0');
            index++;
            digits++;
        }
        if (digits == 0 || digits > 19) {
            return offset;
        }
        return Long.toHexString(lsn >>> 32).toUpperCase(Locale.ROOT) + "/"
                + Long.toHexString(lsn & 0xFFFF_FFFFL).toUpperCase(Locale.ROOT);
    }
}
