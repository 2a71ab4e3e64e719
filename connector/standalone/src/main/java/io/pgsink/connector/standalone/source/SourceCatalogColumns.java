package io.pgsink.connector.standalone.source;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.change.SourceAttribute;
import io.pgsink.core.change.SourceColumns;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The source's {@code pg_attribute} and {@code pg_attrdef}: of every table once when the service
 * starts ({@link #initial}), then of one table on a connection of its own each time the sink asks
 * (when a table's schema version changes, which is rare). An identity column counts as
 * a default computed row by row; a generated column has no default.
 */
public final class SourceCatalogColumns
        implements SourceColumns
{
    // atthasmissing (PostgreSQL 11+) and attgenerated (12+) are read where they exist
    private static final String QUERY = """
            SELECT n.nspname, c.relname, a.attnum, a.attname, a.attisdropped,
                   CASE WHEN a.attidentity <> '' THEN 'GENERATED AS IDENTITY' WHEN %s
                       THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid) END,
                   %s
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE a.attnum > 0 AND %s
            ORDER BY n.nspname, c.relname, a.attnum""";
    private static final String TABLE = "n.nspname = ? AND c.relname = ?";
    private static final String EVERY_TABLE =
            "c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')";

    private final SourceDatabase source;
    private final Map<TableId, List<SourceAttribute>> initial;

    private SourceCatalogColumns(SourceDatabase source, Map<TableId, List<SourceAttribute>> initial)
    {
        this.source = requireNonNull(source, "source is null");
        this.initial = Map.copyOf(initial);
    }

    /** Reads the columns of every table now, as {@link #initial}: call it before streaming starts. */
    public static SourceCatalogColumns atStart(SourceDatabase source)
    {
        return new SourceCatalogColumns(source, read(source, null));
    }

    @Override
    public Optional<List<SourceAttribute>> read(TableId table)
    {
        return Optional.ofNullable(read(source, table).get(table));
    }

    @Override
    public Optional<List<SourceAttribute>> initial(TableId table)
    {
        return Optional.ofNullable(initial.get(table));
    }

    /** The columns of {@code table}, or of every table when null. */
    private static Map<TableId, List<SourceAttribute>> read(SourceDatabase source, @Nullable TableId table)
    {
        try (Connection connection = source.connect("pgsink catalog", false)) {
            int major = connection.getMetaData().getDatabaseMajorVersion();
            String query = QUERY.formatted(major >= 12 ? "a.attgenerated = ''" : "true",
                    major >= 11 ? "CASE WHEN a.atthasmissing THEN a.attmissingval::text END" : "NULL",
                    table == null ? EVERY_TABLE : TABLE);
            Map<TableId, List<SourceAttribute>> tables = new HashMap<>();
            try (PreparedStatement statement = connection.prepareStatement(query)) {
                if (table != null) {
                    statement.setString(1, table.schema());
                    statement.setString(2, table.table());
                }
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        tables.computeIfAbsent(TableId.of(rows.getString(1), rows.getString(2)),
                                id -> new ArrayList<>())
                                .add(new SourceAttribute(rows.getInt(3), rows.getString(4), rows.getBoolean(5),
                                        rows.getString(6), element(rows.getString(7))));
                    }
                }
            }
            return tables;
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, ErrorCode.TRANSIENT,
                    "Cannot read the columns of " + (table == null ? "the source's tables" : table)
                    + " from the source catalog");
        }
    }

    /**
     * The one element of {@code attmissingval}'s array text ({@code {42}}, {@code {"a b"}}), in its type's text form;
     * null for none or NULL.
     */
    static @Nullable String element(@Nullable String array)
    {
        if (array == null || array.length() < 2 || array.charAt(0) != '{' || array.charAt(array.length() - 1) != '}') {
            return null;
        }
        String element = array.substring(1, array.length() - 1);
        if (element.equals("NULL")) {
            return null;
        }
        if (!element.startsWith("\"")) {
            return element;
        }
        StringBuilder text = new StringBuilder(element.length());
        for (int i = 1; i < element.length() - 1; i++) {
            char c = element.charAt(i);
            if (c == '\\' && i + 1 < element.length() - 1) {
                c = element.charAt(++i);
            }
            text.append(c);
        }
        return text.toString();
    }
}
