package io.pgsink.core;

import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * Routes a source table to a target table, from a format such as {@code ${schema}.${table}},
 * {@code analytics.${schema}_${table}} or {@code ${table}}. Placeholders are {@code ${schema}} and
 * {@code ${table}}; the first '.' outside a placeholder separates the target schema from the target
 * table. Substituted names are used verbatim (they are quoted in SQL), so names containing dots,
 * quotes or spaces route correctly.
 */
public final class TableNameFormat
{
    private final String format;
    private final List<String> schemaParts;
    private final List<String> tableParts;

    private TableNameFormat(String format, List<String> schemaParts, List<String> tableParts)
    {
        this.format = format;
        this.schemaParts = schemaParts;
        this.tableParts = tableParts;
    }

    public static TableNameFormat parse(String format)
    {
        requireNonNull(format, "format is null");
        List<String> schemaParts = new ArrayList<>();
        List<String> tableParts = new ArrayList<>();
        List<String> current = tableParts;
        boolean dotSeen = false;
        StringBuilder literal = new StringBuilder();
        int i = 0;
        while (i < format.length()) {
            char c = format.charAt(i);
            if (c == '$' && format.startsWith("${", i)) {
                int end = format.indexOf('}', i);
                if (end < 0) {
                    throw new IllegalArgumentException("unclosed placeholder at position " + i);
                }
                String name = format.substring(i + 2, end);
                if (!name.equals("schema") && !name.equals("table")) {
                    throw new IllegalArgumentException("unknown placeholder ${" + name + "}; use ${schema} or ${table}");
                }
                if (literal.length() > 0) {
                    current.add(literal.toString());
                    literal.setLength(0);
                }
                current.add("${" + name + "}");
                i = end + 1;
            }
            else if (c == '.' && !dotSeen) {
                dotSeen = true;
                if (literal.length() > 0) {
                    current.add(literal.toString());
                    literal.setLength(0);
                }
                schemaParts.addAll(tableParts);
                tableParts.clear();
                i++;
            }
            else {
                literal.append(c);
                i++;
            }
        }
        if (literal.length() > 0) {
            current.add(literal.toString());
        }
        if (tableParts.isEmpty()) {
            throw new IllegalArgumentException("the table part is empty");
        }
        if (dotSeen && schemaParts.isEmpty()) {
            throw new IllegalArgumentException("the schema part before '.' is empty");
        }
        if (!dotSeen) {
            schemaParts.add("${schema}");
        }
        return new TableNameFormat(format, List.copyOf(schemaParts), List.copyOf(tableParts));
    }

    public TableId targetOf(TableId source)
    {
        return new TableId(render(schemaParts, source), render(tableParts, source));
    }

    private static String render(List<String> parts, TableId source)
    {
        if (parts.size() == 1) {
            return substitute(parts.get(0), source);
        }
        StringBuilder builder = new StringBuilder();
        for (String part : parts) {
            builder.append(substitute(part, source));
        }
        return builder.toString();
    }

    private static String substitute(String part, TableId source)
    {
        if (part.equals("${schema}")) {
            return source.schema();
        }
        if (part.equals("${table}")) {
            return source.table();
        }
        return part;
    }

    @Override
    public String toString()
    {
        return format;
    }
}
