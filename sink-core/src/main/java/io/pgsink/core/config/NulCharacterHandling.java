package io.pgsink.core.config;

/**
 * What to do with a NUL character (U+0000) in a text value. PostgreSQL cannot store NUL in text,
 * json or xml values.
 */
public enum NulCharacterHandling
{
    /** Refuse the row with an error naming table, key and column (default). */
    FAIL,
    /** Drop NUL characters from the value and write the rest. */
    STRIP,
}
