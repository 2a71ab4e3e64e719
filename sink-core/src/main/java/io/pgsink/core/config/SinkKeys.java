package io.pgsink.core.config;

import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigType;
import io.pgsink.core.config.definition.ConfigValidator;
import io.pgsink.core.error.ErrorsTolerance;
import io.pgsink.core.mapping.ColumnPatterns;
import io.pgsink.core.mapping.ColumnRenames;
import io.pgsink.core.mapping.TableNameFormat;
import io.pgsink.core.mapping.TablePatterns;

import java.util.List;
import java.util.Optional;

/**
 * The sink's configuration keys, shared by the standalone service and the Kafka Connect sink: each
 * with its type, default, validator and documentation. {@link SinkConfig} reads them; the configuration
 * reference (docs/reference/configuration.md) and Kafka Connect's {@code ConfigDef} are built from {@link #ALL}.
 */
public final class SinkKeys
{
    public static final ConfigKey<String> SINK_NAME = ConfigKey.optional(SinkConfig.SINK_NAME,
            ConfigType.STRING, "pgsink",
            "Name of this sink. Source positions are stored under it in the offsets table, so two sinks writing into "
            + "the same target need different names.");
    public static final ConfigKey<String> TARGET_URL = ConfigKey.required(SinkConfig.TARGET_URL, ConfigType.STRING,
                    "JDBC URL of the target PostgreSQL or Greenplum database, e.g. jdbc:postgresql://host:5432/db.")
            .withValidator(ConfigValidator.notBlank().and(SinkKeys::pgjdbcUrl));
    public static final ConfigKey<String> TARGET_USER = ConfigKey.optional(SinkConfig.TARGET_USER,
            ConfigType.STRING, "",
            "Target user; empty to take it from the URL or the driver's defaults.");
    public static final ConfigKey<String> TARGET_PASSWORD = ConfigKey.optional(SinkConfig.TARGET_PASSWORD,
            ConfigType.STRING, "",
            "Target password. Never logged.").asSecret();
    public static final ConfigKey<TargetDialect> TARGET_DIALECT = ConfigKey.optional(SinkConfig.TARGET_DIALECT,
            ConfigType.choice(TargetDialect.class), TargetDialect.AUTO,
            "Target database kind; auto detects it from version().");
    public static final ConfigKey<UpdateMode> TARGET_UPDATE_MODE = ConfigKey.optional(SinkConfig.TARGET_UPDATE_MODE,
            ConfigType.choice(UpdateMode.class), UpdateMode.AUTO,
            "How a flush writes keys the target may already hold. auto: on PostgreSQL 15+, where the user may UPDATE "
            + "the table and rows are narrow (under about 2 kB), one MERGE from the staging table deletes, updates in "
            + "place or inserts each key (faster, and the table does not grow by a row version per update); on "
            + "Greenplum 7 and Cloudberry, under the same conditions and for tables that are not append-optimized, "
            + "staged rows are upserted (INSERT ... ON CONFLICT DO UPDATE) and only deleted keys deleted; elsewhere "
            + "delete-insert. delete-insert: every touched key is deleted, then its final row inserted. Both leave the "
            + "same rows, columns the source lacks at their defaults; they differ in the triggers they fire. A table "
            + "with a unique index or exclusion constraint beyond its primary key (not DEFERRABLE, not containing "
            + "every key column; partial and expression indexes included) is always applied by delete-insert: MERGE "
            + "and ON CONFLICT DO UPDATE check such an index row by row, so a source transaction that swaps unique "
            + "values between keys would fail.");
    public static final ConfigKey<TableNameFormat> TARGET_TABLE_NAME_FORMAT =
            ConfigKey.optional(SinkConfig.TARGET_TABLE_NAME_FORMAT, TableNameFormat.CONFIG_TYPE,
                    TableNameFormat.parse("${schema}.${table}"),
                    "Target table for a source table: ${schema} and ${table} are replaced by the source schema and "
                    + "table name; the first '.' outside a placeholder separates the target schema from the table name "
                    + "(without one, the target schema is the source schema).")
            .withValidator(SinkKeys::routesBySourceTable);
    public static final ConfigKey<SessionReplicationRole> TARGET_SESSION_REPLICATION_ROLE =
            ConfigKey.optional(SinkConfig.TARGET_SESSION_REPLICATION_ROLE,
                    ConfigType.choice(SessionReplicationRole.class), SessionReplicationRole.ORIGIN,
                    "session_replication_role of the sink's target connections. origin: triggers and rules fire and "
                    + "foreign keys are checked, as for any client. replica: ordinary triggers and rules do not fire "
                    + "and foreign keys are not checked (they are triggers), so changes apply in any table order; "
                    + "triggers enabled ALWAYS or REPLICA still fire. replica needs a superuser, or on PostgreSQL 15+ "
                    + "GRANT SET ON PARAMETER session_replication_role TO <user>; pgsink check says whether the target "
                    + "user may set it. Greenplum 7 accepts it as PostgreSQL 12 does (superuser only).");
    public static final ConfigKey<ToastCompression> TARGET_TOAST_COMPRESSION =
            ConfigKey.optional(SinkConfig.TARGET_TOAST_COMPRESSION, ConfigType.choice(ToastCompression.class),
                    ToastCompression.LZ4,
                    "How the server compresses the large values the sink writes (TOAST). lz4: where the server offers "
                    + "it (PostgreSQL 14+ built with lz4, as the PGDG, Debian and Red Hat packages are), the sink's "
                    + "connections set default_toast_compression = lz4, which compresses several times faster than "
                    + "pglz (see Benchmarks for wide rows); columns with a COMPRESSION of their own keep it, other "
                    + "servers (Greenplum 7, PostgreSQL before 14) their default, and every reader sees the same "
                    + "values. server-default: the server's default_toast_compression (pglz unless set otherwise).");
    public static final ConfigKey<ColumnPatterns> COLUMN_INCLUDE_LIST =
            ConfigKey.optional(SinkConfig.COLUMN_INCLUDE_LIST,
                    ConfigType.text(ColumnPatterns::parse, ColumnPatterns::toString), ColumnPatterns.NONE,
                    "Comma-separated regular expressions matched whole, ignoring case, against schema.table.column of "
                    + "source columns (as Debezium's column.include.list); only matching columns are written. Empty: "
                    + "every column. Key columns must be listed; cannot be combined with column.exclude.list.");
    public static final ConfigKey<ColumnPatterns> COLUMN_EXCLUDE_LIST =
            ConfigKey.optional(SinkConfig.COLUMN_EXCLUDE_LIST,
                    ConfigType.text(ColumnPatterns::parse, ColumnPatterns::toString), ColumnPatterns.NONE,
                    "Comma-separated regular expressions matched whole, ignoring case, against schema.table.column of "
                    + "source columns (as Debezium's column.exclude.list); matching columns are not written. A key "
                    + "column cannot be excluded.");
    public static final ConfigKey<ColumnRenames> COLUMN_RENAME = ConfigKey.optional(SinkConfig.COLUMN_RENAME,
            ConfigType.text(ColumnRenames::parse, ColumnRenames::toString), ColumnRenames.NONE,
            "Comma-separated schema.table.column:new_name entries (exact source names, case-sensitive): the source "
            + "column is written to target column new_name. Applies to streaming, the initial load, auto-created "
            + "tables and added columns.");
    public static final ConfigKey<SchemaEvolutionLevel> SCHEMA_EVOLUTION =
            ConfigKey.optional(SinkConfig.SCHEMA_EVOLUTION, ConfigType.choice(SchemaEvolutionLevel.class),
                    SchemaEvolutionLevel.NONE,
                    "none: target tables must exist with every source column. add-columns: a missing target table is "
                    + "created (primary key from the source key; Greenplum DISTRIBUTED BY it), new source columns are "
                    + "added while streaming (with what existing rows hold on the source) and renamed ones renamed; "
                    + "dropped source columns stay in the target (NULL in new rows). add-columns-and-widen: also "
                    + "changes a target column to its new source type where no value can be lost (int2 to int4 to "
                    + "int8, float4 to float8, longer varchar or text, numeric with more digits) and drops a NOT NULL "
                    + "the source dropped. A change pgsink cannot apply safely stops it (see Source DDL). Needs source "
                    + "column types from the adapter.");
    public static final ConfigKey<TablesWithoutKey> TABLES_WITHOUT_KEY =
            ConfigKey.optional(SinkConfig.TABLES_WITHOUT_KEY, ConfigType.choice(TablesWithoutKey.class),
                    TablesWithoutKey.FAIL,
                    "What to do with a table that has no primary key: fail with an error, or append-only (inserts are "
                    + "copied straight into the target; updates and deletes fail).");
    public static final ConfigKey<Long> FLUSH_MAX_EVENTS = ConfigKey.optional(SinkConfig.FLUSH_MAX_EVENTS,
            ConfigType.LONG, 10_000L,
            "Flush when this many events are buffered.").withValidator(ConfigValidator.atLeast(1));
    public static final ConfigKey<Long> BUFFER_MAX_BYTES = ConfigKey.optional(SinkConfig.BUFFER_MAX_BYTES,
            ConfigType.LONG, 64L * 1024 * 1024,
            "Flush when the buffered rows take about this many bytes of heap. Bounds memory: the source waits while "
            + "the flush runs.").withValidator(ConfigValidator.atLeast(1));
    public static final ConfigKey<Long> FLUSH_INTERVAL_MS = ConfigKey.optional(SinkConfig.FLUSH_INTERVAL_MS,
            ConfigType.LONG, 1000L,
            "Flush when the oldest buffered event has waited this long.").withValidator(ConfigValidator.atLeast(0));
    public static final ConfigKey<Boolean> FLUSH_PIPELINED = ConfigKey.optional(SinkConfig.FLUSH_PIPELINED,
            ConfigType.BOOLEAN, false,
            "true: a flush hands its merged batch to an applier thread and returns, so the next batch is read and "
            + "merged while this one is written; at most one batch is in flight (the next flush waits for it), a "
            + "failed one is applied again before anything newer, and positions are confirmed upstream only once their "
            + "batch committed (the standalone service confirms a batch to the slot when the next engine batch, at the "
            + "latest a heartbeat, arrives). Each buffer then flushes at half of buffer.max.bytes, so the batch in "
            + "flight and the one filling stay within it. false: the source waits while each flush runs.");
    public static final ConfigKey<Long> FLUSH_SMALL_BATCH_MAX_EVENTS =
            ConfigKey.optional(SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, ConfigType.LONG, 256L,
                    "A table's changes in a flush (after merging by key) up to which they are applied without COPY and "
                    + "staging table: bound as one array per column of a single MERGE (or DELETE and INSERT) sent "
                    + "together, 3 round trips per flush instead of 5 (PostgreSQL only; Greenplum, history tables, "
                    + "append-only tables, soft deletes without MERGE and rows with unchanged TOAST values take the "
                    + "COPY path). 0: always COPY.")
            .withValidator(ConfigValidator.between(0, 100_000));
    public static final ConfigKey<CopyDataFormat> COPY_FORMAT = ConfigKey.optional(SinkConfig.COPY_FORMAT,
            ConfigType.choice(CopyDataFormat.class), CopyDataFormat.CSV,
            "How rows travel in COPY. csv: as text, in the CSV dialect of the copy.delimiter, copy.quote, copy.escape "
            + "and copy.null keys. binary: in each column type's binary format (PostgreSQL, Greenplum 7 and "
            + "Cloudberry; Greenplum 6 keeps csv), which the server reads without parsing text; a COPY with a column "
            + "or value pgsink has no binary form for (arrays, enums, intervals, ranges, network, geometric and "
            + "bit-string types, money, xml, a value sent as text for a typed column) is written as csv instead, so "
            + "the values are the same either way.");
    public static final ConfigKey<Character> COPY_DELIMITER = ConfigKey.optional(SinkConfig.COPY_DELIMITER,
            ConfigType.CHARACTER, ',',
            "COPY CSV field delimiter (one ASCII character).");
    public static final ConfigKey<Character> COPY_QUOTE = ConfigKey.optional(SinkConfig.COPY_QUOTE,
            ConfigType.CHARACTER, '"',
            "COPY CSV quote character (one ASCII character).");
    public static final ConfigKey<Character> COPY_ESCAPE = ConfigKey.optional(SinkConfig.COPY_ESCAPE,
            ConfigType.CHARACTER, '"',
            "COPY CSV escape character (one ASCII character; may equal the quote).");
    public static final ConfigKey<String> COPY_NULL = ConfigKey.optional(SinkConfig.COPY_NULL, ConfigType.STRING, "",
            "COPY CSV NULL string; the default is an unquoted empty field.");
    public static final ConfigKey<NulCharacterHandling> COPY_NUL_CHARACTER =
            ConfigKey.optional(SinkConfig.COPY_NUL_CHARACTER, ConfigType.choice(NulCharacterHandling.class),
                    NulCharacterHandling.FAIL,
                    "A NUL character (U+0000) cannot be stored in PostgreSQL text: fail names table, key and column; "
                    + "strip removes it.");
    public static final ConfigKey<String> OFFSETS_SCHEMA = ConfigKey.optional(SinkConfig.OFFSETS_SCHEMA,
            ConfigType.STRING, "public",
            "Schema of the offsets table in the target.").withValidator(ConfigValidator.notBlank());
    public static final ConfigKey<String> OFFSETS_TABLE = ConfigKey.optional(SinkConfig.OFFSETS_TABLE,
            ConfigType.STRING, "pgsink_offsets",
            "Name of the offsets table in the target; created when missing.").withValidator(ConfigValidator.notBlank());
    public static final ConfigKey<ErrorsTolerance> ERRORS_TOLERANCE = ConfigKey.optional(SinkConfig.ERRORS_TOLERANCE,
            ConfigType.choice(ErrorsTolerance.class), ErrorsTolerance.NONE,
            "What a row the target refuses (value too long, constraint violated, value that cannot be encoded) does: "
            + "none stops the sink with an error naming table, key, column, position and reason, and applies nothing "
            + "of the batch; all isolates the row, applies the rest of the batch and sends the row to the dead-letter "
            + "table (Kafka Connect: the errant-record reporter).");
    public static final ConfigKey<String> ERRORS_DEAD_LETTER_TABLE =
            ConfigKey.optional(SinkConfig.ERRORS_DEAD_LETTER_TABLE, ConfigType.STRING, "pgsink_dead_letters",
                    "Dead-letter table (in offsets.schema) for rows skipped under errors.tolerance=all; created when "
                    + "missing. Holds the rows' values, so grant access to it accordingly.")
            .withValidator(ConfigValidator.notBlank());
    public static final ConfigKey<Long> RETRY_BACKOFF_MAX_MS = ConfigKey.optional(SinkConfig.RETRY_BACKOFF_MAX_MS,
            ConfigType.LONG, 30_000L,
            "Longest wait between attempts when the target is unreachable; attempts start 500 ms apart and double.")
            .withValidator(ConfigValidator.atLeast(1));

