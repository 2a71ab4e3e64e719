package io.pgsink.core.mapping;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.definition.ConfigType;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * Routes a change to its target table, from a format such as {@code ${schema}.${table}},
 * {@code analytics.${schema}_${table}}, {@code ${table}} or {@code raw.${topic}}
 * ({@code target.table.name.format}).
 * <ul>
 * <li>{@code ${schema}} and {@code ${table}}, or their aliases {@code ${source.schema}} and
 *     {@code ${source.table}}: the source schema and table of the change;</li>
 * <li>{@code ${topic}}: the Kafka topic of the record, every '.' replaced by '_' (as Debezium's
 *     JDBC sink does); only the Kafka Connect sink has one.</li>
 * </ul>
 * The first '.' outside a placeholder separates the target schema from the target table; without
 * one, the target schema is the source schema, or {@code public} when the format uses
 * {@code ${topic}} (so that a topic's records go to one table whatever they say about their
 * source). Substituted names are used verbatim (they are quoted in SQL), so names containing dots,
 * quotes or spaces route correctly.
 *
 * <p>Immutable and thread-safe.
 */
public final class TableNameFormat
{
    public static final String TOPIC = "${topic}";
    public static final String SOURCE_SCHEMA = "${source.schema}";
    public static final String SOURCE_TABLE = "${source.table}";
    private static final String DEFAULT_TOPIC_SCHEMA = "public";

    /** The format as a configuration value. */
    public static final ConfigType<TableNameFormat> CONFIG_TYPE = ConfigType.text(TableNameFormat::parse,
            TableNameFormat::toString);

    private final String format;
    private final List<String> schemaParts;
    private final List<String> tableParts;
    private final boolean usesTopic;
    private final boolean needsSourceTable;

    private TableNameFormat(String format, List<String> schemaParts, List<String> tableParts)
    {
        this.format = format;
        this.schemaParts = List.copyOf(schemaParts);
        this.tableParts = List.copyOf(tableParts);
        boolean topic = false;
        boolean source = false;
        for (List<String> parts : List.of(this.schemaParts, this.tableParts)) {
            for (String part : parts) {
                topic |= part.equals(TOPIC);
                source |= part.equals(SOURCE_SCHEMA) || part.equals(SOURCE_TABLE);
            }
        }
        this.usesTopic = topic;
        this.needsSourceTable = source;
    }

    /**
     * @throws IllegalArgumentException naming what is wrong with the format
     */
    public static TableNameFormat parse(String format)
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
        return new TableNameFormat(format, schemaParts, tableParts);
    }

    private static String canonical(String placeholder)
    {
        return switch (placeholder) {
            case TOPIC, SOURCE_SCHEMA, SOURCE_TABLE -> placeholder;
            case "${schema}" -> SOURCE_SCHEMA;
            case "${table}" -> SOURCE_TABLE;
            default -> throw new IllegalArgumentException("unknown placeholder " + placeholder
                    + "; use ${topic}, ${source.schema} (or ${schema}) and ${source.table} (or ${table})");
        };
    }

    /** Whether the format routes by {@code ${topic}}, which only Kafka records have. */
    public boolean usesTopic()
    {
        return usesTopic;
    }

    /** Whether routing needs the source schema and table of a change, not only its topic. */
    public boolean needsSourceTable()
    {
        return needsSourceTable;
    }

    /**
     * The target table of a change of {@code source}, for formats without {@code ${topic}}.
     *
     * @throws IllegalStateException when the format uses {@code ${topic}}
     */
    public TableId targetOf(TableId source)
    {
        requireNonNull(source, "source is null");
        if (usesTopic) {
            throw new IllegalStateException("format " + format + " needs the topic");
        }
        return new TableId(render(schemaParts, "", source), render(tableParts, "", source));
    }

    /**
     * The target table of a record of {@code topic} from {@code source}.
     *
     * @param source the source table the record names; may be null only when {@link #needsSourceTable()} is false
     * @throws IllegalArgumentException when a name comes out empty
     */
    public TableId route(String topic, @Nullable TableId source)
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
        return switch (part) {
            case TOPIC -> topic.replace('.', '_');
            case SOURCE_SCHEMA -> requireNonNull(source, "source is null").schema();
            case SOURCE_TABLE -> requireNonNull(source, "source is null").table();
            default -> part;
        };
    }

    @Override
    public String toString()
    {
        return format;
    }
}
