package io.pgsink.core.config;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * The CSV dialect of {@code COPY ... FROM STDIN (FORMAT csv)}: delimiter, quote, escape, the string
 * that stands for NULL, and what to do with NUL characters. Every character is one ASCII byte, so
 * that it can never be part of a multi-byte UTF-8 sequence.
 *
 * @param delimiter separates fields
 * @param quote encloses values that need quoting
 * @param escape precedes a quote or escape character inside a quoted value (may equal {@code quote})
 * @param nullString an unquoted field equal to it is NULL; a value equal to it is written quoted
 * @param nulHandling what to do with U+0000 in text values
 */
public record CopyFormat(char delimiter, char quote, char escape, String nullString, NulCharacterHandling nulHandling)
{
    /** PostgreSQL's defaults for FORMAT csv: {@code , " "} and NULL as an unquoted empty field. */
    public static final CopyFormat DEFAULT = new CopyFormat(',', '"', '"', "", NulCharacterHandling.FAIL);

    public CopyFormat
    {
        requireNonNull(nullString, "nullString is null");
        requireNonNull(nulHandling, "nulHandling is null");
        List<String> problems = problems(delimiter, quote, escape, nullString);
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, "Invalid COPY format: " + String.join("; ", problems));
        }
    }

    /**
     * Checks the rules PostgreSQL applies to a CSV COPY format, plus pgsink's single-byte rule.
     *
     * @return every problem found, empty when the format is valid
     */
    public static List<String> problems(char delimiter, char quote, char escape, String nullString)
    {
        List<String> problems = new ArrayList<>();
        checkCharacter("delimiter", delimiter, problems);
        checkCharacter("quote", quote, problems);
        checkCharacter("escape", escape, problems);
        if (delimiter == quote) {
            problems.add("delimiter and quote must differ, both are " + describe(delimiter));
        }
        if (delimiter == escape) {
            problems.add("delimiter and escape must differ, both are " + describe(delimiter));
        }
        // A line starting with \. followed by a newline is PostgreSQL's end-of-data marker even in
        // CSV mode, and PostgreSQL silently ignores the rows after it. The CSV writer quotes values
        // starting with a backslash, but a backslash delimiter or quote, or a NULL string of \., can
        // still start a row that way.
        if (delimiter == '\\') {
            problems.add("delimiter must not be a backslash: a row starting with \\. would end the COPY data");
        }
        if (quote == '\\') {
            problems.add("quote must not be a backslash: a row starting with \\. would end the COPY data");
        }
        if (nullString.equals("\\.")) {
            problems.add("the NULL string must not be \\.: it is the end-of-data marker");
        }
        for (int i = 0; i < nullString.length(); i++) {
            char c = nullString.charAt(i);
            if (c == '\r' || c == '\n') {
                problems.add("the NULL string must not contain CR or LF");
                break;
            }
            if (c == delimiter) {
                problems.add("the NULL string must not contain the delimiter " + describe(delimiter));
                break;
            }
            if (c == quote) {
                problems.add("the NULL string must not contain the quote " + describe(quote));
                break;
            }
        }
        return problems;
    }

    private static void checkCharacter(String name, char c, List<String> problems)
    {
        if (c == '\r' || c == '\n') {
            problems.add(name + " must not be CR or LF");
        }
        else if (c == 0 || c >= 0x80) {
            problems.add(name + " must be a single-byte ASCII character other than NUL, got " + describe(c));
        }
    }

    private static String describe(char c)
    {
        if (c < 0x20 || c >= 0x7f) {
            return String.format("U+%04X", (int) c);
        }
        return "'" + c + "'";
    }
}
