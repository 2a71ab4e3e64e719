package io.pgsink.bench.workload;

import io.pgsink.copy.encode.text.ValueEncoder;
import io.pgsink.copy.encode.text.ValueEncoders;
import io.pgsink.copy.load.CopyLoader;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.core.config.CopyFormat;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import static java.util.Objects.requireNonNull;

/**
 * The columns of a benchmark table. The first column is the primary key {@code id bigint}; the
 * others are of a few common types. Each column knows three things the methods need: the value a
 * base row holds (the same in Java and in SQL, so that a table loaded with {@code generate_series}
 * and the expected state agree), a random value for a change, and how to bind or encode a value.
 *
 * <ul>
 * <li>{@link #NARROW}: {@code (id bigint PRIMARY KEY, qty integer, label text, price numeric(12,2),
 *     active boolean)}, an orders-like table (workloads S1 and S2);</li>
 * <li>{@link #WIDE}: 30 columns, three of them large text values of 0.2 to 3 kB (so rows are
 *     TOASTed), the rest integers, text, numeric, boolean, timestamptz and double precision.</li>
 * </ul>
 */
public final class Columns
{
    public enum Kind
    {
        KEY("bigint", "int8"),
        INTEGER("integer", "int4"),
        BIGINT("bigint", "int8"),
        TEXT("text", "text"),
        LARGE_TEXT("text", "text"),
        NUMERIC("numeric(12,2)", "numeric"),
        BOOLEAN("boolean", "bool"),
        TIMESTAMPTZ("timestamptz", "timestamptz"),
        DOUBLE("double precision", "float8");

        final String sqlType;
        public final String typeName;

        Kind(String sqlType, String typeName)
        {
            this.sqlType = sqlType;
            this.typeName = typeName;
        }
    }

    public record Column(String name, Kind kind, int index)
    {
        public Column
        {
            requireNonNull(name, "name is null");
            requireNonNull(kind, "kind is null");
        }
    }

    static final OffsetDateTime BASE_TIME = OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
    private static final String LARGE_TEXT_POOL = largeTextPool();

    public static final Columns NARROW = new Columns("narrow", List.of(
            new Column("id", Kind.KEY, 0),
            new Column("qty", Kind.INTEGER, 1),
            new Column("label", Kind.TEXT, 2),
            new Column("price", Kind.NUMERIC, 3),
            new Column("active", Kind.BOOLEAN, 4)));

    public static final Columns WIDE = wide();

    final String name;
    public final List<Column> columns;
    public final List<String> names;
    private final ValueEncoder[] encoders;

    private Columns(String name, List<Column> columns)
    {
        this.name = requireNonNull(name, "name is null");
        this.columns = List.copyOf(columns);
        this.names = columns.stream().map(Column::name).toList();
        this.encoders = columns.stream().map(column -> ValueEncoders.forType(column.kind().typeName))
                .toArray(ValueEncoder[]::new);
    }

    private static Columns wide()
    {
        Kind[] cycle = {Kind.INTEGER, Kind.TEXT, Kind.NUMERIC, Kind.BOOLEAN, Kind.TIMESTAMPTZ, Kind.DOUBLE,
                Kind.BIGINT};
        List<Column> columns = new ArrayList<>();
        columns.add(new Column("id", Kind.KEY, 0));
        for (int index = 1; index < 30; index++) {
            Kind kind = index % 10 == 3 ? Kind.LARGE_TEXT : cycle[index % cycle.length];
            columns.add(new Column(String.format("c%02d_%s", index, kind.name().toLowerCase(Locale.ROOT)), kind,
                    index));
        }
        return new Columns("wide", columns);
    }

    public int size()
    {
        return columns.size();
    }

    /** The column definitions of {@code CREATE TABLE}, with or without the primary key. */
    public String definitions(boolean withKey)
    {
        StringBuilder sql = new StringBuilder();
        for (Column column : columns) {
            sql.append(sql.length() == 0 ? "" : ", ").append(column.name()).append(' ').append(column.kind().sqlType);
            if (withKey && column.kind() == Kind.KEY) {
                sql.append(" PRIMARY KEY");
            }
        }
        return sql.toString();
    }

    public String nameList()
    {
        return String.join(", ", names);
    }

    /** The row every base key starts with; the same values as {@link #baseRowsSql}. */
    Object[] baseRow(long key)
    {
        Object[] row = new Object[columns.size()];
        for (Column column : columns) {
            long value = key + column.index();
            row[column.index()] = switch (column.kind()) {
                case KEY -> key;
                case INTEGER -> (int) (value % 1000);
                case BIGINT -> key * 1000 + column.index();
                case TEXT -> "base " + key + " c" + column.index();
                case LARGE_TEXT -> "base " + key + " " + "x".repeat(500);
                case NUMERIC -> BigDecimal.valueOf(value % 100_000, 2);
                case BOOLEAN -> value % 2 == 0;
                case TIMESTAMPTZ -> BASE_TIME.plusSeconds(value);
                case DOUBLE -> (value % 1000) / 4.0;
            };
        }
        return row;
    }

