package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every PostgreSQL type Debezium emits must arrive with the same {@code value::text} as on the
 * source, through Debezium's snapshot (rows inserted before the service starts) and through
 * streaming (rows inserted, then updated, while it runs), with the default, lossless conversion
 * modes.
 */
class DataTypesIT
{
    private static final String TABLE = "public.types";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("types");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private TypeColumns types;

    @BeforeEach
    void createTables()
            throws Exception
    {
        types = TypeColumns.of(TestingPostgreSqlServer.source().majorVersion(),
                TestingPostgreSqlServer.target().majorVersion());
        pipeline.executeInBoth(TypeColumns.TYPES.toArray(String[]::new));
        source.execute(TypeColumns.createTable(TABLE));
    }

    private static String textQuery()
    {
        List<String> columns = new ArrayList<>();
        columns.add("id");
        for (TypeColumns.Column column : TypeColumns.COLUMNS) {
            columns.add(column.comparison());
        }
        return "SELECT " + String.join(", ", columns) + " FROM public.types ORDER BY id";
    }

    @Test
    void everyValueArrivesWithTheSameText()
            throws Exception
    {
        target.execute(TypeColumns.createTable(TABLE));
        streamAndCompare(target, 1, Map.of());
    }

    @Test
    void aTargetTableCreatedFromTheSourceTypesHoldsTheSameValues()
            throws Exception
    {
        // schema.evolution=add-columns creates the table from the column types Debezium propagates
        try (TestingDatabase created = TestingDatabase.create("pgsink_types_created")) {
            created.execute(TypeColumns.TYPES.toArray(String[]::new));
            streamAndCompare(created, 201, Map.of("schema.evolution", "add-columns"));
            assertThat(created.query("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'public.types'::regclass AND attnum > 0 ORDER BY attnum"))
                    .extracting(row -> row.get(0))
                    .contains("integer", "numeric(12,2)", "character varying(10)", "character(5)", "\"char\"", "bit(8)",
                            "bit varying(10)", "integer[]", "mood", "hstore", "timestamp with time zone",
                            // a timestamp, sent as text by the pgsinktext converter, is still created as one
                            "timestamp without time zone");
        }
    }

