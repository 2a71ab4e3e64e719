package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Workload;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.MergeApplier;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * pgsink itself: the buffer merges by key, each flush COPYs into staging and applies set-based
 * statements (a flush of at most {@code flush.small.batch.max.events} changes per table binds them
 * as arrays of one statement instead). By default as configured out of the box (on PostgreSQL 15+,
 * changes to existing keys are applied by one MERGE); the delete-insert variant sets
 * {@code target.update.mode=delete-insert},
 * as on older servers and Greenplum.
 */
final class PgsinkMethod
        implements Method
{
    static final String NAME = "pgsink (COPY + merge)";
    static final String DELETE_INSERT_NAME = "pgsink, target.update.mode=delete-insert";
    static final String BINARY_NAME = "pgsink, copy.format=binary";
    static final String PIPELINED_NAME = "pgsink pipelined (flush.pipelined=true)";
    static final String COPY_ONLY_NAME = "pgsink, flush.small.batch.max.events=0 (always COPY)";
    static final String SERVER_COMPRESSION_NAME = "pgsink, target.toast.compression=server-default";
    /**
     * System property that adds the TOAST compression variants to the headline methods (pgsink
     * with the server's default compression, the merged upsert with lz4): only for servers built
     * with lz4 (the embedded test server is not), where pgsink's default is lz4.
     */
    static final String LZ4_PROPERTY = "pgsink.bench.lz4";

    private final String name;
    private final Map<String, String> overrides;

    PgsinkMethod()
    {
        this(NAME, Map.of());
    }

    PgsinkMethod(boolean deleteInsert)
    {
        this(deleteInsert ? DELETE_INSERT_NAME : NAME, deleteInsert ? Map.of(SinkConfig.TARGET_UPDATE_MODE,
                "delete-insert") : Map.of());
    }

    /** A variant of pgsink named {@code name}, configured with {@code overrides}. */
    PgsinkMethod(String name, Map<String, String> overrides)
    {
        this.name = name;
        this.overrides = Map.copyOf(overrides);
    }

    /**
     * flush.small.batch.max.events=0: every flush COPYs, however small (the small suite's comparison for the
     * small-batch path).
     */
    static PgsinkMethod copyOnly()
    {
        return new PgsinkMethod(COPY_ONLY_NAME, Map.of(SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, "0"));
    }

    /** flush.pipelined=true: the next batch is merged while the last one applies. */
    static PgsinkMethod pipelined()
    {
        return new PgsinkMethod(PIPELINED_NAME, Map.of(SinkConfig.FLUSH_PIPELINED, "true"));
    }

    /** copy.format=binary. */
    static PgsinkMethod binary()
    {
        return new PgsinkMethod(BINARY_NAME, Map.of(SinkConfig.COPY_FORMAT, "binary"));
    }

    /** The sink's session TOASTs what it writes as the server's default says (pglz), not with lz4. */
    static PgsinkMethod serverCompression()
    {
        return new PgsinkMethod(SERVER_COMPRESSION_NAME, Map.of(SinkConfig.TARGET_TOAST_COMPRESSION, "server-default"));
    }

    @Override
    public String name()
    {
        return name;
    }

    /**
     * pgsink's configuration for applying into {@code table}: a flush every {@code batchSize} events, never earlier.
     */
    static SinkConfig config(BenchmarkDatabase database, String table, int batchSize)
    {
        return config(database, table, batchSize, Map.of());
    }

    private static SinkConfig config(BenchmarkDatabase database, String table, int batchSize, Map<String,
            String> overrides)
    {
        Map<String, String> properties = new HashMap<>(overrides);
        properties.put(SinkConfig.TARGET_URL, database.url);
        properties.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, database.schema + "." + table);
        properties.put(SinkConfig.OFFSETS_SCHEMA, database.schema);
        properties.put(SinkConfig.FLUSH_MAX_EVENTS, String.valueOf(batchSize));
        properties.put(SinkConfig.BUFFER_MAX_BYTES, String.valueOf(Long.MAX_VALUE));
        properties.put(SinkConfig.FLUSH_INTERVAL_MS, "3600000");
        return SinkConfig.parse(properties);
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
    {
        SinkConfig config = config(database, table, batchSize, overrides);
        try (BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config))) {
            replay(table, workload, sink);
        }
    }

    /** Feeds the workload's changes to {@code sink} as events of one source table, then flushes. */
    static void replay(String table, Workload workload, BufferedSink sink)
    {
        TableSchema schema = TableSchema.of(TableId.of("source", table), workload.columns.names, List.of("id"));
        Object[] keyOnly = new Object[workload.columns.size()];
        long offset = 0;
        for (Workload.Change change : workload.changes) {
            SourcePosition position = new SourcePosition("bench", Long.toString(++offset));
            switch (change.kind()) {
                case INSERT -> sink.accept(ChangeEvent.insert(schema, change.row().clone(), position, 0));
                case UPDATE -> sink.accept(ChangeEvent.update(schema, null, change.row().clone(), position, 0));
                case DELETE -> {
                    Object[] before = keyOnly.clone();
                    before[0] = change.key();
                    sink.accept(ChangeEvent.delete(schema, before, position, 0));
                }
            }
        }
        sink.flush();
    }
}