    public static final ConfigKey<String> METADATA_OPERATION_COLUMN =
            ConfigKey.optional(SinkConfig.METADATA_OPERATION_COLUMN, ConfigType.STRING, "",
                    "Target column (text) that receives the operation of each row's last change: c (insert), r "
                    + "(snapshot read), u (update), d (delete: soft-deleted rows, history rows); empty for none. "
                    + "Created by schema.evolution=add-columns, else it must exist.");
    public static final ConfigKey<String> METADATA_SOURCE_TIMESTAMP_COLUMN =
            ConfigKey.optional(SinkConfig.METADATA_SOURCE_TIMESTAMP_COLUMN, ConfigType.STRING, "",
                    "Target column (timestamptz) that receives when the row's last change was committed on the source "
                    + "(Debezium's source.ts_ms; NULL when unknown); empty for none.");
    public static final ConfigKey<String> METADATA_SOURCE_POSITION_COLUMN =
            ConfigKey.optional(SinkConfig.METADATA_SOURCE_POSITION_COLUMN, ConfigType.STRING, "",
                    "Target column (text) that receives where the row's last change is in the source stream: the "
                    + "change's LSN (e.g. 0/16B3748; order by it cast to pg_lsn) in the standalone service, "
                    + "<topic>-<partition>:<offset> in Kafka Connect; empty for none.");
    public static final ConfigKey<String> METADATA_APPLIED_TIMESTAMP_COLUMN =
            ConfigKey.optional(SinkConfig.METADATA_APPLIED_TIMESTAMP_COLUMN, ConfigType.STRING, "",
                    "Target column (timestamptz) that receives when the sink applied the row (one time per flush "
                    + "transaction, from the sink's clock); empty for none.");
    public static final ConfigKey<DeleteMode> DELETE_MODE = ConfigKey.optional(SinkConfig.DELETE_MODE,
            ConfigType.choice(DeleteMode.class), DeleteMode.HARD,
            "What a source delete does to the target row: hard deletes it; soft keeps it and sets delete.flag.column "
            + "to true and/or delete.timestamp.column to the delete's source commit time (the other columns keep the "
            + "row's last values); a later insert of the key writes the row anew and clears both.");
    public static final ConfigKey<String> DELETE_FLAG_COLUMN = ConfigKey.optional(SinkConfig.DELETE_FLAG_COLUMN,
            ConfigType.STRING, "",
            "With delete.mode=soft: target column (boolean) that is true for deleted rows, false for the others; empty "
            + "for none.");
    public static final ConfigKey<String> DELETE_TIMESTAMP_COLUMN =
            ConfigKey.optional(SinkConfig.DELETE_TIMESTAMP_COLUMN, ConfigType.STRING, "",
                    "With delete.mode=soft: target column (timestamptz) that holds when a deleted row was deleted at "
                    + "the source (the sink's apply time when the source sent none), NULL for the others; empty for "
                    + "none.");
    public static final ConfigKey<TableMode> TABLE_MODE = ConfigKey.optional(SinkConfig.TABLE_MODE,
            ConfigType.choice(TableMode.class), TableMode.MERGE,
            "merge: a target table holds each key's latest row. history: every table is a history table, which gets "
            + "one appended row per change (insert, read, update, delete; truncates are not applied), COPYed straight "
            + "into the table with the metadata columns; needs metadata.operation.column and "
            + "metadata.source.position.column.");
    public static final ConfigKey<TablePatterns> HISTORY_TABLE_INCLUDE_LIST =
            ConfigKey.optional(SinkConfig.HISTORY_TABLE_INCLUDE_LIST, TablePatterns.CONFIG_TYPE, TablePatterns.NONE,
                    "With table.mode=merge: comma-separated regular expressions matched against the whole schema.table "
                    + "of source tables (Kafka Connect: of the table a record is routed to); the tables they match are "
                    + "history tables, the others are merged.");