    /**
     * What Debezium cannot carry, shown as what arrives (docs/concepts/type-mapping.md lists these): a time with time
     * zone streamed (id 2) arrives as the same instant in UTC. The initial load copies the source's
     * own text, so the row it copies (id 1) keeps the offset. (Debezium's own snapshot also lost a
     * BC date's era; streamed, pgoutput's text keeps it.)
     */
    @Test
    void documentedDebeziumLimitsArriveAsDocumented()
            throws Exception
    {
        String table = "CREATE TABLE public.limits (id int PRIMARY KEY, d date, tz timetz, ts timestamptz, tz_array timetz[], x xml)";
        String row = "'0044-03-15 BC', '10:15:30+05:30', '0044-03-15 12:00:00+00 BC', '{10:15:30+05:30}', '<?xml version=\"1.0\"?><r a=\"1\"/>'";
        source.execute(table, "INSERT INTO public.limits VALUES (1, " + row + ")");
        target.execute(table);
        try (RunningService running = RunningService.start(pipeline.properties("public.limits"))) {
            RunningService.await("the initial load", Duration.ofSeconds(90), () -> {
                running.assertRunning();
                assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING);
            });
            source.execute("INSERT INTO public.limits VALUES (2, " + row + ")");
            RunningService.await("both rows of public.limits", Duration.ofSeconds(90), () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*) FROM public.limits")).containsExactly(List.of("2"));
            });
        }
        String query = "SELECT id, d::text, tz::text, (tz AT TIME ZONE 'UTC')::text, ts::text, tz_array::text, x::text FROM public.limits ORDER BY id";
        List<String> sourceRow = List.of("0044-03-15 BC", "10:15:30+05:30", "04:45:30+00", "0044-03-15 12:00:00+00 BC", "{10:15:30+05:30}", "<?xml version=\"1.0\"?><r a=\"1\"/>");
        assertThat(source.query(query)).containsOnly(prepend("1", sourceRow), prepend("2", sourceRow));
        // streamed (id 2), the timetz loses its offset (same instant); a timetz[] (sent as PostgreSQL
        // text by the pgsinktext converter) keeps it; the initial load (id 1) copies the source's text.
        // Both lose the xml's default declaration: PostgreSQL's xml output function, which logical
        // decoding and COPY use, drops it
        assertThat(target.query(query)).containsOnly(
                List.of("1", "0044-03-15 BC", "10:15:30+05:30", "04:45:30+00", "0044-03-15 12:00:00+00 BC", "{10:15:30+05:30}", "<r a=\"1\"/>"),
                List.of("2", "0044-03-15 BC", "04:45:30+00", "04:45:30+00", "0044-03-15 12:00:00+00 BC", "{10:15:30+05:30}", "<r a=\"1\"/>"));
    }

    /**
     * PostgreSQL's first and last values of each date and time type, BC dates and the infinities,
     * copied by the initial load (ids below 100) and streamed (the same values again, ids from 101)
     * arrive with the source's text. Streamed timestamps after 294247-01-10 04:00:54.775807 do not
     * fit Debezium's MicroTimestamp (a long of microseconds), which saturates; the pgsinktext
     * converter sends timestamp columns as text instead. A streamed timetz arrives as the same
     * instant in UTC (see {@link #documentedDebeziumLimitsArriveAsDocumented}), {@code 24:00:00+00}
     * as {@code 00:00:00+00}, which is what {@code AT TIME ZONE 'UTC'} gives for it too. Streamed
     * rows are written in either COPY format (binary takes the timestamps it can hold, csv the rest).
     */
    @ParameterizedTest
    @ValueSource(strings = {"csv", "binary"})
    void theEndsOfEveryDateAndTimeRangeArriveExactly(String copyFormat)
            throws Exception
    {
        String name = "public.extremes_" + copyFormat;
        // ts is in the key: deletes carry only the key, and the key of a row's events must match in a flush
        String table = "CREATE TABLE " + name + " (id int, ts timestamp, ts3 timestamp(3),"
                + " tstz timestamptz, d date, t time, ttz timetz, PRIMARY KEY (id, ts))";
        List<String> rows = List.of(
                "'294276-12-31 23:59:59.999999', '294276-12-31 23:59:59.999', '294276-12-31 23:59:59.999999+00',"
                        + " '5874897-12-31', '24:00:00', '24:00:00-15:59'",
                "'4714-11-24 00:00:00 BC', '4714-11-24 00:00:00 BC', '4714-11-24 00:00:00+00 BC', '4714-11-24 BC',"
                        + " '00:00:00', '00:00:00+15:59'",
                "'infinity', 'infinity', 'infinity', 'infinity', '23:59:59.999999', '12:00:00-15:59'",
                "'-infinity', '-infinity', '-infinity', '-infinity', '00:00:00.000001', '00:00:00.000001+00'",
                "'4713-01-01 00:00:00 BC', '4713-01-01 12:34:56.789 BC', '4713-01-01 00:00:00+00 BC', '4713-01-01 BC',"
                        + " '12:34:56.5', '10:15:30+05:30'",
                // past the last MicroTimestamp: no fraction (saturated to Long.MAX_VALUE), and one microsecond past
                "'294270-06-01 00:00:00', '294270-06-01 00:00:00', '294270-06-01 00:00:00+00', '0001-01-01 BC',"
                        + " '00:00:01', '24:00:00+00'",
                "'294247-01-10 04:00:54.775808', '294247-01-10 04:00:54.776', '294247-01-10 04:00:54.775808+00',"
                        + " '0001-01-01', '23:59:59', '23:59:59-01'",
                "'1970-01-01 00:00:00', '1969-12-31 23:59:59.999', '1970-01-01 00:00:00+00', '1970-01-01', '00:00:00',"
                        + " '00:00:00+00'");
        StringBuilder loaded = new StringBuilder("INSERT INTO " + name + " VALUES ");
        StringBuilder streamed = new StringBuilder("INSERT INTO " + name + " VALUES ");
        for (int row = 0; row < rows.size(); row++) {
            String separator = row == 0 ? "(" : ", (";
            loaded.append(separator).append(row + 1).append(", ").append(rows.get(row)).append(')');
            streamed.append(separator).append(row + 101).append(", ").append(rows.get(row)).append(')');
        }
        source.execute(table, loaded.toString());
        target.execute(table);
        Map<String, String> properties = pipeline.properties(name);
        properties.put("copy.format", copyFormat);
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the initial load", Duration.ofSeconds(90), () -> {
                running.assertRunning();
                assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING);
            });
            source.execute(streamed.toString(), "UPDATE " + name + " SET t = t WHERE id > 100",
                    "INSERT INTO " + name + " (id, ts) VALUES (200, '294276-12-31 23:59:59.999999'),"
                            + " (201, '294270-06-01 00:00:00')",
                    "DELETE FROM " + name + " WHERE id >= 200",
                    // applied after the delete, since the service applies the source's transactions in order
                    "INSERT INTO " + name + " (id, ts) VALUES (150, '2000-01-01')");
            RunningService.await("every row of " + name, Duration.ofSeconds(90), () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*), max(id) FROM " + name))
                        .containsExactly(List.of(String.valueOf(2 * rows.size() + 1), "150"));
            });
        }
        String query = "SELECT id, ts::text, ts3::text, tstz::text, d::text, t::text, (ttz AT TIME ZONE 'UTC')::text"
                + " FROM " + name + " ORDER BY id";
        List<List<String>> expected = source.query(query);
        assertThat(expected).hasSize(2 * rows.size() + 1).contains(List.of("1", "294276-12-31 23:59:59.999999",
                "294276-12-31 23:59:59.999", "294276-12-31 23:59:59.999999+00", "5874897-12-31", "24:00:00",
                "15:59:00+00"));
        assertThat(target.query(query)).isEqualTo(expected);
        // the initial load copies the offset of a timetz too; streamed, Debezium turns 24:00:00+00 into 00:00:00+00
        String offsets = "SELECT id, ttz::text FROM " + name + " WHERE id < 100 ORDER BY id";
        assertThat(target.query(offsets)).isEqualTo(source.query(offsets));
        String endOfDay = "SELECT ttz::text FROM " + name + " WHERE id IN (6, 106) ORDER BY id";
        assertThat(source.query(endOfDay)).containsExactly(List.of("24:00:00+00"), List.of("24:00:00+00"));
        assertThat(target.query(endOfDay)).containsExactly(List.of("24:00:00+00"), List.of("00:00:00+00"));
    }

    /**
     * The initial load copies the source's own values, so no Debezium limit applies: every column of
     * a built-in type arrives with the same text, in the binary format (which {@code auto}, the
     * default, picks for such a table between servers of one version) as in text.
     */
    @ParameterizedTest
    @ValueSource(strings = {"binary", "text"})
    void theInitialLoadCopiesEveryBuiltInTypeWithTheSameTextInEitherFormat(String format)
            throws Exception
    {
        List<TypeColumns.Column> builtIn = TypeColumns.COLUMNS.stream()
                .filter(column -> !TypeColumns.CREATED_TYPES.contains(column.type())).toList();
        assertThat(builtIn).hasSizeGreaterThan(60);
        String table = "public.builtin_" + format;
        StringBuilder create = new StringBuilder("CREATE TABLE " + table + " (id int PRIMARY KEY");
        StringBuilder insert = new StringBuilder("INSERT INTO " + table + " VALUES ");
        List<String> columns = new ArrayList<>(List.of("id"));
        for (TypeColumns.Column column : builtIn) {
            create.append(", ").append(column.name()).append(' ').append(column.type());
            columns.add(column.name() + "::text");
        }
        for (int row = 0; row < TypeColumns.ROWS; row++) {
            insert.append(row == 0 ? "(" : ", (").append(row + 1);
            for (TypeColumns.Column column : builtIn) {
                // the last row is all NULLs
                insert.append(", ").append(row == TypeColumns.ROWS - 1 ? "NULL" : types.value(column, row));
            }
            insert.append(')');
        }
        create.append(')');
        source.execute(create.toString(), insert.toString());
        target.execute(create.toString());
        Map<String, String> properties = pipeline.properties(table);
        properties.put("initial.load.copy.format", format);
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the initial load", Duration.ofSeconds(90), () -> {
                running.assertRunning();
                assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING);
            });
            assertThat(running.service().metrics().initialLoadRowsTotal()).isEqualTo(TypeColumns.ROWS);
        }
        String query = "SELECT " + String.join(", ", columns) + " FROM " + table + " ORDER BY id";
        List<List<String>> expected = source.query(query);
        assertThat(expected).hasSize(TypeColumns.ROWS);
        assertThat(target.query(query)).isEqualTo(expected);
    }

    private static List<String> prepend(String first, List<String> rest)
    {
        List<String> row = new ArrayList<>(rest.size() + 1);
        row.add(first);
        row.addAll(rest);
        return row;
    }

    private void streamAndCompare(TestingDatabase destination, int firstId, Map<String, String> extra)
            throws Exception
    {
        source.execute(types.insertRows(TABLE, firstId));
        Map<String, String> properties = pipeline.properties("public.types");
        properties.putAll(destination.targetProperties());
        properties.putAll(extra);
        try (RunningService running = RunningService.start(properties)) {
            // streamed: inserted, then every value rewritten by an update, while the service runs
            source.execute(types.insertRows(TABLE, firstId + 100), "UPDATE public.types SET c_int4 = c_int4 WHERE id >= " + (firstId + 100));
            String query = textQuery();
            RunningService.await("every row of public.types", Duration.ofSeconds(90), () -> {
                running.assertRunning();
                assertThat(destination.query("SELECT count(*) FROM public.types")).isEqualTo(source.query("SELECT count(*) FROM public.types"));
            });
            RunningService.await("equal text of every column", Duration.ofSeconds(30), () -> {
                running.assertRunning();
                List<List<String>> expected = source.query(query);
                List<List<String>> actual = destination.query(query);
                assertThat(actual).hasSameSizeAs(expected);
                List<String> differences = new ArrayList<>();
                for (int row = 0; row < expected.size(); row++) {
                    for (int column = 0; column < expected.get(row).size(); column++) {
                        String name = column == 0 ? "id" : TypeColumns.COLUMNS.get(column - 1).name();
                        if (!java.util.Objects.equals(actual.get(row).get(column), expected.get(row).get(column))) {
                            differences.add("id " + expected.get(row).get(0) + " " + name + ": source " + expected.get(row).get(column) + ", target " + actual.get(row).get(column));
                        }
                    }
                }
                assertThat(differences).isEmpty();
            });
        }
    }
}
