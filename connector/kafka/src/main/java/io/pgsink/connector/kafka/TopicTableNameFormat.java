package io.pgsink.connector.kafka;

import io.pgsink.core.TableId;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * Routes a Kafka record to its target table, from {@code target.table.name.format} as the Kafka
 * Connect sink reads it: the placeholders of the standalone service, {@code ${schema}} and
 * {@code ${table}} (the source schema and table the record names), their aliases
 * {@code ${source.schema}} and {@code ${source.table}}, and {@code ${topic}}, the record's topic
 * with every '.' replaced by '_' (as Debezium's JDBC sink does). The first '.' outside a placeholder
 * separates the target schema from the table name; without one, the target schema is the source
 * schema, or {@code public} when the format routes by {@code ${topic}} (so that a topic's records go
 * to one table whatever they say about their source). Substituted names are used verbatim (they
 * are quoted in SQL).
 *
 * <p>Immutable and thread-safe.
 */
final class TopicTableNameFormat
{
    static final String TOPIC = "${topic}";
    static final String SOURCE_SCHEMA = "${source.schema}";
    static final String SOURCE_TABLE = "${source.table}";
    private static final String DEFAULT_TOPIC_SCHEMA = "public";

    private final String format;
    private final List<String> schemaParts;
    private final List<String> tableParts;
    private final boolean needsSourceTable;

    private TopicTableNameFormat(String format, List<String> schemaParts, List<String> tableParts)
    {
        this.format = format;
        this.schemaParts = List.copyOf(schemaParts);
        this.tableParts = List.copyOf(tableParts);
        boolean needsSource = false;
        for (String part : this.schemaParts) {
            needsSource |= part.equals(SOURCE_SCHEMA) || part.equals(SOURCE_TABLE);
        }
        for (String part : this.tableParts) {
            needsSource |= part.equals(SOURCE_SCHEMA) || part.equals(SOURCE_TABLE);
        }
        this.needsSourceTable = needsSource;
    }

    /**
     * @throws IllegalArgumentException naming what is wrong with the format
     */
    static TopicTableNameFormat parse(String format)
    {
        requireNonNull(format, "format is null");
        List<String> schemaParts = new ArrayList<>();
        List<String> tableParts = new ArrayList<>();
        boolean dotSeen = false;
        boolean topicUsed = false;
        StringBuilder literal = new StringBuilder();
        int i = 0;
        while (i < format.length()) {
            char c = format.charAt(i);
            if (c == '$' && format.startsWith("${", i)) {
                int end = format.indexOf('}', i);
                if (end < 0) {
                    throw new IllegalArgumentException("unclosed placeholder at position " + i);
                }
                String placeholder = canonical(format.substring(i, end + 1));
                topicUsed |= placeholder.equals(TOPIC);
                if (literal.length() > 0) {
                    tableParts.add(literal.toString());
                    literal.setLength(0);
                }
                tableParts.add(placeholder);
                i = end + 1;
            }
            else if (c == '.' && !dotSeen) {
                dotSeen = true;
                if (literal.length() > 0) {
                    tableParts.add(literal.toString());
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
            tableParts.add(literal.toString());
        }
        if (tableParts.isEmpty()) {
            throw new IllegalArgumentException("the table part is empty");
        }
        if (dotSeen && schemaParts.isEmpty()) {
            throw new IllegalArgumentException("the schema part before '.' is empty");
        }
        if (!dotSeen) {
            schemaParts.add(topicUsed ? DEFAULT_TOPIC_SCHEMA : SOURCE_SCHEMA);
        }
        return new TopicTableNameFormat(format, schemaParts, tableParts);
    }

    private static String canonical(String placeholder)
    {
        switch (placeholder) {
            case TOPIC, SOURCE_SCHEMA, SOURCE_TABLE -> {
                return placeholder;
            }
            case "${schema}" -> {
                return SOURCE_SCHEMA;
            }
            case "${table}" -> {
                return SOURCE_TABLE;
            }
            default -> throw new IllegalArgumentException("unknown placeholder " + placeholder + "; use ${topic}, ${source.schema} (or ${schema}) and ${source.table} (or ${table})");
        }
    }

    /** Whether routing needs the source schema and table the record names, not only its topic. */
    boolean needsSourceTable()
    {
        return needsSourceTable;
    }

    /**
     * The target table of a record of {@code topic} from {@code source}.
     *
     * @param source the source table the record names; may be null only when {@link #needsSourceTable()} is false
     * @throws IllegalArgumentException when a name comes out empty
     */
    TableId route(String topic, @Nullable TableId source)
    {
        requireNonNull(topic, "topic is null");
        if (needsSourceTable && source == null) {
            throw new IllegalStateException("format " + format + " needs the source table");
        }
        return new TableId(render(schemaParts, topic, source), render(tableParts, topic, source));
    }

    private static String render(List<String> parts, String topic, @Nullable TableId source)
    {
        if (parts.size() == 1) {
            return substitute(parts.get(0), topic, source);
        }
        StringBuilder builder = new StringBuilder();
        for (String part : parts) {
            builder.append(substitute(part, topic, source));
        }
        return builder.toString();
    }

    private static String substitute(String part, String topic, @Nullable TableId source)
    {
        switch (part) {
            case TOPIC -> {
                return topic.replace('.', '_');
            }
            case SOURCE_SCHEMA -> {
                return requireNonNull(source, "source is null").schema();
            }
            case SOURCE_TABLE -> {
                return requireNonNull(source, "source is null").table();
            }
            default -> {
                return part;
            }
        }
    }

    @Override
    public String toString()
    {
        return format;
    }
}