    /** Every key, in the order the configuration reference lists them. */
    public static final List<ConfigKey<?>> ALL = List.of(
            SINK_NAME,
            TARGET_URL,
            TARGET_USER,
            TARGET_PASSWORD,
            TARGET_DIALECT,
            TARGET_UPDATE_MODE,
            TARGET_TABLE_NAME_FORMAT,
            TARGET_SESSION_REPLICATION_ROLE,
            TARGET_TOAST_COMPRESSION,
            COLUMN_INCLUDE_LIST,
            COLUMN_EXCLUDE_LIST,
            COLUMN_RENAME,
            SCHEMA_EVOLUTION,
            TABLES_WITHOUT_KEY,
            FLUSH_MAX_EVENTS,
            BUFFER_MAX_BYTES,
            FLUSH_INTERVAL_MS,
            FLUSH_PIPELINED,
            FLUSH_SMALL_BATCH_MAX_EVENTS,
            COPY_FORMAT,
            COPY_DELIMITER,
            COPY_QUOTE,
            COPY_ESCAPE,
            COPY_NULL,
            COPY_NUL_CHARACTER,
            OFFSETS_SCHEMA,
            OFFSETS_TABLE,
            ERRORS_TOLERANCE,
            ERRORS_DEAD_LETTER_TABLE,
            RETRY_BACKOFF_MAX_MS,
            METADATA_OPERATION_COLUMN,
            METADATA_SOURCE_TIMESTAMP_COLUMN,
            METADATA_SOURCE_POSITION_COLUMN,
            METADATA_APPLIED_TIMESTAMP_COLUMN,
            DELETE_MODE,
            DELETE_FLAG_COLUMN,
            DELETE_TIMESTAMP_COLUMN,
            TABLE_MODE,
            HISTORY_TABLE_INCLUDE_LIST);

    private static Optional<String> pgjdbcUrl(String url)
    {
        return url.startsWith("jdbc:postgresql:") ? Optional.empty()
                : Optional.of("must be a pgjdbc URL starting with jdbc:postgresql:");
    }

    /** The core sink routes by source table; only the Kafka Connect sink knows a record's topic. */
    private static Optional<String> routesBySourceTable(TableNameFormat format)
    {
        return format.usesTopic()
                ? Optional.of(TableNameFormat.TOPIC + " is the Kafka topic of a record, which only the Kafka Connect "
                        + "sink reads; route by ${schema} and ${table}")
                : Optional.empty();
    }

    private SinkKeys()
    {
    }
}
