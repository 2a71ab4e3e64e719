package io.pgsink.core.mapping;

import io.pgsink.core.change.TableId;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import static java.util.Objects.requireNonNull;

/**
 * A {@code column.include.list} or {@code column.exclude.list}: comma-separated regular
 * expressions, each matched whole and ignoring case against a column's fully qualified source
 * name {@code schema.table.column}, as Debezium reads its own column lists. An exact name is an
 * expression that matches itself ({@code public.users.email}); {@code public.users.secret_.*}
 * matches several.
 *
 * <p>Immutable.
 */
public final class ColumnPatterns
{
    public static final ColumnPatterns NONE = new ColumnPatterns(List.of(), List.of());

    private final List<String> texts;
    private final List<Pattern> patterns;

    private ColumnPatterns(List<String> texts, List<Pattern> patterns)
    {
        this.texts = List.copyOf(texts);
        this.patterns = List.copyOf(patterns);
    }

    /**
     * @throws IllegalArgumentException naming the entry that is not a regular expression
     */
    public static ColumnPatterns parse(String text)
    {
        requireNonNull(text, "text is null");
        List<String> texts = new ArrayList<>();
        List<Pattern> patterns = new ArrayList<>();
        for (String part : text.split(",")) {
            String entry = part.trim();
            if (entry.isEmpty()) {
                continue;
            }
            try {
                patterns.add(Pattern.compile(entry, Pattern.CASE_INSENSITIVE));
            }
            catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("'" + entry + "' is not a regular expression: " + e.getDescription()
                        + (e.getIndex() >= 0 ? " near index " + e.getIndex() : ""));
            }
            texts.add(entry);
        }
        return new ColumnPatterns(texts, patterns);
    }

    public boolean isEmpty()
    {
        return patterns.isEmpty();
    }

    /** The entries as written, in order. */
    public List<String> entries()
    {
        return texts;
    }

    /** Whether some entry matches {@code schema.table.column}. */
    public boolean matches(TableId table, String column)
    {
        return matchingEntry(table, column) >= 0;
    }

    /** The index of the first entry matching {@code schema.table.column}, or -1. */
    int matchingEntry(TableId table, String column)
    {
        String qualified = table.schema() + "." + table.table() + "." + column;
        for (int i = 0; i < patterns.size(); i++) {
            if (patterns.get(i).matcher(qualified).matches()) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public String toString()
    {
        return String.join(",", texts);
    }
}
