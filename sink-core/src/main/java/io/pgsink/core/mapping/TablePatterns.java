package io.pgsink.core.mapping;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.definition.ConfigType;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import static java.util.Objects.requireNonNull;

/**
 * A comma-separated list of regular expressions, each matched against the whole
 * {@code schema.table} name of a table (as Debezium's {@code table.include.list} is), e.g.
 * {@code public\.orders,audit\..*}. Empty matches no table.
 */
public final class TablePatterns
{
    public static final TablePatterns NONE = new TablePatterns(List.of());
    public static final ConfigType<TablePatterns> CONFIG_TYPE = ConfigType.text(TablePatterns::parse,
            TablePatterns::toString);

    private final List<Pattern> patterns;

    private TablePatterns(List<Pattern> patterns)
    {
        this.patterns = List.copyOf(requireNonNull(patterns, "patterns is null"));
    }

    /**
     * @throws IllegalArgumentException naming the expression that does not compile
     */
    public static TablePatterns parse(String text)
    {
        List<Pattern> patterns = new ArrayList<>();
        for (String part : text.split(",")) {
            String expression = part.trim();
            if (expression.isEmpty()) {
                continue;
            }
            try {
                patterns.add(Pattern.compile(expression));
            }
            catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("'" + expression + "' is not a regular expression: "
                        + e.getDescription());
            }
        }
        return new TablePatterns(patterns);
    }

    public boolean isEmpty()
    {
        return patterns.isEmpty();
    }

    /** Whether one of the expressions matches the whole {@code schema.table} of {@code table}. */
    public boolean matches(TableId table)
    {
        String name = table.schema() + "." + table.table();
        for (Pattern pattern : patterns) {
            if (pattern.matcher(name).matches()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString()
    {
        List<String> expressions = new ArrayList<>(patterns.size());
        for (Pattern pattern : patterns) {
            expressions.add(pattern.pattern());
        }
        return String.join(",", expressions);
    }
}