    /** Inserts the base rows of keys {@code first} to {@code last} into {@code table}, in SQL. */
    public String baseRowsSql(String table, long first, long last)
    {
        StringBuilder select = new StringBuilder();
        for (Column column : columns) {
            String value = "(g + " + column.index() + ")";
            select.append(select.length() == 0 ? "" : ", ").append(switch (column.kind()) {
                case KEY -> "g";
                case INTEGER -> "(" + value + " % 1000)::int";
                case BIGINT -> "g * 1000 + " + column.index();
                case TEXT -> "'base ' || g || ' c" + column.index() + "'";
                case LARGE_TEXT -> "'base ' || g || ' ' || repeat('x', 500)";
                case NUMERIC -> "((" + value + " % 100000) / 100.0)::numeric(12,2)";
                case BOOLEAN -> value + " % 2 = 0";
                case TIMESTAMPTZ -> "timestamptz '2024-01-01 00:00:00+00' + " + value + " * interval '1 second'";
                case DOUBLE -> "((" + value + " % 1000) / 4.0)::double precision";
            });
        }
        return "INSERT INTO " + table + " (" + nameList() + ") SELECT " + select + " FROM generate_series(" + first
                + ", " + last + ") g";
    }

    /** A random row for {@code key}, drawn from {@code random} in column order (so reproducible by seed). */
    public Object[] randomRow(Random random, long key)
    {
        Object[] row = new Object[columns.size()];
        for (Column column : columns) {
            row[column.index()] = switch (column.kind()) {
                case KEY -> key;
                case INTEGER -> random.nextInt(1_000_000);
                case BIGINT -> random.nextLong();
                case TEXT -> "label " + Long.toString(random.nextLong() & Long.MAX_VALUE, 36) + (random.nextInt(10) == 0
                        ? ", with \"quotes\"" : "");
                case LARGE_TEXT -> {
                    int length = 200 + random.nextInt(2800);
                    int start = random.nextInt(LARGE_TEXT_POOL.length() - length);
                    yield LARGE_TEXT_POOL.substring(start, start + length);
                }
                case NUMERIC -> BigDecimal.valueOf(random.nextLong() % 10_000_000_000L, 2);
                case BOOLEAN -> random.nextBoolean();
                case TIMESTAMPTZ -> BASE_TIME.plusSeconds(random.nextInt(100_000_000))
                        .plusNanos(random.nextInt(1_000_000) * 1000L);
                case DOUBLE -> random.nextInt(4_000_000) / 4.0;
            };
        }
        return row;
    }

    /**
     * Binds the values of {@code row} from column {@code from} on to parameters {@code firstParameter}, {@code
     * firstParameter + 1}...
     */
    public void bind(PreparedStatement statement, Object[] row, int from, int firstParameter)
            throws SQLException
    {
        for (int index = from; index < columns.size(); index++) {
            int parameter = firstParameter + index - from;
            Object value = row[index];
            switch (columns.get(index).kind()) {
                case KEY, BIGINT -> statement.setLong(parameter, (Long) value);
                case INTEGER -> statement.setInt(parameter, (Integer) value);
                case TEXT, LARGE_TEXT -> statement.setString(parameter, (String) value);
                case NUMERIC -> statement.setBigDecimal(parameter, (BigDecimal) value);
                case BOOLEAN -> statement.setBoolean(parameter, (Boolean) value);
                case TIMESTAMPTZ -> statement.setObject(parameter, value);
                case DOUBLE -> statement.setDouble(parameter, (Double) value);
            }
        }
    }

    /** Writes {@code row} as one CSV row for {@code COPY ... FROM STDIN (FORMAT csv)}. */
    void writeRow(CsvWriter writer, Object[] row)
            throws SQLException
    {
        for (int index = 0; index < encoders.length; index++) {
            encoders[index].encode(row[index], writer);
        }
        writer.endRow();
    }

    /** 256 kB of words of random letters, cut into the large text values. */
    private static String largeTextPool()
    {
        Random random = new Random(4242);
        StringBuilder pool = new StringBuilder(256 * 1024);
        while (pool.length() < 256 * 1024) {
            int word = 2 + random.nextInt(9);
            for (int i = 0; i < word; i++) {
                pool.append((char) ('a' + random.nextInt(26)));
            }
            pool.append(random.nextInt(12) == 0 ? ".\n" : " ");
        }
        return pool.toString();
    }

    /** COPYs rows of these columns into {@code table}, {@code batchSize} per transaction. */
    public void copyRows(Connection connection, String table, List<Object[]> rows, int batchSize)
            throws SQLException
    {
        String copy = CopyLoader.copyStatement(table, names, CopyFormat.DEFAULT);
        for (int start = 0; start < rows.size(); start += batchSize) {
            List<Object[]> batch = rows.subList(start, Math.min(rows.size(), start + batchSize));
            CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
                for (Object[] row : batch) {
                    writeRow(writer, row);
                }
            });
            connection.commit();
        }
    }
}
