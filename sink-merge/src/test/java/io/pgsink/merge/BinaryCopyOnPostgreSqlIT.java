package io.pgsink.merge;

import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.session.TargetConnector;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The PostgreSQL suite ({@link MergeApplierIT}) with {@code copy.format=binary}, and the COPYs the
 * sink sends checked: binary where every column and value has a binary form, CSV where one does
 * not, with the same rows in the target either way.
 */
class BinaryCopyOnPostgreSqlIT
        extends MergeApplierIT
{
    /** Every COPY statement the suite's sinks sent. */
    private final List<String> copies = Collections.synchronizedList(new ArrayList<>());
    private final Map<Connection, PGConnection> recording = Collections.synchronizedMap(new IdentityHashMap<>());

    @Override
    protected Map<String, String> targetProperties()
    {
        Map<String, String> properties = new HashMap<>(super.targetProperties());
        properties.put(SinkConfig.COPY_FORMAT, "binary");
        return properties;
    }

    @Override
    protected TargetConnector connector(SinkConfig config)
    {
        TargetConnector connector = super.connector(config);
        return () -> recordingCopies(connector.connect());
    }

    @Test
    void everyTypeArrivesAsWithCsvAndArraysFallBackToCsv()
            throws Exception
    {
        String columns = "(id int PRIMARY KEY, i2 int2, i8 int8, f4 real, f8 float8, n numeric(12,2), nn numeric, b bool, t text, vc varchar(10), "
                + "j json, jb jsonb, by bytea, d date, tm time, ts timestamp, tstz timestamptz, u uuid)";
        schema.execute("CREATE TABLE typed_binary " + columns, "CREATE TABLE typed_csv " + columns);
        List<String> names = List.of("id", "i2", "i8", "f4", "f8", "n", "nn", "b", "t", "vc", "j", "jb", "by", "d", "tm", "ts", "tstz", "u");
        List<Object[]> rows = List.of(
                new Object[] {1, (short) -3, Long.MIN_VALUE, 1.5f, 0.1, new BigDecimal("12.5"), Double.NaN, true, "a,\"b\"\n😀", "short",
                        "{\"a\": [1, 2]}", "{\"b\": 1, \"a\": \"x\"}", new byte[] {0, 1, (byte) 0xff}, LocalDate.of(0, 1, 1), LocalTime.of(1, 2, 3, 4000),
                        LocalDateTime.of(2020, 2, 29, 23, 59, 59, 999_999_000), OffsetDateTime.of(2021, 7, 1, 12, 0, 0, 0, ZoneOffset.ofHoursMinutes(5, 30)),
                        new UUID(-1, 1)},
                new Object[] {2, null, 7, 2, 3L, 42L, new BigDecimal("-1E+20"), false, "", null, null, null, new byte[0], "infinity", "24:00:00", "-infinity",
                        Instant.EPOCH, null},
                new Object[] {3, null, null, null, null, null, "NaN", null, null, null, null, null, null, null, null, null, null, null});
        TableSchema binarySource = TableSchema.of(TableId.of("src", "typed_binary"), names, List.of("id"));
        TableSchema csvSource = TableSchema.of(TableId.of("src", "typed_csv"), names, List.of("id"));
        try (BufferedSink binary = sink(Map.of()); BufferedSink csv = sink(Map.of(SinkConfig.COPY_FORMAT, "csv", SinkConfig.SINK_NAME, "csv"))) {
            long offset = 0;
            for (Object[] row : rows) {
                binary.accept(ChangeEvent.insert(binarySource, row.clone(), at(++offset), 0));
                csv.accept(ChangeEvent.insert(csvSource, row.clone(), at(offset), 0));
            }
            binary.flush();
            csv.flush();
            // updates: staged whole rows, applied by MERGE
            binary.accept(ChangeEvent.update(binarySource, null, rows.get(1).clone(), at(++offset), 0));
            csv.accept(ChangeEvent.update(csvSource, null, rows.get(1).clone(), at(offset), 0));
            binary.flush();
            csv.flush();
        }
        String select = "SELECT " + String.join(", ", names.stream().map(name -> name + "::text").toList()) + " FROM %s ORDER BY id";
        List<List<String>> expected = TestingSink.query(schema, select.formatted("typed_csv"));
        assertThat(expected).hasSize(3);
        assertThat(TestingSink.query(schema, select.formatted("typed_binary"))).isEqualTo(expected);
        assertThat(copies).filteredOn(sql -> sql.contains("typed_binary") || sql.contains("_typed_binary")).isNotEmpty().allMatch(sql -> sql.endsWith("(FORMAT binary)"));
        assertThat(copies).filteredOn(sql -> sql.contains("typed_csv")).isNotEmpty().allMatch(sql -> sql.contains("FORMAT csv"));

        // an array column has no binary form: the table's COPYs are CSV, with the same result
        schema.execute("CREATE TABLE with_array (id int PRIMARY KEY, tags text[])");
        TableSchema arraySource = TableSchema.of(TableId.of("src", "with_array"), List.of("id", "tags"), List.of("id"));
        try (BufferedSink sink = sink(Map.of(SinkConfig.SINK_NAME, "arrays"))) {
            sink.accept(ChangeEvent.insert(arraySource, new Object[] {1, List.of("a b", "c")}, at(1), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT tags::text FROM with_array")).containsExactly(List.of("{\"a b\",c}"));
        assertThat(copies).filteredOn(sql -> sql.contains("with_array")).isNotEmpty().allMatch(sql -> sql.contains("FORMAT csv"));

        // a date sent as text, which only the server parses: that COPY is CSV
        schema.execute("CREATE TABLE textual (id int PRIMARY KEY, d date)");
        TableSchema textualSource = TableSchema.of(TableId.of("src", "textual"), List.of("id", "d"), List.of("id"));
        try (BufferedSink sink = sink(Map.of(SinkConfig.SINK_NAME, "textual"))) {
            sink.accept(ChangeEvent.insert(textualSource, new Object[] {1, LocalDate.of(2020, 1, 1)}, at(1), 0));
            sink.flush();
            sink.accept(ChangeEvent.insert(textualSource, new Object[] {2, "2020-01-02"}, at(2), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT d::text FROM textual ORDER BY id")).containsExactly(List.of("2020-01-01"), List.of("2020-01-02"));
        assertThat(copies).filteredOn(sql -> sql.contains("textual")).extracting(sql -> sql.substring(sql.lastIndexOf("FORMAT")))
                .containsExactly("FORMAT binary)", "FORMAT csv, DELIMITER ',', QUOTE '\"', ESCAPE '\"', NULL '')");
    }

    /** {@code connection}, whose {@code unwrap(PGConnection.class)} gives a connection recording the COPY statements it runs. */
    private Connection recordingCopies(Connection connection)
    {
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, arguments) -> {
            if (method.getName().equals("unwrap") && arguments[0] == PGConnection.class) {
                return recording.computeIfAbsent(connection, ignored -> recordingDriverConnection(connection));
            }
            if (method.getName().equals("isWrapperFor") && arguments[0] == PGConnection.class) {
                return true;
            }
            try {
                return method.invoke(connection, arguments);
            }
            catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    private PGConnection recordingDriverConnection(Connection connection)
    {
        try {
            BaseConnection driver = connection.unwrap(BaseConnection.class);
            CopyManager copyManager = new CopyManager(driver)
            {
                @Override
                public CopyIn copyIn(String sql)
                        throws SQLException
                {
                    copies.add(sql);
                    return super.copyIn(sql);
                }
            };
            return (PGConnection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PGConnection.class}, (proxy, method, arguments) -> {
                if (method.getName().equals("getCopyAPI")) {
                    return copyManager;
                }
                try {
                    return method.invoke(driver, arguments);
                }
                catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
        }
        catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
