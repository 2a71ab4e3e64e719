package io.pgsink.connector.standalone.config;

import io.pgsink.connector.standalone.cli.TestingCommand;
import io.pgsink.connector.standalone.engine.FlushBoundary;
import io.pgsink.connector.standalone.engine.PostgresTextConverter;
import io.pgsink.connector.standalone.engine.TargetOffsetBackingStore;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.DeleteMode;
import io.pgsink.core.config.SinkKeys;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

public class StandaloneConfigTest
{
    public static Map<String, String> minimal()
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("source.database.hostname", "db1");
        properties.put("source.database.dbname", "app");
        properties.put("source.database.user", "cdc");
        properties.put("source.database.password", "source-secret");
        properties.put("target.url", "jdbc:postgresql://dw:5432/warehouse");
        properties.put("target.password", "target-secret");
        return properties;
    }

    @Test
    void appliesLosslessDebeziumDefaultsAndOwnsOffsets()
    {
        StandaloneConfig config = StandaloneConfig.parse(minimal());
        Map<String, String> debezium = config.debezium();
        assertThat(debezium)
                .containsEntry("connector.class", "io.debezium.connector.postgresql.PostgresConnector")
                .containsEntry("plugin.name", "pgoutput")
                .containsEntry("decimal.handling.mode", "string")
                .containsEntry("interval.handling.mode", "string")
                .containsEntry("hstore.handling.mode", "map")
                .containsEntry("time.precision.mode", "adaptive")
                .containsEntry("binary.handling.mode", "bytes")
                .containsEntry("skipped.operations", "none")
                .containsEntry("include.unknown.datatypes", "true")
                .containsEntry("column.propagate.source.type", ".*")
                .containsEntry("converters", "pgsinktext")
                .containsEntry("pgsinktext.type", PostgresTextConverter.class.getName())
                // what costs Debezium work per change and pgsink never reads (issue #29)
                .containsEntry("extended.headers.enabled", "false")
                .containsEntry("offset.storage", TargetOffsetBackingStore.class.getName())
                .containsEntry("offset.flush.interval.ms", "0")
                .containsEntry("name", "pgsink")
                .containsEntry("topic.prefix", "pgsink")
                .containsEntry("slot.name", "pgsink")
                .containsEntry("publication.name", "pgsink")
                // one engine batch per flush: sized from the sink's flush policy
                .containsEntry("max.batch.size", "10000")
                // the next batch and a fifth more, so that few records wait through young collections
                .containsEntry("max.queue.size", "12000")
                // half of buffer.max.bytes bounds the engine's queue too
                .containsEntry("max.queue.size.in.bytes", "33554432")
                .containsEntry("poll.interval.ms", "1000")
                .containsEntry("database.hostname", "db1");
        assertThat(config.httpPort()).isEqualTo(9464);
        // the loopback interface unless told otherwise (the Docker image sets 0.0.0.0)
        assertThat(config.httpHost()).isEqualTo("127.0.0.1");
        assertThat(config.progressIntervalMillis()).isEqualTo(30000);
        assertThat(config.sink().retryBackoff().maxMillis()).isEqualTo(30000);
        assertThat(config.sink().targetUrl()).isEqualTo("jdbc:postgresql://dw:5432/warehouse");
    }

    @Test
    void debeziumContextHeadersMayBeTurnedBackOn()
    {
        Map<String, String> properties = minimal();
        properties.put("source.extended.headers.enabled", "true");
        assertThat(StandaloneConfig.problems(properties)).isEmpty();
        assertThat(StandaloneConfig.parse(properties).debezium())
                .containsEntry("extended.headers.enabled", "true");
    }

    /** Transaction-aligned flushes need Debezium's BEGIN and END records: turned on, and a file that turns them off is refused. */
    @Test
    void transactionBoundariesTurnOnDebeziumTransactionMetadata()
    {
        assertThat(StandaloneConfig.parse(minimal()).flushBoundary()).isEqualTo(FlushBoundary.BATCH);
        assertThat(StandaloneConfig.parse(minimal()).debezium()).doesNotContainKey("provide.transaction.metadata");
        Map<String, String> properties = minimal();
        properties.put("flush.boundary", "transaction");
        StandaloneConfig config = StandaloneConfig.parse(properties);
        assertThat(config.flushBoundary()).isEqualTo(FlushBoundary.TRANSACTION);
        assertThat(config.debezium()).containsEntry("provide.transaction.metadata", "true");
        properties.put("source.provide.transaction.metadata", "false");
        assertThat(StandaloneConfig.problems(properties)).extracting(ConfigProblem::message).containsExactly(
                "Invalid value 'false' for configuration source.provide.transaction.metadata: flush.boundary=transaction needs Debezium's transaction records to know where"
                        + " transactions end; remove it or set flush.boundary=batch");
    }

    /** The service's own keys, with type and default. */
    @Test
    void keyTable()
    {
        Map<String, String> table = new LinkedHashMap<>();
        for (ConfigKey<?> key : StandaloneConfig.KEYS) {
            table.put(key.name(), key.type().kind() + " " + key.defaultValue().map(value -> "'" + value + "'").orElse("(required)"));
        }
        assertThat(table).containsExactly(
                Map.entry("flush.boundary", "CHOICE 'batch'"),
                Map.entry("http.port", "LONG '9464'"),
                Map.entry("http.host", "STRING '127.0.0.1'"),
                Map.entry("progress.interval.ms", "LONG '30000'"),
                Map.entry("slot.creation.timeout.ms", "LONG '600000'"),
                Map.entry("slot.creation.log.interval.ms", "LONG '10000'"),
                Map.entry("initial.load.parallelism", "LONG '0'"),
                Map.entry("initial.load.chunk.bytes", "LONG '67108864'"),
                Map.entry("initial.load.copy.format", "CHOICE 'auto'"),
                Map.entry("initial.load.progress.interval.ms", "LONG '10000'"),
                Map.entry("http.tls.certificate.file", "STRING ''"),
                Map.entry("http.tls.key.file", "STRING ''"),
                Map.entry("http.auth.username", "STRING ''"),
                Map.entry("http.auth.password", "STRING ''"),
                Map.entry("http.auth.bearer.token", "STRING ''"));
        Map<String, String> properties = minimal();
        properties.put("http.host", " ");
        properties.put("progress.interval.ms", "-1");
        properties.put("http.port", "-2");
        properties.put("initial.load.parallelism", "-1");
        properties.put("initial.load.chunk.bytes", "1000");
        properties.put("initial.load.copy.format", "csv");
        properties.put("flush.boundary", "commit");
        assertThat(StandaloneConfig.problems(properties)).extracting(ConfigProblem::message).containsExactly(
                "Invalid value 'commit' for configuration flush.boundary: must be one of transaction, batch",
                "Invalid value '-2' for configuration http.port: must be between -1 and 65535",
                "Invalid value ' ' for configuration http.host: must not be empty",
                "Invalid value '-1' for configuration progress.interval.ms: must be zero or more",
                "Invalid value '-1' for configuration initial.load.parallelism: must be between 0 and 64",
                "Invalid value '1000' for configuration initial.load.chunk.bytes: must be at least 1048576",
                "Invalid value 'csv' for configuration initial.load.copy.format: must be one of text, binary, auto");
    }

    @Test
    void initialLoadParallelismFollowsTheProcessorsUnlessSet()
    {
        assertThat(StandaloneConfig.initialLoadParallelism(0, 1)).isEqualTo(2);
        assertThat(StandaloneConfig.initialLoadParallelism(0, 2)).isEqualTo(2);
        assertThat(StandaloneConfig.initialLoadParallelism(0, 3)).isEqualTo(3);
        assertThat(StandaloneConfig.initialLoadParallelism(0, 64)).isEqualTo(4);
        assertThat(StandaloneConfig.initialLoadParallelism(8, 2)).isEqualTo(8);
        assertThat(StandaloneConfig.initialLoadParallelism(1, 64)).isEqualTo(1);
    }

    @Test
    void fileSettingsWinOverDefaultsAndSinkSettingsShapeTheEngine()
    {
        Map<String, String> properties = minimal();
        properties.put("source.decimal.handling.mode", "precise");
        properties.put("source.converters", "mine");
        properties.put("source.mine.type", "com.example.Mine");
        properties.put("sink.name", "Orders Sink-1");
        properties.put("flush.max.events", "500");
        properties.put("flush.interval.ms", "0");
        properties.put("http.port", "-1");
        StandaloneConfig config = StandaloneConfig.parse(properties);
        assertThat(config.debezium())
                .containsEntry("decimal.handling.mode", "precise")
                .containsEntry("converters", "mine,pgsinktext")
                .containsEntry("slot.name", "orders_sink_1")
                .containsEntry("name", "Orders Sink-1")
                .containsEntry("max.batch.size", "500")
                .containsEntry("max.queue.size", "600")
                .containsEntry("poll.interval.ms", "10");
        assertThat(config.httpPort()).isEqualTo(-1);
    }

    @Test
    void reportsEveryProblemOfEveryPartAtOnce()
    {
        Map<String, String> properties = minimal();
        properties.remove("source.database.hostname");
        properties.remove("target.url");
        properties.put("flush.max.events", "many");
        properties.put("http.port", "70000");
        properties.put("progress.interval.ms", "soon");
        properties.put("source.offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
        properties.put("source.decimal.handling.mode", "approximate");
        properties.put("source.no.such.setting", "x");
        properties.put("targett.url", "typo");
        assertThatThrownBy(() -> StandaloneConfig.parse(properties))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessageStartingWith("Invalid pgsink configuration (9 problems):")
                .hasMessageContaining("Missing required configuration target.url")
                .hasMessageContaining("Invalid value 'many' for configuration flush.max.events: not a whole number")
                .hasMessageContaining("Unknown configuration targett.url")
                .hasMessageContaining("Invalid value '70000' for configuration http.port: must be between -1 and 65535")
                .hasMessageContaining("Invalid value 'soon' for configuration progress.interval.ms: not a whole number")
                .hasMessageContaining("Invalid value 'org.apache.kafka.connect.storage.FileOffsetBackingStore' for configuration source.offset.storage: pgsink owns it")
                .hasMessageContaining("Invalid value 'approximate' for configuration source.decimal.handling.mode")
                .hasMessageContaining("Missing required configuration source.database.hostname")
                .hasMessageContaining("Unknown configuration source.no.such.setting");
    }

    @Test
    void includeAndExcludeListsAreCompiledWhenValidated()
    {
        Map<String, String> properties = minimal();
        properties.put("source.table.include.list", "public.orders,public.(items");
        properties.put("source.schema.exclude.list", "tmp[");
        properties.put("source.column.exclude.list", "public.orders.secret");
        assertThat(StandaloneConfig.problems(properties)).extracting(ConfigProblem::message).containsExactly(
                "Invalid value 'tmp[' for configuration source.schema.exclude.list: 'tmp[' is not a regular expression: Unclosed character class near index 3",
                "Invalid value 'public.orders,public.(items' for configuration source.table.include.list: 'public.(items' is not a regular expression: Unclosed group near index 13");
        assertThatThrownBy(() -> StandaloneConfig.parse(properties))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessageStartingWith("Invalid pgsink configuration (2 problems):\n  ");

        properties.put("source.table.include.list", "Public\\.Order.*");
        properties.remove("source.schema.exclude.list");
        CapturedTables captured = StandaloneConfig.parse(properties).capturedTables();
        assertThat(captured.captures("public", "orders")).isTrue();
        assertThat(captured.captures("public", "order_items")).isTrue();
        assertThat(captured.captures("public", "items")).isFalse();
        assertThat(captured.captures("pg_catalog", "orders")).isFalse();
    }

    @Test
    void passesDriverAndTransformSettingsThrough()
    {
        Map<String, String> properties = minimal();
        properties.put("source.database.sslmode", "require");
        properties.put("source.transforms", "route");
        properties.put("source.transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter");
        properties.put("source.snapshot.mode", "no_data");
        properties.put("source.table.include.list", "public.orders");
        properties.put("target.jdbc.sslmode", "verify-full");
        StandaloneConfig config = StandaloneConfig.parse(properties);
        assertThat(config.debezium()).containsEntry("database.sslmode", "require").containsEntry("snapshot.mode", "no_data");
        assertThat(config.sink().targetJdbcProperties()).containsEntry("sslmode", "verify-full");
    }

    @Test
    void secretsAreMaskedInTheDescriptionAndInErrors()
    {
        Map<String, String> properties = minimal();
        properties.put("source.database.sslpassword", "key-secret");
        StandaloneConfig config = StandaloneConfig.parse(properties);
        assertThat(config.describe())
                .containsEntry("source.database.password", "<masked>")
                .containsEntry("source.database.sslpassword", "<masked>")
                .containsEntry("target.password", "<masked>")
                .containsEntry("source.database.hostname", "'db1'");
        assertThat(config.toString()).doesNotContain("source-secret", "target-secret", "key-secret");

        properties.put("flush.max.events", "0");
        assertThatThrownBy(() -> StandaloneConfig.parse(properties)).satisfies(e -> assertThat(e.getMessage()).doesNotContain("source-secret", "target-secret"));
    }

    @Test
    void environmentVariablesOverrideTheFile(@TempDir Path directory)
            throws IOException
    {
        Path file = directory.resolve("pgsink.properties");
        Files.writeString(file, """
                # a comment
                source.database.hostname = db1
                source.database.dbname=app
                source.database.user=cdc
                source.table.include.list=public.orders
                target.url=jdbc:postgresql://dw:5432/warehouse
                """);
        Map<String, String> environment = Map.of(
                "PGSINK_TARGET_PASSWORD", "from-env",
                "PGSINK_SOURCE_DATABASE_HOSTNAME", "db2",
                "PGSINK_SOURCE_TABLE_INCLUDE_LIST", "public.items",
                "PGSINK_FLUSH_MAX_EVENTS", "123",
                // not configuration: other tools' variables that share the prefix
                "PGSINK_TEST_JDBC_URL", "jdbc:postgresql://elsewhere/x",
                "PGSINK_BUILD_DIRECTORY", "/tmp",
                "PATH", "/usr/bin");
        StandaloneConfig config = StandaloneConfig.load(file, environment);
        assertThat(config.sink().targetPassword()).contains("from-env");
        assertThat(config.debezium()).containsEntry("database.hostname", "db2").containsEntry("table.include.list", "public.items");
        assertThat(config.sink().flushPolicy().maxEvents()).isEqualTo(123);
        assertThat(StandaloneConfig.variableName("source.slot.drop-on-stop")).isEqualTo("PGSINK_SOURCE_SLOT_DROP_ON_STOP");
    }

    @Test
    void unreadableFileIsAConfigurationError(@TempDir Path directory)
    {
        assertThatThrownBy(() -> StandaloneConfig.load(directory.resolve("missing.properties"), Map.of()))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessageContaining("Cannot read configuration file")
                .hasMessageContaining("missing.properties");
    }

    @Test
    void slotNamesAreValidIdentifiers()
    {
        assertThat(StandaloneConfig.identifier("pgsink")).isEqualTo("pgsink");
        assertThat(StandaloneConfig.identifier("Orders-Sink.eu")).isEqualTo("orders_sink_eu");
        assertThat(StandaloneConfig.identifier("1st")).isEqualTo("pgsink_1st");
        assertThat(StandaloneConfig.identifier("x".repeat(80))).hasSize(63);
    }

    /**
     * Every declared key, the sink's and the service's own, is set by its {@code PGSINK_*}
     * variable: walked from the key tables, so that a key in a new namespace cannot be left out.
     */
    @Test
    void everyDeclaredKeyCanBeSetFromTheEnvironment()
    {
        List<ConfigKey<?>> keys = StandaloneConfig.declaredKeys();
        assertThat(ConfigKey.names(keys))
                .containsAll(ConfigKey.names(SinkKeys.ALL))
                .containsAll(ConfigKey.names(StandaloneConfig.KEYS));
        for (ConfigKey<?> key : keys) {
            String variable = StandaloneConfig.variableName(key.name());
            String value = "value-of-" + key.name();
            List<ConfigProblem> problems = new ArrayList<>();
            Map<String, String> applied = StandaloneConfig.withEnvironment(Map.of(), Map.of(variable, value), problems);
            assertThat(problems).as(variable).isEmpty();
            assertThat(applied).as(variable).containsExactly(Map.entry(key.name(), value));
        }
    }

    @Test
    void environmentReachesEveryNamespace(@TempDir Path directory)
            throws IOException
    {
        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), minimal());
        Map<String, String> environment = new TreeMap<>();
        environment.put("PGSINK_DELETE_MODE", "soft");
        environment.put("PGSINK_DELETE_FLAG_COLUMN", "deleted");
        environment.put("PGSINK_METADATA_OPERATION_COLUMN", "op");
        environment.put("PGSINK_METADATA_SOURCE_POSITION_COLUMN", "lsn");
        environment.put("PGSINK_TABLE_MODE", "history");
        environment.put("PGSINK_TARGET_JDBC_SSLMODE", "require");
        environment.put("PGSINK_INITIAL_LOAD_PARALLELISM", "3");
        StandaloneConfig config = StandaloneConfig.load(file, environment);
        assertThat(config.sink().changeMetadata().deleteMode()).isEqualTo(DeleteMode.SOFT);
        assertThat(config.sink().changeMetadata().columns()).extracting(ChangeMetadata.Column::name)
                .containsExactly("op", "lsn", "deleted");
        assertThat(config.sink().changeMetadata().isHistory(TableId.of("public", "orders"))).isTrue();
        assertThat(config.sink().targetJdbcProperties()).containsEntry("sslmode", "require");
        assertThat(config.loadSettings().parallelism()).isEqualTo(3);
    }

    /**
     * A {@code PGSINK_*} variable in a pgsink namespace that names no key is a configuration
     * problem naming the variable (a typo would otherwise be a setting silently not applied);
     * variables outside every namespace (the tests' and benchmarks') are not configuration.
     */
    @Test
    void unknownVariableInAPgsinkNamespaceIsAProblem(@TempDir Path directory)
            throws IOException
    {
        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), minimal());
        Map<String, String> environment = new TreeMap<>();
        environment.put("PGSINK_DELETE_MODES", "soft");
        environment.put("PGSINK_FLUSH_MAX_EVENT", "5");
        environment.put("PGSINK_TEST_JDBC_URL", "jdbc:postgresql://elsewhere/x");
        environment.put("PGSINK_JAR", "/tmp/pgsink.jar");
        environment.put("PGSINK_TARGET_PASSWORD", "never-shown");
        assertThatThrownBy(() -> StandaloneConfig.load(file, environment))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessage("""
                        Invalid pgsink configuration (2 problems):
                          Unknown configuration delete.modes: environment variable PGSINK_DELETE_MODES names no \
                        pgsink key (each key K is set by PGSINK_ and K upper-cased with . and - as _, e.g. \
                        PGSINK_FLUSH_MAX_EVENTS); remove it or correct its name
                          Unknown configuration flush.max.event: environment variable PGSINK_FLUSH_MAX_EVENT names no \
                        pgsink key (each key K is set by PGSINK_ and K upper-cased with . and - as _, e.g. \
                        PGSINK_FLUSH_MAX_EVENTS); remove it or correct its name""");
        assertThat(StandaloneConfig.ENVIRONMENT_NAMESPACES).contains("delete.", "metadata.", "table.", "history.",
                "source.", "target.jdbc.").doesNotContain("test.");
    }

    /**
     * Every key that names a table, schema, slot, publication or the sink refuses an empty value, each named at once.
     */
    @Test
    void emptyNamesAreRefused()
    {
        Map<String, String> properties = minimal();
        for (String key : List.of("sink.name", "offsets.schema", "offsets.table", "errors.deadletter.table",
                "target.table.name.format", "source.slot.name", "source.publication.name", "source.topic.prefix",
                "source.database.dbname")) {
            properties.put(key, "");
        }
        assertThat(StandaloneConfig.problems(properties)).extracting(ConfigProblem::message).containsExactlyInAnyOrder(
                "Invalid value '' for configuration sink.name: must not be empty",
                "Invalid value '' for configuration offsets.schema: must not be empty",
                "Invalid value '' for configuration offsets.table: must not be empty",
                "Invalid value '' for configuration errors.deadletter.table: must not be empty",
                "Invalid value '' for configuration target.table.name.format: the table part is empty",
                "Invalid value '' for configuration source.slot.name: must not be empty: it names the replication "
                        + "slot; remove the key for pgsink's default (from sink.name)",
                "Invalid value '' for configuration source.publication.name: must not be empty: it names the "
                        + "publication; remove the key for pgsink's default (from sink.name)",
                "Invalid value '' for configuration source.topic.prefix: must not be empty: it names the source's "
                        + "logical server (Debezium's topic prefix, part of "
                        + "every stored position); remove the key for pgsink's default (from sink.name)",
                "Invalid value '' for configuration source.database.dbname: must not be empty: it names the source "
                        + "database");
    }
}
